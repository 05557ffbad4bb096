//! The rules of `links`:
//!
//! - `links`: `default` has no `between`; every `pairs` entry has `between` naming two
//!   different existing vehicles, each unordered pair at most once; `queue_packets` > 0. Per
//!   model: rates, ranges, frequencies, bandwidths, reference distance and exponent > 0;
//!   delays ≥ 0; powers, levels, losses, noise floor and coding gain finite; rf `rates`
//!   non-empty with strictly increasing `snr_db`, and not with `mac`; acoustic
//!   `micromodem_rate` 0–6, `spreading_factor` in [0, 3], `capture_sir_db` ≥ 0,
//!   `multipath_window_ms` > 0 (likewise in `acoustic_modems`).

use std::collections::HashMap;

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::LinkModel;

pub(super) fn links(cx: &Ctx) -> Check {
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
            mac,
            channel,
            rate_mbps,
            ..
        } => {
            cx.positive(&k("frequency_ghz"), *frequency_ghz)?;
            if let (None, Some(_)) = (mac, channel) {
                return Err(cx.err(
                    &k("channel"),
                    "only with `mac`: a channel is what 802.11 radios share".to_string(),
                ));
            }
            match (mac, rate_mbps) {
                (None, Some(_)) => {
                    return Err(cx.err(
                        &k("rate_mbps"),
                        "only with `mac`: the constant rate of an 802.11 standard".to_string(),
                    ))
                }
                (Some(mac), Some(r)) => {
                    let rates = mac.data_rates_kbps();
                    if !rates.iter().any(|&x| x as f64 == r * 1e3) {
                        let rates: Vec<String> = rates
                            .iter()
                            .map(|&x| format!("{}", x as f64 / 1e3))
                            .collect();
                        return Err(cx.err(
                            &k("rate_mbps"),
                            format!(
                                "{r} is not a rate of {}: one of {}",
                                mac.name(),
                                rates.join(", ")
                            ),
                        ));
                    }
                }
                _ => {}
            }
            if let (Some(mac), Some(_)) = (mac, rates) {
                return Err(cx.err(
                    &k("rates"),
                    format!(
                        "not with `mac: {}`: the standard's rates and minimum sensitivities apply",
                        mac.name()
                    ),
                ));
            }
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
