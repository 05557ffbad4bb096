//! A named interval of sim time, `NAME=FROM-TO` in seconds (e.g. `LOS=2-20`): how `cosim
//! compare --phase` and a sweep file's `measure.phases` cut a run into the stretches a link
//! is measured over.

use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt;
use std::str::FromStr;

/// A named interval of sim time, `NAME=FROM-TO` in seconds (e.g. `LOS=2-20`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Phase {
    pub name: String,
    pub from_s: f64,
    pub to_s: f64,
}

impl FromStr for Phase {
    type Err = String;

    fn from_str(s: &str) -> Result<Phase, String> {
        let bad = || format!("{s:?}: expected NAME=FROM-TO in seconds, e.g. LOS=2-20");
        let (name, range) = s.split_once('=').ok_or_else(bad)?;
        let (from, to) = range.split_once('-').ok_or_else(bad)?;
        let (from_s, to_s): (f64, f64) = (
            from.trim().parse().map_err(|_| bad())?,
            to.trim().parse().map_err(|_| bad())?,
        );
        if name.is_empty()
            || !(from_s.is_finite() && to_s.is_finite() && from_s >= 0.0 && to_s > from_s)
        {
            return Err(bad());
        }
        Ok(Phase {
            name: name.to_owned(),
            from_s,
            to_s,
        })
    }
}

impl TryFrom<String> for Phase {
    type Error = String;

    fn try_from(s: String) -> Result<Phase, String> {
        s.parse()
    }
}

impl JsonSchema for Phase {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Phase".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": r"^[^=]+=[0-9.]+-[0-9.]+$",
            "description": "`NAME=FROM-TO`, seconds of sim time (e.g. `LOS=2-20`): FROM ≥ 0, TO > FROM."
        })
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}–{} s)", self.name, self.from_s, self.to_s)
    }
}
