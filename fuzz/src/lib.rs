//! What the fuzz targets share: shipped scenarios, loaded once, and the fixtures built from them.

use netsim_cosim::config::{self, LoadedScenario, Scenario};
use netsim_cosim::net::addr::AddressBook;
use netsim_cosim::net::traffic::{Engine, EngineConfig};
use netsim_cosim::wire::channel::Channel;
use std::path::Path;
use std::sync::OnceLock;

fn load(
    slot: &'static OnceLock<LoadedScenario>,
    text: &str,
    file: &str,
) -> &'static LoadedScenario {
    slot.get_or_init(|| {
        config::parse_str(text, Path::new(file)).unwrap_or_else(|e| panic!("shipped scenario: {e}"))
    })
}

/// `config/default.yaml`: three AUVs with IPv4 addresses.
pub fn default_scenario() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/default.yaml"),
        "config/default.yaml",
    )
}

/// `config/acoustic.yaml`: three AUVs on acoustic links (delays, collisions, capture).
pub fn acoustic() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/acoustic.yaml"),
        "config/acoustic.yaml",
    )
}

/// `config/acoustic_modems.yaml`: four emulated Micro-Modems.
pub fn acoustic_modems() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/acoustic_modems.yaml"),
        "config/acoustic_modems.yaml",
    )
}

/// `config/netsim_manager.yaml`: vehicles driven by NETSIM nav updates.
pub fn netsim_manager() -> &'static LoadedScenario {
    static S: OnceLock<LoadedScenario> = OnceLock::new();
    load(
        &S,
        include_str!("../../config/netsim_manager.yaml"),
        "config/netsim_manager.yaml",
    )
}

/// The vehicles at their start poses, every pair in line of sight.
pub fn channel_at_start(s: &Scenario) -> Channel {
    let mut c = Channel::default();
    for v in &s.vehicles {
        let p = v.start();
        c.push_node([p.x, p.y, p.z, 1.0, 0.0, 0.0, 0.0]);
    }
    c
}

/// The network coordinator's packet engine for `loaded`, as the live side configures it (the
/// scenario's windows).
pub fn engine(loaded: &LoadedScenario) -> Engine {
    let s = &loaded.scenario;
    let cfg = EngineConfig {
        schedule: loaded.schedule(),
        queue_limit: s.network.queue_limit,
        max_hold_windows: s.network.max_hold_windows,
        crc: s.network.crc,
        seed: s.seed,
    };
    Engine::new(AddressBook::new(&s.vehicles), cfg)
}

/// The frame the track targets read positions in (the shipped scenarios' neighbourhood).
pub fn track_origin() -> config::GeoOrigin {
    config::GeoOrigin {
        lat_deg: 41.5,
        lon_deg: -70.6,
        alt_m: 0.0,
    }
}

/// What every log a track reader accepts holds: two samples at least, each with its place,
/// times from 0 increasing by at most `max_gap_s`, finite positions and headings in [0, 360),
/// and finite positions and speeds wherever it is interpolated.
pub fn check_track(log: &config::TrackLog, max_gap_s: f64) {
    assert!(log.samples.len() >= 2 && log.samples.len() == log.places.len());
    assert_eq!(log.samples[0].t, 0.0);
    for w in log.samples.windows(2) {
        assert!(w[1].t > w[0].t && w[1].t - w[0].t <= max_gap_s);
    }
    for s in &log.samples {
        assert!(s.position.iter().all(|v| v.is_finite()));
        assert!((0.0..360.0).contains(&s.heading_deg));
    }
    let mut hint = 0;
    for k in 0..=8 {
        let p = log.at(log.duration_s() * k as f64 / 8.0, &mut hint);
        assert!(p.position.iter().all(|v| v.is_finite()) && p.speed_mps.is_finite());
    }
}

/// What every cast read must hold: two rows at least, depths from ≥ 0 strictly increasing,
/// speeds in sea water's range; and the sound speed made of it (alone and beside a second
/// cast) gives a profile along any bearing.
pub fn check_cast(c: &config::CastProfile) {
    use netsim_cosim::model::sound_speed::SoundSpeed;
    assert!(c.depth_m.len() >= 2 && c.depth_m.len() == c.speed_mps.len());
    assert!(c.depth_m[0] >= 0.0 && c.depth_m.iter().all(|d| d.is_finite()));
    assert!(c.depth_m.windows(2).all(|w| w[1] > w[0]));
    assert!(c.speed_mps.iter().all(|v| (1400.0..=1700.0).contains(v)));
    let other: ([f64; 2], &[f64], &[f64]) = ([100.0, 0.0], &[0.0, 10.0], &[1500.0, 1490.0]);
    let s = SoundSpeed::from_casts(&[([0.0, 0.0], &c.depth_m, &c.speed_mps), other], 50.0);
    let p = s.along([-10.0, -10.0], [200.0, 30.0], 300.0);
    assert!(p.depths().len() >= 2 && p.ranges().len() > 1);
}

/// What every raster a terrain reader accepts must hold: cols × rows values, a positive cell
/// size, and sampling it across its cells gives a value or names a NODATA cell, never a panic.
pub fn check_raster(r: &config::raster::Raster) {
    assert_eq!(r.values.len(), r.cols * r.rows);
    assert!(r.dx > 0.0 && r.dy > 0.0);
    let [w, s, e, n] = r.extent();
    for k in 0..=4 {
        let f = k as f64 / 4.0;
        let _ = r.sample(w + f * (e - w), s + f * (n - s));
    }
}
