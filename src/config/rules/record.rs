//! The rules of `record` (positive sampling intervals) and `viewer` (an address to listen on,
//! TLS off loopback, room for at least one message per client).

use super::{Check, Ctx};

/// `record`: sampling intervals.
pub(super) fn record(cx: &Ctx) -> Check {
    let s = cx.scenario;
    cx.positive("record.pose_interval_s", s.record.pose_interval_s)?;
    cx.positive("record.channel_interval_s", s.record.channel_interval_s)?;
    Ok(())
}

/// `viewer`: an address to listen on, TLS on one other hosts reach
/// ([`ViewerSettings::exposed`]), room for at least one message per client.
///
/// [`ViewerSettings::exposed`]: crate::config::ViewerSettings::exposed
pub(super) fn viewer(cx: &Ctx) -> Check {
    let v = &cx.scenario.viewer;
    if v.address.parse::<std::net::SocketAddr>().is_err() {
        return Err(cx.err(
            "viewer.address",
            format!("must be HOST:PORT with an IP address (got {:?})", v.address),
        ));
    }
    if let Some(why) = v.exposed() {
        return Err(cx.err("viewer.address", why));
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
