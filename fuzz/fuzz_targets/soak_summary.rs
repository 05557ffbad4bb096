//! A run's `summary.json` as `cosim soak` reads it after the run: parsed (an error names the
//! field), then judged by the ledger and program checks, which must say why, not panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::io::soak::{modem_check, network_check, parse_summary, programs_check};

fuzz_target!(|data: &[u8]| {
    let Ok(summary) = parse_summary(data) else { return };
    for live in [false, true] {
        let c = network_check(&summary, live);
        assert!(c.ok || !c.detail.is_empty());
        let c = modem_check(&summary, live);
        assert!(c.ok || !c.detail.is_empty());
    }
    let c = programs_check(&summary);
    assert!(c.ok || !c.detail.is_empty());
});
