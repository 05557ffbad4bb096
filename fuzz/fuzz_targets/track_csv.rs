//! A logged track's CSV file (`motion: {kind: track}`): never a panic; a log it accepts has two
//! samples at least, its times start at 0 and increase with no gap over the bound, every
//! number finite and every heading in [0, 360), and interpolating it anywhere gives finite
//! positions.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::{track, GeoOrigin};

fuzz_target!(|data: &[u8]| {
    let origin = GeoOrigin {
        lat_deg: 41.5,
        lon_deg: -70.6,
        alt_m: 0.0,
    };
    if let Ok(log) = track::parse(data, "fuzz.csv", &origin, 10.0) {
        assert!(log.samples.len() >= 2 && log.samples.len() == log.lines.len());
        assert_eq!(log.samples[0].t, 0.0);
        for w in log.samples.windows(2) {
            assert!(w[1].t > w[0].t && w[1].t - w[0].t <= 10.0);
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
});
