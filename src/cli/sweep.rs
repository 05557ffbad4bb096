//! `cosim sweep`: a campaign ([`crate::config::sweep`]) run on this machine, several runs at
//! once, or submitted to Slurm as a job array; then aggregated ([`crate::output::campaign`]).
//!
//! Every run is `cosim sweep SWEEP --out DIR --task K`: here a child process whose output goes
//! to its run folder (`cosim_run.stdout.log`, `cosim_run.stderr.log`), on a cluster an array
//! task. A run that fails leaves the others going; a finished run (its `summary.json`, not
//! interrupted) is never run again, so a campaign stopped half-way (Ctrl-C, a node lost) is
//! finished by running the same command again. Each point's folder keeps the point's scenario
//! (`scenario.yaml`): a sweep file changed since is refused rather than mixed with old runs.
//! A run leaves its record and summary but not a report of its own (the campaign's is the
//! report; `cosim report <run folder>` makes a run's when wanted).

use super::args::SweepArgs;
use crate::config::sweep::Campaign;
use crate::output::campaign::{self, plots, Aggregate};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Each point's scenario, kept in its folder.
pub const POINT_SCENARIO: &str = "scenario.yaml";
/// The Slurm batch script, in the campaign's folder.
pub const SLURM_SCRIPT: &str = "slurm/sweep.sbatch";

/// `cosim sweep`: 0 when every run finished, 130 when stopped, 1 when a run failed.
pub async fn command(args: SweepArgs) -> anyhow::Result<i32> {
    let stop = super::shutdown_signal();
    let campaign = crate::config::sweep::load(&args.sweep)?;
    let out = args.out.clone().unwrap_or_else(|| campaign.out_dir());
    if let Some(k) = args.task {
        return run_task(&campaign, &out, k, stop).await;
    }
    if args.collect {
        let a = aggregate(&campaign, &out)?;
        return Ok(i32::from(!a.missing.is_empty()));
    }
    // Every run's scenario checked before any runs.
    let paced = campaign.check_runs()?;
    keep_points(&campaign, &out)?;
    let pending: Vec<usize> = (0..campaign.runs())
        .filter(|&k| !campaign::finished(&campaign.run_dir(&out, k)))
        .collect();
    println!(
        "campaign {}: {} points × {} seeds = {} runs, {} finished earlier, {} to run; folder {}",
        campaign.sweep.name,
        campaign.points.len(),
        campaign.seeds.len(),
        campaign.runs(),
        campaign.runs() - pending.len(),
        pending.len(),
        out.display()
    );
    if args.slurm {
        return submit(&campaign, &out, &pending, args.wait);
    }
    let jobs = if paced {
        1
    } else {
        args.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |n| n.get(),
        )
    };
    let ran = run_local(&campaign, &out, &pending, jobs, stop).await?;
    let a = aggregate(&campaign, &out)?;
    for (k, why) in &ran.failed {
        eprintln!(
            "run {k} failed ({why}): see {}",
            campaign
                .run_dir(&out, *k)
                .join(super::run_folder::RUN_STDERR_LOG)
                .display()
        );
    }
    Ok(if ran.interrupted {
        super::EXIT_INTERRUPTED
    } else if ran.failed.is_empty() && a.missing.is_empty() {
        0
    } else {
        1
    })
}

/// Writes each point's scenario into its folder, or checks that the one there is the same:
/// runs made from another scenario (the sweep or base file changed) are not mixed in.
fn keep_points(campaign: &Campaign, out: &Path) -> anyhow::Result<()> {
    for p in 0..campaign.points.len() {
        let dir = campaign.point_dir(out, p);
        let path = dir.join(POINT_SCENARIO);
        let text = campaign.point_text(p)?;
        match std::fs::read_to_string(&path) {
            Ok(kept) if kept == text => {}
            Ok(_) => anyhow::bail!(
                "{}: point {p} ({}) was run from another scenario than the sweep file makes now \
                 (the sweep or its base scenario changed): give another --out, or remove {} to \
                 run the campaign again",
                path.display(),
                campaign.points[p].label(),
                out.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                std::fs::write(&path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            Err(e) => return Err(e).with_context(|| format!("{}", path.display())),
        }
    }
    Ok(())
}

/// Run `k` in this process, into its folder.
async fn run_task(
    campaign: &Campaign,
    out: &Path,
    k: usize,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<i32> {
    anyhow::ensure!(
        k < campaign.runs(),
        "--task {k}: the campaign has {} runs (0 to {})",
        campaign.runs(),
        campaign.runs() - 1
    );
    let loaded = campaign.scenario(k)?;
    if let Some(e) = super::sim_time_refused(&loaded) {
        return Err(e.into());
    }
    let dir = campaign.run_dir(out, k);
    if let Some(line) = super::run_folder::prepare(&dir, &super::vehicle_names(&loaded))? {
        tracing::info!("{line}");
    }
    let (p, seed) = campaign.run(k);
    tracing::info!(
        "run {k}: point {p} ({}), seed {seed} → {}",
        campaign.points[p].label(),
        dir.display()
    );
    let c = crate::coord::physics_coordinator(&loaded, None, Some(dir.clone())).await?;
    super::run_to_end(c, &loaded, &dir, stop, false).await
}

/// What the local runs came to.
struct Ran {
    failed: Vec<(usize, String)>,
    interrupted: bool,
}

/// Runs `pending` as child processes, `jobs` at a time, with a progress bar over the
/// campaign (a line per run where stderr is not a terminal). A stop (SIGINT/SIGTERM) sends
/// SIGINT to the running runs, which end as a stopped run does, and starts no other.
async fn run_local(
    campaign: &Campaign,
    out: &Path,
    pending: &[usize],
    jobs: usize,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<Ran> {
    use std::io::IsTerminal;
    let exe = std::env::current_exe().context("the cosim executable")?;
    let total = campaign.runs() as u64;
    let bar = if std::io::stderr().is_terminal() {
        let style = indicatif::ProgressStyle::with_template(
            "runs {pos}/{len} [{wide_bar:.cyan/blue}] {msg}  {elapsed_precise}, ETA {eta}",
        )
        .expect("a valid progress template")
        .progress_chars("=> ");
        let bar = indicatif::ProgressBar::new(total).with_style(style);
        if let Ok(mut p) = super::PROGRESS.lock() {
            *p = Some(bar.clone());
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_position(total - pending.len() as u64);
    let mut queue = pending.iter().copied();
    let mut running = tokio::task::JoinSet::new();
    let mut pids: std::collections::BTreeMap<usize, u32> = Default::default();
    let mut ran = Ran {
        failed: Vec::new(),
        interrupted: false,
    };
    tokio::pin!(stop);
    loop {
        while running.len() < jobs && !ran.interrupted {
            let Some(k) = queue.next() else { break };
            let mut child = spawn(campaign, out, k, &exe)?;
            if let Some(pid) = child.id() {
                pids.insert(k, pid);
            }
            running.spawn(async move { (k, child.wait().await) });
            bar.set_message(format!("{} running", running.len()));
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            joined = running.join_next() => {
                let Some(joined) = joined else { break };
                let (k, status) = joined.context("a run's waiter")?;
                pids.remove(&k);
                let status = status.with_context(|| format!("waiting for run {k}"))?;
                let dir = campaign.run_dir(out, k);
                let line = if campaign::finished(&dir) {
                    bar.inc(1);
                    format!("run {k} finished")
                } else if status.code() == Some(super::EXIT_INTERRUPTED) || ran.interrupted {
                    format!("run {k} stopped")
                } else {
                    ran.failed.push((k, status.to_string()));
                    format!("run {k} failed ({status})")
                };
                if bar.is_hidden() {
                    println!("{line} ({}/{total} done)", bar.position());
                } else {
                    bar.println(line);
                }
            }
            _ = &mut stop, if !ran.interrupted => {
                ran.interrupted = true;
                for pid in pids.values() {
                    // SAFETY: kill has no memory-safety preconditions.
                    unsafe { libc::kill(*pid as i32, libc::SIGINT) };
                }
            }
        }
    }
    bar.finish_and_clear();
    if let Ok(mut p) = super::PROGRESS.lock() {
        *p = None;
    }
    Ok(ran)
}

/// Starts run `k` as `cosim sweep SWEEP --out OUT --task K`, its folder emptied of a run cut
/// short and its output into the folder's logs.
fn spawn(
    campaign: &Campaign,
    out: &Path,
    k: usize,
    exe: &Path,
) -> anyhow::Result<tokio::process::Child> {
    use super::run_folder::{prepare, RUN_STDERR_LOG, RUN_STDOUT_LOG};
    let dir = campaign.run_dir(out, k);
    prepare(&dir, &super::vehicle_names(&campaign.scenario(k)?))?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let log = |name: &str| -> anyhow::Result<std::fs::File> {
        let path = dir.join(name);
        std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))
    };
    tokio::process::Command::new(exe)
        .arg("sweep")
        .arg(&campaign.file)
        .arg("--out")
        .arg(out)
        .arg("--task")
        .arg(k.to_string())
        .stdin(Stdio::null())
        .stdout(log(RUN_STDOUT_LOG)?)
        .stderr(log(RUN_STDERR_LOG)?)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start run {k} ({})", exe.display()))
}

/// The Slurm batch script of the runs `pending`: a job array whose task K runs `cosim sweep
/// SWEEP --out OUT --task K` with the sweep's resources; paths absolute, as a task starts
/// wherever Slurm starts it.
pub fn slurm_script(
    campaign: &Campaign,
    out: &Path,
    pending: &[usize],
    exe: &Path,
) -> anyhow::Result<String> {
    let abs = |p: &Path| -> anyhow::Result<PathBuf> {
        std::path::absolute(p).with_context(|| format!("{}", p.display()))
    };
    let s = &campaign.sweep.slurm;
    let out = abs(out)?;
    let mut array = ranges(pending);
    if let Some(n) = s.max_parallel {
        array.push_str(&format!("%{n}"));
    }
    let mut t = String::from("#!/bin/bash\n");
    t.push_str(&format!(
        "#SBATCH --job-name=cosim-{}\n",
        campaign.sweep.name
    ));
    t.push_str(&format!("#SBATCH --array={array}\n"));
    t.push_str(&format!("#SBATCH --time={}\n", s.time_limit));
    t.push_str(&format!("#SBATCH --cpus-per-task={}\n", s.cpus_per_task));
    t.push_str(&format!("#SBATCH --mem={}M\n", s.mem_mb));
    if let Some(p) = &s.partition {
        t.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    t.push_str(&format!(
        "#SBATCH --output={}/slurm/task-%a.out\n",
        out.display()
    ));
    t.push_str(&format!(
        "#SBATCH --chdir={}\n",
        abs(Path::new("."))?.display()
    ));
    t.push_str(&format!(
        "exec {} sweep {} --out {} --task \"$SLURM_ARRAY_TASK_ID\"\n",
        shell_word(&abs(exe)?),
        shell_word(&abs(&campaign.file)?),
        shell_word(&out)
    ));
    Ok(t)
}

/// `0-3,7,9-10`: Slurm's array index list.
fn ranges(ks: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ks.len() {
        let mut j = i;
        while j + 1 < ks.len() && ks[j + 1] == ks[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ks[i].to_string()
        } else {
            format!("{}-{}", ks[i], ks[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A path as one shell word (single-quoted).
fn shell_word(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// `--slurm`: writes the batch script and submits it with `sbatch` (`--wait`: until the array
/// ends, then aggregates).
fn submit(campaign: &Campaign, out: &Path, pending: &[usize], wait: bool) -> anyhow::Result<i32> {
    if pending.is_empty() {
        aggregate(campaign, out)?;
        return Ok(0);
    }
    let exe = std::env::current_exe().context("the cosim executable")?;
    let script = out.join(SLURM_SCRIPT);
    std::fs::create_dir_all(script.parent().expect("a file in a folder"))
        .with_context(|| format!("cannot create {}", out.join("slurm").display()))?;
    std::fs::write(&script, slurm_script(campaign, out, pending, &exe)?)
        .with_context(|| format!("cannot write {}", script.display()))?;
    let mut sbatch = std::process::Command::new("sbatch");
    sbatch.arg("--parsable");
    if wait {
        sbatch.arg("--wait");
    }
    let output = sbatch.arg(&script).output().map_err(|e| {
        anyhow::anyhow!(
            "sbatch: {e}: --slurm submits through a Slurm client (Debian: slurm-client, with \
             this machine allowed to submit); the script is {}",
            script.display()
        )
    })?;
    let job = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !wait {
        anyhow::ensure!(
            output.status.success(),
            "sbatch {}: {} ({})",
            script.display(),
            String::from_utf8_lossy(&output.stderr).trim(),
            output.status
        );
        println!(
            "submitted job array {job}: {} runs (script {}); when it ends, `cosim sweep {} \
             --collect` aggregates them",
            pending.len(),
            script.display(),
            campaign.file.display()
        );
        return Ok(0);
    }
    // With --wait, sbatch exits as the array did (non-zero when a task failed).
    let a = aggregate(campaign, out)?;
    if !output.status.success() {
        eprintln!(
            "sbatch: job array {job} ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(i32::from(!a.missing.is_empty() || !output.status.success()))
}

/// Aggregates the campaign's finished runs, writes its report, and prints the table (the
/// plotted metrics' means and intervals per point) and the files.
fn aggregate(campaign: &Campaign, out: &Path) -> anyhow::Result<Aggregate> {
    let a = campaign::aggregate(campaign, out)?;
    let (report, notes) = plots::report(campaign, &a, out)?;
    let (metrics, _) = plots::chosen(campaign, &a.metrics);
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    let mut head = vec!["point".to_owned()];
    head.extend(campaign.axes.iter().map(|k| k.to_string()));
    head.push("runs".to_owned());
    head.extend(metrics.iter().take(4).cloned());
    table.set_header(head);
    for (p, point) in campaign.points.iter().enumerate() {
        let mut row = vec![p.to_string()];
        row.extend(campaign.axes.iter().map(|axis| point.value_text(axis)));
        row.push(a.runs.iter().filter(|r| r.point == p).count().to_string());
        row.extend(
            metrics
                .iter()
                .take(4)
                .map(|m| plots::cell(a.points[p].get(m))),
        );
        table.add_row(row);
    }
    println!("{table}");
    for n in &notes {
        tracing::warn!("campaign report: {n}");
    }
    if !a.missing.is_empty() {
        println!(
            "{} of {} runs not finished: run the sweep again to run them",
            a.missing.len(),
            campaign.runs()
        );
    }
    println!("runs: {}", a.runs_csv.display());
    println!("points: {}", a.points_csv.display());
    println!("report: {}", report.display());
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_indices_are_written_as_ranges() {
        assert_eq!(ranges(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(ranges(&[5]), "5");
        assert_eq!(ranges(&[]), "");
    }
}
