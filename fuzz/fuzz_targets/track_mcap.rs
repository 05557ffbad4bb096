//! A logged track's MCAP file and its ROS 2 messages (`motion: {kind: track, topic}`): never a
//! panic, neither in the MCAP reader nor in the CDR decoding of PoseStamped, Odometry and
//! NavSatFix (each also decoded alone from the input); a heading decoded is in [0, 360) and a
//! log it accepts holds what `check_track` asks of every track log.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::track::mcap;
use netsim_cosim::wire::ros_pose::{decode_pose, TYPES};
use netsim_cosim_fuzz::{check_track, track_origin};

fuzz_target!(|data: &[u8]| {
    // `mcap::parse` turns a panic inside the mcap crate into an error: libFuzzer's hook would
    // abort on it first. A panic of this crate's own still leaves the target and aborts.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    for t in TYPES {
        if let Ok(p) = decode_pose(t, data) {
            if let Some(h) = p.heading_deg.filter(|h| h.is_finite()) {
                assert!((0.0..360.0).contains(&h));
            }
        }
    }
    if let Ok(log) = mcap::parse(data, "fuzz.mcap", "/pose", &track_origin(), 10.0) {
        check_track(&log, 10.0);
    }
});
