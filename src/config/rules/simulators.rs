//! The rules of `simulators`, with those of each simulator's settings that loading runs for
//! the scenario's choice and a coordinator for one switched on the command line:
//!
//! - `simulators`: `timeout_ms` > 0, `physics_step_ms` > 0 and finite; a `kind: zeromq`
//!   endpoint starts with `tcp://` or `ipc://`; a `kind: rosnetsim` address is `unix:/path` or
//!   `tcp:host:port`; `kind: ns3` only for `network` (refused for `physics` with the message
//!   `--physics-sim ns3` gets, [`WrongRole`]), with `program` not beside `endpoint`,
//!   `wifi.data_mode` (an ns-3 mode name) exactly when `wifi.rate_manager` is `constant` and
//!   `wifi.queue_packets` > 0; and then the links as ns-3 builds them
//!   ([`LoadedScenario::check_ns3`]): every pair `rf`, `acoustic` or `none`, all `rf` pairs with
//!   the same settings and all `acoustic` pairs likewise, no vehicle with both kinds, and no
//!   `none` pair between two vehicles with the same kind of device. `kind: gazebo` and
//!   `kind: auv_interface` only for `physics` (likewise refused for `network`); Gazebo's
//!   settings ([`LoadedScenario::check_gazebo`]): a world name and model names ROS 2 takes in a
//!   topic name (letters, digits, `_`), `models` keys that are vehicles, one model per vehicle,
//!   W a whole number of `step_ms`, and every vehicle's `motion` `external`.
//! - `channel_interval_ms` a whole multiple of W.
//! - A simulator on another host over ZeroMQ or ROS-NetSim's framing (a `tcp` address that is
//!   not loopback, the ns-3 adapter's `endpoint` included) only with `insecure_peers: true`
//!   ([`LoadedScenario::check_peers`] for one chosen on the command line).
//!
//! [`WrongRole`]: crate::config::WrongRole
//! [`LoadedScenario::check_ns3`]: crate::config::LoadedScenario::check_ns3
//! [`LoadedScenario::check_gazebo`]: crate::config::LoadedScenario::check_gazebo
//! [`LoadedScenario::check_peers`]: crate::config::LoadedScenario::check_peers

use std::collections::HashMap;

use super::{no_nul, Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::{
    AuvClientSettings, GazeboSettings, LinkModel, Motion, NetworkEndpoint, Ns3Settings,
    PhysicsEndpoint, WifiRateManager,
};

/// `simulators.channel_interval_ms` is a whole multiple of W.
pub(in crate::config) fn channel_interval_in_windows(
    interval_ms: f64,
    window_ms: f64,
) -> Result<(), String> {
    let n = interval_ms / window_ms;
    if (n - n.round()).abs() > 1e-9 * n.max(1.0) || n.round() < 1.0 {
        return Err(format!(
            "must be a whole multiple of window_ms ({window_ms} ms); {interval_ms} ms is {n:.6} windows"
        ));
    }
    Ok(())
}

pub(super) fn simulators(cx: &Ctx) -> Check {
    let s = &cx.scenario.simulators;
    if s.timeout_ms == 0 {
        return Err(cx.err("simulators.timeout_ms", "must be > 0"));
    }
    if s.startup_timeout_ms == 0 {
        return Err(cx.err("simulators.startup_timeout_ms", "must be > 0"));
    }
    cx.positive("simulators.physics_step_ms", s.physics_step_ms)?;
    if let Some(c) = s.channel_interval_ms {
        cx.positive("simulators.channel_interval_ms", c)?;
        channel_interval_in_windows(c, cx.scenario.window_ms)
            .map_err(|e| cx.err("simulators.channel_interval_ms", e))?;
    }
    // A kind in the wrong role is refused while typing (`WrongRole`).
    if let NetworkEndpoint::Ns3(settings) = &s.network {
        ns3_settings(cx, settings)?;
        ns3_links(cx)?;
    }
    match &s.physics {
        PhysicsEndpoint::Gazebo(settings) => gazebo_settings(cx, settings),
        PhysicsEndpoint::AuvInterface(settings) => auv_client_settings(cx, settings),
        PhysicsEndpoint::Embedded | PhysicsEndpoint::Peer(_) => Ok(()),
    }?;
    plaintext_peers(cx)
}

/// A simulator on another host reached over ZeroMQ or ROS-NetSim's framing only with
/// `simulators.insecure_peers: true` ([`PeerEndpoint::insecure`]).
///
/// [`PeerEndpoint::insecure`]: crate::config::PeerEndpoint::insecure
pub(in crate::config) fn plaintext_peers(cx: &Ctx) -> Check {
    let s = &cx.scenario.simulators;
    if s.insecure_peers {
        return Ok(());
    }
    match s
        .peers()
        .into_iter()
        .find_map(|(key, p)| Some((key, p.insecure()?)))
    {
        Some((key, why)) => Err(cx.err(key, why)),
        None => Ok(()),
    }
}

/// `simulators.physics: {kind: auv_interface, ...}`: every vehicle one of the simulator's AUVs,
/// real ports, and a forwarding port that is not the simulator's own.
pub(in crate::config) fn auv_client_settings(cx: &Ctx, a: &AuvClientSettings) -> Check {
    let k = |f: &str| join_key("simulators.physics", f);
    let s = cx.scenario;
    if let Some((i, v)) = s
        .vehicles
        .iter()
        .enumerate()
        .find(|(_, v)| v.motion.auv_id().is_none())
    {
        return Err(cx.err(
            &format!("{}.motion", join_index("vehicles", i)),
            format!("the AUV interface simulator moves every vehicle: {:?} needs `{{kind: thrusters, auv_id: N}}` (its id there)", v.name),
        ));
    }
    if a.host.is_empty() || a.host.contains(['/', ' ']) {
        return Err(cx.err(
            &k("host"),
            format!("{:?} is not a host name or address", a.host),
        ));
    }
    for (key, port) in [
        ("telemetry_port", a.telemetry_port),
        ("thrusters_port", a.thrusters_port),
    ] {
        if port == 0 {
            return Err(cx.err(&k(key), "must be a port number (1-65535)"));
        }
    }
    if a.stale_ms == 0 {
        return Err(cx.err(&k("stale_ms"), "must be > 0"));
    }
    let local = matches!(a.host.as_str(), "127.0.0.1" | "localhost" | "::1")
        || a.host == s.auv_interface.bind;
    if a.forward_thrusters && local && s.auv_interface.thrusters_port == a.thrusters_port {
        return Err(cx.err(
            &k("forward_thrusters"),
            format!("the forwarding port (auv_interface.thrusters_port) is the simulator's own thruster port {} on this host: give auv_interface another, or forward_thrusters: false", a.thrusters_port),
        ));
    }
    Ok(())
}

/// A name Gazebo takes for a world or a model and ROS 2 takes inside a topic name.
fn gazebo_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// `simulators.physics: {kind: gazebo, ...}`: the world's name, a step W is a whole number of,
/// models that are vehicles' and one model per vehicle.
pub(in crate::config) fn gazebo_settings(cx: &Ctx, g: &GazeboSettings) -> Check {
    let k = |f: &str| join_key("simulators.physics", f);
    let s = cx.scenario;
    let (world, key) = match &g.world {
        Some(w) => (w.as_str(), k("world")),
        None => (s.name.as_str(), "name".to_owned()),
    };
    if !gazebo_name(world) {
        return Err(cx.err(
            &key,
            format!("{world:?} cannot name a Gazebo world reached through ROS 2 (letters, digits and '_', not starting with a digit)"),
        ));
    }
    g.steps(s.window_ms, s.simulators.physics_step_ms)
        .map_err(|e| cx.err(&k("step_ms"), e))?;
    for (vehicle, model) in &g.models {
        let key = join_key(&k("models"), vehicle);
        if !s.vehicles.iter().any(|v| &v.name == vehicle) {
            return Err(cx.err(
                &key,
                format!("{vehicle:?} is not a vehicle of the scenario"),
            ));
        }
        if !gazebo_name(model) {
            return Err(cx.err(&key, format!("{model:?} cannot name a Gazebo model reached through ROS 2 (letters, digits and '_', not starting with a digit)")));
        }
    }
    if let Some((i, v)) = s
        .vehicles
        .iter()
        .enumerate()
        .find(|(_, v)| v.motion != Motion::External)
    {
        return Err(cx.err(
            &format!("{}.motion", join_index("vehicles", i)),
            format!(
                "Gazebo moves the vehicles: {:?}'s motion must be `{{kind: external}}`",
                v.name
            ),
        ));
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for v in &s.vehicles {
        let model = g.model(&v.name);
        if !gazebo_name(model) {
            return Err(cx.err(&k("models"), format!("vehicle {:?} is the Gazebo model of its own name, which ROS 2 cannot take in a topic name: map it to one (letters, digits and '_')", v.name)));
        }
        if let Some(other) = seen.insert(model, &v.name) {
            return Err(cx.err(
                &k("models"),
                format!(
                    "vehicles {other:?} and {:?} are both the Gazebo model {model:?}",
                    v.name
                ),
            ));
        }
    }
    Ok(())
}

/// `simulators.network: {kind: ns3, ...}`: its own keys.
pub(in crate::config) fn ns3_settings(cx: &Ctx, n: &Ns3Settings) -> Check {
    let k = |f: &str| join_key("simulators.network", f);
    if let Some(program) = &n.program {
        if let Some(e) = &n.endpoint {
            return Err(cx.err(
                &k("program"),
                format!("is not used with `endpoint`: the adapter at {e} is already running"),
            ));
        }
        if program.as_os_str().is_empty() {
            return Err(cx.err(&k("program"), "must name the netsim-ns3 program"));
        }
        no_nul(cx, &k("program"), &program.to_string_lossy())?;
    }
    let w = &n.wifi;
    match (&w.data_mode, w.rate_manager) {
        (None, WifiRateManager::Constant) => {
            return Err(cx.err(
                &k("wifi.rate_manager"),
                "`constant` needs wifi.data_mode, the ns-3 mode name: e.g. ErpOfdmRate54Mbps (802.11g), OfdmRate54Mbps (802.11a), HtMcs7 (802.11n)",
            ))
        }
        (Some(_), m) if m != WifiRateManager::Constant => {
            return Err(cx.err(&k("wifi.data_mode"), format!("only rate_manager: constant uses a data_mode (rate_manager is {})", m.name())));
        }
        (Some(mode), _) if mode.is_empty() || !mode.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            return Err(cx.err(&k("wifi.data_mode"), format!("{mode:?} is not an ns-3 mode name (letters, digits, '_'; e.g. ErpOfdmRate54Mbps)")));
        }
        _ => {}
    }
    if w.queue_packets == Some(0) {
        return Err(cx.err(&k("wifi.queue_packets"), "must be > 0"));
    }
    if cx.scenario.network.offload {
        return Err(cx.err(
            "network.offload",
            "must be false with ns-3: an offloaded packet (up to 64 KiB) exceeds the MTU of ns-3's devices (2296 bytes for Wi-Fi) and would be dropped",
        ));
    }
    Ok(())
}

/// The links under ns-3: a vehicle in an `rf` pair gets a Wi-Fi device, one in an `acoustic`
/// pair a UAN device, and ns-3 joins every device of a kind on one channel. So every pair is
/// `rf`, `acoustic` or `none` (ns-3 has no `ideal` or `disk` link); all `rf` pairs have the same
/// settings (one channel), all `acoustic` pairs likewise; a vehicle has one kind of device; and
/// a `none` pair is not between two vehicles with the same kind (the channel would join them).
pub(in crate::config) fn ns3_links(cx: &Ctx) -> Check {
    let s = cx.scenario;
    let n = s.vehicles.len();
    let pairs = s.pair_links();
    let key_of = |k: Option<usize>| {
        k.map_or_else(
            || "links.default".to_owned(),
            |k| join_index("links.pairs", k),
        )
    };
    let name = |a: usize, b: usize| format!("{} - {}", s.vehicles[a].name, s.vehicles[b].name);
    let bare = |m: &LinkModel| {
        let mut m = m.clone();
        match &mut m {
            LinkModel::Ideal { between, .. }
            | LinkModel::Disk { between, .. }
            | LinkModel::None { between }
            | LinkModel::Rf { between, .. }
            | LinkModel::Acoustic { between, .. } => *between = None,
        }
        m
    };
    // Per kind (rf, acoustic): the first pair's key and model; per vehicle: the key of its
    // first pair of that kind.
    let mut first: [Option<(String, LinkModel)>; 2] = [None, None];
    let mut device: [Vec<Option<String>>; 2] = [vec![None; n], vec![None; n]];
    for &(a, b, k, m) in &pairs {
        let key = key_of(k);
        let kind = match m {
            LinkModel::Ideal { .. } | LinkModel::Disk { .. } => {
                let model = if matches!(m, LinkModel::Ideal { .. }) {
                    "ideal"
                } else {
                    "disk"
                };
                return Err(cx.err(
                    &join_key(&key, "model"),
                    format!(
                        "{}: ns-3 has no `{model}` link; use rf, acoustic or none",
                        name(a, b)
                    ),
                ));
            }
            LinkModel::None { .. } => continue,
            LinkModel::Rf { .. } => 0,
            LinkModel::Acoustic { .. } => 1,
        };
        match &first[kind] {
            None => first[kind] = Some((key.clone(), bare(m))),
            Some((k0, m0)) if *m0 != bare(m) => {
                let (what, channel) = if kind == 0 {
                    ("rf", "Wi-Fi")
                } else {
                    ("acoustic", "UAN")
                };
                return Err(cx.err(
                    &key,
                    format!(
                        "{}: under ns-3 every {what} link is one {channel} channel with one set of settings, and this one differs from {}; \
                         give every {what} pair the same settings",
                        name(a, b),
                        cx.line_note(k0)
                    ),
                ));
            }
            Some(_) => {}
        }
        for v in [a, b] {
            device[kind][v].get_or_insert_with(|| key.clone());
        }
    }
    for (v, vehicle) in s.vehicles.iter().enumerate() {
        if let (Some(rf), Some(acoustic)) = (&device[0][v], &device[1][v]) {
            return Err(cx.err(
                acoustic,
                format!("{} has an rf link ({}) and an acoustic one: under ns-3 a vehicle has one device, Wi-Fi or UAN", vehicle.name, cx.line_note(rf)),
            ));
        }
    }
    for &(a, b, k, m) in &pairs {
        if !matches!(m, LinkModel::None { .. }) {
            continue;
        }
        for (kind, what, channel) in [(0, "rf", "Wi-Fi"), (1, "acoustic", "UAN")] {
            if device[kind][a].is_some() && device[kind][b].is_some() {
                return Err(cx.err(
                    &join_key(&key_of(k), "model"),
                    format!(
                        "{}: both have {channel} devices (from their {what} links) and ns-3 puts every {channel} device on one channel, \
                         so this `none` link would carry their packets; make it {what} like their other links",
                        name(a, b)
                    ),
                ));
            }
        }
    }
    Ok(())
}
