//! Terrain from georeferenced rasters (`world.terrain: {kind: geotiff}`, `{kind: netcdf}` and
//! `{kind: ascii_grid}`): one analytic coast with a ridge written as the scenario's CSV grid, and
//! in latitude and longitude (EPSG:4326) and in UTM zone 19 (EPSG:32619) each as a GeoTIFF
//! (written by tifffile, as GDAL tags one) and as an ESRI ASCII grid, and in latitude and
//! longitude as a NetCDF-4 grid shaped as GEBCO's (written by the netCDF4 library, its heights
//! packed as 16-bit integers) — the cell centres placed by the test through the local frame and
//! PROJ's inverse — loads into the same heights within 5 cm, every pair of vehicles near the
//! crest crosses it at the same hop points within one cell, and sees the same line of sight in
//! all six.

use netsim_cosim::config::{self, geo::LocalFrame, GeoOrigin};
use netsim_cosim::sim::physics::PhysicsSim;
use netsim_cosim::wire::proto::{decode_checked, ChannelData};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

const ORIGIN: GeoOrigin = GeoOrigin {
    lat_deg: 41.5265,
    lon_deg: -70.6731,
    alt_m: 0.0,
};

/// The coast's height at (x, y) m from the origin: a floor at −20 m and a ridge through
/// (30, 0) running 15° east of north, 3 m high at its crest, 60 m wide (so that the heights
/// vary along both axes).
fn height(x: f64, y: f64) -> f64 {
    let th = 15f64.to_radians();
    let d = ((x - 30.0) * th.cos() - y * th.sin()).abs();
    if d < 30.0 {
        -20.0 + 23.0 * (1.0 + (std::f64::consts::PI * d / 30.0).cos()) / 2.0
    } else {
        -20.0
    }
}

fn scenario(dir: &Path, name: &str, terrain: &str) -> std::path::PathBuf {
    let mut y = format!(
        "name: {name}\nwindow_ms: 10\nduration_s: 0.5\nseed: 1\nreal_time_factor: 0\n\
         world:\n  origin: {{lat_deg: {}, lon_deg: {}, alt_m: 0}}\n  terrain: {terrain}\n\
         vehicles:\n",
        ORIGIN.lat_deg, ORIGIN.lon_deg
    );
    // Pairs across the ridge: below its crest (NLOS), well above it, and 0.14 m above it
    // (e–f); no pair's sight line passes closer to the surface than that.
    let at = [
        ("a", -50.0, 0.0, 1.0),
        ("b", 110.0, 0.0, 1.0),
        ("c", -50.0, 60.0, 6.0),
        ("d", 110.0, 60.0, 6.0),
        ("e", -50.0, -60.0, 2.9),
        ("f", 110.0, -60.0, 3.5),
    ];
    for (i, (n, x, yy, z)) in at.iter().enumerate() {
        let _ = writeln!(
            y,
            "  - {{name: {n}, addresses: [10.7.0.{}/24], start: {{x: {x}, y: {yy}, z: {z}}}, motion: {{kind: stationary}}}}",
            i + 1
        );
    }
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(&p, y).unwrap();
    p
}

/// Writes `values` (rows north first, `cols` × `rows`) as float32 for the test's Python
/// writer `script` (under `tests/gis/`), which reads them with the dimensions, then `args`,
/// then the output path `dir/name`.
fn python_writes(
    script: &str,
    dir: &Path,
    name: &str,
    values: &[f64],
    (cols, rows): (usize, usize),
    args: &[String],
) {
    let bin = dir.join(format!("{name}.f32"));
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|v| (*v as f32).to_le_bytes())
        .collect();
    std::fs::write(&bin, bytes).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv-test/bin/python");
    let o = Command::new(&python)
        .arg(root.join("tests/gis").join(script))
        .arg(&bin)
        .args([cols, rows].map(|n| n.to_string()))
        .args(args)
        .arg(dir.join(name))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup --test)", python.display()));
    assert!(o.status.success(), "{}", crate::common::output_text(&o));
}

/// Writes `values` (rows north first) as the one band of a GeoTIFF, through tifffile (as GDAL
/// tags them), its top-left corner at `corner` in EPSG:`code`, cells `cell` apart.
fn geotiff(
    dir: &Path,
    name: &str,
    values: &[f64],
    dims: (usize, usize),
    corner: (f64, f64),
    cell: f64,
    code: u32,
) {
    let mut args: Vec<String> = [corner.0, corner.1, cell].map(|v| format!("{v}")).into();
    args.push(code.to_string());
    python_writes("write_geotiff.py", dir, name, values, dims, &args);
}

/// Writes `values` (rows north first) as a GEBCO-shaped NetCDF-4 grid through the netCDF4
/// library: the south-west cell's centre at `south_west` degrees, cells `step` apart.
fn netcdf(
    dir: &Path,
    name: &str,
    values: &[f64],
    dims: (usize, usize),
    south_west: (f64, f64),
    step: f64,
) {
    let args = [south_west.0, south_west.1, step].map(|v| format!("{v}"));
    python_writes("write_netcdf.py", dir, name, values, dims, &args);
}

#[test]
fn one_coast_as_a_csv_grid_geotiffs_a_netcdf_grid_and_ascii_grids_in_degrees_and_in_utm_gives_the_same_terrain_and_sight_lines(
) {
    let dir = tempfile::tempdir().unwrap();
    let frame = LocalFrame::new(&ORIGIN);
    // The CSV grid: 400 m × 300 m at 2 m, row 0 north.
    let (cols, rows, cell) = (201usize, 151usize, 2.0);
    let mut csv = String::new();
    for r in 0..rows {
        let y = 150.0 - r as f64 * cell;
        let row: Vec<String> = (0..cols)
            .map(|c| format!("{:.4}", height(-200.0 + c as f64 * cell, y)))
            .collect();
        csv += &row.join(",");
        csv.push('\n');
    }
    std::fs::write(dir.path().join("coast.csv"), csv).unwrap();
    // In degrees: 1e-5° cells (1.1 m north, 0.83 m east) over more than the area.
    let step = 1e-5;
    let (gcols, grows) = (1100usize, 360usize);
    let (west, south) = (ORIGIN.lon_deg - 550.0 * step, ORIGIN.lat_deg - 180.0 * step);
    let mut asc = format!(
        "ncols {gcols}\nnrows {grows}\nxllcenter {west}\nyllcenter {south}\ncellsize {step}\nNODATA_value -9999\n"
    );
    let mut deg = Vec::with_capacity(gcols * grows);
    for r in 0..grows {
        let lat = south + (grows - 1 - r) as f64 * step;
        for c in 0..gcols {
            let p = frame.from_lat_lon_depth(lat, west + c as f64 * step, 0.0);
            deg.push(height(p.x, p.y));
            let _ = write!(asc, "{:.4} ", height(p.x, p.y));
        }
        asc.push('\n');
    }
    std::fs::write(dir.path().join("coast_deg.asc"), asc).unwrap();
    netcdf(
        dir.path(),
        "coast_deg.nc",
        &deg,
        (gcols, grows),
        (west, south),
        step,
    );
    let north = south + (grows as f64 - 0.5) * step;
    let corner = (west - step / 2.0, north);
    geotiff(
        dir.path(),
        "coast_deg.tif",
        &deg,
        (gcols, grows),
        corner,
        step,
        4326,
    );
    // In UTM zone 19: 1 m cells around the origin's easting and northing, placed by PROJ.
    let utm = proj4rs::Proj::from_proj_string("+proj=utm +zone=19 +datum=WGS84 +units=m +no_defs")
        .unwrap();
    let wgs84 = proj4rs::Proj::from_proj_string("+proj=longlat +datum=WGS84 +no_defs").unwrap();
    let mut o = (
        ORIGIN.lon_deg.to_radians(),
        ORIGIN.lat_deg.to_radians(),
        0.0,
    );
    proj4rs::transform::transform(&wgs84, &utm, &mut o).unwrap();
    let (ucols, urows) = (460usize, 360usize);
    let (uwest, usouth) = ((o.0 - 230.0).round(), (o.1 - 180.0).round());
    let mut asc = format!(
        "ncols {ucols}\nnrows {urows}\nxllcorner {}\nyllcorner {}\ncellsize 1\n",
        uwest - 0.5,
        usouth - 0.5
    );
    let mut utm_values = Vec::with_capacity(ucols * urows);
    for r in 0..urows {
        let n = usouth + (urows - 1 - r) as f64;
        for c in 0..ucols {
            let mut p = (uwest + c as f64, n, 0.0);
            proj4rs::transform::transform(&utm, &wgs84, &mut p).unwrap();
            let e = frame.from_lat_lon_depth(p.1.to_degrees(), p.0.to_degrees(), 0.0);
            utm_values.push(height(e.x, e.y));
            let _ = write!(asc, "{:.4} ", height(e.x, e.y));
        }
        asc.push('\n');
    }
    std::fs::write(dir.path().join("coast_utm.asc"), asc).unwrap();
    let corner = (uwest - 0.5, usouth + urows as f64 - 0.5);
    let dims = (ucols, urows);
    geotiff(
        dir.path(),
        "coast_utm.tif",
        &utm_values,
        dims,
        corner,
        1.0,
        32619,
    );

    let scenarios = [
        scenario(dir.path(), "csv", "{kind: csv, path: coast.csv, cell_size_m: 2}"),
        // The GeoTIFFs: one whose CRS comes from its GeoKeys, one given it.
        scenario(
            dir.path(),
            "tif_deg",
            "{kind: geotiff, path: coast_deg.tif, size_m: [400, 300], cell_size_m: 2}",
        ),
        scenario(
            dir.path(),
            "tif_utm",
            "{kind: geotiff, path: coast_utm.tif, crs: \"EPSG:32619\", size_m: [400, 300], cell_size_m: 2}",
        ),
        // GEBCO's shape: its CRS from its latitude and longitude axes.
        scenario(
            dir.path(),
            "nc_deg",
            "{kind: netcdf, path: coast_deg.nc, size_m: [400, 300], cell_size_m: 2}",
        ),
        scenario(
            dir.path(),
            "deg",
            "{kind: ascii_grid, path: coast_deg.asc, crs: \"EPSG:4326\", size_m: [400, 300], cell_size_m: 2}",
        ),
        scenario(
            dir.path(),
            "utm",
            "{kind: ascii_grid, path: coast_utm.asc, crs: \"EPSG:32619\", size_m: [400, 300], cell_size_m: 2}",
        ),
    ];
    // `cosim check` names each file's cells, CRS and extent.
    let check = |s: &Path| {
        let o = Command::new(COSIM).arg("check").arg(s).output().unwrap();
        crate::common::output_text(&o)
    };
    let text = check(&scenarios[5]);
    assert!(
        text.contains(&format!(
            "coast_utm.asc: ESRI ASCII grid of heights, 460 × 360 cells 1 × 1 apart in \
             EPSG:32619, centres from ({uwest}, {usouth}) to ({}, {}), resampled around \
             (41.5265, -70.6731)",
            uwest + 459.0,
            usouth + 359.0
        )),
        "{text}"
    );
    let text = check(&scenarios[3]);
    assert!(
        text.contains(
            "coast_deg.nc: NetCDF grid of heights, 1100 × 360 cells 0.00001 × 0.00001 apart in \
             EPSG:4326, centres from (-70.6786"
        ),
        "{text}"
    );
    let grids: Vec<_> = scenarios
        .iter()
        .map(|s| config::load(s).unwrap_or_else(|e| panic!("{e}")).terrain)
        .collect();
    let names = [
        "GeoTIFF in degrees",
        "GeoTIFF in UTM",
        "NetCDF-4 grid in degrees",
        "ASCII grid in degrees",
        "ASCII grid in UTM",
    ];
    for (g, name) in grids[1..].iter().zip(names) {
        assert_eq!(g.dims(), grids[0].dims());
        let worst = (g.heights().iter().zip(grids[0].heights()))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!("{name}: largest difference from the CSV grid {worst:.4} m");
        assert!(worst < 0.05, "{name}: {worst} m");
    }
    // Every pair's hop points at the start, through the physics side's own channel data:
    // as many in each terrain as in the CSV grid's, each within one cell (2 m) of its own.
    let hops: Vec<Vec<Vec<f64>>> = scenarios
        .iter()
        .map(|s| {
            let loaded = config::load(s).unwrap_or_else(|e| panic!("{e}"));
            let bytes = PhysicsSim::from_scenario(&loaded).channel_data(0);
            let c: ChannelData = decode_checked(&bytes).unwrap();
            c.path_details.into_iter().map(|p| p.hop_points).collect()
        })
        .collect();
    let total: usize = hops[0].iter().map(|h| h.len() / 4).sum();
    assert!(total > 0, "no pair crosses the ridge");
    for (h, name) in hops[1..].iter().zip(names) {
        let mut worst: f64 = 0.0;
        for (pair, (mine, csv)) in h.iter().zip(&hops[0]).enumerate() {
            assert_eq!(mine.len(), csv.len(), "{name}: pair {pair}'s hops");
            for (p, q) in mine.chunks(4).zip(csv.chunks(4)) {
                let d =
                    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                worst = worst.max(d);
            }
        }
        println!("{name}: {total} hop points, the farthest {worst:.3} m from the CSV grid's");
        assert!(
            worst <= 2.0,
            "{name}: a hop point {worst} m from the CSV grid's"
        );
    }
    // The same sight lines in all the runs.
    let mut pairs = Vec::new();
    for s in &scenarios {
        let out = dir.path().join(s.file_stem().unwrap());
        let o = Command::new(COSIM)
            .arg("run")
            .arg(s)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", crate::common::output_text(&o));
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        pairs.push(summary["pairs"].clone());
    }
    println!("{:#}", pairs[0]);
    for p in &pairs[1..] {
        assert_eq!(p, &pairs[0]);
    }
    let los = |a: &str, b: &str| {
        let p = (pairs[0].as_array().unwrap().iter())
            .find(|p| p["a"] == a && p["b"] == b)
            .unwrap_or_else(|| panic!("no pair {a}-{b}: {}", pairs[0]));
        p["los_windows"].as_u64().unwrap()
    };
    assert_eq!(los("a", "b"), 0, "below the crest");
    assert_eq!(los("c", "d"), 50, "well above it");
    assert_eq!(los("e", "f"), 50, "just above it");
}

#[test]
fn a_raster_that_does_not_cover_the_area_or_has_no_crs_this_reads_is_refused_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("small.asc"),
        "ncols 3\nnrows 3\nxllcorner -70.674\nyllcorner 41.526\ncellsize 0.0005\n0 0 0\n0 0 0\n0 0 0\n",
    )
    .unwrap();
    for (terrain, key, says) in [
        (
            "{kind: ascii_grid, path: small.asc, crs: \"EPSG:4326\", size_m: [400, 300], cell_size_m: 2}",
            "world.terrain.path",
            "outside the file's cells",
        ),
        (
            "{kind: ascii_grid, path: small.asc, crs: \"EPSG:2154\", size_m: [400, 300], cell_size_m: 2}",
            "world.terrain.crs",
            "EPSG:2154 is not a CRS this reads",
        ),
    ] {
        let s = scenario(dir.path(), "bad", terrain);
        let e = config::load(&s).unwrap_err();
        assert_eq!(e.key_path, key, "{e}");
        assert!(e.message.contains(says), "{e}");
    }
}
