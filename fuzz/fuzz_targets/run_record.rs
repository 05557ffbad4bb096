//! A run record (`record.mcap`) as `cosim report` reads it from a folder someone hands over:
//! parsed, then analysed into the report's series and terminal tables (no plots: those only
//! draw what the analysis holds). Neither may panic; an error names the file.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::output::record::Record;
use netsim_cosim::output::report::{series::Analysis, table};
use netsim_cosim::output::summary::RunReport;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    match Record::parse(data, Path::new("record.mcap")) {
        Ok(record) => {
            // A summary that does not read as the typed run summary is left out, as the report does.
            let summary = record
                .summary
                .clone()
                .and_then(|v| RunReport::from_value(v).ok());
            let analysis = Analysis::of(&record, summary);
            let _ = table::terminal(&analysis);
        }
        Err(e) => assert!(e.to_string().contains("record.mcap"), "{e}"),
    }
});
