//! A terrain's NetCDF grid (`world.terrain: {kind: netcdf}`): never a panic (the decoder's
//! panics caught); a raster it accepts has cols × rows values and a positive cell size, and
//! sampling it inside its cells gives a number or names a NODATA cell.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::raster::read_netcdf;
use netsim_cosim_fuzz::check_raster;

fuzz_target!(|data: &[u8]| {
    // `read_netcdf` turns a panic inside the decoder into an error: libFuzzer's hook would
    // abort on it first.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    if let Ok((r, _crs)) = read_netcdf(data, None, 8192) {
        check_raster(&r);
    }
});
