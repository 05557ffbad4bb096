//! Sweep files: any text is a campaign or an error naming where, never a panic: the sweep's
//! own keys and key paths, then (for a campaign of at most 16 runs) every run's scenario made
//! and checked.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../config/sweeps/fuzz.yaml"
    ));
    let Ok(campaign) = netsim_cosim::config::sweep::parse_str(text, file) else {
        return;
    };
    if campaign.runs() <= 16 {
        let _ = campaign.check_runs();
        for p in 0..campaign.points.len() {
            let _ = campaign.point_text(p);
        }
    }
});
