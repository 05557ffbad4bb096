//! Per-vehicle bridges: `/clock` (and the vehicle's own pose) served **inside each vehicle's
//! network namespace**, never across the simulated link.
//!
//! The capture layer puts each vehicle's ROS 2 stack into a network namespace (`ncs-<vehicle>`)
//! whose only way out is the TUN device of the simulated network. A `/clock` published from the
//! coordinator's namespace would have to cross that link (and be delayed, lost and counted like
//! vehicle traffic). Instead the coordinator starts one bridge process per vehicle
//! (`cosim ros-vehicle-bridge --netns <ns> --vehicle <name>`); the bridge enters the namespace
//! (setns) before it creates its ROS context, restricts DDS discovery to that namespace's
//! loopback (`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`), and publishes what the coordinator
//! writes to its stdin — a pipe between two processes on the host, not a network: no clock byte
//! enters any namespace's TUN device.
//!
//! Which vehicles get a bridge: every vehicle whose ROS settings say `use_sim_time: true`
//! (scenario `ros` / `vehicles[].ros`), in its namespace `ncs-<vehicle>`, and, with `cosim run
//! --vehicle-netns PATTERN`, every vehicle, in the namespace the pattern names (the flag's
//! namespace wins for a vehicle that has both). A bridge runs in its vehicle's `domain_id`.
//!
//! The bridge prints `ready` on stdout once its publishers exist (and, with
//! `--wait-for-subscribers N`, once `/clock` has N subscribers in the namespace); the run
//! starts only when every bridge is ready. The stdin protocol is then one line per window:
//! `<window> <start_ns> <x> <y> <z> <qw> <qx> <qy> <qz>` (the vehicle's pose at the window's
//! start, ENU). The bridge exits at end of input.

use crate::coord::{Ended, Participant, WindowView};
use anyhow::Context;
use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    time::{Duration, Instant},
};

/// One line of the bridge protocol.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehicleSample {
    pub window: u32,
    pub start_ns: u64,
    /// x, y, z, qw, qx, qy, qz
    pub pose: [f64; 7],
}

impl VehicleSample {
    pub fn to_line(&self) -> String {
        let p = &self.pose;
        format!(
            "{} {} {} {} {} {} {} {} {}\n",
            self.window, self.start_ns, p[0], p[1], p[2], p[3], p[4], p[5], p[6]
        )
    }

    pub fn parse(line: &str) -> Result<VehicleSample, String> {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 9 {
            return Err(format!("expected 9 fields, got {}: {line:?}", f.len()));
        }
        let window = f[0]
            .parse()
            .map_err(|e| format!("window {:?}: {e}", f[0]))?;
        let start_ns = f[1]
            .parse()
            .map_err(|e| format!("start_ns {:?}: {e}", f[1]))?;
        let mut pose = [0.0; 7];
        for (i, v) in f[2..].iter().enumerate() {
            pose[i] = v.parse().map_err(|e| format!("pose[{i}] {v:?}: {e}"))?;
        }
        Ok(VehicleSample {
            window,
            start_ns,
            pose,
        })
    }
}

/// Where a network namespace named by `ip netns add` lives.
pub fn netns_path(name: &str) -> PathBuf {
    Path::new("/run/netns").join(name)
}

/// `pattern` with `{vehicle}` replaced, e.g. `ncs-{vehicle}` → `ncs-auv1`.
pub fn namespace_name(pattern: &str, vehicle: &str) -> String {
    pattern.replace("{vehicle}", vehicle)
}

struct Bridge {
    index: usize,
    vehicle: String,
    child: Child,
    stdin: Option<ChildStdin>,
}

/// The parent side: one bridge process per vehicle whose namespace exists; a
/// [`Participant`] that writes every window's sample to each bridge.
pub struct VehicleBridges {
    bridges: Vec<Bridge>,
}

/// One vehicle's bridge to start: the vehicle's index in the scenario, its name, the network
/// namespace to serve `/clock` in, and the DDS domain (`ROS_DOMAIN_ID`) of its stack (absent:
/// the run's own).
#[derive(Debug, Clone, PartialEq)]
pub struct BridgeTarget {
    pub index: usize,
    pub vehicle: String,
    pub netns: String,
    pub domain_id: Option<u32>,
}

impl VehicleBridges {
    /// Starts `exe ros-vehicle-bridge --netns <ns> --vehicle <name>` for every target whose
    /// namespace exists; targets without one are skipped (and logged). Returns once every
    /// bridge said `ready`.
    pub fn spawn(
        exe: &Path,
        targets: &[BridgeTarget],
        wait_for_subscribers: u32,
    ) -> anyhow::Result<VehicleBridges> {
        let mut bridges = Vec::new();
        for t in targets {
            let (index, vehicle, ns) = (t.index, &t.vehicle, &t.netns);
            if !netns_path(ns).exists() {
                tracing::info!("no network namespace {ns}: no ROS bridge for {vehicle}");
                continue;
            }
            let mut command = Command::new(exe);
            command
                .args(["ros-vehicle-bridge", "--netns", ns, "--vehicle", vehicle])
                .args(["--wait-for-subscribers", &wait_for_subscribers.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped());
            if let Some(d) = t.domain_id {
                command.env("ROS_DOMAIN_ID", d.to_string());
            }
            let mut child = command.spawn().with_context(|| {
                format!("starting the ROS bridge for {vehicle} ({})", exe.display())
            })?;
            let stdin = child.stdin.take();
            let mut ready = String::new();
            std::io::BufRead::read_line(
                &mut std::io::BufReader::new(child.stdout.take().expect("piped")),
                &mut ready,
            )?;
            if ready.trim() != "ready" {
                let _ = child.kill();
                let status = child.wait()?;
                anyhow::bail!(
                    "the ROS bridge for {vehicle} in namespace {ns} did not start ({status})"
                );
            }
            tracing::info!(
                "ROS bridge for {vehicle} in namespace {ns}: pid {}",
                child.id()
            );
            bridges.push(Bridge {
                index,
                vehicle: vehicle.clone(),
                child,
                stdin,
            });
        }
        Ok(VehicleBridges { bridges })
    }

    pub fn len(&self) -> usize {
        self.bridges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bridges.is_empty()
    }
}

impl Participant for VehicleBridges {
    fn window(&mut self, view: &WindowView<'_>, _ended: &mut Ended) -> anyhow::Result<()> {
        for b in &mut self.bridges {
            let Some(pose) = view.open.channel.pose(b.index) else {
                continue;
            };
            let sample = VehicleSample {
                window: view.open.window,
                start_ns: view.open.start_ns,
                pose,
            };
            if let Some(stdin) = &mut b.stdin {
                stdin
                    .write_all(sample.to_line().as_bytes())
                    .with_context(|| {
                        format!(
                            "ROS bridge for {} (pid {}) stopped reading",
                            b.vehicle,
                            b.child.id()
                        )
                    })?;
            }
        }
        Ok(())
    }

    fn stop(&mut self) {
        for b in &mut self.bridges {
            b.stdin.take(); // end of input: the bridge publishes what it has and exits
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for b in &mut self.bridges {
            while matches!(b.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(b.child.try_wait(), Ok(None)) {
                tracing::warn!("ROS bridge for {} did not exit; killing it", b.vehicle);
                let _ = b.child.kill();
                let _ = b.child.wait();
            }
        }
    }
}

impl Drop for VehicleBridges {
    fn drop(&mut self) {
        for b in &mut self.bridges {
            if b.stdin.take().is_some() || matches!(b.child.try_wait(), Ok(None)) {
                let _ = b.child.kill();
                let _ = b.child.wait();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let s = VehicleSample {
            window: 7,
            start_ns: 70_000_000,
            pose: [1.5, -2.0, -30.25, 1.0, 0.0, 0.0, 0.0],
        };
        assert_eq!(VehicleSample::parse(&s.to_line()).unwrap(), s);
        assert!(VehicleSample::parse("1 2 3").is_err());
        assert!(VehicleSample::parse("x 0 0 0 0 1 0 0 0").is_err());
    }

    #[test]
    fn namespace_names() {
        assert_eq!(namespace_name("ncs-{vehicle}", "auv1"), "ncs-auv1");
        assert_eq!(netns_path("ncs-auv1"), PathBuf::from("/run/netns/ncs-auv1"));
    }
}
