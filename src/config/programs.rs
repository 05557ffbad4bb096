//! The `programs` section's types: the programs a run starts at a sim time, on the host or
//! inside a vehicle's network namespace, with their command, environment and stop signal.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

/// A program the run starts (`programs[]`): its output goes to
/// `<out>/programs/<name>.stdout.log` and `.stderr.log`.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// Unique, `[A-Za-z0-9_-]`, at most 32 characters; names the log files.
    pub name: String,
    /// Run inside this vehicle's network namespace `ncs-<vehicle>` (needs `network.capture:
    /// tun`); absent: on the host.
    #[serde(default)]
    pub vehicle: Option<String>,
    /// Sim time to start at (s, default 0, below `duration_s`).
    #[serde(default)]
    pub start_s: f64,
    /// The program: a string run by `sh -c`, or a list of strings (the program and its
    /// arguments, no shell). Required.
    pub command: ProgramCommand,
    /// Extra environment variables (on top of the run's own and the `COSIM_*` ones); numbers
    /// and booleans are taken as written. Default none.
    #[serde(default, deserialize_with = "scalar_map")]
    #[schemars(schema_with = "scalar_map_schema")]
    pub env: std::collections::BTreeMap<String, String>,
    /// Working directory, relative to the scenario file's directory (default that directory).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Signal sent to the program's process group at the end of the run: `INT` (default) or
    /// `TERM` (`SIGINT` and `SIGTERM` are accepted too).
    #[serde(default)]
    pub stop_signal: StopSignal,
    /// How long the group may take to end after the stop signal before it is killed (s,
    /// default 5).
    #[serde(default = "default_stop_timeout_s")]
    pub stop_timeout_s: f64,
}

fn default_stop_timeout_s() -> f64 {
    5.0
}

/// `command`: a string run by `sh -c`, or a list of strings run as argv (no shell).
#[derive(Debug, Clone, PartialEq)]
pub enum ProgramCommand {
    Shell(String),
    Argv(Vec<String>),
}

impl<'de> Deserialize<'de> for ProgramCommand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProgramCommand, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ProgramCommand;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a string (run by sh -c) or a list of strings (the program and its arguments)",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ProgramCommand, E> {
                Ok(ProgramCommand::Shell(v.to_owned()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ProgramCommand, A::Error> {
                let mut argv = Vec::new();
                while let Some(Scalar(arg)) = seq.next_element()? {
                    argv.push(arg);
                }
                Ok(ProgramCommand::Argv(argv))
            }
        }
        d.deserialize_any(V)
    }
}

/// A scalar taken as a string: `[iperf3, -p, 5201]` is three arguments.
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The schema of a `programs[].env`: names to strings, numbers or booleans.
fn scalar_map_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "additionalProperties": { "type": ["string", "number", "boolean"] }
    })
}

/// `command`: a string, or a list of strings and numbers.
impl JsonSchema for ProgramCommand {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProgramCommand".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A string run by `sh -c`, or a list of strings (the program and its arguments; numbers and booleans are taken as written).",
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": ["string", "number", "boolean"] } }
            ]
        })
    }
}

fn scalar_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, String>, D::Error> {
    let m = std::collections::BTreeMap::<String, Scalar>::deserialize(d)?;
    Ok(m.into_iter().map(|(k, v)| (k, v.0)).collect())
}

/// The signal that asks a program to stop: `INT` or `TERM` (also written `SIGINT`,
/// `SIGTERM`).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[schemars(extend("enum" = ["INT", "SIGINT", "TERM", "SIGTERM"]))]
pub enum StopSignal {
    #[default]
    #[serde(rename = "INT", alias = "SIGINT")]
    Int,
    #[serde(rename = "TERM", alias = "SIGTERM")]
    Term,
}

impl StopSignal {
    /// The signal's number.
    pub fn number(self) -> i32 {
        match self {
            StopSignal::Int => libc::SIGINT,
            StopSignal::Term => libc::SIGTERM,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Int => "SIGINT",
            StopSignal::Term => "SIGTERM",
        }
    }
}
