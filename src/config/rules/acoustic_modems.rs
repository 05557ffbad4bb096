//! The rules of `acoustic_modems` and of the vehicles' modem passthroughs:
//!
//! - `acoustic_modems.epoch_utc` is `YYYY-MM-DDThh:mm:ss[.f]Z`; a modem's `passthrough` has
//!   a serial device at a standard baud rate ([`SERIAL_BAUDS`]) or a TCP `host:port`.
//! - The modems' frequency, bandwidth, spreading factor, heartbeat and multipath window > 0,
//!   the source level finite and the capture threshold ≥ 0.
//!
//! [`SERIAL_BAUDS`]: crate::config::SERIAL_BAUDS

use super::{Check, Ctx};
use crate::config::{baud_supported, ModemPassthrough};

pub(super) fn acoustic_modems(cx: &Ctx) -> Check {
    let s = &cx.scenario;
    for (i, v) in s.vehicles.iter().enumerate() {
        let Some(p) = v.modem.as_ref().and_then(|m| m.passthrough.as_ref()) else {
            continue;
        };
        let key = format!("vehicles[{i}].modem.passthrough");
        match p {
            ModemPassthrough::Serial { serial, baud } => {
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
            ModemPassthrough::Tcp { tcp } => {
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
