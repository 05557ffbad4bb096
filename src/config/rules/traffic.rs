//! The rules of `traffic`: unique flow names, vehicles that exist and have an IPv4 address,
//! a receiver for every flow but a heartbeat (which has none) and never the sender, a start
//! and stop inside the run, sizes that fit one IPv4 packet with the flow's stamp, requests and
//! responses of 1 byte to 64 MiB, socket buffers of 4 KiB to 4 MiB, rates and intervals that
//! are positive, and no two flows on one receiver's port.

use std::collections::HashMap;

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::traffic::{FlowKind, Pattern};

/// Longest flow name: it names the flow in the report.
const MAX_FLOW_NAME: usize = 32;

/// Payload bytes a flow's packet carries at least (its sequence number and send time) and at
/// most (one IPv4 packet on a 1500-byte MTU).
pub(in crate::config) const FLOW_PAYLOAD: std::ops::RangeInclusive<u32> = 16..=1472;

/// A TCP flow's socket buffers, bytes.
const TCP_BUFFER: std::ops::RangeInclusive<u32> = 4096..=(4 << 20);

/// A request's or a response's bytes.
const EXCHANGE_BYTES: std::ops::RangeInclusive<u32> = 1..=(64 << 20);

/// Fewest sim nanoseconds between two packets of a flow: a faster flow would be a mistake.
const MIN_GAP_S: f64 = 1e-6;

pub(super) fn traffic(cx: &Ctx) -> Check {
    let s = cx.scenario;
    let mut names: HashMap<&str, String> = HashMap::new();
    // (receiver, protocol, port) → the flow's key.
    let mut ports: HashMap<(String, &str, u16), String> = HashMap::new();
    let vehicle = |key: &str, name: &str| -> Check {
        match s.vehicles.iter().find(|v| v.name == name) {
            None => Err(cx.err(key, format!("no vehicle is named {name:?}"))),
            Some(v) if !v.addresses.iter().any(|a| a.addr().is_ipv4()) => Err(cx.err(
                key,
                format!("vehicle {name:?} has no IPv4 address, which flows are sent from and to"),
            )),
            Some(_) => Ok(()),
        }
    };
    for (i, f) in s.traffic.flows.iter().enumerate() {
        let key = join_index("traffic.flows", i);
        let k = |f: &str| join_key(&key, f);
        cx.unique_name(&k("name"), &f.name, MAX_FLOW_NAME, "flow", &mut names)?;
        vehicle(&k("from"), &f.from)?;
        let heartbeat = matches!(f.send, FlowKind::Heartbeat { .. });
        match (&f.to, heartbeat) {
            (Some(_), true) => {
                return Err(cx.err(
                    &k("to"),
                    "a heartbeat goes to every other vehicle: leave `to` out",
                ))
            }
            (None, false) => {
                return Err(cx.err(
                    &key,
                    format!("a {} flow needs `to`, the receiving vehicle", f.send.name()),
                ))
            }
            (Some(to), false) => {
                vehicle(&k("to"), to)?;
                if to == &f.from {
                    return Err(cx.err(
                        &k("to"),
                        format!("{to:?} is the sender: a flow goes to another vehicle"),
                    ));
                }
            }
            (None, true) => {}
        }
        cx.non_negative(&k("start_s"), f.start_s)?;
        if f.start_s >= s.duration_s {
            return Err(cx.err(
                &k("start_s"),
                format!(
                    "must be below duration_s ({} s), or the run ends before it starts (got {})",
                    s.duration_s, f.start_s
                ),
            ));
        }
        if let Some(stop) = f.stop_s {
            if !(stop.is_finite() && stop > f.start_s) {
                return Err(cx.err(
                    &k("stop_s"),
                    format!("must be after start_s ({} s) (got {stop})", f.start_s),
                ));
            }
        }
        let send = |f: &str| join_key(&k("send"), f);
        let size = |bytes: u32| -> Check {
            if FLOW_PAYLOAD.contains(&bytes) {
                Ok(())
            } else {
                Err(cx.err(
                    &send("size_bytes"),
                    format!(
                        "must be {} to {} bytes (got {bytes})",
                        FLOW_PAYLOAD.start(),
                        FLOW_PAYLOAD.end()
                    ),
                ))
            }
        };
        let interval = |v: f64| -> Check {
            cx.positive(&send("interval_s"), v)?;
            if v < MIN_GAP_S {
                return Err(cx.err(
                    &send("interval_s"),
                    format!("must be at least {MIN_GAP_S} s (got {v})"),
                ));
            }
            Ok(())
        };
        let buffer = |bytes: u32| -> Check {
            if TCP_BUFFER.contains(&bytes) {
                Ok(())
            } else {
                Err(cx.err(
                    &send("buffer_bytes"),
                    format!("must be 4096 to 4194304 bytes (got {bytes})"),
                ))
            }
        };
        let mut port = |proto: &'static str, port: u16, to: &str| -> Check {
            let at = send("port");
            if let Some(first) = ports.get(&(to.to_owned(), proto, port)) {
                return Err(cx.err(
                    &at,
                    format!(
                        "{proto} port {port} of {to:?} is already the receiving end of {}",
                        cx.line_note(first)
                    ),
                ));
            }
            // The flow, not its port key, which may be left to its default.
            ports.insert((to.to_owned(), proto, port), key.clone());
            Ok(())
        };
        let to = f.to.as_deref().unwrap_or("");
        match &f.send {
            FlowKind::Udp {
                rate_kbps,
                size_bytes,
                pattern,
                port: p,
            } => {
                cx.positive(&send("rate_kbps"), *rate_kbps)?;
                size(*size_bytes)?;
                let gap = f64::from(*size_bytes) * 8.0 / (rate_kbps * 1e3);
                if gap < MIN_GAP_S {
                    return Err(cx.err(
                        &send("rate_kbps"),
                        format!("{rate_kbps} kbit/s in {size_bytes}-byte datagrams is more than one per µs"),
                    ));
                }
                if let Pattern::OnOff { on_s, off_s } = pattern {
                    cx.positive(&send("pattern.on_s"), *on_s)?;
                    cx.positive(&send("pattern.off_s"), *off_s)?;
                }
                port("udp", *p, to)?;
            }
            FlowKind::Ping {
                interval_s,
                size_bytes,
            } => {
                interval(*interval_s)?;
                size(*size_bytes)?;
            }
            FlowKind::Heartbeat {
                interval_s,
                size_bytes,
                group,
                ..
            } => {
                interval(*interval_s)?;
                size(*size_bytes)?;
                if !group.is_multicast() {
                    return Err(cx.err(
                        &send("group"),
                        format!("{group} is not an IPv4 multicast group (224.0.0.0/4)"),
                    ));
                }
            }
            FlowKind::Tcp {
                bytes,
                port: p,
                buffer_bytes,
            } => {
                buffer(*buffer_bytes)?;
                if *bytes == Some(0) {
                    return Err(cx.err(&send("bytes"), "must be > 0 (leave it out for no end)"));
                }
                port("tcp", *p, to)?;
            }
            FlowKind::Request {
                interval_s,
                request_bytes,
                response_bytes,
                port: p,
                buffer_bytes,
            } => {
                interval(*interval_s)?;
                for (field, v) in [
                    ("request_bytes", request_bytes),
                    ("response_bytes", response_bytes),
                ] {
                    if !EXCHANGE_BYTES.contains(v) {
                        return Err(cx.err(
                            &send(field),
                            format!("must be 1 to 67108864 bytes (64 MiB) (got {v})"),
                        ));
                    }
                }
                buffer(*buffer_bytes)?;
                port("tcp", *p, to)?;
            }
        }
    }
    Ok(())
}
