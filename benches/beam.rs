//! The beam tracer (`model::beam`) beside BELLHOP itself (`bellhop.exe` of the aubellhop wheel,
//! unpacked by `scripts/setup --test`), one thread each, on the same cases with the same beam
//! count: per case an arrivals run (BELLHOP's `A` for all the case's receivers at once; ours
//! `beam::arrivals` once per receiver, tracing the fan each time) and an incoherent
//! transmission-loss run on the case's grid (BELLHOP's `I`; ours `beam::field(..,
//! Sum::Incoherent)`).
//!
//! Cases (tests/acoustics/cases/): `summer` (60 m of shallow water under a summer profile,
//! 10 kHz, 1000 beams over ±60°, 4 receivers, a 61 × 200 grid to 5 km), `front` (the same water
//! giving way to mixed water over 4 km: a range-dependent profile of four columns, 6
//! receivers, the same grid) and `munk` (the
//! Acoustics Toolbox's Munk profile, 50 Hz, 1000 beams over ±20.3°, 6 receivers, a 201 × 500
//! grid to 100 km), and the 25 m, 25 kHz channel's arrivals (2001 beams over ±89°, 2
//! receivers).
//!
//! BELLHOP runs as its own process on the files `tests/acoustics/bellhop.py` writes (written
//! once, before timing); its time is the process's wall time, start-up and file output
//! included, and its CPU time (user + system, from `getrusage(RUSAGE_CHILDREN)`). Ours is the
//! call's wall time and the thread's CPU time. Each figure is the median of `RUNS` runs; the
//! ratio ours/BELLHOP is taken on CPU time, which a busy machine disturbs least.
//!
//! Run: `cargo bench --bench beam` (after `scripts/setup --test`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/common/bellhop_case.rs"]
mod bellhop_case;

use bellhop_case::{case, environment, f, fan, floats, root};
use netsim_cosim::model::beam::{self, Sum};

const RUNS: usize = 7;

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn children_cpu() -> Duration {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the duration of the call.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Writes the BELLHOP files of `name`'s `run` into a directory of their own (running the
/// harness once), and returns the base path to hand `bellhop.exe`.
fn bellhop_files(name: &str, run: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "netsim-beam-bench-{}-{name}-{}",
        std::process::id(),
        run.unwrap_or("main")
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut cmd = Command::new(root().join(".venv-test/bin/python"));
    cmd.arg(root().join("tests/acoustics/bellhop.py"))
        .arg("--keep")
        .arg(&dir);
    if let Some(run) = run {
        cmd.args(["--run", run]);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python (run scripts/setup --test)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            &std::fs::read(root().join(format!("tests/acoustics/cases/{name}.json")))
                .expect("case"),
        )
        .expect("write");
    let out = child.wait_with_output().expect("harness");
    assert!(
        out.status.success(),
        "bellhop.py {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("case")
}

/// Median wall and CPU time of `RUNS` runs of `bellhop.exe` on `base`.
fn time_bellhop(base: &Path) -> (Duration, Duration) {
    let exe = root().join(".venv-test/aubellhop/aubellhop/bin/bellhop.exe");
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (t0, c0) = (Instant::now(), children_cpu());
        let st = Command::new(&exe)
            .arg(base)
            .current_dir(base.parent().expect("dir"))
            .env("OMP_NUM_THREADS", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("bellhop.exe");
        assert!(st.success(), "bellhop.exe {}", base.display());
        wall.push(t0.elapsed());
        cpu.push(children_cpu() - c0);
    }
    (median(wall), median(cpu))
}

/// Median wall and thread CPU time of `RUNS` calls of `work`.
fn time_ours(mut work: impl FnMut()) -> (Duration, Duration) {
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (t0, c0) = (Instant::now(), thread_cpu());
        work();
        wall.push(t0.elapsed());
        cpu.push(thread_cpu() - c0);
    }
    (median(wall), median(cpu))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn row(label: &str, ours: (Duration, Duration), theirs: (Duration, Duration)) -> f64 {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = ours.1.as_secs_f64() / theirs.1.as_secs_f64();
    println!(
        "{label:34} ours {:9.2} ms (cpu {:9.2})   bellhop.exe {:9.2} ms (cpu {:9.2})   \
         ours/BELLHOP {ratio:5.2}",
        ms(ours.0),
        ms(ours.1),
        ms(theirs.0),
        ms(theirs.1)
    );
    ratio
}

fn main() {
    let python = root().join(".venv-test/bin/python");
    let exe = root().join(".venv-test/aubellhop/aubellhop/bin/bellhop.exe");
    if !python.exists() || !exe.exists() {
        eprintln!(
            "beam bench: {} or {} is missing: run scripts/setup --test",
            python.display(),
            exe.display()
        );
        std::process::exit(1);
    }
    println!("beam tracer vs bellhop.exe, one thread each, median of {RUNS} runs");
    let mut worst: f64 = 0.0;
    let mut arrivals_run = |name: &str, run: Option<&str>, label: &str| {
        let c = case(name, run);
        let (env, fan) = (environment(&c), fan(&c));
        let sd = f(&c["source_depth_m"]);
        let ranges = floats(&c["receiver_ranges_m"]);
        let depths = floats(&c["receiver_depths_m"]);
        // Every receiver from one trace of the fan, as BELLHOP does.
        let receivers: Vec<[f64; 2]> = depths
            .iter()
            .flat_map(|&z| ranges.iter().map(move |&r| [r, z]))
            .collect();
        let mut out = vec![Vec::new(); receivers.len()];
        let mut count = 0;
        let ours = time_ours(|| {
            beam::arrivals_at(&env, &fan, sd, &receivers, &mut out);
            count = out.iter().map(Vec::len).sum();
        });
        let theirs = time_bellhop(&bellhop_files(name, run));
        let label = format!(
            "{label} ({} beams, {} rcv, {count} arr)",
            fan.beams,
            ranges.len() * depths.len()
        );
        worst = worst.max(row(&label, ours, theirs));
    };
    arrivals_run("summer", Some("arrivals"), "summer arrivals");
    arrivals_run("front", Some("arrivals"), "front arrivals");
    arrivals_run("munk", Some("arrivals"), "munk arrivals");
    arrivals_run("shallow25k", None, "25 kHz channel arrivals");
    for name in ["summer", "front", "munk"] {
        let c = case(name, Some("incoherent"));
        let (env, fan) = (environment(&c), fan(&c));
        let sd = f(&c["source_depth_m"]);
        let ranges = floats(&c["receiver_ranges_m"]);
        let depths = floats(&c["receiver_depths_m"]);
        let alpha = if c["thorp"].as_bool().unwrap_or(false) {
            let f2 = (f(&c["frequency_hz"]) / 1e3).powi(2);
            (0.0033 + 0.11 * f2 / (1.0 + f2) + 44.0 * f2 / (4100.0 + f2) + 3e-4 * f2) / 0.9144
        } else {
            0.0
        };
        let freq = f(&c["frequency_hz"]);
        let ours = time_ours(|| {
            let tl = beam::field(
                &env,
                &fan,
                sd,
                freq,
                alpha,
                &ranges,
                &depths,
                Sum::Incoherent,
            );
            std::hint::black_box(tl);
        });
        let theirs = time_bellhop(&bellhop_files(name, Some("incoherent")));
        let label = format!(
            "{name} TL field ({} beams, {}×{})",
            fan.beams,
            depths.len(),
            ranges.len()
        );
        worst = worst.max(row(&label, ours, theirs));
    }
    println!(
        "worst ratio ours/BELLHOP (cpu): {worst:.2} — ours {}",
        if worst <= 1.0 {
            "at least as fast on every run"
        } else {
            "slower on at least one run"
        }
    );
}
