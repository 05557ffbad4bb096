//! The rules of `vehicles`, and of the namespaces they attach to (`vehicles[].attach`):
//!
//! - `vehicles`: at least one; names non-empty, unique, only `[a-z0-9_-]`, at most 12
//!   characters (they become network-namespace and interface names); every vehicle has at
//!   least one address `IP/prefix` (IPv4 prefix ≤ 32, IPv6 ≤ 128; not unspecified, loopback,
//!   multicast or broadcast), and no IP appears twice in the scenario, whatever the prefix;
//!   modem `tcp_port`s are unique and non-zero, modem `id`s unique and ≤ 127; poses and
//!   waypoints are finite.
//! - `motion: {kind: patrol}`: `speed_mps`, `max_turn_rate_deg_s`, `max_depth_rate_mps`,
//!   `capture_radius_m` > 0 and finite, at least one waypoint.
//! - `attach`: exactly one of a container name and an absolute namespace path (not one of the
//!   run's own), each for one vehicle, only with live capture, not on sim time.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::{Capture, Motion};

/// Longest vehicle name: it becomes part of network-namespace and interface names.
const MAX_VEHICLE_NAME: usize = 12;

/// Longest container name or id accepted in `vehicles[].attach.container`.
const MAX_CONTAINER_NAME: usize = 128;

pub(super) fn vehicles(cx: &Ctx) -> Check {
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

        match (&v.start_pose, &v.motion) {
            (Some(_), Motion::Track(_)) => {
                return Err(cx.err(
                    &join_key(&vp, "start"),
                    "leave `start` out: a track starts where its log is at offset_s",
                ))
            }
            (None, Motion::Track(t)) => {
                let mp = join_key(&vp, "motion");
                if t.file.trim().is_empty() {
                    return Err(cx.err(&join_key(&mp, "file"), "names no file"));
                }
                cx.non_negative(&join_key(&mp, "offset_s"), t.offset_s)?;
                cx.positive(&join_key(&mp, "max_gap_s"), t.max_gap_s)?;
            }
            (None, _) => {
                return Err(cx.err(
                    &vp,
                    "needs `start`, its start pose ({x, y, z} in metres, heading_deg) (only a \
                     track starts where its log does)",
                ))
            }
            (Some(s), _) => {
                cx.finite(&join_key(&vp, "start"), &[s.x, s.y, s.z, s.heading_deg])?;
            }
        }

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

/// Every `vehicles[].attach`: exactly one of `container` and `netns`, each well formed, no
/// container or namespace for two vehicles, only with `network.capture: tun`, not on sim time
/// (the `/clock` bridge runs in namespaces the run creates), and no `cwd` for a program in a
/// container (it starts in the container's `/`). Whether the container runs or the namespace
/// exists is the run's to find out: `cosim check` needs neither.
pub(super) fn attach(cx: &Ctx) -> Check {
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
        if s.network.capture != Capture::Tun {
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
