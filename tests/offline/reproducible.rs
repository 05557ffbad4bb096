//! A run without live parts is a function of its scenario and seed: every shipped scenario
//! that runs unpaced on the embedded simulators with nothing live (no captured traffic,
//! programs, modems or NETSIM manager), run twice and once more on one core, writes the same
//! record messages and the same summary, its wall-clock figures aside.

use netsim_cosim::config::{self, Capture, NetworkEndpoint, PhysicsEndpoint};
use std::path::{Path, PathBuf};
use std::process::Command;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");
/// Sim time each run covers: enough for every scenario's vehicles to move, its links to change
/// and (acoustic paths) its traces to refresh, kept short for a debug build.
const DURATION_S: &str = "10";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped scenarios a run reproduces: unpaced, embedded, nothing live.
fn unpaced_without_live_parts() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(repo().join("config"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| {
            let Ok(loaded) = config::load(p) else {
                return false;
            };
            let s = &loaded.scenario;
            s.real_time_factor == 0.0
                && s.programs.is_empty()
                && s.network.capture == Capture::None
                && s.acoustic_modems.is_none()
                && s.netsim_manager.is_none()
                && matches!(s.simulators.physics, PhysicsEndpoint::Embedded)
                && matches!(s.simulators.network, NetworkEndpoint::Embedded)
        })
        .collect();
    found.sort();
    found
}

/// `cosim run scenario --out out --duration-s DURATION_S`, on `cpus` (taskset's list) if given.
fn run(scenario: &Path, out: &Path, cpus: Option<&str>) {
    let mut cmd = match cpus {
        Some(list) => {
            let mut c = Command::new("taskset");
            c.args(["-c", list, COSIM]);
            c
        }
        None => Command::new(COSIM),
    };
    let o = cmd
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .args(["--duration-s", DURATION_S])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}",
        scenario.display(),
        crate::common::output_text(&o)
    );
}

/// Every message of the record but the summary's copy (compared apart): (topic, log time,
/// bytes), in the record's order.
fn messages(out: &Path) -> Vec<(String, u64, Vec<u8>)> {
    let bytes = std::fs::read(out.join(netsim_cosim::output::record::RECORD_FILE)).unwrap();
    mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(|m| m.unwrap())
        .filter(|m| m.channel.topic != netsim_cosim::output::schema::TOPIC_SUMMARY)
        .map(|m| (m.channel.topic.clone(), m.log_time, m.data.into_owned()))
        .collect()
}

#[test]
fn every_unpaced_scenario_without_live_parts_runs_the_same_twice_and_on_one_core() {
    let scenarios = unpaced_without_live_parts();
    let names: Vec<String> = scenarios
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    // The selection itself: these must be in it (a loader change must not empty it quietly).
    for known in [
        "patrol",
        "acoustic_paths",
        "seamount_png",
        "ridge_csv",
        "flows",
    ] {
        assert!(names.iter().any(|n| n == known), "{known} not in {names:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    for (scenario, name) in scenarios.iter().zip(&names) {
        let outs: Vec<PathBuf> = ["first", "again", "one_core"]
            .iter()
            .map(|k| dir.path().join(format!("{name}_{k}")))
            .collect();
        run(scenario, &outs[0], None);
        run(scenario, &outs[1], None);
        run(scenario, &outs[2], Some("0"));
        let first = messages(&outs[0]);
        assert!(first.len() > 10, "{name}: {} messages", first.len());
        for out in &outs[1..] {
            let other = messages(out);
            assert_eq!(first.len(), other.len(), "{name}: {}", out.display());
            if let Some(k) = (0..first.len()).find(|&k| first[k] != other[k]) {
                panic!(
                    "{name}: message {k} differs ({} at {} ns against {} at {} ns) in {}",
                    first[k].0,
                    first[k].1,
                    other[k].0,
                    other[k].1,
                    out.display()
                );
            }
            assert_eq!(
                crate::common::summary_without_wall_clock(&outs[0]),
                crate::common::summary_without_wall_clock(out),
                "{name}: {}",
                out.display()
            );
        }
        println!("{name}: {} messages, the same three times", first.len());
    }
}
