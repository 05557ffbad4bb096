//! Semantic rules of a typed scenario (see the module docs of [`crate::config`]).

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;

use super::source_map::{join_index, join_key};
use super::{
    baud_supported, AuvClientSettings, ConfigError, GazeboSettings, HeightGrid, LinkModel, Motion,
    NetworkEndpoint, Ns3Settings, PhysicsEndpoint, Scenario, SoundSpeed, SourceMap, Terrain,
    WifiRateManager, MAX_PROFILE_SPEED_MPS, MIN_PROFILE_SPEED_MPS,
};
use crate::wire::channel::MAX_ARRIVALS_PER_PATH;

/// Largest procedural grid, in cells per side.
const MAX_GRID_CELLS: f64 = 8192.0;
/// Longest vehicle name: it becomes part of network-namespace and interface names.
const MAX_VEHICLE_NAME: usize = 12;
/// Longest program name: it names the program's log files.
const MAX_PROGRAM_NAME: usize = 32;
/// Longest container name or id accepted in `vehicles[].attach.container`.
const MAX_CONTAINER_NAME: usize = 128;
/// Longest wait for a program to stop before it is killed.
const MAX_STOP_TIMEOUT_S: f64 = 3600.0;

type Check = Result<(), ConfigError>;

/// A typed scenario and where its keys are written, for checks that name file, key and line.
pub(super) struct Ctx<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) file: &'a Path,
    pub(super) source: &'a SourceMap,
}

impl Ctx<'_> {
    pub(super) fn err(&self, key_path: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.file, self.source, key_path, message)
    }

    fn line_note(&self, key_path: &str) -> String {
        match self.source.line_of(key_path) {
            Some(line) => format!("{key_path} (line {line})"),
            None => key_path.to_owned(),
        }
    }

    fn positive(&self, key_path: &str, v: f64) -> Check {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(self.err(key_path, format!("must be > 0 and finite (got {v})")))
        }
    }

    fn non_negative(&self, key_path: &str, v: f64) -> Check {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(self.err(key_path, format!("must be ≥ 0 and finite (got {v})")))
        }
    }

    fn finite(&self, key_path: &str, values: &[f64]) -> Check {
        match values.iter().find(|v| !v.is_finite()) {
            Some(v) => Err(self.err(key_path, format!("must be finite (got {v})"))),
            None => Ok(()),
        }
    }
}

pub(super) fn validate(cx: &Ctx) -> Check {
    let s = cx.scenario;

    if s.name.is_empty() {
        return Err(cx.err("name", "must not be empty"));
    }
    if let Some(c) = s
        .name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    {
        return Err(cx.err(
            "name",
            format!("may contain only A-Z, a-z, 0-9, '_' and '-' (found {c:?})"),
        ));
    }
    cx.positive("window_ms", s.window_ms)?;
    cx.positive("duration_s", s.duration_s)?;
    if s.duration_s * 1000.0 < s.window_ms {
        return Err(cx.err(
            "duration_s",
            format!(
                "must last at least one window ({} ms), got {} s",
                s.window_ms, s.duration_s
            ),
        ));
    }
    whole_windows(s.window_ms, s.duration_s).map_err(|e| cx.err("duration_s", e))?;
    cx.non_negative("real_time_factor", s.real_time_factor)?;
    if !(-20..=19).contains(&s.nice) {
        return Err(cx.err(
            "nice",
            format!("must be a nice value, -20 to 19 (got {})", s.nice),
        ));
    }

    world(cx)?;
    water(cx)?;
    seabed_and_acoustic_paths(cx)?;
    vehicles(cx)?;
    links(cx)?;
    simulators(cx)?;
    netsim_manager(cx)?;
    network(cx)?;
    acoustic_modems(cx)?;
    programs(cx)?;
    ros(cx)?;
    attach(cx)?;
    auv_interface(cx)?;
    cx.positive("record.pose_interval_s", s.record.pose_interval_s)?;
    cx.positive("record.channel_interval_s", s.record.channel_interval_s)?;
    viewer(cx)?;

    if let Terrain::Procedural { size_m, .. } = &s.world.terrain {
        check_inside_world(cx, [size_m[0] / 2.0, size_m[1] / 2.0])?;
    }
    Ok(())
}

/// `viewer`: an address to listen on, room for at least one message per client.
fn viewer(cx: &Ctx) -> Check {
    let v = &cx.scenario.viewer;
    if v.address.parse::<std::net::SocketAddr>().is_err() {
        return Err(cx.err(
            "viewer.address",
            format!("must be HOST:PORT with an IP address (got {:?})", v.address),
        ));
    }
    for (key, value) in [
        ("viewer.client_queue_messages", v.client_queue_messages),
        ("viewer.client_queue_bytes", v.client_queue_bytes),
        ("viewer.max_clients", v.max_clients),
    ] {
        if value == 0 {
            return Err(cx.err(key, "must be at least 1"));
        }
    }
    Ok(())
}

/// The run's length is a whole number of windows: sim time is counted in whole nanoseconds
/// ([`crate::clock::Schedule`]), so `window_ms` and `duration_s` are taken to the nearest
/// nanosecond and the duration must then be 1 to 2³² − 1 windows exactly (0.1 s at W = 10 ms is
/// 10 windows; 0.015 s is refused). The error names both keys and the two nearest durations
/// that are whole numbers of windows. `window_ms` > 0 and `duration_s` > 0 are checked before.
pub(super) fn whole_windows(window_ms: f64, duration_s: f64) -> Result<(), String> {
    let window_ns = ((window_ms * 1e6).round() as u64).max(1);
    let duration_ns = (duration_s * 1e9).round() as u64;
    let windows = duration_ns / window_ns;
    let seconds = |ns: u64| ns as f64 / 1e9;
    let count = |n: u64| match n {
        1 => "1 window".to_owned(),
        n => format!("{n} windows"),
    };
    if windows == 0 {
        return Err(format!(
            "duration_s = {duration_s} s is shorter than one window (window_ms = {window_ms} ms)"
        ));
    }
    if windows > u64::from(u32::MAX) {
        return Err(format!(
            "duration_s = {duration_s} s is more than {} windows of window_ms = {window_ms} ms",
            u32::MAX
        ));
    }
    if duration_ns % window_ns != 0 {
        let lower = windows * window_ns;
        let upper = lower + window_ns;
        let ratio = format!("{:.3}", duration_ns as f64 / window_ns as f64);
        let ratio = ratio.trim_end_matches('0').trim_end_matches('.');
        return Err(format!(
            "duration_s = {duration_s} s is not a whole number of windows of window_ms = \
             {window_ms} ms (it is {ratio} windows): the nearest durations that are whole numbers \
             of windows are {} s ({}) and {} s ({})",
            seconds(lower),
            count(windows),
            seconds(upper),
            count(windows + 1),
        ));
    }
    Ok(())
}

/// `simulators.channel_interval_ms` is a whole multiple of W.
pub(super) fn channel_interval_in_windows(interval_ms: f64, window_ms: f64) -> Result<(), String> {
    let n = interval_ms / window_ms;
    if (n - n.round()).abs() > 1e-9 * n.max(1.0) || n.round() < 1.0 {
        return Err(format!(
            "must be a whole multiple of window_ms ({window_ms} ms); {interval_ms} ms is {n:.6} windows"
        ));
    }
    Ok(())
}

fn world(cx: &Ctx) -> Check {
    let w = &cx.scenario.world;
    let o = &w.origin;
    cx.finite("world.origin.alt_m", &[o.alt_m])?;
    if !(o.lat_deg.is_finite() && (-90.0..=90.0).contains(&o.lat_deg)) {
        return Err(cx.err(
            "world.origin.lat_deg",
            format!("must be in [-90, 90] (got {})", o.lat_deg),
        ));
    }
    if !(o.lon_deg.is_finite() && (-180.0..=180.0).contains(&o.lon_deg)) {
        return Err(cx.err(
            "world.origin.lon_deg",
            format!("must be in [-180, 180] (got {})", o.lon_deg),
        ));
    }
    cx.non_negative(
        "world.penetration_loss_db_per_m",
        w.penetration_loss_db_per_m,
    )?;

    let t = "world.terrain";
    match &w.terrain {
        Terrain::Procedural {
            size_m,
            cell_size_m,
            base_height_m,
            relief_m,
            ridges,
            ..
        } => {
            cx.positive(&join_index(&join_key(t, "size_m"), 0), size_m[0])?;
            cx.positive(&join_index(&join_key(t, "size_m"), 1), size_m[1])?;
            cx.positive(&join_key(t, "cell_size_m"), *cell_size_m)?;
            let cells = [size_m[0] / cell_size_m, size_m[1] / cell_size_m];
            if cells.iter().any(|c| c.ceil() > MAX_GRID_CELLS) {
                return Err(cx.err(
                    &join_key(t, "cell_size_m"),
                    format!(
                        "grid of {:.0} × {:.0} cells exceeds {MAX_GRID_CELLS} × {MAX_GRID_CELLS}",
                        cells[0].ceil(),
                        cells[1].ceil()
                    ),
                ));
            }
            cx.finite(&join_key(t, "base_height_m"), &[*base_height_m])?;
            cx.non_negative(&join_key(t, "relief_m"), *relief_m)?;
            for (i, r) in ridges.iter().enumerate() {
                let p = join_index(&join_key(t, "ridges"), i);
                cx.finite(&join_key(&p, "from"), &r.from)?;
                cx.finite(&join_key(&p, "to"), &r.to)?;
                cx.finite(&join_key(&p, "crest_height_m"), &[r.crest_height_m])?;
                cx.positive(&join_key(&p, "width_m"), r.width_m)?;
            }
        }
        Terrain::Png {
            path,
            cell_size_m,
            min_height_m,
            max_height_m,
        } => {
            cx.positive(&join_key(t, "cell_size_m"), *cell_size_m)?;
            cx.finite(&join_key(t, "min_height_m"), &[*min_height_m])?;
            cx.finite(&join_key(t, "max_height_m"), &[*max_height_m])?;
            if min_height_m >= max_height_m {
                return Err(cx.err(
                    &join_key(t, "min_height_m"),
                    format!("must be below max_height_m ({min_height_m} ≥ {max_height_m})"),
                ));
            }
            terrain_file(cx, path)?;
        }
        Terrain::Csv { path, cell_size_m } => {
            cx.positive(&join_key(t, "cell_size_m"), *cell_size_m)?;
            terrain_file(cx, path)?;
        }
    }
    Ok(())
}

fn terrain_file(cx: &Ctx, path: &str) -> Check {
    if Path::new(path).is_file() {
        Ok(())
    } else {
        Err(cx.err(
            "world.terrain.path",
            format!("terrain file {path} does not exist"),
        ))
    }
}

/// Largest `ROS_DOMAIN_ID` ROS 2 accepts.
const MAX_ROS_DOMAIN_ID: u32 = 232;
/// Longest ROS namespace accepted.
const MAX_ROS_NAMESPACE: usize = 255;

/// The top-level `ros` and every `vehicles[].ros`.
fn ros(cx: &Ctx) -> Check {
    ros_settings(cx, "ros", &cx.scenario.ros)?;
    for (i, v) in cx.scenario.vehicles.iter().enumerate() {
        ros_settings(cx, &join_key(&join_index("vehicles", i), "ros"), &v.ros)?;
    }
    Ok(())
}

fn ros_settings(cx: &Ctx, path: &str, r: &super::RosSettings) -> Check {
    if let Some(d) = r.domain_id {
        if d > MAX_ROS_DOMAIN_ID {
            return Err(cx.err(
                &join_key(path, "domain_id"),
                format!("must be a ROS 2 domain id, 0 to {MAX_ROS_DOMAIN_ID} (got {d})"),
            ));
        }
    }
    if let Some(ns) = &r.namespace {
        ros_namespace(ns).map_err(|e| cx.err(&join_key(path, "namespace"), e))?;
    }
    Ok(())
}

/// A ROS 2 namespace: absolute, `/`-separated tokens of `A-Z`, `a-z`, `0-9` and `_`, none
/// empty or starting with a digit.
fn ros_namespace(ns: &str) -> Result<(), String> {
    let shown: String = ns.chars().take(64).collect();
    if ns.len() > MAX_ROS_NAMESPACE {
        return Err(format!(
            "{shown:?}… is longer than {MAX_ROS_NAMESPACE} characters"
        ));
    }
    let Some(rest) = ns.strip_prefix('/') else {
        return Err(format!(
            "{shown:?} is not a ROS namespace: it must start with '/' (e.g. \"/auv1\")"
        ));
    };
    if rest.is_empty() {
        return Ok(());
    }
    for token in rest.split('/') {
        if token.is_empty() {
            return Err(format!(
                "{shown:?} is not a ROS namespace: empty name between '/' (or a '/' at the end)"
            ));
        }
        if let Some(c) = token
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(format!(
                "{shown:?} is not a ROS namespace: only A-Z, a-z, 0-9, '_' and '/' (found {c:?})"
            ));
        }
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "{shown:?} is not a ROS namespace: {token:?} starts with a digit"
            ));
        }
    }
    Ok(())
}

fn vehicles(cx: &Ctx) -> Check {
    let vs = &cx.scenario.vehicles;
    if vs.is_empty() {
        return Err(cx.err("vehicles", "at least one vehicle is required"));
    }
    let mut names: HashMap<&str, String> = HashMap::new();
    let mut ips: HashMap<IpAddr, String> = HashMap::new();
    let mut ports: HashMap<u16, String> = HashMap::new();
    let mut ids: HashMap<u8, String> = HashMap::new();

    for (i, v) in vs.iter().enumerate() {
        let vp = join_index("vehicles", i);

        let name_path = join_key(&vp, "name");
        if v.name.is_empty() {
            return Err(cx.err(&name_path, "must not be empty"));
        }
        if let Some(c) = v
            .name
            .chars()
            .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
        {
            return Err(cx.err(
                &name_path,
                format!("may contain only a-z, 0-9, '_' and '-' (found {c:?})"),
            ));
        }
        if v.name.len() > MAX_VEHICLE_NAME {
            return Err(cx.err(
                &name_path,
                format!("{:?} is longer than {MAX_VEHICLE_NAME} characters", v.name),
            ));
        }
        if let Some(first) = names.get(v.name.as_str()) {
            return Err(cx.err(
                &name_path,
                format!(
                    "vehicle name {:?} is already used at {}",
                    v.name,
                    cx.line_note(first)
                ),
            ));
        }
        names.insert(&v.name, name_path);

        let ap = join_key(&vp, "addresses");
        if v.addresses.is_empty() {
            return Err(cx.err(&ap, "at least one address is required"));
        }
        for (j, a) in v.addresses.iter().enumerate() {
            let p = join_index(&ap, j);
            let ip = a.addr();
            if let Some(first) = ips.get(&ip) {
                return Err(cx.err(
                    &p,
                    format!("address {ip} is already used at {}", cx.line_note(first)),
                ));
            }
            ips.insert(ip, p);
        }

        if let Some(m) = &v.modem {
            let mp = join_key(&vp, "modem");
            let port_path = join_key(&mp, "tcp_port");
            if m.tcp_port == 0 {
                return Err(cx.err(&port_path, "must not be 0"));
            }
            if let Some(first) = ports.get(&m.tcp_port) {
                return Err(cx.err(
                    &port_path,
                    format!(
                        "modem port {} is already used at {}",
                        m.tcp_port,
                        cx.line_note(first)
                    ),
                ));
            }
            ports.insert(m.tcp_port, port_path);
            let id_path = join_key(&mp, "id");
            if m.id > 127 {
                return Err(cx.err(&id_path, format!("must be ≤ 127 (got {})", m.id)));
            }
            if let Some(first) = ids.get(&m.id) {
                return Err(cx.err(
                    &id_path,
                    format!(
                        "modem id {} is already used at {}",
                        m.id,
                        cx.line_note(first)
                    ),
                ));
            }
            ids.insert(m.id, id_path);
        }

        let s = &v.start;
        cx.finite(&join_key(&vp, "start"), &[s.x, s.y, s.z, s.heading_deg])?;

        if let Motion::Patrol {
            speed_mps,
            max_turn_rate_deg_s,
            max_depth_rate_mps,
            waypoints,
            capture_radius_m,
        } = &v.motion
        {
            let mp = join_key(&vp, "motion");
            cx.positive(&join_key(&mp, "speed_mps"), *speed_mps)?;
            cx.positive(&join_key(&mp, "max_turn_rate_deg_s"), *max_turn_rate_deg_s)?;
            cx.positive(&join_key(&mp, "max_depth_rate_mps"), *max_depth_rate_mps)?;
            cx.positive(&join_key(&mp, "capture_radius_m"), *capture_radius_m)?;
            let wp = join_key(&mp, "waypoints");
            if waypoints.is_empty() {
                return Err(cx.err(&wp, "a patrol needs at least one waypoint"));
            }
            for (j, w) in waypoints.iter().enumerate() {
                cx.finite(&join_index(&wp, j), w)?;
            }
        }
        if let Motion::Thrusters { dynamics: d, .. } = &v.motion {
            let dp = join_key(&join_key(&vp, "motion"), "dynamics");
            let k = |f: &str| join_key(&dp, f);
            cx.positive(&k("mass_kg"), d.mass_kg)?;
            cx.positive(&k("inertia_z_kg_m2"), d.inertia_z_kg_m2)?;
            for (name, values) in [
                ("added_mass", &d.added_mass),
                ("linear_damping", &d.linear_damping),
                ("quadratic_damping", &d.quadratic_damping),
            ] {
                for (j, v) in values.iter().enumerate() {
                    cx.non_negative(&join_index(&k(name), j), *v)?;
                }
            }
            for (j, v) in d.max_thrust_n.iter().enumerate() {
                cx.non_negative(&join_index(&k("max_thrust_n"), j), *v)?;
            }
            cx.non_negative(&k("thruster_arm_m"), d.thruster_arm_m)?;
            cx.non_negative(&k("min_depth_m"), d.min_depth_m)?;
            cx.non_negative(&k("min_altitude_m"), d.min_altitude_m)?;
        }
    }
    Ok(())
}

/// `auv_interface`: ports, rates and cameras; thruster vehicles' ids unique.
fn auv_interface(cx: &Ctx) -> Check {
    let s = cx.scenario;
    let a = &s.auv_interface;
    let mut ids: HashMap<u8, &str> = HashMap::new();
    for (i, v) in s.vehicles.iter().enumerate() {
        if let Some(auv_id) = v.motion.auv_id() {
            if let Some(other) = ids.insert(auv_id, &v.name) {
                return Err(cx.err(
                    &format!("{}.motion.auv_id", join_index("vehicles", i)),
                    format!("AUV id {auv_id} is already {other:?}'s"),
                ));
            }
        }
    }
    if a.bind.parse::<IpAddr>().is_err() {
        return Err(cx.err(
            "auv_interface.bind",
            format!("{:?} is not an IP address", a.bind),
        ));
    }
    let ports = [
        ("images_port", a.images_port),
        ("thrusters_port", a.thrusters_port),
        ("telemetry_port", a.telemetry_port),
    ];
    for (i, (key, port)) in ports.iter().enumerate() {
        if *port == 0 {
            return Err(cx.err(
                &join_key("auv_interface", key),
                "must be a port number (1-65535)",
            ));
        }
        if let Some((other, _)) = ports[..i].iter().find(|(_, p)| p == port) {
            return Err(cx.err(
                &join_key("auv_interface", key),
                format!("port {port} is already {other}"),
            ));
        }
    }
    cx.positive("auv_interface.telemetry_hz", a.telemetry_hz)?;
    let c = &a.cameras;
    for (key, v) in [("width", c.width), ("height", c.height)] {
        if !(1..=4096).contains(&v) {
            return Err(cx.err(
                &join_key("auv_interface.cameras", key),
                format!("must be 1-4096 pixels (got {v})"),
            ));
        }
    }
    if !(c.fov_deg > 0.0 && c.fov_deg < 180.0) {
        return Err(cx.err(
            "auv_interface.cameras.fov_deg",
            format!("must be in (0, 180) degrees (got {})", c.fov_deg),
        ));
    }
    cx.non_negative("auv_interface.cameras.rate_hz", c.rate_hz)?;
    cx.positive("auv_interface.cameras.max_range_m", c.max_range_m)?;
    if !(1..=100).contains(&c.jpeg_quality) {
        return Err(cx.err(
            "auv_interface.cameras.jpeg_quality",
            format!("must be 1-100 (got {})", c.jpeg_quality),
        ));
    }
    Ok(())
}

fn links(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    let l = &s.links;
    if l.default.between().is_some() {
        return Err(cx.err(
            "links.default.between",
            "`between` belongs in links.pairs entries, not in the default",
        ));
    }
    link_model(cx, "links.default", &l.default)?;
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, m) in l.pairs.iter().enumerate() {
        let key = join_index("links.pairs", i);
        let bkey = join_key(&key, "between");
        let Some([a, b]) = m.between() else {
            return Err(cx.err(
                &key,
                "a links.pairs entry needs `between: [vehicle, vehicle]`",
            ));
        };
        let find = |name: &str| s.vehicles.iter().position(|v| v.name == name);
        let (Some(ia), Some(ib)) = (find(a), find(b)) else {
            let missing = if find(a).is_none() { a } else { b };
            return Err(cx.err(&bkey, format!("no vehicle is named {missing:?}")));
        };
        if ia == ib {
            return Err(cx.err(
                &bkey,
                format!("names {a:?} twice; a link joins two vehicles"),
            ));
        }
        let pair = (ia.min(ib), ia.max(ib));
        if let Some(j) = seen.insert(pair, i) {
            return Err(cx.err(
                &bkey,
                format!(
                    "the pair {a} - {b} is already given at {}",
                    cx.line_note(&join_index("links.pairs", j))
                ),
            ));
        }
        link_model(cx, &key, m)?;
    }
    if l.queue_packets == 0 {
        return Err(cx.err("links.queue_packets", "must be > 0"));
    }
    Ok(())
}

fn link_model(cx: &Ctx, key: &str, m: &LinkModel) -> Check {
    let k = |f: &str| join_key(key, f);
    match m {
        LinkModel::None { .. } => Ok(()),
        LinkModel::Ideal {
            rate_bps, delay_ms, ..
        } => {
            cx.positive(&k("rate_bps"), *rate_bps)?;
            cx.non_negative(&k("delay_ms"), *delay_ms)
        }
        LinkModel::Disk {
            range_m,
            rate_bps,
            delay_ms,
            ..
        } => {
            cx.positive(&k("range_m"), *range_m)?;
            cx.positive(&k("rate_bps"), *rate_bps)?;
            cx.non_negative(&k("delay_ms"), *delay_ms)
        }
        LinkModel::Rf {
            frequency_ghz,
            tx_power_dbm,
            path_loss_exponent,
            reference_distance_m,
            reference_loss_db,
            noise_floor_dbm,
            rates,
            delay_ms,
            ..
        } => {
            cx.positive(&k("frequency_ghz"), *frequency_ghz)?;
            cx.finite(&k("tx_power_dbm"), &[*tx_power_dbm])?;
            cx.positive(&k("path_loss_exponent"), *path_loss_exponent)?;
            cx.positive(&k("reference_distance_m"), *reference_distance_m)?;
            if let Some(l) = reference_loss_db {
                cx.finite(&k("reference_loss_db"), &[*l])?;
            }
            cx.finite(&k("noise_floor_dbm"), &[*noise_floor_dbm])?;
            cx.non_negative(&k("delay_ms"), *delay_ms)?;
            if let Some(rates) = rates {
                let rk = k("rates");
                if rates.is_empty() {
                    return Err(cx.err(&rk, "needs at least one {snr_db, rate_bps} row"));
                }
                for (i, r) in rates.iter().enumerate() {
                    let ri = join_index(&rk, i);
                    cx.finite(&join_key(&ri, "snr_db"), &[r.snr_db])?;
                    cx.positive(&join_key(&ri, "rate_bps"), r.rate_bps)?;
                    if i > 0 && !(r.snr_db > rates[i - 1].snr_db) {
                        return Err(cx.err(
                            &join_key(&ri, "snr_db"),
                            "thresholds must increase from row to row",
                        ));
                    }
                }
            }
            Ok(())
        }
        LinkModel::Acoustic {
            micromodem_rate,
            bit_rate_bps,
            coding_gain_db,
            frequency_khz,
            bandwidth_khz,
            source_level_db,
            spreading_factor,
            capture_sir_db,
            multipath_window_ms,
            ..
        } => {
            if let Some(w) = multipath_window_ms {
                cx.positive(&k("multipath_window_ms"), *w)?;
            }
            if *micromodem_rate > 6 {
                return Err(cx.err(
                    &k("micromodem_rate"),
                    format!("must be 0-6 (got {micromodem_rate})"),
                ));
            }
            if let Some(r) = bit_rate_bps {
                cx.positive(&k("bit_rate_bps"), *r)?;
            }
            if let Some(g) = coding_gain_db {
                cx.finite(&k("coding_gain_db"), &[*g])?;
            }
            cx.positive(&k("frequency_khz"), *frequency_khz)?;
            cx.positive(&k("bandwidth_khz"), *bandwidth_khz)?;
            cx.finite(&k("source_level_db"), &[*source_level_db])?;
            if !(spreading_factor.is_finite() && (0.0..=3.0).contains(spreading_factor)) {
                return Err(cx.err(
                    &k("spreading_factor"),
                    format!("must be in [0, 3] (got {spreading_factor})"),
                ));
            }
            if let Some(c) = capture_sir_db {
                cx.non_negative(&k("capture_sir_db"), *c)?;
            }
            Ok(())
        }
    }
}

fn water(cx: &Ctx) -> Check {
    let w = &cx.scenario.world.water;
    if !(w.temperature_c.is_finite() && (-2.0..=40.0).contains(&w.temperature_c)) {
        return Err(cx.err(
            "world.water.temperature_c",
            format!("must be in [-2, 40] °C (got {})", w.temperature_c),
        ));
    }
    if !(w.salinity_ppt.is_finite() && (0.0..=45.0).contains(&w.salinity_ppt)) {
        return Err(cx.err(
            "world.water.salinity_ppt",
            format!("must be in [0, 45] ppt (got {})", w.salinity_ppt),
        ));
    }
    if !(w.ph.is_finite() && (6.0..=9.5).contains(&w.ph)) {
        return Err(cx.err(
            "world.water.ph",
            format!("must be in [6, 9.5] (got {})", w.ph),
        ));
    }
    if let SoundSpeed::Fixed(c) = w.sound_speed {
        if !(c.is_finite() && (1300.0..=1700.0).contains(&c)) {
            return Err(cx.err(
                "world.water.sound_speed",
                format!("must be `mackenzie` or a speed in [1300, 1700] m/s (got {c})"),
            ));
        }
    }
    profile(cx)?;
    cx.non_negative("world.water.wind_mps", w.wind_mps)?;
    if !(w.shipping.is_finite() && (0.0..=1.0).contains(&w.shipping)) {
        return Err(cx.err(
            "world.water.shipping",
            format!("must be in [0, 1] (got {})", w.shipping),
        ));
    }
    Ok(())
}

/// `world.water.profile`: every row well formed, depths strictly increasing from 0, every
/// speed (given or from Mackenzie) in [1400, 1700] m/s. Its reach is checked against the
/// terrain once that is read ([`check_profile_reaches_terrain`]).
fn profile(cx: &Ctx) -> Check {
    let w = &cx.scenario.world.water;
    let Some(rows) = &w.profile else {
        return Ok(());
    };
    let key = "world.water.profile";
    if rows.is_empty() {
        return Err(cx.err(
            key,
            "needs at least one row {depth_m, speed_mps or temperature_c}",
        ));
    }
    for (i, r) in rows.iter().enumerate() {
        let row = join_index(key, i);
        let depth_key = join_key(&row, "depth_m");
        if !r.depth_m.is_finite() {
            return Err(cx.err(&depth_key, format!("must be finite (got {})", r.depth_m)));
        }
        if i == 0 && r.depth_m != 0.0 {
            return Err(cx.err(
                &depth_key,
                format!(
                    "the first row must be at the surface, depth 0 m (got {} m)",
                    r.depth_m
                ),
            ));
        }
        if i > 0 && r.depth_m <= rows[i - 1].depth_m {
            return Err(cx.err(
                &depth_key,
                format!(
                    "depths must increase from row to row: row {i} is at {} m, row {} at {} m",
                    r.depth_m,
                    i - 1,
                    rows[i - 1].depth_m
                ),
            ));
        }
        let how = match (r.speed_mps, r.temperature_c) {
            (Some(_), Some(_)) => {
                return Err(cx.err(
                    &row,
                    "gives both speed_mps and temperature_c: give one (the speed, or the \
                     temperature for Mackenzie's equation)",
                ))
            }
            (None, None) => {
                return Err(cx.err(
                    &row,
                    "gives neither speed_mps nor temperature_c: give one (the speed, or the \
                     temperature for Mackenzie's equation)",
                ))
            }
            (Some(_), None) => {
                if r.salinity_ppt.is_some() {
                    return Err(cx.err(
                        &join_key(&row, "salinity_ppt"),
                        "only used with temperature_c (Mackenzie's equation); this row gives \
                         speed_mps",
                    ));
                }
                join_key(&row, "speed_mps")
            }
            (None, Some(t)) => {
                let t_key = join_key(&row, "temperature_c");
                if !(t.is_finite() && (-2.0..=40.0).contains(&t)) {
                    return Err(cx.err(&t_key, format!("must be in [-2, 40] °C (got {t})")));
                }
                if let Some(s) = r.salinity_ppt {
                    if !(s.is_finite() && (0.0..=45.0).contains(&s)) {
                        return Err(cx.err(
                            &join_key(&row, "salinity_ppt"),
                            format!("must be in [0, 45] ppt (got {s})"),
                        ));
                    }
                }
                t_key
            }
        };
        let c = w.row_speed(r).unwrap_or(f64::NAN);
        if !(c.is_finite() && (MIN_PROFILE_SPEED_MPS..=MAX_PROFILE_SPEED_MPS).contains(&c)) {
            let from = if r.speed_mps.is_some() {
                String::new()
            } else {
                format!(
                    " (Mackenzie at {} °C, {} ppt, {} m)",
                    r.temperature_c.unwrap_or(f64::NAN),
                    r.salinity_ppt.unwrap_or(w.salinity_ppt),
                    r.depth_m
                )
            };
            return Err(cx.err(
                &how,
                format!(
                    "the sound speed must be in [{MIN_PROFILE_SPEED_MPS}, \
                     {MAX_PROFILE_SPEED_MPS}] m/s (got {c:.1} m/s{from})"
                ),
            ));
        }
    }
    Ok(())
}

/// `world.seabed` and `world.acoustic_paths`.
fn seabed_and_acoustic_paths(cx: &Ctx) -> Check {
    let b = &cx.scenario.world.seabed;
    cx.positive("world.seabed.sound_speed_mps", b.sound_speed_mps)?;
    cx.positive("world.seabed.density_ratio", b.density_ratio)?;
    cx.non_negative(
        "world.seabed.attenuation_db_per_wavelength",
        b.attenuation_db_per_wavelength,
    )?;
    let p = &cx.scenario.world.acoustic_paths;
    if !(3..=10_000).contains(&p.beams) {
        return Err(cx.err(
            "world.acoustic_paths.beams",
            format!("must be in [3, 10000] (got {})", p.beams),
        ));
    }
    if !(p.launch_angle_deg.is_finite() && p.launch_angle_deg > 0.0 && p.launch_angle_deg <= 90.0) {
        return Err(cx.err(
            "world.acoustic_paths.launch_angle_deg",
            format!("must be in (0, 90] degrees (got {})", p.launch_angle_deg),
        ));
    }
    if !(1..=MAX_ARRIVALS_PER_PATH as u32).contains(&p.max_arrivals) {
        return Err(cx.err(
            "world.acoustic_paths.max_arrivals",
            format!(
                "must be in [1, {MAX_ARRIVALS_PER_PATH}] (got {})",
                p.max_arrivals
            ),
        ));
    }
    cx.positive("world.acoustic_paths.refresh_s", p.refresh_s)?;
    cx.non_negative("world.acoustic_paths.tolerance_m", p.tolerance_m)
}

/// The terrain's deepest point, m below the surface (0 if it is all above the water).
pub(super) fn deepest_m(terrain: &HeightGrid) -> f64 {
    let lowest = terrain
        .heights()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    if lowest.is_finite() {
        (-lowest).max(0.0)
    } else {
        0.0
    }
}

/// `world.water.profile` reaches the terrain's deepest point, so every ray finds a speed.
pub(super) fn check_profile_reaches_terrain(cx: &Ctx, terrain: &HeightGrid) -> Check {
    let Some(last) = cx
        .scenario
        .world
        .water
        .profile
        .as_ref()
        .and_then(|rows| rows.last())
    else {
        return Ok(());
    };
    let deepest = deepest_m(terrain);
    if last.depth_m < deepest {
        return Err(cx.err(
            "world.water.profile",
            format!(
                "the last row is at {} m but the terrain reaches {deepest:.2} m deep: the \
                 profile must reach the deepest point",
                last.depth_m
            ),
        ));
    }
    Ok(())
}

fn simulators(cx: &Ctx) -> Check {
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
    }
}

/// `simulators.physics: {kind: auv_interface, ...}`: every vehicle one of the simulator's AUVs,
/// real ports, and a forwarding port that is not the simulator's own.
pub(super) fn auv_client_settings(cx: &Ctx, a: &AuvClientSettings) -> Check {
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
pub(super) fn gazebo_settings(cx: &Ctx, g: &GazeboSettings) -> Check {
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
pub(super) fn ns3_settings(cx: &Ctx, n: &Ns3Settings) -> Check {
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
pub(super) fn ns3_links(cx: &Ctx) -> Check {
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

fn netsim_manager(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    let Some(m) = &s.netsim_manager else {
        return Ok(());
    };
    if m.port == 0 {
        return Err(cx.err("netsim_manager.port", "must be non-zero"));
    }
    if m.environments.is_empty() {
        return Err(cx.err(
            "netsim_manager.environments",
            "at least one environment is needed",
        ));
    }
    let mut seen = std::collections::HashMap::new();
    for (i, e) in m.environments.iter().enumerate() {
        let p = format!("netsim_manager.environments[{i}]");
        cx.finite(
            &p,
            &[
                e.lat_min,
                e.lat_max,
                e.lon_min,
                e.lon_max,
                e.depth_min,
                e.depth_max,
            ],
        )?;
        if let Some(first) = seen.insert(e.id, p.clone()) {
            return Err(cx.err(
                &format!("{p}.id"),
                format!(
                    "environment id {} is already used at {}",
                    e.id,
                    cx.line_note(&first)
                ),
            ));
        }
        for (lo, hi, what) in [
            (e.lat_min, e.lat_max, "lat"),
            (e.lon_min, e.lon_max, "lon"),
            (e.depth_min, e.depth_max, "depth"),
        ] {
            if lo > hi {
                return Err(cx.err(
                    &format!("{p}.{what}_min"),
                    format!("{what}_min {lo} is above {what}_max {hi}"),
                ));
            }
        }
    }
    for (i, v) in s.vehicles.iter().enumerate() {
        let Some(modem) = &v.modem else { continue };
        let key = format!("vehicles[{i}].modem.environment_id");
        match modem.environment_id {
            Some(id) if !m.environments.iter().any(|e| e.id == id) => {
                return Err(cx.err(
                    &key,
                    format!("no environment with id {id} in netsim_manager.environments"),
                ));
            }
            None if m.environments.len() > 1 => {
                return Err(cx.err(
                    &format!("vehicles[{i}].modem"),
                    "environment_id is needed when several environments are configured",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn check_inside_world(cx: &Ctx, half: [f64; 2]) -> Check {
    let outside = |x: f64, y: f64| !(x.abs() <= half[0] && y.abs() <= half[1]);
    let extent = format!(
        "the world [{}, {}] × [{}, {}] m",
        -half[0], half[0], -half[1], half[1]
    );
    for (i, v) in cx.scenario.vehicles.iter().enumerate() {
        let vp = join_index("vehicles", i);
        if outside(v.start.x, v.start.y) {
            return Err(cx.err(
                &join_key(&vp, "start"),
                format!("start ({}, {}) is outside {extent}", v.start.x, v.start.y),
            ));
        }
        if let Motion::Patrol { waypoints, .. } = &v.motion {
            for (j, w) in waypoints.iter().enumerate() {
                if outside(w[0], w[1]) {
                    return Err(cx.err(
                        &join_index(&join_key(&vp, "motion.waypoints"), j),
                        format!("waypoint ({}, {}) is outside {extent}", w[0], w[1]),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every start and waypoint inside the grid (its real extent) and above its surface.
pub(super) fn check_against_terrain(cx: &Ctx, terrain: &HeightGrid) -> Check {
    check_inside_world(cx, terrain.half_extent())?;
    for (i, v) in cx.scenario.vehicles.iter().enumerate() {
        let vp = join_index("vehicles", i);
        let mut points = vec![(join_key(&vp, "start"), [v.start.x, v.start.y, v.start.z])];
        if let Motion::Patrol { waypoints, .. } = &v.motion {
            let wp = join_key(&vp, "motion.waypoints");
            points.extend(
                waypoints
                    .iter()
                    .enumerate()
                    .map(|(j, w)| (join_index(&wp, j), *w)),
            );
        }
        for (key, [x, y, z]) in points {
            if let Some(ground) = terrain.height_at(x, y) {
                if z <= ground {
                    return Err(cx.err(
                        &key,
                        format!("z = {z} m is at or below the terrain there ({ground:.2} m)"),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn network(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    let n = &s.network;
    if n.max_hold_windows == 0 {
        return Err(cx.err("network.max_hold_windows", "must be ≥ 1"));
    }
    if n.queue_limit == 0 {
        return Err(cx.err("network.queue_limit", "must be ≥ 1"));
    }
    if n.pcap_snaplen == 0 {
        return Err(cx.err(
            "network.pcap_snaplen",
            "must be ≥ 1 (bytes kept of each packet)",
        ));
    }
    if n.capture == super::Capture::Tun && s.real_time_factor <= 0.0 {
        return Err(cx.err(
            "network.capture",
            "live traffic runs against the wall clock: set real_time_factor > 0 (e.g. 1.0)",
        ));
    }
    agents(cx)
}

/// `network.agents` and every `vehicles[].host`: a host only with live capture, not for a
/// vehicle on sim time (its `/clock` bridge runs on the coordinator's machine) or with a modem
/// (the modem bridges listen there).
fn agents(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    let a = &s.network.agents;
    if a.bind.parse::<std::net::SocketAddr>().is_err() {
        return Err(cx.err(
            "network.agents.bind",
            format!(
                "must be ADDRESS:PORT, e.g. 127.0.0.1:5610 or 10.0.0.1:5610 (got {:?})",
                a.bind
            ),
        ));
    }
    if a.timeout_ms == 0 {
        return Err(cx.err("network.agents.timeout_ms", "must be ≥ 1"));
    }
    cx.positive("network.agents.join_timeout_s", a.join_timeout_s)?;
    for (i, v) in s.vehicles.iter().enumerate() {
        let Some(host) = &v.host else {
            continue;
        };
        let key = join_key(&join_index("vehicles", i), "host");
        if let Err(e) = crate::wire::agent::check_agent_name("host", host) {
            // The message names the field: the key path says where.
            let text = e.to_string();
            let text = text.strip_prefix("host: ").unwrap_or(&text);
            return Err(cx.err(&key, format!("{text} (got {host:?})")));
        }
        if s.network.capture != super::Capture::Tun {
            return Err(cx.err(
                &key,
                format!(
                    "vehicle {:?} lives on agent {host:?}, which only live capture uses: set network.capture: tun",
                    v.name
                ),
            ));
        }
        if s.vehicle_ros(v).sim_time() {
            return Err(cx.err(
                &key,
                format!(
                    "vehicle {:?} runs on sim time, whose /clock bridge runs on the network coordinator's machine: leave out `host` or set use_sim_time: false for it",
                    v.name
                ),
            ));
        }
        if v.modem.is_some() {
            return Err(cx.err(
                &key,
                format!(
                    "vehicle {:?} has a modem, whose bridge listens on the network coordinator's machine: leave out `host` or `modem`",
                    v.name
                ),
            ));
        }
        if s.network.offload {
            return Err(cx.err(
                "network.offload",
                format!(
                    "vehicle {:?} lives on agent {host:?}, and agents carry wire packets, not the kernel's bursts: set network.offload: false",
                    v.name
                ),
            ));
        }
    }
    Ok(())
}

fn acoustic_modems(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    for (i, v) in s.vehicles.iter().enumerate() {
        let Some(p) = v.modem.as_ref().and_then(|m| m.passthrough.as_ref()) else {
            continue;
        };
        let key = format!("vehicles[{i}].modem.passthrough");
        match p {
            super::ModemPassthrough::Serial { serial, baud } => {
                if serial.is_empty() {
                    return Err(cx.err(&format!("{key}.serial"), "must name a serial device"));
                }
                if baud_supported(*baud).is_none() {
                    return Err(cx.err(
                        &format!("{key}.baud"),
                        format!("must be a standard rate (1200 … 230400), got {baud}"),
                    ));
                }
            }
            super::ModemPassthrough::Tcp { tcp } => {
                let ok = tcp
                    .rsplit_once(':')
                    .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p != 0));
                if !ok {
                    return Err(cx.err(
                        &format!("{key}.tcp"),
                        format!("must be host:port (got {tcp:?})"),
                    ));
                }
            }
        }
    }
    let Some(a) = &s.acoustic_modems else {
        return Ok(());
    };
    cx.positive("acoustic_modems.frequency_khz", a.frequency_khz)?;
    cx.positive("acoustic_modems.bandwidth_khz", a.bandwidth_khz)?;
    cx.finite("acoustic_modems.source_level_db", &[a.source_level_db])?;
    cx.positive("acoustic_modems.spreading_factor", a.spreading_factor)?;
    if let Some(c) = a.capture_sir_db {
        cx.non_negative("acoustic_modems.capture_sir_db", c)?;
    }
    cx.positive("acoustic_modems.heartbeat_s", a.heartbeat_s)?;
    if let Some(w) = a.multipath_window_ms {
        cx.positive("acoustic_modems.multipath_window_ms", w)?;
    }
    Ok(())
}

fn programs(cx: &Ctx) -> Check {
    let s = cx.scenario;
    let mut names: HashMap<&str, String> = HashMap::new();
    for (i, p) in s.programs.iter().enumerate() {
        let key = join_index("programs", i);
        let k = |f: &str| join_key(&key, f);
        if p.name.is_empty() {
            return Err(cx.err(&k("name"), "must not be empty"));
        }
        if let Some(c) = p
            .name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
        {
            return Err(cx.err(
                &k("name"),
                format!("may contain only A-Z, a-z, 0-9, '_' and '-' (found {c:?})"),
            ));
        }
        if p.name.len() > MAX_PROGRAM_NAME {
            return Err(cx.err(
                &k("name"),
                format!("{:?} is longer than {MAX_PROGRAM_NAME} characters", p.name),
            ));
        }
        if let Some(first) = names.get(p.name.as_str()) {
            return Err(cx.err(
                &k("name"),
                format!(
                    "program name {:?} is already used at {}",
                    p.name,
                    cx.line_note(first)
                ),
            ));
        }
        names.insert(&p.name, k("name"));
        if let Some(v) = &p.vehicle {
            if !s.vehicles.iter().any(|x| &x.name == v) {
                return Err(cx.err(&k("vehicle"), format!("no vehicle is named {v:?}")));
            }
            if s.network.capture != super::Capture::Tun {
                return Err(cx.err(
                    &k("vehicle"),
                    format!("a program inside vehicle {v:?} runs in its network namespace: set network.capture: tun (or leave `vehicle` out to run it on the host)"),
                ));
            }
        }
        cx.non_negative(&k("start_s"), p.start_s)?;
        if p.start_s >= s.duration_s {
            return Err(cx.err(
                &k("start_s"),
                format!(
                    "must be below duration_s ({} s), or the run ends before it starts (got {})",
                    s.duration_s, p.start_s
                ),
            ));
        }
        match &p.command {
            super::ProgramCommand::Shell(c) => {
                if c.trim().is_empty() {
                    return Err(cx.err(&k("command"), "must not be empty"));
                }
                no_nul(cx, &k("command"), c)?;
            }
            super::ProgramCommand::Argv(argv) => {
                match argv.first() {
                    None => return Err(cx.err(&k("command"), "needs at least the program to run")),
                    Some(a) if a.is_empty() => {
                        return Err(cx.err(
                            &join_index(&k("command"), 0),
                            "must name the program to run",
                        ))
                    }
                    Some(_) => {}
                }
                for (j, a) in argv.iter().enumerate() {
                    no_nul(cx, &join_index(&k("command"), j), a)?;
                }
            }
        }
        for (name, value) in &p.env {
            let ek = join_key(&k("env"), name);
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(cx.err(&k("env"), format!("{name:?} is not a variable name")));
            }
            if name.starts_with("COSIM_") {
                return Err(cx.err(
                    &ek,
                    "COSIM_* variables are set by the run for every program",
                ));
            }
            no_nul(cx, &ek, value)?;
        }
        if let Some(dir) = &p.cwd {
            no_nul(cx, &k("cwd"), dir)?;
            let resolved = cx.file.parent().unwrap_or(Path::new("")).join(dir);
            if !resolved.is_dir() {
                return Err(cx.err(
                    &k("cwd"),
                    format!(
                        "{} is not a directory (cwd is relative to the scenario file's directory)",
                        resolved.display()
                    ),
                ));
            }
        }
        cx.non_negative(&k("stop_timeout_s"), p.stop_timeout_s)?;
        if p.stop_timeout_s > MAX_STOP_TIMEOUT_S {
            return Err(cx.err(
                &k("stop_timeout_s"),
                format!(
                    "must be at most {MAX_STOP_TIMEOUT_S} s (got {})",
                    p.stop_timeout_s
                ),
            ));
        }
    }
    Ok(())
}

/// Every `vehicles[].attach`: exactly one of `container` and `netns`, each well formed, no
/// container or namespace for two vehicles, only with `network.capture: tun`, not on sim time
/// (the `/clock` bridge runs in namespaces the run creates), and no `cwd` for a program in a
/// container (it starts in the container's `/`). Whether the container runs or the namespace
/// exists is the run's to find out: `cosim check` needs neither.
fn attach(cx: &Ctx) -> Check {
    let s = cx.scenario;
    let mut seen: HashMap<String, String> = HashMap::new();
    for (i, v) in s.vehicles.iter().enumerate() {
        let Some(a) = &v.attach else {
            continue;
        };
        let key = join_key(&join_index("vehicles", i), "attach");
        let k = |f: &str| join_key(&key, f);
        let (what, at) = match (&a.container, &a.netns) {
            (None, None) | (Some(_), Some(_)) => {
                return Err(cx.err(
                    &key,
                    "needs exactly one of `container: NAME` (a running container) and `netns: PATH` (an existing network namespace)",
                ))
            }
            (Some(name), None) => {
                container_name(name).map_err(|e| cx.err(&k("container"), e))?;
                let engine = a.engine.unwrap_or_default().command();
                (format!("{engine} container {name}"), k("container"))
            }
            (None, Some(path)) => {
                if a.engine.is_some() {
                    return Err(cx.err(
                        &k("engine"),
                        "names the engine of a `container`; a `netns` needs none",
                    ));
                }
                netns_path(path).map_err(|e| cx.err(&k("netns"), e))?;
                (format!("namespace {path}"), k("netns"))
            }
        };
        if s.network.capture != super::Capture::Tun {
            return Err(cx.err(
                &key,
                format!("vehicle {:?} lives in a {what}, which only live capture uses: set network.capture: tun", v.name),
            ));
        }
        if let Some(first) = seen.get(&what) {
            return Err(cx.err(
                &at,
                format!(
                    "the {what} is already a vehicle's at {} (one vehicle per namespace)",
                    cx.line_note(first)
                ),
            ));
        }
        seen.insert(what.clone(), at);
        if s.vehicle_ros(v).sim_time() {
            let ros_key = match v.ros.use_sim_time {
                Some(true) => join_key(&join_index("vehicles", i), "ros.use_sim_time"),
                _ => "ros.use_sim_time".to_owned(),
            };
            return Err(cx.err(
                &key,
                format!(
                    "vehicle {:?} runs on sim time ({}), whose /clock bridge runs only in namespaces the run creates: leave out `attach` or set use_sim_time: false for it",
                    v.name,
                    cx.line_note(&ros_key)
                ),
            ));
        }
        if a.container.is_some() {
            for (j, p) in s.programs.iter().enumerate() {
                if p.vehicle.as_deref() == Some(v.name.as_str()) && p.cwd.is_some() {
                    return Err(cx.err(
                        &join_key(&join_index("programs", j), "cwd"),
                        format!(
                            "a program of vehicle {:?} runs in its container's file system and starts in its /: leave cwd out (the container is at {})",
                            v.name,
                            cx.line_note(&key)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A container name or id as podman and docker take it: `[A-Za-z0-9][A-Za-z0-9_.-]*`.
fn container_name(name: &str) -> Result<(), String> {
    let shown: String = name.chars().take(64).collect();
    if name.is_empty() {
        return Err("must name a container".to_owned());
    }
    if name.len() > MAX_CONTAINER_NAME {
        return Err(format!(
            "{shown:?}… is longer than {MAX_CONTAINER_NAME} characters"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "{shown:?} is not a container name: it must start with a letter or digit"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "{shown:?} is not a container name: only A-Z, a-z, 0-9, '_', '.' and '-' (found {c:?})"
        ));
    }
    Ok(())
}

/// A network namespace path: absolute, and not one of the run's own (`/run/netns/ncs-*`),
/// which a later run would take for a dead run's leftover and remove.
fn netns_path(path: &str) -> Result<(), String> {
    if path.contains('\0') {
        return Err("must not contain a NUL character".to_owned());
    }
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(format!(
            "{path:?} is not an absolute path (e.g. /run/netns/NAME or /proc/PID/ns/net)"
        ));
    }
    if p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("{path:?} must not contain '..'"));
    }
    let own = ["/run/netns", "/var/run/netns"].iter().any(|dir| {
        p.parent() == Some(Path::new(dir))
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(crate::config::OWN_NETNS_PREFIX))
    });
    if own {
        return Err(format!(
            "{path:?} is named like the namespaces runs create and remove (ncs-*): give the namespace another name"
        ));
    }
    Ok(())
}

fn no_nul(cx: &Ctx, key_path: &str, text: &str) -> Check {
    if text.contains('\0') {
        return Err(cx.err(key_path, "must not contain a NUL character"));
    }
    Ok(())
}
