//! Every launch file in `launch/` (Python read with `ast`, XML with an XML parser, by
//! test/launch_files.py) names executables the package installs, parameters the nodes read
//! and files the package ships. `ros2 launch` itself cannot run here (no launch_ros on PyPI).

use serde_json::Value;
use std::{collections::BTreeSet, path::Path, process::Command};

const PARAMETERS: [&str; 7] = [
    "scenario",
    "window_ms",
    "out",
    "real_time_factor",
    "wait_for_subscribers",
    "bridge_wait_for_subscribers",
    "use_sim_time",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `[[bin]]` names in Cargo.toml that CMakeLists.txt also installs.
fn installed_executables() -> BTreeSet<String> {
    let cargo = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let bins: BTreeSet<String> = cargo
        .split("[[bin]]")
        .skip(1)
        .filter_map(|b| {
            b.lines()
                .find(|l| l.starts_with("name"))
                .and_then(|l| l.split('"').nth(1))
                .map(String::from)
        })
        .collect();
    let cmake = std::fs::read_to_string(repo().join("CMakeLists.txt")).unwrap();
    let line = cmake
        .lines()
        .find(|l| l.starts_with("set(EXECUTABLES"))
        .expect("set(EXECUTABLES ...) in CMakeLists.txt");
    let installed: BTreeSet<String> = line
        .trim_end_matches(')')
        .split_whitespace()
        .skip(1)
        .map(String::from)
        .collect();
    assert_eq!(
        bins, installed,
        "Cargo [[bin]]s and CMake-installed executables differ"
    );
    bins
}

#[test]
fn launch_files_name_what_exists() {
    let out = Command::new("python3")
        .arg(repo().join("tests/launch_files.py"))
        .arg(repo())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = files.as_object().unwrap();
    for f in [
        "cosim.launch.py",
        "cosim.launch.xml",
        "coordinators.launch.py",
        "coordinators.launch.xml",
        "gazebo.launch.py",
        "gazebo.launch.xml",
    ] {
        assert!(files.contains_key(f), "launch/{f} missing");
    }
    let exes = installed_executables();
    let cmake = std::fs::read_to_string(repo().join("CMakeLists.txt")).unwrap();
    for (file, content) in files {
        let nodes = content["nodes"].as_array().unwrap();
        assert!(!nodes.is_empty(), "{file}: no node");
        for n in nodes {
            // Gazebo's launch files also start ros_gz_bridge, with its own parameters.
            if n["package"] == "ros_gz_bridge" {
                assert_eq!(
                    (n["executable"].as_str(), n["name"].as_str()),
                    (Some("parameter_bridge"), Some("gazebo_bridge")),
                    "{file}"
                );
                for p in n["parameters"].as_array().unwrap() {
                    assert!(
                        ["config_file", "use_sim_time"].contains(&p.as_str().unwrap()),
                        "{file}: parameter_bridge has no parameter {p}"
                    );
                }
                continue;
            }
            assert_eq!(n["package"], "netsim_cosim", "{file}");
            let exe = n["executable"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}: executable not a literal"));
            assert!(
                exes.contains(exe),
                "{file}: executable {exe} is not installed"
            );
            let name = n["name"].as_str().unwrap();
            let expected = if exe == "cosim" { "netsim_cosim" } else { exe };
            assert_eq!(name, expected, "{file}: node name");
            for p in n["parameters"].as_array().unwrap() {
                let p = p.as_str().unwrap();
                assert!(PARAMETERS.contains(&p), "{file}: unknown parameter {p}");
            }
        }
        for path in content["files"].as_array().unwrap() {
            let path = path.as_str().unwrap();
            assert!(repo().join(path).is_file(), "{file}: {path} does not exist");
            let dir = path.split('/').next().unwrap();
            assert!(
                cmake.contains(&format!("install(DIRECTORY launch config"))
                    && ["launch", "config"].contains(&dir),
                "{file}: {path} is not installed"
            );
        }
        assert!(
            !content["files"].as_array().unwrap().is_empty(),
            "{file}: names no package file"
        );
    }
}

#[test]
fn params_file_names_known_parameters() {
    let text = std::fs::read_to_string(repo().join("config/params.yaml")).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let params = doc["/**"]["ros__parameters"]
        .as_mapping()
        .expect("/**: ros__parameters:");
    for k in params.keys() {
        let k = k.as_str().unwrap();
        assert!(
            PARAMETERS.contains(&k),
            "config/params.yaml: unknown parameter {k}"
        );
    }
    assert!(params.contains_key("real_time_factor") && params.contains_key("scenario"));
}
