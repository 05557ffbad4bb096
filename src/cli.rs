//! What the binaries share: logging, signals, loading a scenario, reporting a run.
//! The binaries themselves only parse arguments and call into the library.

use crate::config::{self, LoadedScenario};
use crate::coord::{Ended, Participant, RunReport, WindowView};
use crate::net::ledger::LedgerSummary;
use crate::output::report;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Exit code of a run stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Logs to stderr; `RUST_LOG` selects what (default `info`).
///
/// Also sets the process's timer slack to 1 µs, before any thread starts, so that window
/// pacing and packet releases wake on time (see [`crate::io::timer`]).
pub fn init_logging() {
    crate::io::timer::init();
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LogWriter)
        .with_target(false)
        .init();
}

/// The progress bar on screen, if any: log lines are written around it.
static PROGRESS: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);

/// stderr for log lines: with a progress bar shown, each line is written while the bar is
/// hidden, so neither tears the other.
struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let bar = PROGRESS.lock().ok().and_then(|b| b.clone());
        match bar {
            Some(bar) => bar.suspend(|| std::io::stderr().write(buf)),
            None => std::io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A progress bar on stderr while a run goes (windows done, sim time, speed against the wall
/// clock, time left); shown only when stderr is a terminal.
pub struct ProgressBarObserver {
    bar: indicatif::ProgressBar,
}

impl ProgressBarObserver {
    /// None when stderr is not a terminal.
    pub fn for_run(schedule: crate::clock::Schedule) -> Option<ProgressBarObserver> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let window_s = schedule.window_s();
        let total_s = schedule.duration_ns() as f64 / 1e9;
        let style = indicatif::ProgressStyle::with_template(
            "sim {sim}/{total} s [{wide_bar:.cyan/blue}] {percent:>3}%  {speed}  ETA {eta}",
        )
        .expect("a valid progress template")
        .with_key(
            "sim",
            move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}", s.pos() as f64 * window_s);
            },
        )
        .with_key(
            "total",
            move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{total_s:.1}");
            },
        )
        .with_key(
            "speed",
            move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let wall = s.elapsed().as_secs_f64();
                if wall > 0.0 {
                    let _ = write!(w, "{:.2}× real time", s.pos() as f64 * window_s / wall);
                }
            },
        )
        .progress_chars("=> ");
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(u64::from(schedule.windows)),
            indicatif::ProgressDrawTarget::stderr(),
        )
        .with_style(style);
        if let Ok(mut p) = PROGRESS.lock() {
            *p = Some(bar.clone());
        }
        Some(ProgressBarObserver { bar })
    }
}

impl Participant for ProgressBarObserver {
    fn window(&mut self, view: &WindowView<'_>, _ended: &mut Ended) -> anyhow::Result<()> {
        self.bar.set_position(u64::from(view.window) + 1);
        Ok(())
    }

    fn stop(&mut self) {
        self.bar.finish_and_clear();
        if let Ok(mut p) = PROGRESS.lock() {
            *p = None;
        }
    }
}

impl Drop for ProgressBarObserver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Resolves on SIGINT or SIGTERM. The handlers are installed when this is called (not when
/// first polled), so a signal during set-up (e.g. while namespaces are being created) still
/// ends the run cleanly instead of killing the process.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).expect("install SIGINT handler");
    let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
    async move {
        tokio::select! {
            _ = int.recv() => tracing::warn!("SIGINT: stopping after the current window"),
            _ = term.recv() => tracing::warn!("SIGTERM: stopping after the current window"),
        }
    }
}

pub fn load(path: &Path) -> anyhow::Result<LoadedScenario> {
    Ok(config::load(path)?)
}

/// The output folder: `--out`, else the scenario's `output_dir`, else `out/<name>`.
pub fn output_dir(loaded: &LoadedScenario, out: Option<PathBuf>) -> PathBuf {
    out.or_else(|| loaded.scenario.output_dir.as_ref().map(PathBuf::from))
        .unwrap_or_else(|| Path::new("out").join(&loaded.scenario.name))
}

/// Writes `summary.json` next to the timeline, the report from the run's record
/// (`report/`), prints the summary tables, returns the exit code.
pub fn report(report: &RunReport, out_dir: &Path) -> anyhow::Result<i32> {
    std::fs::create_dir_all(out_dir)?;
    let summary = out_dir.join("summary.json");
    std::fs::write(&summary, serde_json::to_vec_pretty(report)?)?;
    let mut files = vec![("summary", summary)];
    if let Some(m) = &report.modems {
        let ledger = out_dir.join("modem_ledger.jsonl");
        let mut text = String::new();
        for e in &m.entries {
            text.push_str(&serde_json::to_string(e)?);
            text.push('\n');
        }
        std::fs::write(&ledger, text)?;
        files.push(("modem ledger", ledger));
    }
    if let Some(r) = &report.record {
        files.push(("record", r.clone()));
    }
    if !report.programs.is_empty() {
        files.push(("program logs", out_dir.join("programs")));
    }
    if let Some(t) = &report.timeline {
        files.push(("timeline", t.clone()));
    }
    match report::generate(out_dir) {
        Ok(r) => print_report(&r),
        Err(e) => {
            // No record to read: the tables from the run's summary alone.
            tracing::warn!("report not written: {e}");
            let analysis = report::series::Analysis::of(
                &Default::default(),
                Some(serde_json::to_value(report)?),
            );
            print!("{}", report::table::terminal(&analysis));
        }
    }
    for (what, path) in files {
        println!("{what}: {}", path.display());
    }
    Ok(if report.interrupted {
        EXIT_INTERRUPTED
    } else {
        0
    })
}

fn print_report(r: &report::ReportFiles) {
    print!("{}", r.table());
    for n in &r.notes {
        tracing::warn!("report: {n}");
    }
    println!("report: {}", r.html.display());
}

/// `cosim report <run folder>`: the report regenerated from the run's record, and its tables.
pub fn report_folder(run_dir: &Path) -> anyhow::Result<i32> {
    let r = report::generate(run_dir)?;
    print_report(&r);
    Ok(0)
}

/// `cosim compare LABEL=RUN... --link SRC:DST [--phase NAME=FROM-TO]...`: one link of several
/// runs side by side, per phase, printed as a Markdown table. Each record's copies are folded
/// into its phases as it is read ([`report::compare::PhaseFold`]); without `--phase`, one phase
/// holds every copy and runs from 0 to the latest time of any copy in the records.
pub fn compare(
    runs: &[String],
    link: &str,
    mut phases: Vec<report::compare::Phase>,
) -> anyhow::Result<i32> {
    use crate::output::record::Record;
    use report::compare::PhaseFold;
    let (src, dst) = link
        .split_once(':')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| anyhow::anyhow!("--link {link:?}: expected SRC:DST"))?;
    let mut columns = Vec::new();
    let mut end = 0.0_f64;
    for run in runs {
        let (label, dir) = match run.split_once('=') {
            Some((label, dir)) => (label.to_owned(), Path::new(dir).to_path_buf()),
            None => (
                Path::new(run)
                    .file_name()
                    .map_or(run.clone(), |n| n.to_string_lossy().into_owned()),
                Path::new(run).to_path_buf(),
            ),
        };
        let mut folds: Vec<PhaseFold> = if phases.is_empty() {
            vec![PhaseFold::whole_run()]
        } else {
            phases.iter().map(PhaseFold::new).collect()
        };
        let mut seen = false;
        Record::read_with(&dir, &mut |p| {
            end = end.max(p.end_s);
            if p.src == src && p.dst.as_deref() == Some(dst) {
                seen = true;
                folds.iter_mut().for_each(|f| f.add(&p));
            }
        })?;
        if !seen {
            anyhow::bail!(
                "{}: no packet from {src} to {dst} in the record",
                dir.display()
            );
        }
        columns.push((label, folds));
    }
    if phases.is_empty() {
        phases.push(report::compare::Phase {
            name: "run".into(),
            from_s: 0.0,
            to_s: end.max(1e-9),
        });
    }
    let runs: Vec<_> = columns
        .into_iter()
        .map(|(label, folds)| {
            let figures = folds
                .into_iter()
                .zip(&phases)
                .map(|(f, p)| f.finish(p.to_s - p.from_s))
                .collect();
            (label, figures)
        })
        .collect();
    println!(
        "{src} → {dst}\n\n{}",
        report::compare::table(&runs, &phases)
    );
    Ok(0)
}

fn print_ledger(n: &LedgerSummary) {
    let drops: Vec<String> = n.drops.iter().map(|(r, c)| format!("{r} {c}")).collect();
    println!(
        "  network: captured {} = delivered {} + dropped {} + in flight {} ({}){}",
        n.captured,
        n.delivered,
        n.dropped,
        n.in_flight,
        if n.balanced {
            "balanced"
        } else {
            "NOT BALANCED"
        },
        if drops.is_empty() {
            String::new()
        } else {
            format!("; drops: {}", drops.join(", "))
        }
    );
}

/// Writes a standalone network coordinator's ledger to `network_summary.json` and prints it.
pub fn report_network(n: &LedgerSummary, out_dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out_dir)?;
    std::fs::write(
        out_dir.join("network_summary.json"),
        serde_json::to_vec_pretty(n)?,
    )?;
    print_ledger(n);
    Ok(())
}

/// Runs `f` and turns its error into a message on stderr and exit code 1.
pub fn exit_with(result: anyhow::Result<i32>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}

/// The command line without the ROS arguments (`--ros-args ... [--]`), which rcl reads itself.
pub fn args() -> Vec<String> {
    crate::ros::params::split_ros_args(std::env::args()).0
}

/// Where the physics coordinator's peers are (`None`: the scenario's choice, in-process).
#[derive(Debug, Clone, Default)]
pub struct Peers {
    pub physics_sim: Option<String>,
    pub network_coordinator: Option<String>,
    pub network_sim: Option<String>,
}

/// The node parameters: read from `--ros-args` by the ROS node `node_name` when built with the
/// `ros` feature (the node is returned for the run to publish with), none otherwise.
#[cfg(feature = "ros")]
pub fn node(
    node_name: &str,
) -> anyhow::Result<(
    crate::ros::params::RunParams,
    Option<crate::ros::node::RosNode>,
)> {
    let n = crate::ros::node::start(node_name)?;
    Ok((n.params.clone(), Some(n)))
}

#[cfg(not(feature = "ros"))]
pub fn node(
    _node_name: &str,
) -> anyhow::Result<(
    crate::ros::params::RunParams,
    Option<std::convert::Infallible>,
)> {
    Ok((Default::default(), None))
}

/// Loads the scenario named on the command line or by the `scenario` parameter and applies
/// the parameters that override it (`window_ms`, `real_time_factor`).
pub fn load_with(
    params: &crate::ros::params::RunParams,
    scenario: Option<PathBuf>,
) -> anyhow::Result<LoadedScenario> {
    let mut loaded = load(&params.scenario(scenario)?)?;
    params.apply(&mut loaded)?;
    Ok(loaded)
}

/// For a run without root: turns live capture (`network.capture: tun`) off, so that what
/// needs no namespaces still runs; programs inside vehicles are then reported as not started.
/// Returns the line that says so, `None` if the scenario has no live capture.
pub fn without_namespaces(loaded: &mut LoadedScenario) -> Option<String> {
    let s = &mut loaded.scenario;
    if s.network.capture != config::Capture::Tun {
        return None;
    }
    s.network.capture = config::Capture::None;
    let skipped = match s.programs.iter().filter(|p| p.vehicle.is_some()).count() {
        0 => String::new(),
        1 => " and the program inside a vehicle".to_owned(),
        n => format!(" and the {n} programs inside vehicles"),
    };
    let verb = if skipped.is_empty() { "is" } else { "are" };
    Some(format!("not root: running without network namespaces — live capture{skipped} {verb} skipped (run as root for them)"))
}

/// `cosim run` and `physics_coordinator`: the ROS node `node_name` (with the `ros` feature),
/// the scenario, the physics coordinator and its observers, the run, its report.
/// `vehicle_netns` (e.g. `ncs-{vehicle}`) starts a `/clock` bridge in every vehicle namespace
/// that exists. `timeline` also writes `timeline.jsonl` (as `record.timeline_jsonl: true`).
/// `duration_s` replaces the scenario's `duration_s` (`cosim run --duration-s`, as `cosim soak`
/// runs a scenario for as long as it is asked to).
pub async fn run_physics(
    node_name: &str,
    scenario: Option<PathBuf>,
    out: Option<PathBuf>,
    peers: Peers,
    vehicle_netns: Option<String>,
    timeline: bool,
    duration_s: Option<f64>,
) -> anyhow::Result<i32> {
    // Signal handlers first: a Ctrl-C while namespaces are being set up must still clean up.
    let stop = shutdown_signal();
    let (params, ros) = node(node_name)?;
    let mut loaded = load_with(&params, scenario)?;
    if let Some(d) = duration_s {
        loaded
            .set_duration_s(d)
            .map_err(|e| anyhow::anyhow!("--duration-s: {e}"))?;
    }
    if unsafe { libc::geteuid() } != 0 {
        if let Some(line) = without_namespaces(&mut loaded) {
            eprintln!("{line}");
        }
    }
    loaded.scenario.record.timeline_jsonl |= timeline;
    let out = output_dir(&loaded, out.or(params.out.clone()));
    let mut c = crate::coord::PhysicsCoordinator::for_scenario(
        &loaded,
        peers.physics_sim.as_deref(),
        peers.network_coordinator.as_deref(),
        peers.network_sim.as_deref(),
        Some(out.clone()),
    )
    .await?;
    if let Some(pattern) = vehicle_netns {
        anyhow::ensure!(
            cfg!(feature = "ros"),
            "--vehicle-netns needs a build with the `ros` feature"
        );
        let names: Vec<String> = loaded
            .scenario
            .vehicles
            .iter()
            .map(|v| v.name.clone())
            .collect();
        let bridges = crate::ros::bridge::VehicleBridges::spawn(
            &bridge_exe()?,
            &names,
            &pattern,
            params.bridge_wait_for_subscribers.unwrap_or(0),
        )?;
        c = c.with_participant(bridges);
    }
    #[cfg(feature = "ros")]
    if let Some(ros) = ros {
        c = c.with_participant(ros.publisher(&loaded)?);
    }
    #[cfg(not(feature = "ros"))]
    let _ = ros;
    // The bar, on a terminal, or else a progress line every 2 s.
    let schedule = c.schedule();
    c = match ProgressBarObserver::for_run(schedule) {
        Some(bar) => c.with_participant(bar),
        None => {
            let every = std::time::Duration::from_secs(2);
            c.with_participant(crate::coord::participants::ProgressLog::new(
                schedule, every,
            ))
        }
    };
    let report_ = c.run(stop).await?;
    report(&report_, &out)
}

/// `cosim soak`: the scenario (default [`crate::io::soak::DEFAULT_SCENARIO`]) run for `minutes`
/// as a child process and checked; prints the figures and checks, returns 0 when every check
/// passed, 130 when stopped by SIGINT/SIGTERM, 1 otherwise (naming the checks that failed).
pub async fn soak(
    scenario: Option<PathBuf>,
    minutes: f64,
    out: Option<PathBuf>,
    sample_s: f64,
) -> anyhow::Result<i32> {
    use crate::io::soak;
    let stop = shutdown_signal();
    let opts = soak::Options {
        scenario: scenario.unwrap_or_else(|| PathBuf::from(soak::DEFAULT_SCENARIO)),
        minutes,
        out,
        sample_s,
        exe: std::env::current_exe()?,
    };
    let s = soak::run(opts, stop).await?;
    print!("{}", s.table());
    println!("soak: {}", s.out.join("soak.json").display());
    if s.passed {
        println!("soak passed");
        Ok(0)
    } else {
        eprintln!("soak failed: {}", s.failed().join(", "));
        Ok(if s.interrupted { EXIT_INTERRUPTED } else { 1 })
    }
}

/// The `cosim` executable (which serves `cosim ros-vehicle-bridge`): this one, or its sibling.
fn bridge_exe() -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    Ok(if me.file_stem().is_some_and(|s| s == "cosim") {
        me
    } else {
        me.with_file_name("cosim")
    })
}

/// Waits for a served peer (`cosim physics-sim`, `network_coordinator`, ...) to end: exit code
/// 0 after the scenario's last window, an error after `idle_timeout_s` without a request, 130
/// on `stop` (SIGINT/SIGTERM).
pub async fn serve_until(
    serving: impl std::future::Future<Output = anyhow::Result<crate::sync::zmq::ServeEnd>>,
    idle_timeout_s: f64,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<i32> {
    use crate::sync::zmq::ServeEnd;
    tokio::select! {
        end = serving => match end? {
            ServeEnd::Done => Ok(0),
            ServeEnd::Idle => anyhow::bail!("no request for {idle_timeout_s} s; exiting"),
        },
        _ = stop => Ok(EXIT_INTERRUPTED),
    }
}
