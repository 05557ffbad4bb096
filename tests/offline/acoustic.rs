//! Our acoustic physics against an independent implementation: Python's `arlpy` (ARL, NUS),
//! installed into `<repo>/.venv-test` by this test if missing (`python3 -m venv` + `pip install
//! arlpy`). Set `NETSIM_SKIP_ARLPY=1` to skip where neither Python nor PyPI is available.
//!
//! Run with `cargo test --test offline acoustic:: -- --nocapture` to see the comparison table.
//!
//! Tolerances, and why:
//! - sound speed: arlpy implements the same Mackenzie (1981) equation; only floating-point
//!   rounding differs → |Δc| ≤ 1e-9 m/s.
//! - Francois–Garrison absorption: arlpy implements the same equations (it switches the pure-water
//!   term at T < 20 °C where the paper says T ≤ 20 °C; the two branches agree to 1e-7 dB/km/kHz² at
//!   20 °C, and no point here sits on the boundary) → relative difference ≤ 1e-9.
//! - Thorp absorption vs arlpy's Francois–Garrison: different models. Thorp is an empirical fit
//!   for cold (~4 °C) deep water with no temperature, salinity, depth or pH input; it is known to
//!   read higher than Francois–Garrison at these frequencies. We require Thorp/FG in [0.8, 1.5]
//!   over 1–50 kHz at 4–15 °C (observed 1.10–1.46).
//! - transmission loss k·10·log10(d) + α·d with arlpy's absorption over the same distance
//!   (−20·log10 of its amplitude factor) and the same spreading term → |ΔTL| ≤ 1e-6 dB.
//! - delay d/c with arlpy's sound speed → relative difference ≤ 1e-12; our acoustic link model
//!   (Mackenzie at the mean depth of the two ends) gives the same delay.
//! - Doppler: arlpy's `doppler(v, f, c) − f` → relative difference ≤ 1e-12.

use netsim_cosim::config::{Absorption, LinkModel, Water};
use netsim_cosim::model::acoustic::*;
use netsim_cosim::model::link::{Geometry, LinkSpec};
use std::path::{Path, PathBuf};
use std::process::Command;

fn venv_python() -> Option<PathBuf> {
    if std::env::var_os("NETSIM_SKIP_ARLPY").is_some() {
        return None;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-test");
    let python = venv.join("bin/python");
    let has_arlpy = |p: &Path| {
        Command::new(p)
            .args(["-c", "import arlpy.uwa"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if python.exists() && has_arlpy(&python) {
        return Some(python);
    }
    let st = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .expect("python3 is needed for the arlpy comparison");
    assert!(st.success(), "python3 -m venv {} failed", venv.display());
    let st = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "arlpy"])
        .status()
        .expect("pip in the test venv");
    assert!(
        st.success(),
        "pip install arlpy failed (set NETSIM_SKIP_ARLPY=1 to skip offline)"
    );
    assert!(has_arlpy(&python), "arlpy does not import after installing");
    Some(python)
}

/// Runs `script` (which prints one JSON value) with arlpy available.
fn arlpy(python: &Path, script: &str) -> serde_json::Value {
    let out = Command::new(python)
        .args(["-c", script])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python printed JSON")
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn acoustics_agree_with_arlpy() {
    let Some(py) = venv_python() else {
        eprintln!("NETSIM_SKIP_ARLPY set: arlpy comparison skipped");
        return;
    };
    let mut table =
        String::from("| quantity | inputs | ours | arlpy | difference |\n|---|---|---|---|---|\n");

    // Sound speed (T °C, S ppt, D m).
    let tsd = [
        (2.0, 35.0, 0.0),
        (10.0, 35.0, 20.0),
        (15.0, 33.0, 100.0),
        (25.0, 35.0, 1000.0),
        (4.0, 34.5, 4000.0),
        (28.0, 38.0, 10.0),
    ];
    let script = format!(
        "import json, arlpy.uwa as u\nprint(json.dumps([u.soundspeed(t, s, d) for t, s, d in {:?}]))",
        tsd.iter().map(|&(t, s, d)| vec![t, s, d]).collect::<Vec<_>>()
    );
    for ((t, s, d), theirs) in tsd.iter().zip(floats(&arlpy(&py, &script))) {
        let ours = sound_speed_mackenzie(*t, *s, *d);
        table += &format!(
            "| sound speed (m/s) | T {t} °C, S {s}, D {d} m | {ours:.6} | {theirs:.6} | {:.1e} |\n",
            ours - theirs
        );
        assert!(
            (ours - theirs).abs() <= 1e-9,
            "c({t}, {s}, {d}): {ours} vs {theirs}"
        );
    }

    // Francois–Garrison absorption (f kHz, T, S, D, pH) at 1 km, in dB/km.
    let fg = [
        (1.0, 4.0, 35.0, 1000.0, 8.0),
        (5.0, 10.0, 35.0, 20.0, 8.0),
        (10.0, 10.0, 35.0, 20.0, 8.0),
        (25.0, 10.0, 35.0, 20.0, 8.0),
        (25.0, 15.0, 33.0, 100.0, 7.8),
        (50.0, 25.0, 35.0, 10.0, 8.1),
        (100.0, 4.0, 35.0, 1000.0, 8.0),
    ];
    let script = format!(
        "import json, math, arlpy.uwa as u\nprint(json.dumps([-20*math.log10(u.absorption(f*1000, 1000, t, s, d, ph)) for f, t, s, d, ph in {:?}]))",
        fg.iter().map(|&(f, t, s, d, p)| vec![f, t, s, d, p]).collect::<Vec<_>>()
    );
    for ((f, t, s, d, ph), theirs) in fg.iter().zip(floats(&arlpy(&py, &script))) {
        let ours = absorption_francois_garrison_db_per_km(*f, *t, *s, *d, *ph);
        table += &format!("| FG absorption (dB/km) | {f} kHz, T {t}, S {s}, D {d}, pH {ph} | {ours:.6} | {theirs:.6} | {:.1e} rel |\n", ours / theirs - 1.0);
        assert!(
            (ours / theirs - 1.0).abs() <= 1e-9,
            "FG {f} kHz: {ours} vs {theirs}"
        );
    }

    // Thorp against arlpy's Francois–Garrison.
    let th = [
        (1.0, 4.0, 1000.0),
        (10.0, 4.0, 1000.0),
        (25.0, 4.0, 1000.0),
        (50.0, 4.0, 1000.0),
        (10.0, 15.0, 50.0),
        (25.0, 10.0, 20.0),
    ];
    let script = format!(
        "import json, math, arlpy.uwa as u\nprint(json.dumps([-20*math.log10(u.absorption(f*1000, 1000, t, 35, d, 8.0)) for f, t, d in {:?}]))",
        th.iter().map(|&(f, t, d)| vec![f, t, d]).collect::<Vec<_>>()
    );
    for ((f, t, d), theirs) in th.iter().zip(floats(&arlpy(&py, &script))) {
        let ours = absorption_thorp_db_per_km(*f);
        let ratio = ours / theirs;
        table += &format!("| Thorp vs FG (dB/km) | {f} kHz, T {t}, D {d} | {ours:.4} | {theirs:.4} | ×{ratio:.3} |\n");
        assert!(
            (0.8..=1.5).contains(&ratio),
            "Thorp/FG at {f} kHz, {t} °C: {ratio}"
        );
    }

    // Transmission loss, k = 1.5, at several ranges and frequencies (T 10 °C, S 35, D 20 m, pH 8).
    let tl = [
        (25.0, 100.0),
        (25.0, 1000.0),
        (25.0, 5000.0),
        (10.0, 2000.0),
        (10.0, 10000.0),
        (50.0, 500.0),
    ];
    let script = format!(
        "import json, math, arlpy.uwa as u\nprint(json.dumps([15*math.log10(r) - 20*math.log10(u.absorption(f*1000, r, 10, 35, 20, 8.0)) for f, r in {:?}]))",
        tl.iter().map(|&(f, r)| vec![f, r]).collect::<Vec<_>>()
    );
    for ((f, r), theirs) in tl.iter().zip(floats(&arlpy(&py, &script))) {
        let ours = transmission_loss_db(
            *r,
            1.5,
            absorption_francois_garrison_db_per_km(*f, 10.0, 35.0, 20.0, 8.0),
        );
        table += &format!(
            "| TL, k = 1.5 (dB) | {f} kHz, {r} m | {ours:.6} | {theirs:.6} | {:.1e} |\n",
            ours - theirs
        );
        assert!(
            (ours - theirs).abs() <= 1e-6,
            "TL {f} kHz {r} m: {ours} vs {theirs}"
        );
    }

    // Delay d/c and our acoustic link's delay (ends at 10 and 30 m depth: Mackenzie at 20 m).
    let dd = [
        (100.0, 10.0, 20.0),
        (1500.0, 10.0, 20.0),
        (5000.0, 4.0, 1000.0),
    ];
    let script = format!(
        "import json, arlpy.uwa as u\nprint(json.dumps([r / u.soundspeed(t, 35, d) for r, t, d in {:?}]))",
        dd.iter().map(|&(r, t, d)| vec![r, t, d]).collect::<Vec<_>>()
    );
    for ((r, t, d), theirs) in dd.iter().zip(floats(&arlpy(&py, &script))) {
        let ours = propagation_delay_s(*r, sound_speed_mackenzie(*t, 35.0, *d));
        table += &format!(
            "| delay d/c (s) | {r} m, T {t}, D {d} m | {ours:.9} | {theirs:.9} | {:.1e} rel |\n",
            ours / theirs - 1.0
        );
        assert!((ours / theirs - 1.0).abs() <= 1e-12);
        let water = Water {
            temperature_c: *t,
            ..Water::default()
        };
        let link = LinkSpec::from_config(
            &LinkModel::Acoustic {
                between: None,
                micromodem_rate: 1,
                bit_rate_bps: None,
                coding_gain_db: None,
                frequency_khz: 25.0,
                bandwidth_khz: 5.0,
                source_level_db: 185.0,
                spreading_factor: 1.5,
                absorption: Absorption::FrancoisGarrison,
                capture_sir_db: None,
                propagation: Default::default(),
                multipath_window_ms: None,
            },
            &water,
        );
        let b = link.budget(&Geometry {
            distance_m: *r,
            los: true,
            hop_loss_db: 0.0,
            mean_depth_m: *d,
            arrivals: None,
        });
        assert!(
            (b.delay_s / theirs - 1.0).abs() <= 1e-12,
            "link delay {} vs {theirs}",
            b.delay_s
        );
    }

    // Doppler: 1.5 m/s closing at 25 kHz, c = 1500 and 1490.
    let dop = [(1.5, 25000.0, 1500.0), (-3.0, 10000.0, 1490.0)];
    let script = format!(
        "import json, arlpy.uwa as u\nprint(json.dumps([u.doppler(v, f, c) - f for v, f, c in {:?}]))",
        dop.iter().map(|&(v, f, c)| vec![v, f, c]).collect::<Vec<_>>()
    );
    for ((v, f, c), theirs) in dop.iter().zip(floats(&arlpy(&py, &script))) {
        let ours = doppler_shift_hz(*f, *v, *c);
        table += &format!("| Doppler shift (Hz) | {v} m/s, {f} Hz, c {c} | {ours:.6} | {theirs:.6} | {:.1e} rel |\n", ours / theirs - 1.0);
        assert!((ours / theirs - 1.0).abs() <= 1e-9);
    }
    println!("{table}");
}
