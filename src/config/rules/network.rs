//! The rules of `network` and of the capture agents (`network.agents`, `vehicles[].host`):
//! limits of at least one, live capture only with a paced run, and a vehicle on an agent only
//! with live capture, not on sim time, without a modem and without offload.

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::Capture;

pub(super) fn network(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    let n = &s.network;
    if n.max_hold_windows == 0 {
        return Err(cx.err("network.max_hold_windows", "must be ≥ 1"));
    }
    if n.queue_limit == 0 {
        return Err(cx.err("network.queue_limit", "must be ≥ 1"));
    }
    if let Some(b) = n.emulation_bound_ms {
        if !(b > 0.0 && b.is_finite()) {
            return Err(cx.err(
                "network.emulation_bound_ms",
                format!("{b} must be > 0 (ms of emulation error a packet may get)"),
            ));
        }
    }
    if n.pcap_snaplen == 0 {
        return Err(cx.err(
            "network.pcap_snaplen",
            "must be ≥ 1 (bytes kept of each packet)",
        ));
    }
    if n.capture == Capture::Tun && s.real_time_factor <= 0.0 {
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
        if s.network.capture != Capture::Tun {
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
