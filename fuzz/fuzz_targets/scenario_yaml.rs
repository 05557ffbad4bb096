//! Scenario files: any text is a scenario or an error naming where, never a panic, and within
//! bounded time and memory (anchors and aliases, deep nesting, long documents).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = netsim_cosim::config::parse_str(
        text,
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../config/fuzz.yaml")),
    );
});
