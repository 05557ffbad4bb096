//! A run's `summary.json` as `cosim soak` and the report read it: parsed into the typed run
//! summary (an error names the field), then judged by the soak's ledger and program checks,
//! which must say why, not panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::output::soak::{modem_check, network_check, programs_check};
use netsim_cosim::output::summary::RunReport;

fuzz_target!(|data: &[u8]| {
    let Ok(summary) = RunReport::parse(data) else {
        return;
    };
    for live in [false, true] {
        let c = network_check(&summary, live);
        assert!(c.ok || !c.detail.is_empty());
        let c = modem_check(&summary, live);
        assert!(c.ok || !c.detail.is_empty());
    }
    let c = programs_check(&summary);
    assert!(c.ok || !c.detail.is_empty());
});
