//! A problem with a scenario file, located as precisely as known: file, key path, line and
//! column.

use super::SourceMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with a scenario file, located as precisely as known.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub file: PathBuf,
    /// Key path such as `vehicles[1].motion.waypoints[2]`; empty for the whole file.
    pub key_path: String,
    /// 1-based.
    pub line: Option<usize>,
    /// 1-based.
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.key_path.is_empty() {
            write!(f, ": {}", self.key_path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error about the whole file (unreadable, too large, ...).
    pub(super) fn whole_file(file: &Path, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: file.to_owned(),
            key_path: String::new(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at `key_path`, located with `source` (or the nearest ancestor it knows).
    pub(crate) fn at(
        file: &Path,
        source: &SourceMap,
        key_path: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        let (line, column) = source.nearest(key_path).unzip();
        ConfigError {
            file: file.to_owned(),
            key_path: key_path.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}
