//! `cosim acoustics`: the acoustic paths between two vehicles of a scenario at one time, as
//! pictures. The vehicles are placed where the embedded physics has them at the start of the
//! window holding that time; the terrain is sampled along the bearing from the source to the
//! receiver ([`Section::along`]) and traced ([`crate::model::beam`]) with the scenario's
//! settings ([`Settings::of`]); [`crate::output::report::acoustics`] draws the pictures.

use crate::config::LoadedScenario;
use crate::model::beam::{Environment, Multipath, Section};
use crate::model::motion::Kinematics;
use crate::model::pose::VehicleState;
use crate::model::terrain::Terrain;
use crate::output::report::acoustics::{self as pictures, Ends, Settings, Traced};
use crate::output::report::plots;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The section reaches this share of the pair's distance beyond the receiver.
pub const BEYOND: f64 = 0.15;

/// Every vehicle's state at the start of window `window` of the embedded physics: each on its
/// motion law from its start pose, in the embedded simulator's sub-steps (vehicles moved from
/// outside, `motion: external`, hold their start pose; thruster-driven ones get no command).
pub fn states_at(loaded: &LoadedScenario, terrain: &Terrain, window: u32) -> Vec<VehicleState> {
    let s = &loaded.scenario;
    let schedule = loaded.schedule();
    let substeps = (s.window_ms / s.simulators.physics_step_ms).ceil().max(1.0) as u32;
    let dt = schedule.window_s() / f64::from(substeps);
    let half = terrain.half_extent();
    let mut vehicles: Vec<(VehicleState, Kinematics)> = s
        .vehicles
        .iter()
        .map(|v| {
            (
                VehicleState::from_pose(&v.start()),
                Kinematics::from_config(&v.motion),
            )
        })
        .collect();
    for _ in 0..u64::from(window) * u64::from(substeps) {
        for (state, kin) in &mut vehicles {
            kin.step(state, dt);
            if let Kinematics::Thrusters(auv) = kin {
                let floor = terrain.height_at(state.position.x, state.position.y);
                auv.bound(state, floor, half);
            }
        }
    }
    vehicles.into_iter().map(|(s, _)| s).collect()
}

/// `--pair SOURCE,RECEIVER` as vehicle indices; the error names what is wrong.
pub fn pair(loaded: &LoadedScenario, pair: &str) -> anyhow::Result<(usize, usize)> {
    let Some((a, b)) = pair
        .split_once(',')
        .map(|(a, b)| (a.trim(), b.trim()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
    else {
        anyhow::bail!("--pair {pair:?}: expected SOURCE,RECEIVER (two vehicle names)");
    };
    let index = |name: &str| {
        loaded
            .vehicle_named(name)
            .map(|(i, _)| i)
            .map_err(|e| anyhow::anyhow!("--pair {pair}: {e}"))
    };
    let (i, j) = (index(a)?, index(b)?);
    anyhow::ensure!(
        i != j,
        "--pair {pair}: a source and a receiver, two different vehicles"
    );
    Ok((i, j))
}

/// The window holding `time_s` (the last window's end: after every window); the error says
/// the run's span.
pub fn window_at(loaded: &LoadedScenario, time_s: f64) -> anyhow::Result<u32> {
    let schedule = loaded.schedule();
    let end_s = schedule.duration_ns() as f64 / 1e9;
    anyhow::ensure!(
        time_s.is_finite() && (0.0..=end_s).contains(&time_s),
        "--time {time_s}: outside the run of {} (0 to {end_s} s)",
        loaded.file.display()
    );
    let t_ns = (time_s * 1e9).round() as u64;
    Ok(((t_ns / schedule.window_ns) as u32).min(schedule.windows))
}

/// The pair's section, ends and settings at window `window`: the source `a`, the receiver `b`.
/// Errors: a vehicle out of the water (above the surface or in the ground), land between the
/// two (the section's depth at or above the sea surface somewhere between them).
pub fn environment(
    loaded: &LoadedScenario,
    terrain: &Terrain,
    states: &[VehicleState],
    (a, b): (usize, usize),
) -> anyhow::Result<(Environment, Ends, Settings)> {
    let vehicles = &loaded.scenario.vehicles;
    let (pa, pb) = (states[a].position, states[b].position);
    for (i, p) in [(a, pa), (b, pb)] {
        let name = &vehicles[i].name;
        anyhow::ensure!(
            p.z <= 0.0,
            "{name} is above the sea surface (z = {:.2} m at ({:.1}, {:.1})): acoustic paths run under water",
            p.z,
            p.x,
            p.y
        );
        let ground = terrain.height_at_unchecked(p.x, p.y);
        anyhow::ensure!(
            p.z >= ground,
            "{name} is below the seabed at ({:.1}, {:.1}): z = {:.2} m, the terrain {ground:.2} m",
            p.x,
            p.y,
            p.z
        );
    }
    let distance = (pb.x - pa.x).hypot(pb.y - pa.y);
    let section = Section::along(
        terrain,
        [pa.x, pa.y],
        [pb.x, pb.y],
        (distance * BEYOND).max(20.0),
    );
    // Land between: the terrain at a quarter of its cell size along the line (the section's
    // samples, a cell apart, may step over a narrow crest).
    let steps =
        ((distance / (terrain.cell_size() / 4.0).max(1e-3)).ceil() as usize).clamp(1, 1 << 16);
    if let Some((r, x, y, h)) = (0..=steps)
        .map(|k| {
            let u = k as f64 / steps as f64;
            let (x, y) = (pa.x + u * (pb.x - pa.x), pa.y + u * (pb.y - pa.y));
            (u * distance, x, y, terrain.height_at_unchecked(x, y))
        })
        .find(|p| p.3 >= 0.0)
    {
        anyhow::bail!(
            "no water section between {} and {}: land {r:.1} m along the bearing, at ({x:.1}, {y:.1}), {h:.2} m above the sea surface",
            vehicles[a].name,
            vehicles[b].name,
        );
    }
    let settings = Settings::of(loaded, a, b, section.max_depth());
    let ends = Ends {
        source: vehicles[a].name.clone(),
        receiver: vehicles[b].name.clone(),
        source_depth_m: -pa.z,
        receiver_range_m: distance,
        receiver_depth_m: -pb.z,
    };
    let length = section.range_m.last().copied().unwrap_or(distance);
    let env = Environment {
        profile: settings
            .sound_speed
            .along([pa.x, pa.y], [pb.x, pb.y], length),
        seabed: settings.seabed,
        section,
    };
    Ok((env, ends, settings))
}

/// What `cosim acoustics` wrote and found.
#[derive(Debug)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub traced: Traced,
    pub multipath: Multipath,
    /// The sim time the vehicles were placed at (the start of the window holding the time asked).
    pub at_s: f64,
}

/// Traces the pair `pair` (`SOURCE,RECEIVER`) of the scenario at `time_s` and writes its
/// transmission-loss field, ray fan and arrivals as PNG files into `out`.
pub fn write(
    loaded: &LoadedScenario,
    pair_arg: &str,
    time_s: f64,
    out: &Path,
) -> anyhow::Result<Written> {
    let pair = pair(loaded, pair_arg)?;
    let window = window_at(loaded, time_s)?;
    plots::font().map_err(|e| anyhow::anyhow!(e))?;
    let terrain = Terrain::new(Arc::clone(&loaded.terrain));
    let states = states_at(loaded, &terrain, window);
    let (traced, settings) = trace(loaded, &terrain, &states, pair)?;
    let at_s = loaded.schedule().start_ns(window) as f64 / 1e9;
    let multipath = Multipath::of(
        &traced.arrivals,
        settings.frequency_hz,
        settings.absorption_db_per_km,
    );
    let files = draw(&traced, &settings, at_s, out, true)?;
    Ok(Written {
        files,
        traced,
        multipath,
        at_s,
    })
}

/// The beams traced from `a` to `b` of `pair` through their [`environment`], and its settings.
fn trace(
    loaded: &LoadedScenario,
    terrain: &Terrain,
    states: &[VehicleState],
    pair: (usize, usize),
) -> anyhow::Result<(Traced, Settings)> {
    let (env, ends, settings) = environment(loaded, terrain, states, pair)?;
    let traced = Traced::compute(
        &env,
        &settings.fan,
        ends,
        settings.frequency_hz,
        settings.absorption_db_per_km,
    );
    Ok((traced, settings))
}

/// Draws `traced` (at sim time `at_s`) into `out`: its transmission-loss field, its ray fan
/// and, with `stems`, its arrivals.
fn draw(
    traced: &Traced,
    settings: &Settings,
    at_s: f64,
    out: &Path,
    stems: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
    let (a, b) = (&traced.ends.source, &traced.ends.receiver);
    let stem = format!("{}_{}_t{at_s}", plots::slug(a), plots::slug(b));
    let when = format!("{a} → {b} at {at_s} s");
    let mut drawn = vec![
        (
            format!("{stem}_tl_field.png"),
            pictures::tl_field(
                traced,
                &format!(
                    "Transmission loss, {when} ({:.1} kHz, incoherent)",
                    settings.frequency_hz / 1e3
                ),
            ),
        ),
        (
            format!("{stem}_rays.png"),
            pictures::ray_fan(traced, &format!("Rays, {when}")),
        ),
    ];
    if stems {
        drawn.push((
            format!("{stem}_arrivals.png"),
            pictures::arrival_stems(&traced.arrivals, &format!("Arrivals, {when}")),
        ));
    }
    let mut files = Vec::new();
    for (name, png) in drawn {
        let png = png.map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let path = out.join(name);
        std::fs::write(&path, png).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

/// At a run's end: the transmission-loss field and ray fan of the traced pair at the moment
/// of the run with the most arrivals (the report draws its arrivals), the vehicles where the
/// record has them at that time, into the report's `plots/`. None: no traced pair with an
/// arrival, or no record.
pub fn richest_moment(loaded: &LoadedScenario, run_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    use crate::output::record::{Record, RECORD_FILE};
    let record = Record::read(&run_dir.join(RECORD_FILE))?;
    let Some(best) = record
        .channel
        .iter()
        .filter(|c| c.arrivals.as_ref().is_some_and(|a| !a.is_empty()))
        .max_by_key(|c| {
            (
                c.arrivals.as_ref().map_or(0, Vec::len),
                std::cmp::Reverse((c.t_s * 1e3).round() as i64),
            )
        })
    else {
        return Ok(Vec::new());
    };
    let Some(poses) = record.poses.iter().min_by(|x, y| {
        (x.t_s - best.t_s)
            .abs()
            .total_cmp(&(y.t_s - best.t_s).abs())
    }) else {
        return Ok(Vec::new());
    };
    let names: Vec<&str> = loaded
        .scenario
        .vehicles
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    let index = |n: &str| names.iter().position(|v| *v == n);
    let (Some(a), Some(b)) = (index(&best.a), index(&best.b)) else {
        return Ok(Vec::new());
    };
    let terrain = Terrain::new(Arc::clone(&loaded.terrain));
    let mut states: Vec<VehicleState> = loaded
        .scenario
        .vehicles
        .iter()
        .map(|v| VehicleState::from_pose(&v.start()))
        .collect();
    for p in &poses.poses {
        if let Some(i) = index(&p.vehicle) {
            states[i].position = nalgebra::Point3::new(p.x, p.y, p.z);
        }
    }
    let (traced, settings) = trace(loaded, &terrain, &states, (a, b))?;
    draw(
        &traced,
        &settings,
        poses.t_s,
        &run_dir
            .join(crate::output::report::REPORT_DIR)
            .join("plots"),
        false,
    )
}

/// `cosim acoustics SCENARIO --pair A,B --time T [--out DIR]`: writes the pictures and prints
/// what they show.
pub fn command(
    loaded: &LoadedScenario,
    pair_arg: &str,
    time_s: f64,
    out: &Path,
) -> anyhow::Result<i32> {
    let w = write(loaded, pair_arg, time_s, out)?;
    let t = &w.traced;
    let e = &t.ends;
    println!(
        "{} → {} at {} s: {:.1} m apart, source {:.1} m deep, receiver {:.1} m deep, water {:.1} m at its deepest between",
        e.source,
        e.receiver,
        w.at_s,
        e.receiver_range_m,
        e.source_depth_m,
        e.receiver_depth_m,
        t.section.max_depth()
    );
    if t.arrivals.is_empty() {
        println!("no arrival: the receiver is in a shadow zone");
    } else {
        let m = &w.multipath;
        println!(
            "{} arrivals: first after {:.2} ms, transmission loss {:.1} dB (incoherent), delay spread {:.2} ms",
            t.arrivals.len(),
            m.first_delay_s * 1e3,
            m.incoherent_tl_db,
            m.delay_spread_s * 1e3
        );
    }
    for f in &w.files {
        println!("{}", f.display());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockstep::protocol::physics_begin;

    fn scenario(text: &str) -> LoadedScenario {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/acoustic_paths.yaml"
        ));
        crate::config::parse_str(text, path).unwrap()
    }

    fn shelf() -> LoadedScenario {
        scenario(include_str!("../../config/acoustic_paths.yaml"))
    }

    fn error(r: anyhow::Result<impl std::fmt::Debug>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    /// The vehicles are where the embedded physics simulator has them at a window's start.
    #[test]
    fn vehicles_are_placed_as_the_embedded_physics_places_them() {
        let loaded = shelf();
        let terrain = Terrain::new(Arc::clone(&loaded.terrain));
        let mut sim = crate::sim::physics::PhysicsSim::from_scenario(&loaded);
        for k in 0..37u32 {
            sim.handle(&physics_begin(k, Vec::new())).unwrap();
        }
        let states = states_at(&loaded, &terrain, 37);
        for (i, s) in states.iter().enumerate() {
            let p = sim.vehicle(i).unwrap().position;
            assert!((s.position - p).norm() < 1e-9, "vehicle {i}: {s:?} vs {p}");
        }
        // auv1 moved (2 m/s for 3.7 s), the mooring did not.
        assert!(
            (states[1].position.x - (-450.0 + 7.4)).abs() < 0.01,
            "{states:?}"
        );
        assert_eq!(states[0].position.x, -650.0);
    }

    #[test]
    fn a_pair_names_two_vehicles_of_the_scenario() {
        let loaded = shelf();
        assert_eq!(pair(&loaded, "mooring,auv2").unwrap(), (0, 2));
        assert_eq!(pair(&loaded, "auv2, auv1").unwrap(), (2, 1));
        let e = error(pair(&loaded, "mooring,auv9"));
        assert!(
            e.starts_with("--pair mooring,auv9: ")
                && e.contains("acoustic_paths.yaml has no vehicle \"auv9\" (its vehicles: mooring, auv1, auv2)"),
            "{e}"
        );
        let e = error(pair(&loaded, "auv1"));
        assert!(e.contains("expected SOURCE,RECEIVER"), "{e}");
        let e = error(pair(&loaded, "auv1,auv1"));
        assert!(e.contains("two different vehicles"), "{e}");
    }

    #[test]
    fn a_time_is_within_the_run() {
        let loaded = shelf();
        assert_eq!(window_at(&loaded, 0.0).unwrap(), 0);
        assert_eq!(window_at(&loaded, 30.05).unwrap(), 300);
        assert_eq!(window_at(&loaded, 120.0).unwrap(), 1200);
        for t in [-1.0, 120.5, f64::NAN] {
            let e = error(window_at(&loaded, t));
            assert!(
                e.starts_with(&format!("--time {t}: outside the run of "))
                    && e.ends_with("acoustic_paths.yaml (0 to 120 s)"),
                "{e}"
            );
        }
    }

    /// Land between the two: the error says where along the bearing and how high.
    #[test]
    fn land_between_the_pair_is_refused_where_it_is() {
        let text = include_str!("../../config/acoustic_paths.yaml").replace(
            "    ridges:\n",
            "    ridges:\n      - {from: [-100, -400], to: [-100, 400], crest_height_m: 4, width_m: 60}\n",
        );
        let loaded = scenario(&text);
        let terrain = Terrain::new(Arc::clone(&loaded.terrain));
        let states = states_at(&loaded, &terrain, 0);
        let e = error(environment(&loaded, &terrain, &states, (1, 2)));
        assert!(
            e.starts_with("no water section between auv1 and auv2: land ")
                && e.contains("m along the bearing, at (-1")
                && e.contains("m above the sea surface"),
            "{e}"
        );
        // Either side of it, the water is whole.
        assert!(environment(&loaded, &terrain, &states, (0, 1)).is_ok());
    }

    #[test]
    fn a_vehicle_out_of_the_water_is_refused() {
        let text = include_str!("../../config/acoustic_paths.yaml").replace(
            "start: {x: 300, y: 100, z: -50}",
            "start: {x: 300, y: 100, z: 1}",
        );
        let loaded = scenario(&text);
        let terrain = Terrain::new(Arc::clone(&loaded.terrain));
        let states = states_at(&loaded, &terrain, 0);
        let e = error(environment(&loaded, &terrain, &states, (0, 2)));
        assert!(
            e.starts_with("auv2 is above the sea surface (z = 1.00 m at (300.0, 100.0))"),
            "{e}"
        );
    }

    /// The three pictures decode at their sizes, with the seabed and the source drawn.
    #[test]
    fn the_pictures_of_a_pair_decode() {
        use crate::output::report::acoustics::{SEABED, SIZE, SOURCE};
        let loaded = shelf();
        let dir = tempfile::tempdir().unwrap();
        let w = write(&loaded, "mooring,auv1", 60.0, dir.path()).unwrap();
        assert_eq!(w.at_s, 60.0);
        assert!(w.traced.arrivals.len() >= 3, "{:?}", w.traced.arrivals);
        let names: Vec<String> = w
            .files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "mooring_auv1_t60_tl_field.png",
                "mooring_auv1_t60_rays.png",
                "mooring_auv1_t60_arrivals.png"
            ]
        );
        let count = |px: &[u8], c: plotters::style::RGBColor| {
            px.chunks_exact(3)
                .filter(|p| p[0] == c.0 && p[1] == c.1 && p[2] == c.2)
                .count()
        };
        for (k, f) in w.files.iter().enumerate() {
            let bytes = std::fs::read(f).unwrap();
            let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
            let mut reader = decoder.read_info().unwrap();
            let mut px = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut px).unwrap();
            px.truncate(info.buffer_size());
            let size = (info.width, info.height);
            if k < 2 {
                assert_eq!(size, SIZE, "{f:?}");
                assert!(count(&px, SEABED) > 10_000, "{f:?}: seabed");
                assert!(count(&px, SOURCE) > 50, "{f:?}: source");
            } else {
                assert_eq!(size, (SIZE.0, SIZE.1 - 200), "{f:?}");
            }
            let white = count(&px, plotters::style::WHITE);
            assert!(white < px.len() / 3 * 9 / 10, "{f:?}: blank");
        }
    }
}

#[cfg(test)]
mod eigenray_tests {
    use super::*;

    /// Over the sloping shelf, a kilometre out, most arrivals have their eigenray drawn (a
    /// reflection point that ends one segment and starts the next counts once).
    #[test]
    fn most_arrivals_over_the_shelf_have_their_eigenray() {
        let loaded = crate::config::load(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/acoustic_paths.yaml"
        )))
        .unwrap();
        let terrain = Terrain::new(Arc::clone(&loaded.terrain));
        let states = states_at(&loaded, &terrain, 0);
        let (env, ends, s) = environment(&loaded, &terrain, &states, (0, 2)).unwrap();
        let t = Traced::compute(&env, &s.fan, ends, s.frequency_hz, s.absorption_db_per_km);
        assert!(t.arrivals.len() >= 10, "{}", t.arrivals.len());
        assert!(
            t.eigenrays.len() * 4 >= t.arrivals.len() * 3,
            "{} eigenrays for {} arrivals",
            t.eigenrays.len(),
            t.arrivals.len()
        );
    }
}
