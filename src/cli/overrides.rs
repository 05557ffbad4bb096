//! The command line's choices over the scenario's (`--physics-sim`, `--network-sim`,
//! `--duration-s`, `--insecure-peers`), applied once, as the scenario is loaded: every command
//! that runs or checks a scenario takes them through [`apply`], so a simulator chosen by a flag
//! is checked by the same rules as one a scenario file chooses, before anything starts.

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
    loaded.scenario.simulators.insecure_peers |= o.insecure_peers;
    if o.physics_sim.is_some() || o.network_sim.is_some() {
        loaded.check_peers().map_err(|e| {
            let flag = match e.key_path.as_str() {
                "simulators.physics" => "--physics-sim",
                _ => "--network-sim",
            };
            anyhow::anyhow!("{flag}: {}", e.message)
        })?;
    }
    for peer in loaded.scenario.simulators.plaintext_remote_peers() {
        tracing::warn!("{peer}: a simulator on another host reached in plaintext (insecure_peers)");
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

    /// A simulator on another host over ZeroMQ or ROS-NetSim's framing is refused, naming the
    /// flag and the secure form, unless `--insecure-peers` says so; loopback, `ipc://`, a Unix
    /// socket and the secure channel need nothing.
    #[test]
    fn a_plaintext_simulator_on_another_host_needs_insecure_peers() {
        for (flag, remote) in [
            ("--physics-sim", "tcp://10.0.0.2:5601"),
            ("--network-sim", "tcp:10.0.0.2:10000"),
        ] {
            let mut loaded = load("config/default.yaml");
            let e = apply(&mut loaded, &overrides(&[flag, remote])).unwrap_err();
            let e = format!("{e:#}");
            assert!(
                e.starts_with(&format!("{flag}: {remote} is on another host"))
                    && e.contains("--insecure-peers"),
                "{e}"
            );
            let mut loaded = load("config/default.yaml");
            apply(&mut loaded, &overrides(&[flag, remote, "--insecure-peers"])).unwrap();
            let peers = loaded.scenario.simulators.plaintext_remote_peers();
            assert_eq!(
                peers.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                [remote.to_owned()]
            );
        }
        for near in [
            "tcp://127.0.0.1:5601",
            "ipc:///tmp/sim",
            "unix:/tmp/sim",
            "secure://10.0.0.2:5601?key=run.key",
        ] {
            let mut loaded = load("config/default.yaml");
            apply(&mut loaded, &overrides(&["--network-sim", near])).unwrap();
            assert!(loaded
                .scenario
                .simulators
                .plaintext_remote_peers()
                .is_empty());
        }
    }
}
