//! Node parameters (`--ros-args --params-file params/params.yaml`, `-p name:=value`) and how
//! they apply to a run: a parameter left unset (or an empty string) means the scenario's value
//! or the command line's. Read by [`super::node`]; kept here so the rules are testable without
//! ROS.

use crate::config::LoadedScenario;
use std::path::PathBuf;

/// Every parameter the nodes read (`use_sim_time` is rcl's own).
pub const NAMES: [&str; 7] = [
    "scenario",
    "window_ms",
    "out",
    "real_time_factor",
    "wait_for_subscribers",
    "bridge_wait_for_subscribers",
    "use_sim_time",
];

/// One parameter's value as the node sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    NotSet,
    Number(f64),
    Text(String),
    /// Any other type (a bool, an array), described.
    Other(String),
}

/// The parameters of the `netsim_cosim` and `physics_coordinator` nodes (the
/// `network_coordinator` node reads `scenario` and `window_ms`). Unset = not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunParams {
    /// Scenario file; the command line's scenario wins if both are given.
    pub scenario: Option<PathBuf>,
    /// Overrides the scenario's `window_ms` (W).
    pub window_ms: Option<f64>,
    /// Output folder; the command line's `--out` wins.
    pub out: Option<PathBuf>,
    /// Overrides the scenario's `real_time_factor`.
    pub real_time_factor: Option<f64>,
    /// Before window 0, wait (up to 30 s) until `/clock` has this many subscribers.
    pub wait_for_subscribers: Option<u32>,
    /// The same for each vehicle bridge's `/clock` inside its namespace (`--vehicle-netns`, or a
    /// vehicle's `ros.use_sim_time`).
    pub bridge_wait_for_subscribers: Option<u32>,
}

impl RunParams {
    /// The parameters from `get` (a parameter's value by name): unset and empty strings are
    /// not given; numbers may be integers or doubles; a wait count below 0 is 0.
    pub fn read(get: impl Fn(&str) -> Param) -> anyhow::Result<RunParams> {
        let number = |name: &str| -> anyhow::Result<Option<f64>> {
            match get(name) {
                Param::NotSet => Ok(None),
                Param::Number(v) => Ok(Some(v)),
                Param::Text(t) => {
                    anyhow::bail!("parameter {name}: expected a number, got the string {t:?}")
                }
                Param::Other(o) => anyhow::bail!("parameter {name}: expected a number, got {o}"),
            }
        };
        let string = |name: &str| -> anyhow::Result<Option<String>> {
            match get(name) {
                Param::NotSet => Ok(None),
                Param::Text(t) if t.is_empty() => Ok(None),
                Param::Text(t) => Ok(Some(t)),
                Param::Number(v) => {
                    anyhow::bail!("parameter {name}: expected a string, got the number {v}")
                }
                Param::Other(o) => anyhow::bail!("parameter {name}: expected a string, got {o}"),
            }
        };
        let count = |name: &str| -> anyhow::Result<Option<u32>> {
            Ok(number(name)?.map(|n| n.clamp(0.0, f64::from(u32::MAX)) as u32))
        };
        Ok(RunParams {
            scenario: string("scenario")?.map(Into::into),
            window_ms: number("window_ms")?,
            out: string("out")?.map(Into::into),
            real_time_factor: number("real_time_factor")?,
            wait_for_subscribers: count("wait_for_subscribers")?,
            bridge_wait_for_subscribers: count("bridge_wait_for_subscribers")?,
        })
    }

    /// The scenario to load: the command line's, else the parameter.
    pub fn scenario(&self, cli: Option<PathBuf>) -> anyhow::Result<PathBuf> {
        cli.or_else(|| self.scenario.clone()).ok_or_else(|| {
            anyhow::anyhow!("no scenario: give it as an argument or as the `scenario` parameter")
        })
    }

    /// Applies `window_ms` and `real_time_factor` to a loaded scenario.
    pub fn apply(&self, loaded: &mut LoadedScenario) -> anyhow::Result<()> {
        if let Some(w) = self.window_ms {
            anyhow::ensure!(
                w.is_finite() && w > 0.0,
                "parameter window_ms = {w}: must be > 0"
            );
            loaded
                .set_window_ms(w)
                .map_err(|e| anyhow::anyhow!("parameter window_ms = {w}: {e}"))?;
        }
        if let Some(r) = self.real_time_factor {
            anyhow::ensure!(
                r.is_finite() && r >= 0.0,
                "parameter real_time_factor = {r}: must be >= 0"
            );
            loaded.scenario.real_time_factor = r;
        }
        Ok(())
    }
}

/// Splits a command line into what clap parses and the ROS arguments: everything from
/// `--ros-args` up to a lone `--` (or the end) belongs to rcl, which reads it itself. A lone `--`
/// outside the ROS arguments ends the splitting: what follows is another program's command line
/// (`cosim exec auv1 -- python3 talker.py --ros-args -p use_sim_time:=true`) and stays intact.
pub fn split_ros_args<I: IntoIterator<Item = String>>(args: I) -> (Vec<String>, Vec<String>) {
    let (mut ours, mut ros) = (Vec::new(), Vec::new());
    let mut in_ros = false;
    let mut passthrough = false;
    for a in args {
        if passthrough {
            ours.push(a);
        } else if in_ros {
            if a == "--" {
                in_ros = false;
            } else {
                ros.push(a);
            }
        } else if a == "--ros-args" {
            in_ros = true;
            ros.push(a);
        } else if a == "--" {
            passthrough = true;
            ours.push(a);
        } else {
            ours.push(a);
        }
    }
    (ours, ros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_args_are_split_off() {
        let args = [
            "cosim",
            "run",
            "--ros-args",
            "--params-file",
            "p.yaml",
            "-r",
            "__node:=x",
            "--",
            "--out",
            "o",
        ];
        let (ours, ros) = split_ros_args(args.iter().map(|s| s.to_string()));
        assert_eq!(ours, ["cosim", "run", "--out", "o"]);
        assert_eq!(
            ros,
            ["--ros-args", "--params-file", "p.yaml", "-r", "__node:=x"]
        );
        let (ours, ros) = split_ros_args(["x", "a"].iter().map(|s| s.to_string()));
        assert_eq!((ours.len(), ros.len()), (2, 0));
        // After a lone `--` the rest is another program's command line, its ROS arguments included.
        let args = [
            "cosim",
            "exec",
            "auv1",
            "--",
            "python3",
            "t.py",
            "--ros-args",
            "-p",
            "use_sim_time:=true",
        ];
        let (ours, ros) = split_ros_args(args.iter().map(|s| s.to_string()));
        assert_eq!(ours, args);
        assert!(ros.is_empty());
    }

    #[test]
    fn unset_parameters_leave_the_scenario_s_values() {
        let given = |name: &str| match name {
            "real_time_factor" => Param::Number(2.0),
            "window_ms" => Param::Number(5.0),
            "scenario" => Param::Text("s.yaml".into()),
            "wait_for_subscribers" => Param::Number(-3.0),
            _ => Param::NotSet,
        };
        let p = RunParams::read(given).unwrap();
        assert_eq!(
            p,
            RunParams {
                scenario: Some("s.yaml".into()),
                window_ms: Some(5.0),
                real_time_factor: Some(2.0),
                wait_for_subscribers: Some(0),
                ..Default::default()
            }
        );
        let unset = RunParams::read(|name| match name {
            "scenario" | "out" => Param::Text(String::new()),
            _ => Param::NotSet,
        })
        .unwrap();
        assert_eq!(unset, RunParams::default());
        let e = RunParams::read(|name| match name {
            "real_time_factor" => Param::Text("1".into()),
            _ => Param::NotSet,
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter real_time_factor: expected a number, got the string \"1\""
        );
    }

    #[test]
    fn the_nodes_read_every_named_parameter_but_rcl_s_own() {
        let asked = std::cell::RefCell::new(Vec::new());
        RunParams::read(|name| {
            asked.borrow_mut().push(name.to_owned());
            Param::NotSet
        })
        .unwrap();
        let mut asked = asked.into_inner();
        asked.sort();
        let mut names: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| *n != "use_sim_time")
            .collect();
        names.sort();
        assert_eq!(asked, names);
    }

    #[test]
    fn command_line_scenario_wins() {
        let p = RunParams {
            scenario: Some("p.yaml".into()),
            ..Default::default()
        };
        assert_eq!(
            p.scenario(Some("c.yaml".into())).unwrap(),
            PathBuf::from("c.yaml")
        );
        assert_eq!(p.scenario(None).unwrap(), PathBuf::from("p.yaml"));
        assert!(RunParams::default().scenario(None).is_err());
    }
}
