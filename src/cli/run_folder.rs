//! A run's output folder holds one run. Before a run writes into it, [`prepare`] removes what
//! an earlier run left there — every file and folder a run writes — if it holds one (it has a
//! `summary.json` or `record.mcap`), and refuses a folder holding anything a run does not
//! write, naming it: nothing of the user's is ever removed.

use anyhow::Context;
use std::fs::FileType;
use std::path::{Path, PathBuf};

/// The files a run (`cosim run`, `physics_coordinator`, `network_coordinator`, `cosim soak`)
/// writes at the top of its output folder, besides one `<vehicle>.pcap` per vehicle and the
/// folders `report/` and `programs/`.
pub const RUN_FILES: &[&str] = &[
    "summary.json",
    crate::output::record::RECORD_FILE,
    crate::output::timeline::TIMELINE_FILE,
    "modem_ledger.jsonl",
    "auv_interface.json",
    "network_summary.json",
    "air_summary.json",
    "ns3.sock",
    "ns3.log",
    crate::io::traffic::agents::key::KEY_FILE,
    SOAK_JSON,
    MEMORY_CSV,
    RUN_STDOUT_LOG,
    RUN_STDERR_LOG,
];

/// The files `cosim soak` writes into the run's output folder, beside the run's own.
pub const SOAK_JSON: &str = "soak.json";
pub const MEMORY_CSV: &str = "soak_memory.csv";
pub const RUN_STDOUT_LOG: &str = "cosim_run.stdout.log";
pub const RUN_STDERR_LOG: &str = "cosim_run.stderr.log";

/// The files whose presence says the folder holds a run.
const RUN_MARKERS: [&str; 2] = ["summary.json", crate::output::record::RECORD_FILE];

/// Makes `dir` ready for a run of a scenario whose vehicles are `vehicles`: nothing to do if
/// it does not exist or holds no run; if it holds one, every file and folder of that run is
/// removed and the line saying so is returned (for the log). A folder holding anything a run
/// does not write is refused before anything is removed; the error names the first such path.
pub fn prepare(dir: &Path, vehicles: &[String]) -> anyhow::Result<Option<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("output folder {}: {e}", dir.display()),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("output folder {}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .with_context(|| format!("{}", path.display()))?;
        if let Some(foreign) = not_of_a_run(&path, &name, kind, vehicles)? {
            anyhow::bail!(
                "output folder {}: {} is not a file a run writes; a folder holds one run and the \
                 earlier run's files are removed before the next, so this folder is refused to \
                 keep that file: move it, or give another output folder (--out)",
                dir.display(),
                foreign.display()
            );
        }
        found.push((name, path, kind));
    }
    if !found
        .iter()
        .any(|(n, ..)| RUN_MARKERS.contains(&n.as_str()))
    {
        return Ok(None);
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut names = Vec::with_capacity(found.len());
    for (name, path, kind) in &found {
        if kind.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        }
        .with_context(|| format!("cannot remove {} of the earlier run", path.display()))?;
        names.push(if kind.is_dir() {
            format!("{name}/")
        } else {
            name.clone()
        });
    }
    Ok(Some(format!(
        "{} held a run: removed its {} (a folder holds one run)",
        dir.display(),
        names.join(", ")
    )))
}

/// `None` if the entry `name` (at `path`, of `kind`) at the top of a run folder is something a
/// run writes (a folder: with only what a run writes in it), else the path that is not.
fn not_of_a_run(
    path: &Path,
    name: &str,
    kind: FileType,
    vehicles: &[String],
) -> anyhow::Result<Option<PathBuf>> {
    if kind.is_symlink() {
        return Ok(Some(path.to_path_buf()));
    }
    if kind.is_dir() {
        return match name {
            crate::output::report::REPORT_DIR => only(path, &|name, kind, path| match name {
                "report.html" | "report.json" => Ok(!kind.is_file()),
                "series" => Ok(!kind.is_dir() || !only_files(path, ".csv")?),
                "plots" => Ok(!kind.is_dir() || !only_files(path, ".png")?),
                _ => Ok(true),
            }),
            "programs" => only(path, &|name, kind, _| {
                Ok(!kind.is_file()
                    || !(name.ends_with(".stdout.log") || name.ends_with(".stderr.log")))
            }),
            _ => Ok(Some(path.to_path_buf())),
        };
    }
    let pcap = name
        .strip_suffix(".pcap")
        .is_some_and(|v| vehicles.iter().any(|n| n == v));
    Ok((!(RUN_FILES.contains(&name) || pcap)).then(|| path.to_path_buf()))
}

/// Whether `foreign(name, kind, path)` is false for every entry of `dir`: `None` if so, else
/// the first entry's path for which it is true.
fn only(
    dir: &Path,
    foreign: &dyn Fn(&str, FileType, &Path) -> anyhow::Result<bool>,
) -> anyhow::Result<Option<PathBuf>> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry.with_context(|| format!("{}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("{}", path.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_symlink() || foreign(&name, kind, &path)? {
            // A folder that holds a foreign file: name the file, not the folder.
            if kind.is_dir() && !kind.is_symlink() {
                if let Some(inner) = first_foreign_file(&path)? {
                    return Ok(Some(inner));
                }
            }
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// True if `dir` holds only regular files ending in `suffix`.
fn only_files(dir: &Path, suffix: &str) -> anyhow::Result<bool> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry.with_context(|| format!("{}", dir.display()))?;
        let kind = entry.file_type()?;
        if !kind.is_file() || !entry.file_name().to_string_lossy().ends_with(suffix) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first entry of `dir` (`report/series`, `report/plots`) that is not a file of the kind
/// the report writes there.
fn first_foreign_file(dir: &Path) -> anyhow::Result<Option<PathBuf>> {
    let suffix = match dir.file_name().and_then(|n| n.to_str()) {
        Some("series") => ".csv",
        Some("plots") => ".png",
        _ => return Ok(None),
    };
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry.with_context(|| format!("{}", dir.display()))?;
        let kind = entry.file_type()?;
        if !kind.is_file() || !entry.file_name().to_string_lossy().ends_with(suffix) {
            return Ok(Some(entry.path()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vehicles() -> Vec<String> {
        vec!["usv1".into(), "auv1".into()]
    }

    /// A folder as a full run leaves it.
    fn a_run(dir: &Path) {
        for f in RUN_FILES {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        std::fs::write(dir.join("usv1.pcap"), b"x").unwrap();
        for d in ["report/series", "report/plots", "programs"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        for f in [
            "report/report.html",
            "report/report.json",
            "report/series/throughput.csv",
            "report/plots/throughput.png",
            "programs/talker.stdout.log",
            "programs/talker.stderr.log",
        ] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_missing_or_empty_folder_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(prepare(&dir.path().join("new"), &vehicles()).unwrap(), None);
        assert_eq!(prepare(dir.path(), &vehicles()).unwrap(), None);
        assert!(dir.path().exists());
    }

    #[test]
    fn an_earlier_run_is_removed_whole_and_the_line_says_so() {
        let dir = tempfile::tempdir().unwrap();
        a_run(dir.path());
        let line = prepare(dir.path(), &vehicles()).unwrap().unwrap();
        assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
        assert!(
            line.starts_with(&format!(
                "{} held a run: removed its ",
                dir.path().display()
            )) && line.contains("record.mcap")
                && line.contains("report/")
                && line.contains("programs/")
                && line.contains("usv1.pcap")
                && !line.contains('\n'),
            "{line}"
        );
        // A record alone (a run stopped before its summary) is a run too.
        std::fs::write(dir.path().join("record.mcap"), b"x").unwrap();
        std::fs::write(dir.path().join("timeline.jsonl"), b"x").unwrap();
        assert!(prepare(dir.path(), &vehicles()).unwrap().is_some());
        assert!(listing(dir.path()).is_empty());
    }

    #[test]
    fn files_of_a_run_without_its_record_or_summary_stay() {
        // What `cosim soak` writes before its run starts.
        use super::{MEMORY_CSV, RUN_STDERR_LOG, RUN_STDOUT_LOG};
        let dir = tempfile::tempdir().unwrap();
        for f in [MEMORY_CSV, RUN_STDOUT_LOG, RUN_STDERR_LOG] {
            std::fs::write(dir.path().join(f), b"x").unwrap();
        }
        assert_eq!(prepare(dir.path(), &vehicles()).unwrap(), None);
        assert_eq!(
            listing(dir.path()),
            [
                "cosim_run.stderr.log",
                "cosim_run.stdout.log",
                "soak_memory.csv"
            ]
        );
    }

    #[test]
    fn anything_a_run_does_not_write_is_refused_by_name_and_nothing_is_removed() {
        for foreign in [
            "notes.txt",
            "other.pcap",
            "report/notes.txt",
            "report/series/mine.txt",
            "report/plots/mine.svg",
            "programs/mine.txt",
            "data/x.csv",
        ] {
            let dir = tempfile::tempdir().unwrap();
            a_run(dir.path());
            let path = dir.path().join(foreign);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"mine").unwrap();
            let before = listing(dir.path());
            let e = prepare(dir.path(), &vehicles()).unwrap_err().to_string();
            let named = if foreign == "data/x.csv" {
                dir.path().join("data")
            } else {
                path.clone()
            };
            assert!(
                e.contains(&format!("{} is not a file a run writes", named.display()))
                    && e.contains("--out")
                    && !e.contains('\n'),
                "{foreign}: {e}"
            );
            assert_eq!(listing(dir.path()), before, "{foreign}");
            assert!(path.exists());
            assert!(dir.path().join("record.mcap").exists());
        }
        // Without a run in it the folder is refused all the same.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("thesis.tex"), b"mine").unwrap();
        assert!(prepare(dir.path(), &vehicles()).is_err());
        assert!(dir.path().join("thesis.tex").exists());
    }

    #[test]
    fn a_link_is_never_followed_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("keep.csv"), b"mine").unwrap();
        a_run(dir.path());
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("report/series/link.csv"))
            .unwrap();
        let e = prepare(dir.path(), &vehicles()).unwrap_err().to_string();
        assert!(e.contains("link.csv is not a file a run writes"), "{e}");
        assert!(elsewhere.path().join("keep.csv").exists());
    }
}
