//! A logged track's GPX file (`motion: {kind: track}`): never a panic; a log it accepts holds
//! what `check_track` asks of every track log.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::track::gpx;
use netsim_cosim_fuzz::{check_track, track_origin};

fuzz_target!(|data: &[u8]| {
    if let Ok(log) = gpx::parse(data, "fuzz.gpx", &track_origin(), 10.0) {
        check_track(&log, 10.0);
    }
});
