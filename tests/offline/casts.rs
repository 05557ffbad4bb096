//! Sound speed from CTD casts (`world.water.casts`): casts that differ by region give a pair on
//! one bearing another arrival pattern than a pair at the same range and depths on another
//! bearing, while one cast everywhere gives both the same; a Sea-Bird `.cnv` is placed by its
//! header; `cosim check` describes each cast; bad casts are refused at their key with the
//! file's line.

use netsim_cosim::config::{self, ConfigError};
use netsim_cosim::model::beam::{Arrival, Multipath};
use netsim_cosim::model::terrain::Terrain;
use netsim_cosim::sim::acoustic_paths::{trace_pair, PathSettings};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

/// A summer profile (warm above a thermocline: every ray bends down) and mixed water.
const SUMMER: &str =
    "depth_m,sound_speed_mps\n0,1520\n10,1519\n20,1510\n30,1492\n50,1488\n60,1487\n";
const MIXED: &str = "depth_m,temperature_c,salinity_psu\n0,11,33\n30,10.8,33\n60,10.7,33\n";

/// A scenario over 60 m of flat sea: a source at the origin and two receivers 2.5 km north
/// and east at the same depth, with `casts` (YAML lines under `casts:`).
fn scenario(dir: &Path, casts: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("summer.csv"), SUMMER).unwrap();
    std::fs::write(dir.join("mixed.csv"), MIXED).unwrap();
    let y = format!(
        "name: casts\nwindow_ms: 10\nduration_s: 0.1\nseed: 1\nreal_time_factor: 0\n\
         world:\n  origin: {{lat_deg: 41.5, lon_deg: -70.6}}\n\
         \x20 terrain: {{kind: procedural, size_m: [6000, 6000], cell_size_m: 50, \
         base_height_m: -60}}\n\
         \x20 water:\n    casts:\n{casts}\
         vehicles:\n\
         \x20 - {{name: src, addresses: [10.7.0.1/24], start: {{x: 0, y: 0, z: -8}}, motion: {{kind: stationary}}}}\n\
         \x20 - {{name: north, addresses: [10.7.0.2/24], start: {{x: 0, y: 2500, z: -45}}, motion: {{kind: stationary}}}}\n\
         \x20 - {{name: east, addresses: [10.7.0.3/24], start: {{x: 2500, y: 0, z: -45}}, motion: {{kind: stationary}}}}\n\
         links:\n  default: {{model: acoustic, propagation: beam}}\n"
    );
    let p = dir.join("casts.yaml");
    std::fs::write(&p, y).unwrap();
    p
}

/// The arrivals at `to` from the source (vehicle 0), as the physics side traces them.
fn traced(path: &Path, to: usize) -> Vec<Arrival> {
    let loaded = config::load(path).unwrap_or_else(|e| panic!("{e}"));
    let settings = PathSettings::from_scenario(&loaded);
    let terrain = Terrain::new(Arc::clone(&loaded.terrain));
    let p = |i: usize| {
        let s = loaded.scenario.vehicles[i].start();
        [s.x, s.y, s.z]
    };
    let mut out = Vec::new();
    trace_pair(&settings, &terrain, p(0), p(to), &mut out);
    out
}

/// The arrivals' (surface, bottom) bounce counts in order of delay.
fn signature(a: &[Arrival]) -> Vec<(u32, u32)> {
    a.iter()
        .map(|x| (x.surface_bounces, x.bottom_bounces))
        .collect()
}

fn describe(a: &[Arrival]) -> String {
    let m = Multipath::of(a, 10_000.0, 0.0);
    format!(
        "{} arrivals, first at {:.3} ms, incoherent TL {:.1} dB",
        a.len(),
        m.first_delay_s * 1e3,
        m.incoherent_tl_db
    )
}

#[test]
fn casts_that_differ_by_region_give_two_bearings_two_arrival_patterns() {
    let dir = tempfile::tempdir().unwrap();
    // Summer water north and south of the source, mixed water east and west; at the source
    // the mean of the four.
    let regions = "      - {file: summer.csv, x: 0, y: 2500}\n\
                   \x20     - {file: summer.csv, x: 0, y: -2500}\n\
                   \x20     - {file: mixed.csv, x: 2500, y: 0}\n\
                   \x20     - {file: mixed.csv, x: -2500, y: 0}\n";
    let path = scenario(dir.path(), regions);
    let (north, east) = (traced(&path, 1), traced(&path, 2));
    println!(
        "by region: north {}; east {}",
        describe(&north),
        describe(&east)
    );
    let (mn, me) = (
        Multipath::of(&north, 10_000.0, 0.0),
        Multipath::of(&east, 10_000.0, 0.0),
    );
    // The first arrivals part by a millisecond, and the paths themselves differ: which
    // bounces arrive, in what order.
    assert!(
        (mn.first_delay_s - me.first_delay_s).abs() > 0.5e-3,
        "first arrivals north {} s, east {} s",
        mn.first_delay_s,
        me.first_delay_s
    );
    let (sn, se) = (signature(&north), signature(&east));
    println!("bounces (surface, bottom) in order of delay: north {sn:?}; east {se:?}");
    assert_ne!(sn, se);

    // One cast everywhere: both bearings the same, to the step error.
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), "      - {file: summer.csv, x: 300, y: 300}\n");
    let (north, east) = (traced(&path, 1), traced(&path, 2));
    println!(
        "one cast: north {}; east {}",
        describe(&north),
        describe(&east)
    );
    assert_eq!(north.len(), east.len());
    for (n, e) in north.iter().zip(&east) {
        assert!((n.delay_s - e.delay_s).abs() < 1e-9, "{n:?} vs {e:?}");
        assert!((n.amplitude - e.amplitude).abs() <= 1e-9 * n.amplitude.abs());
    }
}

#[test]
fn a_cnv_cast_is_placed_by_its_header_and_check_describes_every_cast() {
    let dir = tempfile::tempdir().unwrap();
    let cnv = "* Sea-Bird SBE 9 Data File:\n* NMEA Latitude = 41 30.54 N\n\
               * NMEA Longitude = 070 36.00 W\n# name 0 = prDM: Pressure, Digiquartz [db]\n\
               # name 1 = svCM: Sound Velocity [Chen-Millero, m/s]\n\
               # bad_flag = -9.990e-29\n*END*\n\
               \x20  1.0 1519.0\n   2.0 -9.990e-29\n  25.0 1500.0\n  40.0 1489.0\n  30.0 1490.0\n";
    std::fs::write(dir.path().join("east.cnv"), cnv).unwrap();
    let path = scenario(
        dir.path(),
        "      - {file: summer.csv, lat_deg: 41.5, lon_deg: -70.6}\n\
         \x20     - {file: east.cnv}\n",
    );
    let loaded = config::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let casts = loaded.scenario.world.water.casts.as_ref().unwrap();
    let at = casts[1].at.unwrap();
    // 0.009° of latitude north is about 1 km.
    assert!(at[0].abs() < 1.0 && (at[1] - 999.4).abs() < 1.0, "{at:?}");
    let read = casts[1].read.as_ref().unwrap();
    assert_eq!(read.speed_mps, [1519.0, 1500.0, 1489.0]);
    assert_eq!(read.left_out, 2);
    let out = Command::new(COSIM)
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", crate::common::output_text(&out));
    assert!(
        text.contains(
            "summer.csv: at (0, 0) m, 6 rows from 0 to 60 m, 1487.0–1520.0 m/s (measured)"
        ),
        "{text}"
    );
    assert!(
        text.contains("east.cnv: at (")
            && text.contains(
                "3 rows from 0.992 to 39.684 m (from pressure), 2 rows left out, \
                              1489.0–1519.0 m/s (measured), held below to 60 m"
            ),
        "{text}"
    );
}

fn error(dir: &Path, casts: &str) -> ConfigError {
    config::load(&scenario(dir, casts)).unwrap_err()
}

#[test]
fn bad_casts_are_refused_at_their_key_with_the_files_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bad.csv"),
        "depth_m,sound_speed_mps\n0,1500\n5,15000\n",
    )
    .unwrap();
    std::fs::write(
        d.join("nowhere.cnv"),
        "# name 0 = depSM: Depth [m]\n# name 1 = svCM: c\n*END*\n0 1500\n9 1499\n",
    )
    .unwrap();
    let cases = [
        (
            "      - {file: bad.csv, x: 0, y: 0}\n",
            "world.water.casts[0].file",
            "bad.csv:3: sound speed 15000.0 m/s is not in [1400, 1700]",
        ),
        (
            "      - {file: missing.csv, x: 0, y: 0}\n",
            "world.water.casts[0].file",
            "cannot open",
        ),
        (
            "      - {file: nowhere.cnv}\n",
            "world.water.casts[0]",
            "where was it taken? give lat_deg and lon_deg, or x and y (nowhere.cnv gives no NMEA position",
        ),
        (
            "      - {file: summer.csv, x: 0}\n",
            "world.water.casts[0]",
            "one pair, whole",
        ),
        (
            "      - {file: summer.csv, lat_deg: 95, lon_deg: 0}\n",
            "world.water.casts[0].lat_deg",
            "must be in [-90, 90]",
        ),
        (
            "      - {file: summer.txt, x: 0, y: 0}\n",
            "world.water.casts[0].file",
            "a cast is a .csv or a Sea-Bird .cnv file",
        ),
    ];
    for (casts, key, message) in cases {
        let e = error(d, casts);
        assert_eq!(e.key_path, key, "{e}");
        assert!(e.message.contains(message), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
    // Casts beside a profile.
    let path = scenario(d, "      - {file: summer.csv, x: 0, y: 0}\n");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "    casts:\n",
        "    profile: [{depth_m: 0, speed_mps: 1500}, {depth_m: 60, speed_mps: 1500}]\n    casts:\n",
    );
    let e = config::parse_str(&text, &path).unwrap_err();
    assert_eq!(e.key_path, "world.water.casts", "{e}");
    assert!(e.message.contains("not both"), "{e}");
}
