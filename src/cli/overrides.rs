//! The command line's choices over the scenario's (`--physics-sim`, `--network-sim`,
//! `--duration-s`), applied once, as the scenario is loaded: every command that runs or checks
//! a scenario takes them through [`apply`], so a simulator chosen by a flag is checked by the
//! same rules as one a scenario file chooses, before anything starts.

use super::args::Overrides;
use crate::config::{LoadedScenario, NetworkEndpoint, PhysicsEndpoint};
use anyhow::Context;

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
        assert_eq!(loaded.schedule().windows, 2000);
        assert_eq!(
            loaded.scenario.simulators.physics.to_string(),
            "tcp://127.0.0.1:5601"
        );
        let NetworkEndpoint::Ns3(settings) = &loaded.scenario.simulators.network else {
            panic!("{}", loaded.scenario.simulators.network)
        };
        let args = crate::model::ns3::adapter_args(&loaded, settings);
        assert!(
            args.contains(&"--nodes=5".to_string())
                && args.contains(&"--wifiNodes=0,1".to_string())
                && !args.iter().any(|a| a.starts_with("--uan")),
            "{args:?}"
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
}
