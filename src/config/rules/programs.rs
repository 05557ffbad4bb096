//! The rules of `programs`: unique names that can name log files, a vehicle that exists and
//! has a namespace, a start before the end, a command, environment and working directory a
//! process can take, and a bounded stop timeout.

use std::collections::HashMap;
use std::path::Path;

use super::{no_nul, Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::{Capture, ProgramCommand};

/// Longest program name: it names the program's log files.
const MAX_PROGRAM_NAME: usize = 32;

/// Longest wait for a program to stop before it is killed.
const MAX_STOP_TIMEOUT_S: f64 = 3600.0;

pub(super) fn programs(cx: &Ctx) -> Check {
    let s = cx.scenario;
    let mut names: HashMap<&str, String> = HashMap::new();
    for (i, p) in s.programs.iter().enumerate() {
        let key = join_index("programs", i);
        let k = |f: &str| join_key(&key, f);
        cx.unique_name(&k("name"), &p.name, MAX_PROGRAM_NAME, "program", &mut names)?;
        if let Some(v) = &p.vehicle {
            if !s.vehicles.iter().any(|x| &x.name == v) {
                return Err(cx.err(&k("vehicle"), format!("no vehicle is named {v:?}")));
            }
            if s.network.capture != Capture::Tun {
                return Err(cx.err(
                    &k("vehicle"),
                    format!("a program inside vehicle {v:?} runs in its network namespace: set network.capture: tun (or leave `vehicle` out to run it on the host)"),
                ));
            }
        }
        cx.non_negative(&k("start_s"), p.start_s)?;
        if p.start_s >= s.duration_s {
            return Err(cx.err(
                &k("start_s"),
                format!(
                    "must be below duration_s ({} s), or the run ends before it starts (got {})",
                    s.duration_s, p.start_s
                ),
            ));
        }
        match &p.command {
            ProgramCommand::Shell(c) => {
                if c.trim().is_empty() {
                    return Err(cx.err(&k("command"), "must not be empty"));
                }
                no_nul(cx, &k("command"), c)?;
            }
            ProgramCommand::Argv(argv) => {
                match argv.first() {
                    None => return Err(cx.err(&k("command"), "needs at least the program to run")),
                    Some(a) if a.is_empty() => {
                        return Err(cx.err(
                            &join_index(&k("command"), 0),
                            "must name the program to run",
                        ))
                    }
                    Some(_) => {}
                }
                for (j, a) in argv.iter().enumerate() {
                    no_nul(cx, &join_index(&k("command"), j), a)?;
                }
            }
        }
        for (name, value) in &p.env {
            let ek = join_key(&k("env"), name);
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(cx.err(&k("env"), format!("{name:?} is not a variable name")));
            }
            if name.starts_with("COSIM_") {
                return Err(cx.err(
                    &ek,
                    "COSIM_* variables are set by the run for every program",
                ));
            }
            no_nul(cx, &ek, value)?;
        }
        if let Some(dir) = &p.cwd {
            no_nul(cx, &k("cwd"), dir)?;
            let resolved = cx.file.parent().unwrap_or(Path::new("")).join(dir);
            if !resolved.is_dir() {
                return Err(cx.err(
                    &k("cwd"),
                    format!(
                        "{} is not a directory (cwd is relative to the scenario file's directory)",
                        resolved.display()
                    ),
                ));
            }
        }
        cx.non_negative(&k("stop_timeout_s"), p.stop_timeout_s)?;
        if p.stop_timeout_s > MAX_STOP_TIMEOUT_S {
            return Err(cx.err(
                &k("stop_timeout_s"),
                format!(
                    "must be at most {MAX_STOP_TIMEOUT_S} s (got {})",
                    p.stop_timeout_s
                ),
            ));
        }
    }
    Ok(())
}
