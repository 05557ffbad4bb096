//! The rules of `world.water`, its sound-speed profile included, and the profile's reach
//! against the terrain once that is read:
//!
//! - `world.water`: `temperature_c` in [−2, 40], `salinity_ppt` in [0, 45], `ph` in [6, 9.5],
//!   a fixed `sound_speed` in [1400, 1700] m/s (as a profile's speeds, below), `wind_mps` ≥ 0,
//!   `shipping` in [0, 1].
//!   `profile` (sound speed by depth, for beam tracing): at least one row, each with exactly
//!   one of `speed_mps` and `temperature_c` (`salinity_ppt` only beside a temperature,
//!   temperatures and salinities in the water's ranges), depths finite, the first 0 and
//!   strictly increasing (the error names the row), every speed, given or from Mackenzie, in
//!   [1400, 1700] m/s (the range of sea water: a speed outside it is a typo or a unit mistake,
//!   and would bend every ray), and the last row at least as deep as the terrain's deepest
//!   point (both depths named; the tracer needs a speed wherever a ray can go).
//!   `casts` (CTD casts, instead of `profile`): 1 to 64, each with a `file` and its place as
//!   `lat_deg` with `lon_deg` (in range) or `x` with `y` (finite), not both; a `.cnv` may
//!   leave its place to its header (checked when the file is read, with its rows).

use super::{Check, Ctx};
use crate::config::source_map::{join_index, join_key};
use crate::config::{HeightGrid, SoundSpeed, MAX_PROFILE_SPEED_MPS, MIN_PROFILE_SPEED_MPS};

pub(super) fn water(cx: &Ctx) -> Check {
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
        if !(c.is_finite() && (MIN_PROFILE_SPEED_MPS..=MAX_PROFILE_SPEED_MPS).contains(&c)) {
            return Err(cx.err(
                "world.water.sound_speed",
                format!(
                    "must be `mackenzie` or a speed in [{MIN_PROFILE_SPEED_MPS}, \
                     {MAX_PROFILE_SPEED_MPS}] m/s, the range of sea water (got {c}: a typo or a \
                     unit mistake?)"
                ),
            ));
        }
    }
    profile(cx)?;
    casts(cx)?;
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

/// Most casts `world.water.casts` may list.
pub const MAX_CASTS: usize = 64;

/// `world.water.casts`: beside no `profile`, 1 to [`MAX_CASTS`], each placed once.
fn casts(cx: &Ctx) -> Check {
    let w = &cx.scenario.world.water;
    let Some(casts) = &w.casts else {
        return Ok(());
    };
    let key = "world.water.casts";
    if w.profile.is_some() {
        return Err(cx.err(
            key,
            "give `profile` or `casts`, not both: the casts are the sound-speed profile",
        ));
    }
    if casts.is_empty() || casts.len() > MAX_CASTS {
        return Err(cx.err(
            key,
            format!("needs 1 to {MAX_CASTS} casts (got {})", casts.len()),
        ));
    }
    for (i, c) in casts.iter().enumerate() {
        let at = join_index(key, i);
        if c.file.trim().is_empty() {
            return Err(cx.err(&join_key(&at, "file"), "must name the cast's file"));
        }
        match (c.lat_deg, c.lon_deg, c.x, c.y) {
            (Some(lat), Some(lon), None, None) => {
                if !(lat.is_finite() && (-90.0..=90.0).contains(&lat)) {
                    return Err(cx.err(
                        &join_key(&at, "lat_deg"),
                        format!("must be in [-90, 90] (got {lat})"),
                    ));
                }
                if !(lon.is_finite() && (-180.0..=180.0).contains(&lon)) {
                    return Err(cx.err(
                        &join_key(&at, "lon_deg"),
                        format!("must be in [-180, 180] (got {lon})"),
                    ));
                }
            }
            (None, None, Some(x), Some(y)) => {
                if !(x.is_finite() && y.is_finite()) {
                    return Err(cx.err(&at, format!("x and y must be finite (got {x}, {y})")));
                }
            }
            (None, None, None, None) => {}
            _ => {
                return Err(cx.err(
                    &at,
                    "place the cast by `lat_deg` and `lon_deg`, or by `x` and `y` (metres from \
                     the origin): one pair, whole",
                ))
            }
        }
    }
    Ok(())
}

/// The terrain's deepest point, m below the surface (0 if it is all above the water).
pub(in crate::config) fn deepest_m(terrain: &HeightGrid) -> f64 {
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
pub(in crate::config) fn check_profile_reaches_terrain(cx: &Ctx, terrain: &HeightGrid) -> Check {
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
