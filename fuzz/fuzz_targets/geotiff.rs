//! A terrain's GeoTIFF (`world.terrain: {kind: geotiff}`): never a panic (the `tiff` crate's
//! decoding under its default limits, a panic of its caught; the GeoKeys read here); a raster it accepts has
//! cols × rows values and a positive cell size, and sampling it inside its cells gives a number
//! or names a NODATA cell.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::raster::read_geotiff;
use netsim_cosim_fuzz::check_raster;

fuzz_target!(|data: &[u8]| {
    // `read_geotiff` turns a panic inside the tiff crate into an error: libFuzzer's hook would
    // abort on it first. A panic of this crate's own still leaves the target and aborts.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    if let Ok((r, _crs)) = read_geotiff(data, 8192) {
        check_raster(&r);
    }
});
