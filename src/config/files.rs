//! The files a scenario names beside its terrain grid (georeferenced rasters, track logs, casts),
//! read whole with a bound (key files checked to be their owner's only, [`owner_only`]), so that memory follows the bytes a file has up to that bound, and
//! the error that names such a file and the place in it.

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

/// Refuses a file of secrets (a key) that others than its owner may read or write: the error
/// gives its mode and the `chmod` that mends it.
pub fn owner_only(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mode = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .mode();
    if mode & 0o077 != 0 {
        return Err(format!(
            "others than its owner may read it (mode {:o}): `chmod 600 {}`",
            mode & 0o777,
            path.display()
        ));
    }
    Ok(())
}

/// Where in a file a problem is: nowhere in particular, a line, a point (GPX) or a message
/// (MCAP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Whole,
    Line(u64),
    Point(u64),
    Message(u64),
}

impl Place {
    /// `file` and the place: `b.csv:12`, `b.gpx: point 3`, `b.mcap: message 7`, `b.csv`.
    pub fn located(self, file: &str) -> String {
        match self {
            Place::Whole => file.to_owned(),
            Place::Line(l) => format!("{file}:{l}"),
            Place::Point(n) => format!("{file}: point {n}"),
            Place::Message(n) => format!("{file}: message {n}"),
        }
    }
}

/// A file (a track log, a cast) that cannot be used, with the file and, where it has one, the
/// place in it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileError {
    pub file: String,
    pub place: Place,
    pub message: String,
}

impl FileError {
    pub fn new(file: &str, place: Place, message: impl Into<String>) -> FileError {
        FileError {
            file: file.to_owned(),
            place,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place.located(&self.file), self.message)
    }
}
