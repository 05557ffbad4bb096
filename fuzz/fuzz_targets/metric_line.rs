//! A program's metric line (a line of the file `COSIM_METRICS` names): never a panic; a line
//! it accepts has a valid name and source and a finite value, and reads back the same from the
//! line it writes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::wire::metric_line::MetricLine;

fuzz_target!(|data: &[u8]| {
    if let Ok(l) = MetricLine::parse(data) {
        assert!(l.value.is_finite());
        assert!(!l.name.is_empty() && l.name.len() <= netsim_cosim::wire::metric_line::MAX_NAME);
        let again =
            MetricLine::parse(l.to_line().trim_end().as_bytes()).expect("its own line reads");
        assert_eq!(again, l);
    }
});
