//! A terrain's ESRI ASCII grid (`world.terrain: {kind: ascii_grid}`): never a panic; a grid it
//! accepts has ncols × nrows finite values and a positive cell size, and sampling it anywhere
//! inside its cells gives a finite value or names a NODATA cell.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::raster::parse_ascii_grid;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(r) = parse_ascii_grid(&text, 8192) {
        assert_eq!(r.values.len(), r.cols * r.rows);
        assert!(r.dx > 0.0 && r.dy > 0.0 && r.values.iter().all(|v| v.is_finite()));
        let [w, s, e, n] = r.extent();
        for k in 0..=4 {
            let f = k as f64 / 4.0;
            if let Ok(Some(v)) = r.sample(w + f * (e - w), s + f * (n - s)) {
                assert!(v.is_finite());
            }
        }
    }
});
