//! The files a scenario names beside its terrain grid (georeferenced rasters, track logs), read
//! whole with a bound, so that memory follows the bytes a file has up to that bound.

use std::path::Path;

/// The bytes of the file at `path`, at most `max`; an error says why (`cannot open: …`,
/// `cannot read: …`, `larger than N MiB`).
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, max + 1), &mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {} MiB", max >> 20));
    }
    Ok(bytes)
}
