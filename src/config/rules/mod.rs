//! The semantic rules of a typed scenario, one file per section (named as the file of the
//! section's types), run by [`validate`] in a fixed order: the scenario's own keys, `world`
//! (the water and the seabed included), `vehicles`, `links`, `simulators`, `netsim_manager`,
//! `network`, `acoustic_modems`, `programs`, `traffic`, `ros`, the vehicles' `attach`, `auv_interface`,
//! `record`, `viewer`, then the world's extent. The first problem found is the one reported.
//! Every rule takes the [`Ctx`]: the typed scenario and where its keys are written, so that an
//! error names the file, the key path and the line.
//!
//! The rules sit in files of their own, beside the types only by name: a rule reads the whole
//! [`Scenario`], which is made of every section's types, so a file holding both a section's
//! types and its rules would import the scenario's file, which imports it back.

mod acoustic_modems;
mod auv_interface;
mod links;
mod netsim_manager;
mod network;
mod programs;
mod record;
mod ros;
mod scenario;
mod simulators;
mod traffic;
mod vehicles;
mod water;
mod world;

pub(super) use scenario::{validate, whole_windows};
pub(super) use simulators::{
    auv_client_settings, channel_interval_in_windows, gazebo_settings, ns3_links, ns3_settings,
    plaintext_peers,
};
pub(super) use water::{check_profile_reaches_terrain, deepest_m};
pub(super) use world::{check_against_terrain, check_inside_world};

use std::path::Path;

use super::{ConfigError, Scenario, SourceMap};

type Check = Result<(), ConfigError>;

/// A typed scenario and where its keys are written, for checks that name file, key and line.
pub(super) struct Ctx<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) file: &'a Path,
    pub(super) source: &'a SourceMap,
}

impl Ctx<'_> {
    pub(super) fn err(&self, key_path: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.file, self.source, key_path, message)
    }

    fn line_note(&self, key_path: &str) -> String {
        match self.source.line_of(key_path) {
            Some(line) => format!("{key_path} (line {line})"),
            None => key_path.to_owned(),
        }
    }

    /// A name that names files or report rows: not empty, only `[A-Za-z0-9_-]`, at most
    /// `max` characters, and not one of the `what`s named before (`seen`: name → its key).
    fn unique_name<'a>(
        &self,
        key_path: &str,
        name: &'a str,
        max: usize,
        what: &str,
        seen: &mut std::collections::HashMap<&'a str, String>,
    ) -> Check {
        if name.is_empty() {
            return Err(self.err(key_path, "must not be empty"));
        }
        if let Some(c) =
            (name.chars()).find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
        {
            return Err(self.err(
                key_path,
                format!("may contain only A-Z, a-z, 0-9, '_' and '-' (found {c:?})"),
            ));
        }
        if name.len() > max {
            return Err(self.err(
                key_path,
                format!("{name:?} is longer than {max} characters"),
            ));
        }
        if let Some(first) = seen.get(name) {
            return Err(self.err(
                key_path,
                format!(
                    "{what} name {name:?} is already used at {}",
                    self.line_note(first)
                ),
            ));
        }
        seen.insert(name, key_path.to_owned());
        Ok(())
    }

    fn positive(&self, key_path: &str, v: f64) -> Check {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(self.err(key_path, format!("must be > 0 and finite (got {v})")))
        }
    }

    fn non_negative(&self, key_path: &str, v: f64) -> Check {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(self.err(key_path, format!("must be ≥ 0 and finite (got {v})")))
        }
    }

    fn finite(&self, key_path: &str, values: &[f64]) -> Check {
        match values.iter().find(|v| !v.is_finite()) {
            Some(v) => Err(self.err(key_path, format!("must be finite (got {v})"))),
            None => Ok(()),
        }
    }
}

fn no_nul(cx: &Ctx, key_path: &str, text: &str) -> Check {
    if text.contains('\0') {
        return Err(cx.err(key_path, "must not contain a NUL character"));
    }
    Ok(())
}
