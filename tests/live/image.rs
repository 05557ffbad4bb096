//! The cosim image (`Containerfile`): podman builds it on Debian 12 with its ROS 2 layer, then it
//! runs the physics-only patrol with no capability at all, and a live scenario — two vehicles
//! whose ping crosses the simulated link through TUN devices — as a user without root inside the
//! container, in a user namespace of the run's own, with `/dev/net/tun` passed in and podman's
//! masks over /proc and /sys lifted (`unmask=ALL`: the run mounts a /proc and a /sys of its
//! own, which the kernel refuses over partly masked ones). Both end with their windows all run
//! and, the live one, a balanced ledger.
//!
//! No registry is reachable here: the base images the Containerfile names are made from Debian's
//! mirror and this machine's Rust toolchain (`tests/image/base-images`). The first build compiles
//! cosim with ROS 2 in the container (35 min on two cores beside other work); later builds
//! compile what changed (cargo's artifacts are kept in a build cache: 10 min after a change to
//! the crate). Needs root, podman with
//! runc and mmdebstrap (`scripts/setup --test`).

use std::path::Path;
use std::process::{Command, Output};

use crate::common;

const IMAGE: &str = "localhost/netsim-cosim-test";
const SETUP: &str = "scripts/setup --test installs it";
/// A user without root inside the container (Debian's `nobody`).
const NOBODY: &str = "65534:65534";

/// `podman run` of the image with the limits this machine allows and `out` mounted at /out,
/// writable by anyone.
fn run_image(out: &Path, options: &[&str], args: &[&str]) -> Output {
    std::fs::set_permissions(out, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    common::podman()
        .args(["run", "--rm", "-v"])
        .arg(format!("{}:/out", out.display()))
        .args(common::PODMAN_LIMITS)
        .args(options)
        .arg(IMAGE)
        .args(args)
        .output()
        .unwrap()
}

fn summary(out: &Path) -> serde_json::Value {
    let file = out.join("summary.json");
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// Builds the image from this tree (base images first, made once).
fn build() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base = Command::new(root.join("tests/image/base-images"))
        .output()
        .unwrap();
    assert!(
        base.status.success(),
        "base images: {}",
        common::output_text(&base)
    );
    let args = String::from_utf8(base.stdout).unwrap();
    let t0 = std::time::Instant::now();
    let built = common::podman()
        .args(["build", "--network", "host", "-t", IMAGE])
        .args(common::PODMAN_LIMITS)
        .args(args.split_whitespace())
        .arg(root)
        .output()
        .unwrap();
    let log = common::output_text(&built);
    let tail: Vec<&str> = log.lines().rev().take(60).collect();
    assert!(
        built.status.success(),
        "podman build: …\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    println!("image built in {:.0} s", t0.elapsed().as_secs_f64());
}

#[test]
fn the_image_builds_and_runs_a_physics_only_and_a_live_scenario_without_root() {
    let _serial = common::require_root();
    common::require_tools(&["podman", "runc", "mmdebstrap"], SETUP);
    build();

    // Physics only: no capability, no network, a user without root.
    let dir = tempfile::tempdir().unwrap();
    let o = run_image(
        dir.path(),
        &["--cap-drop", "ALL", "--network", "none", "--user", NOBODY],
        &["run", "config/patrol.yaml", "--out", "/out/patrol"],
    );
    assert!(
        o.status.success(),
        "patrol in the image: {}",
        common::output_text(&o)
    );
    let s = summary(&dir.path().join("patrol"));
    assert_eq!(s["windows"], 6000, "{s}");
    assert_eq!(s["interrupted"], false, "{s}");
    assert_eq!(s["pairs"].as_array().map(Vec::len), Some(3), "{s}");
    assert!(dir.path().join("patrol/record.mcap").is_file());

    // Live: the same user, the vehicles' namespaces in a user namespace of the run's own; the
    // TUN device passed in, and /proc and /sys not partly masked (the run mounts its own).
    let scenario = "name: image_live\nwindow_ms: 10\nduration_s: 4\nreal_time_factor: 1\n\
        world:\n  origin: {lat_deg: 41.5, lon_deg: -70.6}\n  terrain: {kind: procedural, size_m: [200, 200], cell_size_m: 10, base_height_m: -60}\n\
        vehicles:\n\
        \x20 - {name: ia, addresses: [10.95.0.1/24], start: {x: 0, y: 0, z: -10}, motion: {kind: stationary}}\n\
        \x20 - {name: ib, addresses: [10.95.0.2/24], start: {x: 10, y: 0, z: -10}, motion: {kind: stationary}}\n\
        network: {capture: tun}\n\
        programs:\n\
        \x20 - {name: ping, vehicle: ia, command: 'ping -c 10 -i 0.2 10.95.0.2'}\n";
    std::fs::write(dir.path().join("live.yaml"), scenario).unwrap();
    let o = run_image(
        dir.path(),
        &[
            "--network",
            "none",
            "--user",
            NOBODY,
            "--device",
            "/dev/net/tun",
            "--security-opt",
            "unmask=ALL",
        ],
        &["run", "/out/live.yaml", "--out", "/out/live"],
    );
    assert!(
        o.status.success(),
        "the live scenario in the image: {}",
        common::output_text(&o)
    );
    let s = summary(&dir.path().join("live"));
    assert_eq!(s["windows"], 400, "{s}");
    let net = &s["network"];
    let n = |k: &str| {
        net[k]
            .as_u64()
            .unwrap_or_else(|| panic!("network.{k}: {s}"))
    };
    assert_eq!(net["balanced"], true, "{s}");
    assert_eq!(
        n("captured"),
        n("delivered") + n("dropped") + n("in_flight"),
        "{s}"
    );
    // Ten echo requests and their replies: at least the requests crossed.
    assert!(n("delivered") >= 10, "{s}");
    let ping = s["programs"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "ping"))
        .unwrap_or_else(|| panic!("no program ping: {s}"));
    assert_eq!(ping["exit_code"], 0, "ping in ia: {ping}");
}
