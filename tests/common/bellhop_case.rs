//! The BELLHOP cases of `tests/acoustics/cases/` read for our tracer: a case with one of its
//! runs applied, its numbers, and the environment and fan it describes. Shared by
//! `tests/offline/beam_reference.rs` and `benches/beam.rs`, which run the same cases.

use netsim_cosim::model::beam::{Environment, Fan, Profile, Seabed, Section};
use serde_json::Value;
use std::path::Path;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The case `name` with the keys of its run `run` (if any) applied.
pub fn case(name: &str, run: Option<&str>) -> Value {
    let path = root()
        .join("tests/acoustics/cases")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut c: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if let Some(run) = run {
        for (k, v) in c["runs"][run].as_object().expect("run").clone() {
            c[k] = v;
        }
    }
    c
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

/// A list of numbers, or `{"linspace": [a, b, n]}`: n values evenly from a to b.
pub fn floats(v: &Value) -> Vec<f64> {
    if let Some(l) = v.get("linspace") {
        let (a, b, n) = (f(&l[0]), f(&l[1]), l[2].as_u64().expect("count") as usize);
        return (0..n)
            .map(|i| a + (b - a) * i as f64 / (n - 1).max(1) as f64)
            .collect();
    }
    v.as_array().expect("list").iter().map(f).collect()
}

/// The case's profile (`ssp` rows of depth and speed, or of depth and one speed per range of
/// `ssp_ranges_km`), bottom half-space and bathymetry (range km, depth m; absent: flat at the
/// profile's last depth).
pub fn environment(c: &Value) -> Environment {
    let ssp = c["ssp"].as_array().expect("ssp");
    let depths: Vec<f64> = ssp.iter().map(|r| f(&r[0])).collect();
    let ranges_m: Vec<f64> = match c.get("ssp_ranges_km") {
        Some(r) => floats(r).iter().map(|km| km * 1e3).collect(),
        None => vec![0.0],
    };
    let columns: Vec<Vec<f64>> = (0..ranges_m.len())
        .map(|j| ssp.iter().map(|r| f(&r[1 + j])).collect())
        .collect();
    let section = match c.get("bathymetry") {
        Some(b) => Section {
            range_m: b
                .as_array()
                .unwrap()
                .iter()
                .map(|p| f(&p[0]) * 1e3)
                .collect(),
            depth_m: b.as_array().unwrap().iter().map(|p| f(&p[1])).collect(),
        },
        None => Section::flat(*depths.last().expect("rows")),
    };
    let b = &c["bottom"];
    Environment {
        profile: Profile::range_dependent(depths, ranges_m, columns).expect("profile"),
        seabed: Seabed {
            speed_mps: f(&b["speed_mps"]),
            density_ratio: f(&b["density_ratio"]),
            attenuation_db_per_wavelength: f(&b["attenuation_db_per_wavelength"]),
        },
        section,
    }
}

pub fn fan(c: &Value) -> Fan {
    Fan {
        beams: c["beams"].as_u64().expect("beams") as usize,
        min_deg: f(&c["angles_deg"][0]),
        max_deg: f(&c["angles_deg"][1]),
    }
}
