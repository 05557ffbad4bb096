//! `cosim sweep --slurm` through a real Slurm: Debian's slurm-wlm (slurmctld, slurmd) and munge
//! started by the test as a one-node cluster in a temporary folder of its own (its own munge
//! key and socket, its daemons on ports free at the start), the campaign submitted as a job
//! array and waited for; every run's summary equals the same campaign's run locally, timing
//! aside. The daemons are stopped by their pid files when the test ends, also when it fails.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

/// A one-node cluster: munged, slurmctld and slurmd, stopped on drop.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

/// A TCP port nothing listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", common::output_text(&o));
    o
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let d = d.as_path();
        for sub in ["state", "spool", "log", "munge"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        // munge: a key of its own (1 KiB, readable by its owner only) and a socket of its own.
        let key: Vec<u8> = (0..1024).map(|_| rand_byte()).collect();
        std::fs::write(d.join("munge/munge.key"), key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            d.join("munge/munge.key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        let socket = d.join("munge/munge.sock");
        let cluster = Cluster {
            conf: d.join("slurm.conf"),
            dir,
        };
        run(Command::new("munged")
            .arg("--force")
            .arg(format!(
                "--key-file={}",
                d.join("munge/munge.key").display()
            ))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!(
                "--pid-file={}",
                d.join("munge/munged.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                d.join("munge/munged.log").display()
            ))
            .arg(format!(
                "--seed-file={}",
                d.join("munge/munged.seed").display()
            )));
        let host = String::from_utf8(run(&mut Command::new("hostname")).stdout)
            .unwrap()
            .trim()
            .to_owned();
        let conf = format!(
            "ClusterName=cosimtest\nSlurmctldHost={host}\nSlurmctldPort={}\nSlurmdPort={}\n\
             AuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSwitchType=switch/none\n\
             MpiDefault=none\nReturnToService=2\nSchedulerType=sched/backfill\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd.log\n\
             SlurmUser=root\nSlurmdUser=root\nJobCompType=jobcomp/none\n\
             AccountingStorageType=accounting_storage/none\n\
             NodeName={host} CPUs=2 RealMemory=4000 State=UNKNOWN\n\
             PartitionName=main Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            socket.display(),
            d = d.display(),
        );
        std::fs::write(&cluster.conf, conf).unwrap();
        run(&mut cluster.command("slurmctld"));
        run(&mut cluster.command("slurmd"));
        // Up when the node is idle.
        let t0 = Instant::now();
        loop {
            let o = cluster
                .command("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the node never became idle: {}\n{}",
                common::output_text(&o),
                cluster.logs()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
        cluster
    }

    /// A Slurm command of this cluster.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn logs(&self) -> String {
        ["log/slurmctld.log", "log/slurmd.log", "munge/munged.log"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                format!(
                    "{f}:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .command("scancel")
            .args(["--full", "--user=root"])
            .output();
        for pid_file in ["slurmd.pid", "slurmctld.pid", "munge/munged.pid"] {
            let Ok(pid) = std::fs::read_to_string(self.dir.path().join(pid_file)) else {
                continue;
            };
            let _ = Command::new("kill").arg(pid.trim()).status();
            let t0 = Instant::now();
            while common::alive(&pid) && t0.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn rand_byte() -> u8 {
    use rand::Rng;
    rand::rng().random()
}

#[test]
fn a_campaign_through_slurm_gives_the_local_campaign_s_summaries() {
    let _one = common::require_root();
    common::require_tools(
        &["munged", "slurmctld", "slurmd", "sbatch", "sinfo"],
        "scripts/setup --test",
    );
    let cluster = Cluster::start();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("campaign.yaml");
    std::fs::write(
        &file,
        format!(
            "name: t\nscenario: {}\nset: {{duration_s: 2}}\naxes:\n  - key: \
             links.default.tx_power_dbm\n    values: [10, 23]\nseeds: 2\nslurm: {{time_limit: \
             \"00:10:00\", mem_mb: 1000}}\n",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("config/flows.yaml")
                .display()
        ),
    )
    .unwrap();
    let local = work.path().join("local");
    let o = Command::new(COSIM)
        .arg("sweep")
        .arg(&file)
        .arg("--out")
        .arg(&local)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::output_text(&o));
    let slurm = work.path().join("slurm");
    // `cosim sweep FILE --out slurm ARGS` on the cluster.
    let submit = |args: &[&str]| {
        cluster
            .command(COSIM)
            .arg("sweep")
            .arg(&file)
            .arg("--out")
            .arg(&slurm)
            .args(args)
            .current_dir(work.path())
            .output()
            .unwrap()
    };
    let o = submit(&["--slurm", "--wait"]);
    assert!(
        o.status.success(),
        "{}\n{}",
        common::output_text(&o),
        cluster.logs()
    );
    let script = std::fs::read_to_string(slurm.join("slurm/sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3\n"), "{script}");
    assert!(script.contains("#SBATCH --time=00:10:00\n"), "{script}");
    for k in 0..4 {
        // Each array task wrote its own output, and ran its run.
        assert!(
            slurm.join(format!("slurm/task-{k}.out")).is_file(),
            "task {k}"
        );
        let run = format!("point-{:03}/seed-{}", k / 2, k % 2 + 1);
        assert_eq!(
            common::summary_without_wall_clock(&slurm.join(&run)),
            common::summary_without_wall_clock(&local.join(&run)),
            "{run}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(slurm.join("runs.csv"))
            .unwrap()
            .lines()
            .count(),
        5
    );
    // Nothing more to run: the campaign is aggregated without a job.
    let o = submit(&["--slurm"]);
    let text = common::output_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("4 finished earlier, 0 to run"), "{text}");
    assert!(!text.contains("submitted"), "{text}");
}
