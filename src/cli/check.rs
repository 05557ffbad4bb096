//! `cosim check`: a scenario loaded and validated with the overrides `cosim run` would take
//! (`--physics-sim`, `--network-sim`, `--duration-s`), and what it holds printed.

use super::args::{CheckArgs, Overrides};
use crate::config::{LoadedScenario, NetworkEndpoint, PhysicsEndpoint};
use anyhow::Context;

/// `cosim check SCENARIO [overrides]`: prints the scenario's description, exit code 0; the
/// first problem as an error otherwise. What only `cosim run` of this build refuses (sim time
/// without the `ros` feature) is a note on stderr: the scenario itself is valid.
pub fn command(args: &CheckArgs) -> anyhow::Result<i32> {
    // Loading reads the terrain and checks every start and waypoint against it.
    let mut loaded = super::load(&args.scenario)?;
    apply(&mut loaded, &args.overrides)?;
    if let Some(e) = super::sim_time_refused(&loaded) {
        eprintln!("note: valid, but `cosim run` of this build refuses it: {e}");
    }
    print!("{}", describe(&loaded)?);
    Ok(0)
}

/// Puts the overrides into `loaded` as a run takes them (a bare kind keeps the scenario's
/// settings for it) and checks each simulator chosen on the command line as a scenario file
/// choosing it is checked at load; an error names the flag.
pub fn apply(loaded: &mut LoadedScenario, o: &Overrides) -> anyhow::Result<()> {
    if let Some(d) = o.duration_s {
        loaded
            .set_duration_s(d)
            .map_err(|e| anyhow::anyhow!("--duration-s: {e}"))?;
    }
    if let Some(arg) = &o.physics_sim {
        let physics = arg.or_scenario(&loaded.scenario.simulators.physics);
        match &physics {
            PhysicsEndpoint::Gazebo(g) => loaded.check_gazebo(g),
            PhysicsEndpoint::AuvInterface(a) => loaded.check_auv_client(a),
            PhysicsEndpoint::Embedded | PhysicsEndpoint::Peer(_) => Ok(()),
        }
        .with_context(|| format!("--physics-sim {arg}"))?;
        loaded.scenario.simulators.physics = physics;
    }
    if let Some(arg) = &o.network_sim {
        let network = arg.or_scenario(&loaded.scenario.simulators.network);
        if let NetworkEndpoint::Ns3(settings) = &network {
            loaded
                .check_ns3(settings)
                .with_context(|| format!("--network-sim {arg}"))?;
        }
        loaded.scenario.simulators.network = network;
    }
    Ok(())
}

/// What `cosim check` prints for a valid scenario: its vehicles, windows and terrain, its
/// simulators and, for those run from elsewhere, what they need (the ns-3 adapter's command
/// line, Gazebo's world, steps and models). Only what the scenario has.
pub fn describe(loaded: &LoadedScenario) -> anyhow::Result<String> {
    let s = &loaded.scenario;
    let schedule = loaded.schedule();
    let (cols, rows) = loaded.terrain.dims();
    let cell = loaded.terrain.cell_size();
    let mut text = format!(
        "{}: ok — {} vehicles, {} windows of {} ms ({} s), terrain {cols}×{rows} samples, {} m spacing, {} m × {} m\n",
        loaded.file.display(),
        s.vehicles.len(),
        schedule.windows,
        s.window_ms,
        metres(schedule.duration_ns() as f64 / 1e9),
        metres(cell),
        metres(cols.saturating_sub(1) as f64 * cell),
        metres(rows.saturating_sub(1) as f64 * cell),
    );
    text.push_str(&format!(
        "simulators: physics {}, network {}\n",
        s.simulators.physics, s.simulators.network
    ));
    // The command line an ns-3 adapter started by hand (e.g. on another host) needs.
    if let NetworkEndpoint::Ns3(settings) = &s.simulators.network {
        let args = crate::model::ns3::adapter_args(loaded, settings)?;
        text.push_str(&format!(
            "ns-3 adapter: {} --bind=ENDPOINT {}\n",
            crate::io::ns3::PROGRAM,
            args.join(" ")
        ));
    }
    // The capture agents, each started by hand on its machine with the run's secret.
    let key = match &s.network.agents.key_file {
        Some(f) => loaded.relative(f).display().to_string(),
        None => "<OUT>/agent.key".to_owned(),
    };
    for agent in s.agents() {
        let vehicles: Vec<&str> = (s.vehicles.iter())
            .filter(|v| v.host.as_deref() == Some(agent.as_str()))
            .map(|v| v.name.as_str())
            .collect();
        text.push_str(&format!(
            "agent {agent} ({}): {}\n",
            vehicles.join(", "),
            crate::io::agents::hub::command_line(loaded, &agent, &key)
        ));
    }
    if let PhysicsEndpoint::Gazebo(g) = &s.simulators.physics {
        let (step_s, steps) = g
            .steps(s.window_ms, s.simulators.physics_step_ms)
            .map_err(anyhow::Error::msg)?;
        let models: Vec<String> = s
            .vehicles
            .iter()
            .map(|v| format!("{} = {}", v.name, g.model(&v.name)))
            .collect();
        text.push_str(&format!(
            "Gazebo: world `{}`, {steps} steps of {} ms per window through {}; models {}\n",
            g.world_name(&s.name),
            step_s * 1e3,
            g.control_service(&s.name),
            models.join(", ")
        ));
    }
    Ok(text)
}

/// A length as written for people: at most three decimals, no trailing zeros.
fn metres(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::{Command, Cosim};
    use clap::Parser;
    use std::path::Path;

    fn load(path: &str) -> LoadedScenario {
        crate::config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
    }

    fn overrides(args: &[&str]) -> Overrides {
        let mut argv = vec!["cosim", "check", "s.yaml"];
        argv.extend_from_slice(args);
        match Cosim::try_parse_from(argv).unwrap().command {
            Command::Check(c) => c.overrides,
            other => panic!("{other:?}"),
        }
    }

    /// The default scenario's terrain: 1000 m × 400 m at 2 m, i.e. 501 × 201 height samples
    /// (500 × 200 cells).
    #[test]
    fn the_terrain_is_described_by_its_samples_spacing_and_extent() {
        let text = describe(&load("config/default.yaml")).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.ends_with(
                ": ok — 5 vehicles, 60000 windows of 1 ms (60 s), terrain 501×201 samples, 2 m spacing, 1000 m × 400 m"
            ),
            "{first}"
        );
        assert!(!text.contains("cells"), "{text}");
    }

    #[test]
    fn only_the_devices_the_scenario_has_are_printed() {
        let text = describe(&load("config/ns3_acoustic.yaml")).unwrap();
        let adapter = text
            .lines()
            .find(|l| l.starts_with("ns-3 adapter: "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(adapter.contains("--uanNodes=") && adapter.contains("--uanMac="));
        assert!(!adapter.contains("--wifi"), "{adapter}");
        let text = describe(&load("config/ns3_wifi.yaml")).unwrap();
        assert!(
            text.contains("--wifiNodes=") && !text.contains("--uan"),
            "{text}"
        );
        let text = describe(&load("config/default.yaml")).unwrap();
        assert!(!text.contains("ns-3") && !text.contains("Gazebo"), "{text}");
        assert!(
            text.contains("simulators: physics embedded, network embedded"),
            "{text}"
        );
    }

    #[test]
    fn each_agent_s_command_line_is_printed() {
        let text = describe(&load("config/agents.yaml")).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("agent ")).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("agent hostb (ugv3, ugv4): cosim agent ")
                && lines[0].ends_with(
                    "config/agents.yaml --name hostb --coordinator 127.0.0.1:5610 --key <OUT>/agent.key"
                ),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("agent hostc (ugv5): "), "{}", lines[1]);
        let text = describe(&load("config/default.yaml")).unwrap();
        assert!(!text.contains("cosim agent"), "{text}");
    }

    #[test]
    fn the_overrides_are_applied_and_checked_as_a_run_takes_them() {
        let mut loaded = load("config/default.yaml");
        apply(
            &mut loaded,
            &overrides(&[
                "--network-sim",
                "ns3",
                "--physics-sim",
                "tcp://127.0.0.1:5601",
                "--duration-s",
                "2",
            ]),
        )
        .unwrap();
        let text = describe(&loaded).unwrap();
        assert!(
            text.contains("2000 windows of 1 ms (2 s)")
                && text.contains("simulators: physics tcp://127.0.0.1:5601, network ns3")
                && text.contains("ns-3 adapter: netsim-ns3 --bind=ENDPOINT --nodes=5")
                && text.contains("--wifiNodes=0,1")
                && !text.contains("--uan"),
            "{text}"
        );
        // Gazebo needs every vehicle moved by it: the default scenario's are not.
        let mut loaded = load("config/default.yaml");
        let e = apply(&mut loaded, &overrides(&["--physics-sim", "gazebo"])).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.starts_with("--physics-sim gazebo: ")
                && e.contains("vehicles[0].motion: Gazebo moves the vehicles"),
            "{e}"
        );
        // ns-3 takes only one acoustic channel: acoustic.yaml's pairs run at two rates.
        let mut loaded = load("config/acoustic.yaml");
        let e = apply(&mut loaded, &overrides(&["--network-sim", "ns3"])).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.starts_with("--network-sim ns3: ")
                && e.contains("under ns-3 every acoustic link is one UAN channel"),
            "{e}"
        );
        let mut loaded = load("config/default.yaml");
        let e = apply(&mut loaded, &overrides(&["--physics-sim", "auv"])).unwrap_err();
        assert!(
            format!("{e:#}").contains("the AUV interface simulator moves every vehicle"),
            "{e:#}"
        );
        let mut loaded = load("config/default.yaml");
        let e = apply(&mut loaded, &overrides(&["--duration-s", "0"])).unwrap_err();
        assert!(e.to_string().starts_with("--duration-s: "), "{e}");
    }

    #[test]
    fn lengths_are_written_plainly() {
        assert_eq!(metres(2.0).to_string(), "2");
        assert_eq!(metres(2000.0 * 0.1).to_string(), "200");
        assert_eq!(metres(0.25).to_string(), "0.25");
    }
}
