//! The rules of `world` (but its water, [`super::water`]) and of the world's extent:
//!
//! - `world.origin`: latitude in [-90, 90], longitude in [-180, 180], all finite;
//!   `penetration_loss_db_per_m` ≥ 0 and finite.
//! - `world.terrain`: `cell_size_m` and sizes > 0 and finite; a procedural grid has at most
//!   8192 × 8192 cells; ridges have finite ends and crest and `width_m` > 0; a PNG has
//!   `min_height_m < max_height_m`; PNG and CSV files must exist.
//! - `world.seabed`: `sound_speed_mps` and `density_ratio` > 0, `attenuation_db_per_wavelength`
//!   ≥ 0 (a negative one would amplify every bottom bounce). `world.acoustic_paths`: `beams` in
//!   [3, 10000], `launch_angle_deg` in (0, 90], `max_arrivals` in [1, 256], `refresh_s` > 0,
//!   `tolerance_m` ≥ 0.
//! - The world's horizontal extent is centred on the origin; every vehicle's `start` and every
//!   patrol waypoint must lie inside it: for procedural terrain inside `size_m` first, then for
//!   every terrain inside the grid as read ([`LoadedScenario::check_inside_world`]), and above
//!   its surface (`z` above [`HeightGrid::height_at`] there).
//!
//! [`LoadedScenario::check_inside_world`]: crate::config::LoadedScenario::check_inside_world
//! [`HeightGrid::height_at`]: crate::config::HeightGrid::height_at

use std::path::Path;

use super::{Check, Ctx};
use crate::config::raster::Crs;
use crate::config::source_map::{join_index, join_key};
use crate::config::{HeightGrid, Motion, Terrain};
use crate::wire::channel::MAX_ARRIVALS_PER_PATH;

/// Largest procedural grid, in cells per side.
const MAX_GRID_CELLS: f64 = 8192.0;

pub(super) fn world(cx: &Ctx) -> Check {
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
        Terrain::AsciiGrid {
            path,
            crs,
            size_m,
            cell_size_m,
            ..
        } => raster(cx, path, Some(crs), *size_m, *cell_size_m)?,
        Terrain::Geotiff {
            path,
            crs,
            size_m,
            cell_size_m,
            ..
        } => raster(cx, path, crs.as_ref(), *size_m, *cell_size_m)?,
        Terrain::Netcdf {
            path,
            variable,
            crs,
            size_m,
            cell_size_m,
            ..
        } => {
            if variable.as_ref().is_some_and(|v| v.trim().is_empty()) {
                return Err(cx.err(
                    &join_key(t, "variable"),
                    "must name a variable, or be left out",
                ));
            }
            raster(cx, path, crs.as_ref(), *size_m, *cell_size_m)?
        }
    }
    Ok(())
}

/// A georeferenced raster's keys: a positive extent and spacing, a CRS this reads (if given),
/// a file that exists.
fn raster(cx: &Ctx, path: &str, crs: Option<&String>, size_m: [f64; 2], cell: f64) -> Check {
    let t = "world.terrain";
    cx.positive(&join_key(t, "cell_size_m"), cell)?;
    cx.positive(&join_key(t, "size_m[0]"), size_m[0])?;
    cx.positive(&join_key(t, "size_m[1]"), size_m[1])?;
    if let Some(crs) = crs {
        Crs::parse(crs).map_err(|e| cx.err(&join_key(t, "crs"), e))?;
    }
    terrain_file(cx, path)
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

/// `world.seabed` and `world.acoustic_paths`.
pub(super) fn seabed_and_acoustic_paths(cx: &Ctx) -> Check {
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

pub(in crate::config) fn check_inside_world(cx: &Ctx, half: [f64; 2]) -> Check {
    let outside = |x: f64, y: f64| !(x.abs() <= half[0] && y.abs() <= half[1]);
    let extent = format!(
        "the world [{}, {}] × [{}, {}] m",
        -half[0], half[0], -half[1], half[1]
    );
    for (i, v) in cx.scenario.vehicles.iter().enumerate() {
        let vp = join_index("vehicles", i);
        if let Motion::Track(t) = &v.motion {
            // Its log's samples, once read.
            if let Some(log) = &t.log {
                for (i, s) in log.samples.iter().enumerate() {
                    let [x, y, _] = s.position;
                    if outside(x, y) {
                        return Err(cx.err(
                            &join_key(&vp, "motion.file"),
                            format!("{}: ({x:.2}, {y:.2}) is outside {extent}", log.place(i)),
                        ));
                    }
                }
            }
            continue;
        }
        let start = v.start();
        if outside(start.x, start.y) {
            return Err(cx.err(
                &join_key(&vp, "start"),
                format!("start ({}, {}) is outside {extent}", start.x, start.y),
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
pub(in crate::config) fn check_against_terrain(cx: &Ctx, terrain: &HeightGrid) -> Check {
    check_inside_world(cx, terrain.half_extent())?;
    for (i, v) in cx.scenario.vehicles.iter().enumerate() {
        let vp = join_index("vehicles", i);
        let start = v.start();
        let mut points = vec![(join_key(&vp, "start"), [start.x, start.y, start.z])];
        if let Motion::Track(t) = &v.motion {
            let Some(log) = &t.log else { continue };
            for (i, s) in log.samples.iter().enumerate() {
                let [x, y, z] = s.position;
                if let Some(ground) = terrain.height_at(x, y) {
                    if z <= ground {
                        return Err(cx.err(
                            &join_key(&vp, "motion.file"),
                            format!(
                                "{}: z = {z:.2} m is at or below the terrain there ({ground:.2} m)",
                                log.place(i)
                            ),
                        ));
                    }
                }
            }
            continue;
        }
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
