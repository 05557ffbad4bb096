//! What the binaries share: their command lines ([`args`]), logging, signals, loading a
//! scenario, the output folder ([`run_folder`]), running the physics side; the commands beside
//! it: `cosim check` ([`check`]), a run's summary and report printed, `cosim report` and
//! `cosim compare` ([`mod@report`]), `cosim soak` ([`soak`]), `cosim sweep` ([`sweep`]),
//! `cosim acoustics` ([`acoustics`]). The binaries themselves only
//! parse arguments and call into the library.

pub mod acoustics;
pub mod agent;
pub mod args;
pub mod check;
pub mod overrides;
pub mod report;
pub mod run_folder;
pub mod soak;
pub mod sweep;
pub mod viewer_cert;

pub use report::{
    compare, report, report_air, report_folder, report_network, report_traffic,
    report_without_plots,
};

use crate::config::{self, CoordinatorEndpoint, LoadedScenario};
use crate::coord::{Ended, Participant, WindowView};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Exit code of a run stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Logs to stderr; `RUST_LOG` selects what (default `info`).
///
/// Also sets the process's timer slack to 1 µs, before any thread starts, so that window
/// pacing and packet releases wake on time (see [`crate::io::os::timer`]).
pub fn init_logging() {
    crate::io::os::timer::init();
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
        self.bar.set_position(u64::from(view.open.window) + 1);
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

/// Runs `f` and turns its error into a message on stderr and exit code 1.
pub fn exit_with(result: anyhow::Result<i32>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {}", error_text(&e));
            std::process::exit(1);
        }
    }
}

/// An error and its causes on one line, `outer: cause: …`; a cause the text before it already
/// ends with (an error that writes its source into its own message) is said once.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let cause = cause.to_string();
        if text.is_empty() {
            text = cause;
        } else if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The command line without the ROS arguments (`--ros-args ... [--]`), which rcl reads itself.
/// A build without the `ros` feature has nothing to read them: it exits with code 2 and says
/// so ([`ros_args_refused`]) rather than run without what they set.
pub fn args() -> Vec<String> {
    let mut all = Vec::new();
    for (i, arg) in std::env::args_os().enumerate() {
        match arg.into_string() {
            Ok(arg) => all.push(arg),
            Err(arg) => {
                eprintln!(
                    "error: argument {i} ({}) is not valid UTF-8",
                    arg.to_string_lossy()
                );
                std::process::exit(2);
            }
        }
    }
    let (ours, ros) = crate::ros::params::split_ros_args(all);
    if let Some(why) = ros_args_refused(&ros) {
        eprintln!("error: {why}");
        std::process::exit(2);
    }
    ours
}

/// Why ROS arguments `ros` (`--ros-args …`, as split off the command line) cannot be taken:
/// `None` when there are none or this build has the `ros` feature.
pub fn ros_args_refused(ros: &[String]) -> Option<String> {
    if cfg!(feature = "ros") || ros.is_empty() {
        return None;
    }
    let given: String = ros.join(" ").chars().take(200).collect();
    Some(format!(
        "`{given}`: ROS arguments are read by the ROS 2 node, and {}",
        args::NEEDS_ROS
    ))
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
/// what overrides it: the parameters (`window_ms`, `real_time_factor`), then the command
/// line's `overrides`, each simulator they choose checked as the file's own would be
/// ([`overrides::apply`]).
pub fn load_with(
    params: &crate::ros::params::RunParams,
    scenario: Option<PathBuf>,
    overrides: &args::Overrides,
) -> anyhow::Result<LoadedScenario> {
    let mut loaded = load(&params.scenario(scenario)?)?;
    params.apply(&mut loaded)?;
    overrides::apply(&mut loaded, overrides)?;
    Ok(loaded)
}

/// `cosim run` without root, first thing in `main`: when the scenario (`None`: named by ROS
/// parameters, not known yet) has live capture, the run goes on as root of a user namespace of
/// its own ([`crate::io::os::userns`]; this process then waits for it and exits as it does). Where
/// the kernel refuses one, the run goes on without and its live capture fails with the
/// refusal's line. In the run itself, it makes the run's view of the file system.
pub fn user_namespace_for(scenario: Option<&Path>) {
    use crate::io::os::userns;
    let the_run = userns::is_the_run();
    let needed = !the_run
        && unsafe { libc::geteuid() } != 0
        && scenario.is_none_or(|p| {
            config::load(p).is_ok_and(|l| l.scenario.network.capture == config::Capture::Tun)
        });
    if the_run || needed {
        match userns::enter() {
            Ok(_) => {}
            Err(refusal) if the_run => exit_with(Err(refusal.into())),
            Err(refusal) => userns::remember(refusal),
        }
    }
}

/// `cosim run` and `physics_coordinator`: the ROS node `node_name` (with the `ros` feature),
/// the scenario, the physics coordinator and its observers, the run, its report.
/// A vehicle with `ros.use_sim_time: true` gets a `/clock` bridge in its namespace
/// `ncs-<vehicle>`; `vehicle_netns` (e.g. `ncs-{vehicle}`) starts one in every vehicle namespace
/// the pattern names that exists (see [`bridge_targets`]). `timeline` also writes `timeline.jsonl` (as `record.timeline_jsonl: true`).
/// `overrides` replace the scenario's simulators and `duration_s` (as `cosim soak` runs a
/// scenario for as long as it is asked to); `network_coordinator` names the endpoint of
/// a network coordinator of its own (`None`: in this process); `live` serves the run to viewers
/// (`cosim run --live [ADDR]`, an empty address: the scenario's).
#[allow(clippy::too_many_arguments)]
pub async fn run_physics(
    node_name: &str,
    scenario: Option<PathBuf>,
    out: Option<PathBuf>,
    overrides: args::Overrides,
    network_coordinator: Option<CoordinatorEndpoint>,
    vehicle_netns: Option<String>,
    timeline: bool,
    live: Option<String>,
) -> anyhow::Result<i32> {
    anyhow::ensure!(
        vehicle_netns.is_none() || cfg!(feature = "ros"),
        "--vehicle-netns: the vehicle bridges are ROS 2 nodes, and {}",
        args::NEEDS_ROS
    );
    // Signal handlers first: a Ctrl-C while namespaces are being set up must still clean up.
    let stop = shutdown_signal();
    let (params, ros) = node(node_name)?;
    let mut loaded = load_with(&params, scenario, &overrides)?;
    if let Some(e) = sim_time_refused(&loaded) {
        return Err(e.into());
    }
    loaded.scenario.record.timeline_jsonl |= timeline;
    if let Some(address) = live {
        loaded.scenario.viewer.live = true;
        if !address.is_empty() {
            loaded.scenario.viewer.address = address;
        }
        if let Some(why) = loaded.scenario.viewer.exposed() {
            anyhow::bail!("--live: {why}");
        }
    }
    let out = output_dir(&loaded, out.or(params.out.clone()));
    // With a network coordinator of its own the folder is shared with it: nothing is removed.
    if network_coordinator.is_none() {
        if let Some(line) = run_folder::prepare(&out, &vehicle_names(&loaded))? {
            tracing::info!("{line}");
        }
    }
    let mut c =
        crate::coord::physics_coordinator(&loaded, network_coordinator.as_ref(), Some(out.clone()))
            .await?;
    let targets = bridge_targets(&loaded, vehicle_netns.as_deref());
    if !targets.is_empty() {
        let bridges = crate::ros::bridge::VehicleBridges::spawn(
            &bridge_exe()?,
            &targets,
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
    run_to_end(c, &loaded, &out, stop, true).await
}

/// The end of every run of a scenario (`cosim run`, a campaign's run): the progress bar on a
/// terminal (else a progress line every 2 s), the run, its summary, and with `plots` its
/// report and its richest acoustic moment drawn; the exit code.
pub async fn run_to_end(
    mut c: crate::coord::PhysicsCoordinator,
    loaded: &LoadedScenario,
    out: &Path,
    stop: impl std::future::Future<Output = ()>,
    plots: bool,
) -> anyhow::Result<i32> {
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
    if !plots {
        return report_without_plots(&report_, out);
    }
    let code = report(&report_, out)?;
    match acoustics::richest_moment(loaded, out) {
        Ok(files) => files
            .iter()
            .for_each(|f| println!("acoustic paths: {}", f.display())),
        Err(e) => tracing::warn!("acoustic paths not drawn: {e:#}"),
    }
    Ok(code)
}

/// The vehicles that get a `/clock` bridge, in the scenario's order: with `vehicle_netns`
/// (`--vehicle-netns`) every vehicle, in the namespace the pattern names; otherwise those with
/// `use_sim_time: true`, in `ncs-<vehicle>` — and only when the run has namespaces
/// (`network.capture: tun`).
pub fn bridge_targets(
    loaded: &LoadedScenario,
    vehicle_netns: Option<&str>,
) -> Vec<crate::ros::bridge::BridgeTarget> {
    let s = &loaded.scenario;
    let namespaces = s.network.capture == config::Capture::Tun;
    s.vehicles
        .iter()
        .enumerate()
        .filter_map(|(index, v)| {
            let ros = s.vehicle_ros(v);
            let netns = match vehicle_netns {
                Some(pattern) => crate::ros::bridge::namespace_name(pattern, &v.name),
                None if namespaces && ros.sim_time() => crate::io::os::netns::ns_name(&v.name),
                None => return None,
            };
            Some(crate::ros::bridge::BridgeTarget {
                index,
                vehicle: v.name.clone(),
                netns,
                domain_id: ros.domain_id,
            })
        })
        .collect()
}

/// A build without the `ros` feature refuses a live scenario (`network.capture: tun`) in
/// which a vehicle asks for `use_sim_time: true`: its `/clock` bridge is a ROS 2 node. The
/// error names the key that asks (the vehicle's own, or the top-level `ros`) and its line.
pub fn sim_time_refused(loaded: &LoadedScenario) -> Option<config::ConfigError> {
    let s = &loaded.scenario;
    if cfg!(feature = "ros") || s.network.capture != config::Capture::Tun {
        return None;
    }
    let (i, v) = s
        .vehicles
        .iter()
        .enumerate()
        .find(|(_, v)| s.vehicle_ros(v).sim_time())?;
    let key = match v.ros.use_sim_time {
        Some(true) => format!("vehicles[{i}].ros.use_sim_time"),
        _ => "ros.use_sim_time".to_owned(),
    };
    Some(config::ConfigError::at(
        &loaded.file,
        &loaded.source,
        &key,
        format!(
            "vehicle {} runs on sim time: its /clock bridge is a ROS 2 node, and {}",
            v.name,
            args::NEEDS_ROS
        ),
    ))
}

/// The scenario's vehicle names, in its order.
pub fn vehicle_names(loaded: &LoadedScenario) -> Vec<String> {
    loaded
        .scenario
        .vehicles
        .iter()
        .map(|v| v.name.clone())
        .collect()
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
    serving: impl std::future::Future<Output = anyhow::Result<crate::lockstep::zmq::ServeEnd>>,
    idle_timeout_s: f64,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<i32> {
    use crate::lockstep::zmq::ServeEnd;
    tokio::select! {
        end = serving => match end? {
            ServeEnd::Done => Ok(0),
            ServeEnd::Idle => anyhow::bail!(
                "no request for {idle_timeout_s} s (--idle-timeout-s); exiting"
            ),
        },
        _ = stop => Ok(EXIT_INTERRUPTED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that writes its source into its own message is said once, the rest of the
    /// chain as it is.
    #[test]
    fn an_error_s_cause_is_said_once() {
        let missing = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::from(crate::output::report::ReportError::Io {
            path: "run/record.mcap".into(),
            source: missing(),
        });
        assert_eq!(error_text(&e), format!("run/record.mcap: {}", missing()));
        let e = e.context("cosim report");
        assert_eq!(
            error_text(&e),
            format!("cosim report: run/record.mcap: {}", missing())
        );
        let e = anyhow::Error::from(missing()).context("reading run/summary.json");
        assert_eq!(
            error_text(&e),
            format!("reading run/summary.json: {}", missing())
        );
    }

    #[test]
    fn ros_arguments_are_refused_by_a_build_without_ros() {
        assert_eq!(ros_args_refused(&[]), None);
        let given = ["--ros-args", "-p", "real_time_factor:=1.0"].map(String::from);
        let refused = ros_args_refused(&given);
        if cfg!(feature = "ros") {
            assert_eq!(refused, None);
        } else {
            let why = refused.unwrap();
            assert!(
                why.starts_with("`--ros-args -p real_time_factor:=1.0`: ")
                    && why.contains("`cargo build --features ros`"),
                "{why}"
            );
            // Bounded, whatever the command line.
            let long = vec!["--ros-args".to_owned(), "x".repeat(100_000)];
            assert!(ros_args_refused(&long).unwrap().len() < 600);
        }
    }
}
