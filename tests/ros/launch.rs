//! The ROS 2 package as `colcon build` installs it: every launch file in `launch/` (Python read
//! with `ast`, XML with an XML parser, by tests/ros/launch_files.py) names executables the
//! package installs, parameters the nodes read and files the package installs; every file a shipped
//! scenario refers to (terrain, the programs it runs, its schema) is installed beside it; the
//! shipped parameter file overrides no scenario's value; the project files agree on version and
//! licence. `ros2 launch` itself cannot run here (no launch_ros on PyPI). The installed layout
//! comes from CMake's own install into a temporary prefix when CMake and ament_cmake are
//! there, else from CMakeLists.txt's `install(DIRECTORY ...)` lines.

use netsim_cosim::ros::params::{Param, RunParams, NAMES};
use serde_json::Value;
use std::{
    collections::BTreeSet,
    path::{Component, Path, PathBuf},
    process::Command,
};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `[[bin]]` names in Cargo.toml that CMakeLists.txt also installs.
fn installed_executables() -> BTreeSet<String> {
    let cargo = read("Cargo.toml");
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
    let cmake = read("CMakeLists.txt");
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

/// Every file below `dir` (relative to the repository, `/`-separated).
fn files_below(dir: &Path, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_below(&p, out);
        } else if let Ok(rel) = p.strip_prefix(repo()) {
            out.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The folders `install(DIRECTORY a b c DESTINATION share/${PROJECT_NAME} ...)` installs.
fn install_directories(cmake: &str) -> Vec<String> {
    let mut dirs = Vec::new();
    let mut rest = cmake;
    while let Some(i) = rest.find("install(DIRECTORY") {
        let call = &rest[i + "install(DIRECTORY".len()..];
        let end = call.find(')').expect("install(DIRECTORY ...) closes");
        let words: Vec<&str> = call[..end].split_whitespace().collect();
        let dest = words
            .iter()
            .position(|w| *w == "DESTINATION")
            .expect("install(DIRECTORY ... DESTINATION ...)");
        assert_eq!(
            words.get(dest + 1),
            Some(&"share/${PROJECT_NAME}"),
            "{}",
            &call[..end]
        );
        dirs.extend(
            words[..dest]
                .iter()
                .map(|w| w.trim_end_matches('/').to_owned()),
        );
        rest = &call[end..];
    }
    dirs
}

/// Whether CMake and ament_cmake (on CMAKE_PREFIX_PATH or AMENT_PREFIX_PATH) are there.
fn cmake_with_ament() -> bool {
    let has_cmake = Command::new("cmake")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let prefixes = ["CMAKE_PREFIX_PATH", "AMENT_PREFIX_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .flat_map(|v| std::env::split_paths(&v).collect::<Vec<_>>());
    has_cmake && {
        let mut p = prefixes;
        p.any(|p| p.join("share/ament_cmake/cmake").is_dir())
    }
}

/// The files the package installs under share/netsim_cosim, relative to it.
fn installed_share_files() -> BTreeSet<String> {
    static FILES: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    FILES
        .get_or_init(|| {
            if cmake_with_ament() {
                cmake_install()
            } else {
                eprintln!("no CMake with ament_cmake: the installed layout from CMakeLists.txt's install(DIRECTORY) lines");
                let mut files = BTreeSet::new();
                for d in install_directories(&read("CMakeLists.txt")) {
                    files_below(&repo().join(d), &mut files);
                }
                files
            }
        })
        .clone()
}

/// Configures the package with CMake (ament_cmake) and installs it into a temporary prefix;
/// the cargo build is not run (the executables are stand-ins where it would put them).
fn cmake_install() -> BTreeSet<String> {
    let tmp = tempfile::tempdir().unwrap();
    let (build, prefix) = (tmp.path().join("build"), tmp.path().join("prefix"));
    let o = Command::new("cmake")
        .arg("-S")
        .arg(repo())
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_INSTALL_PREFIX={}", prefix.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cmake configure: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let release = build.join("cargo/release");
    std::fs::create_dir_all(&release).unwrap();
    for exe in installed_executables() {
        std::fs::write(release.join(exe), "").unwrap();
    }
    let o = Command::new("cmake")
        .arg("--install")
        .arg(&build)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cmake --install: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    for exe in installed_executables() {
        assert!(
            prefix.join("lib/netsim_cosim").join(&exe).is_file(),
            "{exe} not installed"
        );
    }
    let share = prefix.join("share/netsim_cosim");
    let mut files = BTreeSet::new();
    collect(&share, &share, &mut files);
    files
}

fn collect(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(root, &p, out);
        } else {
            out.insert(
                p.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

/// `base/rel` as a path relative to the repository (`..` resolved); `None` outside it.
fn package_path(base: &Path, rel: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in base.join(rel).strip_prefix(repo()).ok()?.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// The shipped scenarios: every `config/*.yaml`.
fn scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("config"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    files
}

/// What a scenario refers to, as (key, path relative to `base`, the folder it is relative to):
/// its `$schema`, terrain `path`s, `program`s, programs' `cwd` and the relative paths in their
/// commands.
fn references(file: &Path) -> Vec<(String, String, PathBuf)> {
    let dir = file.parent().unwrap().to_path_buf();
    let text = std::fs::read_to_string(file).unwrap();
    let mut refs = Vec::new();
    for line in text.lines() {
        if let Some(s) = line.split("$schema=").nth(1) {
            let s = s.trim();
            if !s.contains("://") {
                refs.push(("$schema".to_owned(), s.to_owned(), dir.clone()));
            }
        }
    }
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    fn walk(
        v: &serde_yaml::Value,
        key: &str,
        dir: &Path,
        refs: &mut Vec<(String, String, PathBuf)>,
    ) {
        match v {
            serde_yaml::Value::Mapping(m) => {
                // A program's command is relative to its cwd (this file's folder by default).
                let cwd = m
                    .get("cwd")
                    .and_then(|c| c.as_str())
                    .map_or(dir.to_path_buf(), |c| dir.join(c));
                for (k, v) in m {
                    let k = k.as_str().unwrap_or_default();
                    let base = if k == "command" { &cwd } else { dir };
                    walk(v, k, base, refs);
                }
            }
            serde_yaml::Value::Sequence(s) => {
                for v in s {
                    walk(v, key, dir, refs);
                }
            }
            serde_yaml::Value::String(s) => match key {
                "path" | "program" | "cwd" => {
                    refs.push((key.to_owned(), s.clone(), dir.to_path_buf()))
                }
                "command" => {
                    for word in s.split_whitespace() {
                        let word = word.rsplit('=').next().unwrap_or(word);
                        let word = word.trim_matches(|c| c == '"' || c == '\'');
                        if word.contains('/') && !word.contains(':') && !word.starts_with('/') {
                            refs.push((key.to_owned(), word.to_owned(), dir.to_path_buf()));
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    walk(&doc, "", &dir, &mut refs);
    refs
}

#[test]
fn every_file_a_shipped_scenario_refers_to_is_installed_beside_it() {
    let installed = installed_share_files();
    let mut checked = BTreeSet::new();
    for file in scenarios() {
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        assert!(installed.contains(&name), "{name} is not installed");
        for (key, rel, base) in references(&file) {
            let path = package_path(&base, &rel)
                .unwrap_or_else(|| panic!("{name}: {key} {rel} is outside the package"));
            let source = repo().join(&path);
            assert!(
                source.exists(),
                "{name}: {key} {rel}: {path} does not exist"
            );
            let ok = if source.is_dir() {
                installed.iter().any(|f| f.starts_with(&format!("{path}/")))
            } else {
                installed.contains(&path)
            };
            assert!(
                ok,
                "{name}: {key} {rel}: {path} is not installed (CMakeLists.txt install())"
            );
            checked.insert(path);
        }
    }
    // The shipped scenarios run the examples and read the terrain files.
    for f in [
        "examples/listener.py",
        "examples/talker.py",
        "examples/auv_client.py",
        "config/terrain/ridge.csv",
    ] {
        assert!(
            checked.contains(f),
            "no scenario refers to {f}: {checked:?}"
        );
    }
}

#[test]
fn launch_files_name_what_exists() {
    let out = Command::new("python3")
        .arg(repo().join("tests/ros/launch_files.py"))
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
    let installed = installed_share_files();
    for (file, content) in files {
        assert!(
            installed.contains(&format!("launch/{file}")),
            "launch/{file} is not installed"
        );
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
                assert!(NAMES.contains(&p), "{file}: unknown parameter {p}");
            }
        }
        for path in content["files"].as_array().unwrap() {
            let path = path.as_str().unwrap();
            assert!(repo().join(path).is_file(), "{file}: {path} does not exist");
            assert!(
                installed.contains(path),
                "{file}: {path} is not installed (CMakeLists.txt install())"
            );
        }
        let named: Vec<&str> = content["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!named.is_empty(), "{file}: names no package file");
        assert!(
            named.contains(&"params/params.yaml"),
            "{file}: its params_file default is not params/params.yaml: {named:?}"
        );
    }
}

/// `params/params.yaml`'s parameters for node `node`, as rcl gives them: the `/**` section,
/// then the node's own (which wins).
fn params_file_values(node: &str) -> serde_yaml::Mapping {
    let doc: serde_yaml::Value = serde_yaml::from_str(&read("params/params.yaml")).unwrap();
    let mut values = serde_yaml::Mapping::new();
    for section in ["/**".to_owned(), node.to_owned(), format!("/{node}")] {
        if let Some(m) = doc[section.as_str()]["ros__parameters"].as_mapping() {
            for (k, v) in m {
                values.insert(k.clone(), v.clone());
            }
        }
    }
    values
}

fn param_of(values: &serde_yaml::Mapping, name: &str) -> Param {
    match values.get(name) {
        None => Param::NotSet,
        Some(serde_yaml::Value::Number(n)) => Param::Number(n.as_f64().unwrap()),
        Some(serde_yaml::Value::String(s)) => Param::Text(s.clone()),
        Some(other) => Param::Other(format!("{other:?}")),
    }
}

#[test]
fn params_file_names_known_parameters() {
    let text = read("params/params.yaml");
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let params = doc["/**"]["ros__parameters"]
        .as_mapping()
        .expect("/**: ros__parameters:");
    for k in params.keys() {
        let k = k.as_str().unwrap();
        assert!(
            NAMES.contains(&k),
            "params/params.yaml: unknown parameter {k}"
        );
    }
    assert!(params.contains_key("scenario"));
    // What a scenario says is left to it: shown as commented examples only.
    for k in ["real_time_factor", "window_ms"] {
        assert!(!params.contains_key(k), "params/params.yaml sets {k}");
        assert!(text.contains(&format!("# {k}: ")), "no example of {k}");
    }
    // The parameter file is not among the scenarios.
    assert!(!repo().join("config/params.yaml").exists());
}

#[test]
fn the_shipped_params_file_overrides_no_scenario_value() {
    for node in ["netsim_cosim", "physics_coordinator", "network_coordinator"] {
        let values = params_file_values(node);
        let params = RunParams::read(|name| param_of(&values, name)).unwrap();
        assert_eq!(
            (params.real_time_factor, params.window_ms, &params.out),
            (None, None, &None),
            "{node}"
        );
        for file in scenarios() {
            let mut loaded = netsim_cosim::config::load(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let (rtf, schedule) = (loaded.scenario.real_time_factor, loaded.schedule());
            params.apply(&mut loaded).unwrap();
            assert_eq!(
                (loaded.scenario.real_time_factor, loaded.schedule()),
                (rtf, schedule),
                "{node}: {} under params/params.yaml",
                file.display()
            );
        }
    }
    // A file that does set it overrides every scenario's.
    let mut values = serde_yaml::Mapping::new();
    values.insert("real_time_factor".into(), 2.5.into());
    let params = RunParams::read(|name| param_of(&values, name)).unwrap();
    let mut loaded = netsim_cosim::config::load(&repo().join("config/patrol.yaml")).unwrap();
    params.apply(&mut loaded).unwrap();
    assert_eq!(loaded.scenario.real_time_factor, 2.5);
}

/// rcl itself reads the shipped file: the node sees no real_time_factor or window_ms.
#[cfg(feature = "ros")]
#[test]
fn a_node_started_with_the_shipped_params_file_keeps_the_scenario_s_values() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_network_coordinator"));
    cmd.args(["--bind", "tcp://127.0.0.1:0", "--idle-timeout-s", "0.5"])
        .args(["--ros-args", "--params-file"])
        .arg(repo().join("params/params.yaml"))
        .arg("-p")
        .arg(format!(
            "scenario:={}",
            repo().join("config/patrol.yaml").display()
        ))
        .env("ROS_DOMAIN_ID", (90 + std::process::id() % 10).to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ROS 2 node /network_coordinator"), "{err}");
    assert!(
        err.contains("window_ms: None") && err.contains("real_time_factor: None"),
        "{err}"
    );
    assert!(err.contains("no request for 0.5 s"), "{err}");
}

/// The `version: x` of a file's first line starting with `key`.
fn quoted_after(text: &str, key: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(key))
        .unwrap_or_else(|| panic!("no {key}"));
    line[line.find(key).unwrap() + key.len()..]
        .trim()
        .trim_matches(|c| c == '"' || c == '\'' || c == '=' || c == ' ')
        .to_owned()
}

#[test]
fn project_files_agree_on_version_and_licence() {
    let cargo = quoted_after(&read("Cargo.toml"), "version =");
    let package = read("package.xml");
    let xml_version = package
        .split("<version>")
        .nth(1)
        .and_then(|v| v.split("</version>").next())
        .unwrap();
    let cff: serde_yaml::Value = serde_yaml::from_str(&read("CITATION.cff")).unwrap();
    assert_eq!(cff["cff-version"].as_str(), Some("1.2.0"));
    for key in ["message", "title", "version", "license", "authors"] {
        assert!(!cff[key].is_null(), "CITATION.cff: no {key}");
    }
    let cff_version = match &cff["version"] {
        serde_yaml::Value::String(s) => s.clone(),
        other => panic!("CITATION.cff: version {other:?} is not a string"),
    };
    assert_eq!(
        (cargo.as_str(), xml_version),
        (cff_version.as_str(), cff_version.as_str()),
        "Cargo.toml, package.xml and CITATION.cff versions"
    );
    assert!(cff["authors"][0]["name"].as_str().is_some());
    // One licence, and its text.
    assert_eq!(quoted_after(&read("Cargo.toml"), "license ="), "Apache-2.0");
    assert!(package.contains("<license>Apache-2.0</license>"));
    assert_eq!(cff["license"].as_str(), Some("Apache-2.0"));
    let license = read("LICENSE");
    assert!(
        license.trim_start().starts_with("Apache License")
            && license.contains("Version 2.0, January 2004")
            && license.contains("END OF TERMS AND CONDITIONS"),
        "LICENSE is not the Apache License 2.0"
    );
    // The changelog has this version's entry.
    let changelog = read("CHANGELOG.md");
    assert!(
        changelog.contains(&format!("## [{cargo}]")),
        "CHANGELOG.md: no entry for {cargo}"
    );
}
