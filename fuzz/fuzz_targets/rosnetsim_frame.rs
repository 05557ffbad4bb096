//! ROS-NetSim frames (4-byte big-endian length + gzip) decoded from a byte stream, frame after
//! frame, within the frame and message bounds; every message re-frames to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::lockstep::rosnetsim::{decode_frame, encode_frame};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok(Some((message, after))) = decode_frame(rest) {
        let again = encode_frame(&message);
        assert_eq!(
            decode_frame(&again)
                .ok()
                .flatten()
                .map(|(m, r)| (m, r.len())),
            Some((message, 0))
        );
        rest = after;
    }
});
