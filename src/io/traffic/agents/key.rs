//! The run's secret for its capture agents on disk: a file of 64 hex digits readable by its
//! owner only, fresh per run in the output folder (`agent.key`) or made once (`cosim
//! agent-key`) and named by `network.agents.key_file`; and the scenario file's digest, which
//! both sides compare.

use crate::config::LoadedScenario;
use crate::wire::secure::Secret;
use anyhow::{bail, Context};
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

/// Writes `secret` to a file that did not exist, readable by its owner only.
pub fn write_secret(path: &Path, secret: &Secret) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(f, "{}", secret.to_hex()).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a secret's file, refusing one that others than its owner may read or write.
pub fn read_secret(path: &Path) -> anyhow::Result<Secret> {
    use std::os::unix::fs::MetadataExt;
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.mode() & 0o077 != 0 {
        bail!(
            "{}: others than its owner may read it (mode {:o}): `chmod 600 {}`",
            path.display(),
            meta.mode() & 0o777,
            path.display()
        );
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Secret::parse(&text).with_context(|| format!("{}", path.display()))
}

/// SHA-256 of the scenario file: agent and coordinator must load the same one.
pub fn scenario_digest(loaded: &LoadedScenario) -> anyhow::Result<[u8; 32]> {
    let bytes = std::fs::read(&loaded.file)
        .with_context(|| format!("cannot read {}", loaded.file.display()))?;
    Ok(crate::wire::agent::scenario_digest(&bytes))
}
