//! The rules of `netsim_manager`: a port, at least one environment with unique ids and
//! bounds in order, and every vehicle's modem in one of them.

use super::{Check, Ctx};

pub(super) fn netsim_manager(cx: &Ctx) -> Check {
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
