//! A CTD cast's CSV file (`world.water.casts`): never a panic; a cast it accepts holds
//! what `check_cast` asks of every cast.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::cast;
use netsim_cosim_fuzz::check_cast;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = cast::parse_csv(data, "fuzz.csv", 41.5, 35.0) {
        check_cast(&c);
    }
});
