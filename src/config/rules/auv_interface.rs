//! The rules of `auv_interface`: thruster-driven vehicles with unique AUV ids, an address
//! and three different ports to bind, and cameras a renderer can take.

use std::collections::HashMap;
use std::net::IpAddr;

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};

/// `auv_interface`: ports, rates and cameras; thruster vehicles' ids unique.
pub(super) fn auv_interface(cx: &Ctx) -> Check {
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
