//! What `/proc` and `/sys` say about a process and what it started: a process's resident
//! memory, descriptors and threads ([`sample`]); every process descended from it or running in
//! given network namespaces, noted while it runs and looked for after it ended ([`Watch`]);
//! whether the programs of a run are still busy starting ([`runnable_in_groups`]); TUN devices;
//! the bytes a folder holds. `cosim soak` watches its run with them.

use crate::io::os::netns;
use crate::output::soak::{Leftovers, Sample};
use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The run's process now: None once it is gone (or a zombie).
pub fn sample(pid: i32, t_s: f64, running: bool) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    // A zombie has no VmRSS line.
    let rss_kib = field("VmRSS:")?;
    let threads = field("Threads:").unwrap_or(0) as u32;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count() as u32)
        .unwrap_or(0);
    Some(Sample {
        t_s,
        running,
        rss_kib,
        fds,
        threads,
    })
}

/// One process as `/proc/<pid>/stat` describes it.
struct Proc {
    pid: i32,
    ppid: i32,
    /// Its process group.
    pgrp: i32,
    start: u64,
    zombie: bool,
    /// Running or waiting for a CPU (state `R`).
    runnable: bool,
}

fn read_proc(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        pid,
        zombie: f.first() == Some(&"Z") || f.first() == Some(&"X"),
        runnable: f.first() == Some(&"R"),
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn all_procs() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter_map(read_proc)
                .collect()
        })
        .unwrap_or_default()
}

/// How many processes in the process groups `pgids` are running or waiting for a CPU (state
/// `R` in `/proc/<pid>/stat`).
pub fn runnable_in_groups(pgids: &[i32]) -> usize {
    (all_procs().iter())
        .filter(|p| p.runnable && pgids.contains(&p.pgrp))
        .count()
}

/// The network namespace inode of a process.
fn netns_inode(pid: i32) -> Option<u64> {
    std::fs::metadata(format!("/proc/{pid}/ns/net"))
        .ok()
        .map(|m| m.ino())
}

fn cmdline(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    if text.is_empty() {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| format!("[{}]", c.trim()))
            .unwrap_or_default()
    } else {
        text.join(" ")
    }
}

/// TUN devices of the host's network namespace (those with `tun_flags` in sysfs).
pub fn host_tun_devices() -> BTreeSet<String> {
    std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("tun_flags").exists())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// TUN devices inside namespace `ns` (`ip -d link` details say `tun type`).
fn tun_devices_in(ns: &str) -> Vec<String> {
    let Ok(out) = std::process::Command::new("ip")
        .args(["-n", ns, "-d", "-o", "link", "show"])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" tun type "))
        .filter_map(|l| {
            let name = l.split(':').nth(1)?.trim();
            Some(format!("{ns}/{}", name.split('@').next().unwrap_or(name)))
        })
        .collect()
}

/// Who belongs to the run: its descendants and whatever ran in its vehicles' namespaces,
/// gathered while it runs.
pub struct Watch {
    root: i32,
    namespaces: Vec<String>,
    /// Inodes of the vehicles' namespaces, as seen while they existed.
    ns_inodes: BTreeSet<u64>,
    /// (pid, start time) → command line of every process seen belonging to the run.
    seen: HashMap<(i32, u64), String>,
}

impl Watch {
    pub fn new(root: i32, namespaces: Vec<String>) -> Watch {
        Watch {
            root,
            namespaces,
            ns_inodes: BTreeSet::new(),
            seen: HashMap::new(),
        }
    }

    /// Notes the namespaces' inodes and the run's processes now.
    pub fn scan(&mut self) {
        for ns in &self.namespaces {
            if let Ok(m) = std::fs::metadata(Path::new(netns::NETNS_DIR).join(ns)) {
                self.ns_inodes.insert(m.ino());
            }
        }
        let procs = all_procs();
        let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
        for p in &procs {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut todo = vec![self.root];
        let mut members: Vec<&Proc> = Vec::new();
        while let Some(pid) = todo.pop() {
            for c in children.get(&pid).into_iter().flatten() {
                members.push(c);
                todo.push(c.pid);
            }
        }
        for p in &procs {
            if !p.zombie && netns_inode(p.pid).is_some_and(|i| self.ns_inodes.contains(&i)) {
                members.push(p);
            }
        }
        for p in members {
            if !p.zombie {
                self.seen
                    .entry((p.pid, p.start))
                    .or_insert_with(|| cmdline(p.pid));
            }
        }
    }

    /// What is left after the run ended: its namespaces, owner files, new TUN devices (on the
    /// host and in namespaces left), and processes (seen as the run's, re-parented to the soak,
    /// or in one of its namespaces), which are then killed.
    pub fn leftovers(&self, tuns_before: &BTreeSet<String>) -> Leftovers {
        let me = std::process::id() as i32;
        let mut left = Leftovers::default();
        for ns in &self.namespaces {
            if Path::new(netns::NETNS_DIR).join(ns).exists() {
                left.namespaces.push(ns.clone());
                left.tun_devices.extend(tun_devices_in(ns));
            }
            let owner = Path::new(netns::STATE_DIR).join(format!("{ns}.owner"));
            if owner.exists() {
                left.owner_files.push(owner.display().to_string());
            }
        }
        left.tun_devices.extend(
            host_tun_devices()
                .difference(tuns_before)
                .map(|d| d.to_string()),
        );
        let mut pids = BTreeSet::new();
        for p in all_procs() {
            if p.zombie || p.pid == me {
                continue;
            }
            let run_member = self.seen.contains_key(&(p.pid, p.start))
                || p.ppid == me
                || netns_inode(p.pid).is_some_and(|i| self.ns_inodes.contains(&i));
            if run_member && pids.insert(p.pid) {
                left.processes.push(format!("{} {}", p.pid, cmdline(p.pid)));
            }
        }
        for &pid in &pids {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        // Reap what was re-parented to us (the run itself was waited for already).
        loop {
            let mut status = 0;
            // SAFETY: waitpid with WNOHANG on any child only writes `status`.
            let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if r <= 0 {
                break;
            }
        }
        left
    }
}

/// Bytes of every file under `dir`.
pub fn folder_bytes(dir: &Path) -> u64 {
    let Ok(d) = std::fs::read_dir(dir) else {
        return 0;
    };
    d.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => folder_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
