//! The run's secret for its capture agents on disk: a file of 64 hex digits readable by its
//! owner only, fresh per run in the output folder (`agent.key`) or made once (`cosim
//! agent-key`) and named by `network.agents.key_file`; and the scenario file's digest, which
//! both sides compare.

use crate::config::LoadedScenario;
use crate::lockstep::secure::{read_secret, write_secret};
use crate::wire::secure::Secret;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// The run's fresh secret in its output folder.
pub const KEY_FILE: &str = "agent.key";

/// The secret's file: `key_file` if the scenario names one (readable by its owner only), else
/// a fresh secret written to `<out>/agent.key` (mode 0600).
pub fn run_secret(
    loaded: &LoadedScenario,
    out_dir: Option<&Path>,
) -> anyhow::Result<(Secret, PathBuf)> {
    match &loaded.scenario.network.agents.key_file {
        Some(f) => {
            let path = loaded.relative(f);
            Ok((read_secret(&path)?, path))
        }
        None => {
            let dir = out_dir.context(
                "the run's secret for its agents goes into its output folder, and this run has none: give it one, or network.agents.key_file",
            )?;
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let path = dir.join(KEY_FILE);
            let _ = std::fs::remove_file(&path);
            let secret = Secret::generate();
            write_secret(&path, &secret)?;
            Ok((secret, path))
        }
    }
}

/// SHA-256 of the scenario file: agent and coordinator must load the same one.
pub fn scenario_digest(loaded: &LoadedScenario) -> anyhow::Result<[u8; 32]> {
    let bytes = std::fs::read(&loaded.file)
        .with_context(|| format!("cannot read {}", loaded.file.display()))?;
    Ok(crate::wire::agent::scenario_digest(&bytes))
}
