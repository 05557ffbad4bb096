//! Tests of the simulator endpoints: text forms, roles and the settings a scenario gives.

use super::*;

#[test]
fn rosnetsim_addresses() {
    let parse = |s: &str| s.parse::<RosnetsimAddress>();
    assert_eq!(
        parse("unix:/tmp/x").unwrap(),
        RosnetsimAddress::Unix("/tmp/x".into())
    );
    assert_eq!(
        parse("tcp:127.0.0.1:10000").unwrap(),
        RosnetsimAddress::Tcp("127.0.0.1:10000".into())
    );
    assert_eq!(
        parse("tcp://[::1]:5").unwrap(),
        RosnetsimAddress::Tcp("[::1]:5".into())
    );
    assert_eq!(parse("tcp://[::1]:5").unwrap().to_string(), "tcp:[::1]:5");
    assert_eq!(parse("unix:/tmp/x").unwrap().to_string(), "unix:/tmp/x");
    for bad in [
        "unix:",
        "tcp:host",
        "tcp::5",
        "tcp:h:0",
        "tcp:h:99999",
        "ipc:///x",
        "",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn command_line_forms_name_each_transport() {
    let physics = |s: &str| s.parse::<PhysicsEndpoint>();
    let network = |s: &str| s.parse::<NetworkEndpoint>();
    let peer = |s: &str| s.parse::<PeerEndpoint>();
    assert_eq!(physics("embedded").unwrap(), PhysicsEndpoint::Embedded);
    assert_eq!(network("embedded").unwrap(), NetworkEndpoint::Embedded);
    for zmq in ["tcp://127.0.0.1:5601", "tcp://*:5601", "ipc:///tmp/p"] {
        let p = PeerEndpoint::Zeromq(ZmqEndpoint(zmq.into()));
        assert_eq!(peer(zmq).unwrap(), p);
        assert_eq!(physics(zmq).unwrap(), PhysicsEndpoint::Peer(p.clone()));
        assert_eq!(network(zmq).unwrap(), NetworkEndpoint::Peer(p.clone()));
        assert_eq!(physics(zmq).unwrap().to_string(), zmq);
        assert_eq!(network(zmq).unwrap().to_string(), zmq);
    }
    let unix = PeerEndpoint::Rosnetsim(RosnetsimAddress::Unix("/tmp/net_server_socket".into()));
    assert_eq!(
        network("unix:/tmp/net_server_socket").unwrap(),
        NetworkEndpoint::Peer(unix.clone())
    );
    assert_eq!(
        physics("unix:/tmp/net_server_socket").unwrap(),
        PhysicsEndpoint::Peer(unix)
    );
    let tcp = PeerEndpoint::Rosnetsim(RosnetsimAddress::Tcp("127.0.0.1:10000".into()));
    assert_eq!(
        physics("tcp:127.0.0.1:10000").unwrap(),
        PhysicsEndpoint::Peer(tcp.clone())
    );
    assert_eq!(peer("tcp:127.0.0.1:10000").unwrap(), tcp);
    for bad in [
        "",
        "Embedded",
        "udp://1.2.3.4:5",
        "tcp:host",
        "unix:",
        "127.0.0.1:5601",
        "ns-3",
        "NS3",
        "ns3:tcp://h:1",
    ] {
        assert!(physics(bad).is_err(), "{bad}");
        assert!(network(bad).is_err(), "{bad}");
        assert!(peer(bad).is_err(), "{bad}");
    }
    assert!(physics("x")
        .unwrap_err()
        .contains("`embedded`, `gazebo`, `auv[:HOST]`, a ZeroMQ endpoint"));
    assert!(network("x")
        .unwrap_err()
        .contains("`embedded`, `ns3`, a ZeroMQ endpoint"));
    assert!("udp://x"
        .parse::<ZmqEndpoint>()
        .unwrap_err()
        .contains("must start with tcp:// or ipc://"));
}

#[test]
fn each_role_has_only_its_kinds() {
    assert_eq!(
        "ns3".parse::<PhysicsEndpoint>().unwrap_err(),
        WrongRole::Ns3AsPhysics.on_command_line()
    );
    assert_eq!(
        "gazebo".parse::<NetworkEndpoint>().unwrap_err(),
        WrongRole::GazeboAsNetwork.on_command_line()
    );
    for auv in ["auv", "auv:10.0.0.7"] {
        assert_eq!(
            auv.parse::<NetworkEndpoint>().unwrap_err(),
            WrongRole::AuvInterfaceAsNetwork.on_command_line()
        );
    }
    assert_eq!(
        "gazebo".parse::<PhysicsEndpoint>().unwrap(),
        PhysicsEndpoint::Gazebo(GazeboSettings::default())
    );
    let PhysicsEndpoint::AuvInterface(a) = "auv:10.0.0.7".parse().unwrap() else {
        panic!()
    };
    assert_eq!(a.host, "10.0.0.7");
    // The same refusal from a scenario file.
    let physics = |y: &str| serde_yaml::from_str::<PhysicsEndpoint>(y);
    let network = |y: &str| serde_yaml::from_str::<NetworkEndpoint>(y);
    let msg = |e: serde_yaml::Error| e.to_string();
    assert!(
        msg(physics("kind: ns3").unwrap_err()).starts_with(&WrongRole::Ns3AsPhysics.to_string())
    );
    assert!(msg(network("kind: gazebo").unwrap_err())
        .starts_with(&WrongRole::GazeboAsNetwork.to_string()));
    assert!(msg(network("kind: auv_interface").unwrap_err())
        .starts_with(&WrongRole::AuvInterfaceAsNetwork.to_string()));
    for w in WrongRole::ALL {
        assert!(WrongRole::is_message(&w.to_string()));
    }
    assert!(!WrongRole::is_message("ns-3 is a network simulator"));
}

#[test]
fn only_a_peer_is_served() {
    for (bad, why) in [
        ("embedded", "`embedded` is not an endpoint to serve at"),
        ("ns3", "the ns-3 adapter netsim-ns3 serves itself"),
        ("gazebo", "Gazebo is reached through ros_gz_bridge"),
        (
            "auv",
            "the embedded physics serves the AUV interface itself",
        ),
        (
            "auv:h",
            "the embedded physics serves the AUV interface itself",
        ),
    ] {
        let e = bad.parse::<PeerEndpoint>().unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn a_bare_kind_on_the_command_line_keeps_the_scenarios_settings() {
    let remote = NetworkEndpoint::Ns3(Ns3Settings {
        endpoint: Some("tcp://10.0.0.5:5602".parse().unwrap()),
        ..Default::default()
    });
    let arg = |s: &str| s.parse::<SimulatorArg<NetworkEndpoint>>().unwrap();
    assert_eq!(arg("ns3").or_scenario(&remote), remote);
    assert_eq!(
        arg("ns3").or_scenario(&NetworkEndpoint::Embedded),
        NetworkEndpoint::Ns3(Ns3Settings::default())
    );
    assert_eq!(
        arg("embedded").or_scenario(&remote),
        NetworkEndpoint::Embedded
    );
    assert_eq!(arg("ns3").to_string(), "ns3");
    let auv = PhysicsEndpoint::AuvInterface(AuvClientSettings {
        telemetry_port: 6000,
        ..Default::default()
    });
    let arg = |s: &str| s.parse::<SimulatorArg<PhysicsEndpoint>>().unwrap();
    assert_eq!(arg("auv").or_scenario(&auv), auv);
    // A host is more than the kind: the settings are the command line's.
    assert_eq!(
        arg("auv:127.0.0.1").or_scenario(&auv),
        PhysicsEndpoint::AuvInterface(AuvClientSettings::default())
    );
    let gazebo = PhysicsEndpoint::Gazebo(GazeboSettings {
        world: Some("harbour".into()),
        ..Default::default()
    });
    assert_eq!(arg("gazebo").or_scenario(&gazebo), gazebo);
    assert_eq!(
        arg("gazebo").or_scenario(&auv),
        PhysicsEndpoint::Gazebo(GazeboSettings::default())
    );
    assert_eq!(
        "gazebo"
            .parse::<SimulatorArg<NetworkEndpoint>>()
            .unwrap_err(),
        WrongRole::GazeboAsNetwork.on_command_line()
    );
}

/// A flag's refusal offers only the forms that flag takes: never a physics simulator for
/// `--network-sim`, never ns-3 for `--physics-sim`; the file's names the scenario's kinds.
#[test]
fn a_wrong_role_on_the_command_line_offers_only_that_flag_s_forms() {
    for (text, wrong) in [
        ("gazebo", WrongRole::GazeboAsNetwork),
        ("auv", WrongRole::AuvInterfaceAsNetwork),
        ("auv:10.0.0.7", WrongRole::AuvInterfaceAsNetwork),
    ] {
        let e = text.parse::<NetworkEndpoint>().unwrap_err();
        let (why, offered) = e.split_once("; ").unwrap();
        assert_eq!(offered, NETWORK_FORMS, "{e}");
        assert!(why.contains("--physics-sim"), "{e}");
        assert_eq!(e, wrong.on_command_line());
    }
    for form in ["gazebo", "auv", "zeromq", "rosnetsim", "simulators."] {
        assert!(!NETWORK_FORMS.contains(form), "{NETWORK_FORMS}");
    }
    let e = "ns3".parse::<PhysicsEndpoint>().unwrap_err();
    assert_eq!(
        e,
        "ns-3 is a network simulator (--network-sim ns3); --physics-sim takes `embedded`, \
         `gazebo`, `auv[:HOST]`, a ZeroMQ endpoint (tcp://host:port, ipc://path), a \
         ROS-NetSim address (unix:/path, tcp:host:port) or a secure one \
         (secure://host:port?key=FILE)"
    );
    assert!(!PHYSICS_FORMS.contains("ns3"), "{PHYSICS_FORMS}");
    assert_eq!(
        "gazebo".parse::<NetworkEndpoint>().unwrap_err(),
        "Gazebo is a physics simulator (--physics-sim gazebo); --network-sim takes `embedded`, \
         `ns3`, a ZeroMQ endpoint (tcp://host:port, ipc://path), a ROS-NetSim address \
         (unix:/path, tcp:host:port) or a secure one (secure://host:port?key=FILE)"
    );
    // A scenario file's refusal names the role's kinds as the file writes them.
    for w in WrongRole::ALL {
        assert_ne!(w.to_string(), w.on_command_line());
        assert!(w.to_string().contains("belongs in simulators."), "{w}");
    }
}

#[test]
fn ns3_on_the_command_line_means_the_default_settings() {
    let e: NetworkEndpoint = "ns3".parse().unwrap();
    assert_eq!(e, NetworkEndpoint::Ns3(Ns3Settings::default()));
    assert_eq!(e.to_string(), "ns3");
    let NetworkEndpoint::Ns3(s) = e else {
        unreachable!()
    };
    assert_eq!((s.endpoint, s.program), (None, None));
    assert_eq!(
        (
            s.wifi.standard,
            s.wifi.rate_manager,
            s.wifi.data_mode,
            s.wifi.queue_packets
        ),
        (WifiStandard::G, WifiRateManager::Minstrel, None, None)
    );
    assert_eq!(s.uan.mac, UanMac::Aloha);
    let remote = NetworkEndpoint::Ns3(Ns3Settings {
        endpoint: Some("tcp://10.0.0.5:5602".parse().unwrap()),
        ..Default::default()
    });
    assert_eq!(remote.to_string(), "ns3 at tcp://10.0.0.5:5602");
}

#[test]
fn ns3_settings_in_a_scenario() {
    let parse = |y: &str| serde_yaml::from_str::<NetworkEndpoint>(y);
    assert_eq!(
        parse("kind: ns3").unwrap(),
        NetworkEndpoint::Ns3(Ns3Settings::default())
    );
    let e = parse(
        "{kind: ns3, endpoint: 'tcp://h:5602', wifi: {standard: 80211n-5, rate_manager: constant, data_mode: HtMcs7, queue_packets: 100}, uan: {mac: cw}}",
    )
    .unwrap();
    let NetworkEndpoint::Ns3(s) = e else {
        panic!("{e:?}")
    };
    assert_eq!(s.endpoint.unwrap().as_str(), "tcp://h:5602");
    assert_eq!(
        (
            s.wifi.standard,
            s.wifi.rate_manager,
            s.wifi.data_mode.as_deref(),
            s.wifi.queue_packets
        ),
        (
            WifiStandard::N5,
            WifiRateManager::Constant,
            Some("HtMcs7"),
            Some(100)
        )
    );
    assert_eq!(s.uan.mac, UanMac::Cw);
    for (yaml, standard) in [
        ("80211a", "80211a"),
        ("802.11g", "80211g"),
        ("80211n-2.4", "80211n-2.4"),
        ("802.11n-5", "80211n-5"),
    ] {
        let NetworkEndpoint::Ns3(s) =
            parse(&format!("{{kind: ns3, wifi: {{standard: {yaml}}}}}")).unwrap()
        else {
            panic!()
        };
        assert_eq!(s.wifi.standard.name(), standard);
    }
    for bad in [
        "{kind: ns3, bogus: 1}",
        "{kind: ns3, wifi: {rate: 5}}",
        "{kind: ns3, wifi: {standard: 80211ac}}",
        "{kind: ns3, uan: {mac: fama}}",
        "{kind: ns3, endpoint: 'udp://x'}",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

/// `secure://host:port?key=FILE`: parsed in both roles and as `--bind`, its key file made
/// absolute from the current folder, shown without it; without a key, refused saying how.
/// Binding ZeroMQ or ROS-NetSim's TCP anywhere but loopback is exposed; a secure endpoint, a
/// Unix socket, `ipc://` and loopback are not.
#[test]
fn secure_endpoints_carry_their_key_file_and_only_loopback_is_unexposed() {
    let bind: PeerEndpoint = "secure://0.0.0.0:5601?key=run.key".parse().unwrap();
    let PeerEndpoint::Secure(a) = &bind else {
        panic!("{bind:?}");
    };
    assert_eq!(a.address.as_str(), "0.0.0.0:5601");
    assert_eq!(a.key_file, std::env::current_dir().unwrap().join("run.key"));
    assert_eq!(bind.to_string(), "secure://0.0.0.0:5601");
    assert_eq!(bind.exposed(), None);
    for role in [
        "secure://h:1?key=/k".parse::<PhysicsEndpoint>().map(|_| ()),
        "secure://h:1?key=/k".parse::<NetworkEndpoint>().map(|_| ()),
    ] {
        assert_eq!(role, Ok(()));
    }
    let e = "secure://10.0.0.2:5601"
        .parse::<PeerEndpoint>()
        .unwrap_err();
    assert!(
        e.contains("needs its key file") && e.contains("cosim agent-key"),
        "{e}"
    );
    assert!("secure://nohost?key=k".parse::<PeerEndpoint>().is_err());
    for (text, exposed) in [
        ("tcp://0.0.0.0:5601", true),
        ("tcp://*:5601", true),
        ("tcp://10.0.0.2:5601", true),
        ("tcp:0.0.0.0:10000", true),
        ("tcp://127.0.0.1:5601", false),
        ("tcp://localhost:5601", false),
        ("tcp://[::1]:5601", false),
        ("tcp:127.0.0.1:10000", false),
        ("ipc:///tmp/p", false),
        ("unix:/tmp/s", false),
    ] {
        let e: PeerEndpoint = text.parse().unwrap();
        assert_eq!(e.exposed().is_some(), exposed, "{text}: {:?}", e.exposed());
    }
    let why = "tcp://0.0.0.0:5601"
        .parse::<PeerEndpoint>()
        .unwrap()
        .exposed()
        .unwrap();
    assert!(why.contains("secure://0.0.0.0:5601?key=FILE"), "{why}");
}

/// Connecting in plaintext to another host is named with the way to secure it; the
/// coordinators' own endpoint takes ZeroMQ or the secure channel, not ROS-NetSim's framing.
#[test]
fn plaintext_peers_on_other_hosts_are_named_and_coordinators_take_zeromq_or_secure() {
    let remote: PeerEndpoint = "tcp://10.0.0.2:5601".parse().unwrap();
    assert_eq!(remote.plaintext_remote(), Some("10.0.0.2:5601"));
    let why = remote.insecure().unwrap();
    assert!(
        why.contains("secure://10.0.0.2:5601?key=FILE") && why.contains("--insecure-peers"),
        "{why}"
    );
    let why = "tcp:10.0.0.2:10000"
        .parse::<PeerEndpoint>()
        .unwrap()
        .insecure()
        .unwrap();
    assert!(
        why.contains("ROS-NetSim's framing") && why.contains("Unix socket"),
        "{why}"
    );
    for near in [
        "tcp://127.0.0.1:5601",
        "ipc:///tmp/p",
        "unix:/tmp/s",
        "secure://10.0.0.2:1?key=k",
    ] {
        assert_eq!(
            near.parse::<PeerEndpoint>().unwrap().insecure(),
            None,
            "{near}"
        );
    }
    for ok in [
        "tcp://127.0.0.1:5600",
        "ipc:///tmp/c",
        "secure://0.0.0.0:5600?key=k",
    ] {
        let c: CoordinatorEndpoint = ok.parse().unwrap();
        assert_eq!(c.peer(), &ok.parse::<PeerEndpoint>().unwrap());
    }
    for refused in ["unix:/tmp/c", "tcp:127.0.0.1:5600"] {
        let e = refused.parse::<CoordinatorEndpoint>().unwrap_err();
        assert!(e.contains("not ROS-NetSim's framing"), "{e}");
    }
}
