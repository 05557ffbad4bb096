//! The scenario loader: located errors, validation rules, shipped scenarios, source map.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use netsim_cosim::config::{self, ConfigError, LoadedScenario, SourceMap, Terrain};

/// A small valid scenario; tests edit single lines, so its line numbers matter.
const BASE: &str = "\
name: test
window_ms: 10
duration_s: 5
world:
  origin: {lat_deg: 41.5, lon_deg: -70.6}
  terrain:
    kind: procedural
    size_m: [200, 200]
    cell_size_m: 2
    base_height_m: -50
vehicles:
  - name: a
    addresses: [10.0.0.1/24]
    modem: {tcp_port: 62000, id: 1}
    start: {x: 0, y: 0, z: -10}
    motion:
      kind: patrol
      speed_mps: 1.5
      max_turn_rate_deg_s: 15
      max_depth_rate_mps: 0.5
      waypoints:
        - [10, 0, -10]
        - [20, 0, -10]
  - name: b
    addresses:
      - 10.0.0.2/24
      - fd00::2/64
    modem: {tcp_port: 62001, id: 2}
    start: {x: 0, y: 10, z: -10}
    motion:
      kind: patrol
      speed_mps: 1.5
      max_turn_rate_deg_s: 15
      max_depth_rate_mps: 0.5
      waypoints:
        - [0, 20, -10]
        - [0, 30, -10]
        - [-30, 30, -10]
        - [-30, 20, -10]
";

const FILE: &str = "scenarios/test.yaml";

/// BASE with 1-based line `line` replaced by `text` (which may hold several lines).
fn replace_line(line: usize, text: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[line - 1] = text;
    lines.join("\n") + "\n"
}

/// BASE with 1-based lines `from..=to` replaced by `text`.
fn replace_lines(from: usize, to: usize, text: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines.splice(from - 1..to, [text]);
    lines.join("\n") + "\n"
}

/// BASE with `text` inserted after 1-based line `line`.
fn insert_after(line: usize, text: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines.insert(line, text);
    lines.join("\n") + "\n"
}

fn parse(text: &str) -> Result<LoadedScenario, ConfigError> {
    config::parse_str(text, Path::new(FILE))
}

fn error(text: &str) -> ConfigError {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

#[track_caller]
fn assert_error(err: &ConfigError, key_path: &str, line: usize) {
    assert_eq!(err.file, PathBuf::from(FILE), "{err}");
    assert_eq!(err.key_path, key_path, "{err}");
    assert_eq!(err.line, Some(line), "{err}");
}

#[test]
fn base_scenario_is_valid() {
    let loaded = parse(BASE).unwrap();
    assert_eq!(loaded.scenario.vehicles.len(), 2);
    assert_eq!(loaded.scenario.nice, -5);
    assert_eq!(loaded.file, PathBuf::from(FILE));
    assert_eq!(
        loaded.source.line_of("vehicles[1].motion.waypoints[2]"),
        Some(38)
    );
}

#[test]
fn unknown_key_at_top_level() {
    let err = error(&insert_after(3, "bogus: 1"));
    assert_error(&err, "bogus", 4);
    assert!(err.message.contains("unknown field `bogus`"), "{err}");
}

#[test]
fn unknown_key_inside_motion() {
    // `motion` is an internally tagged enum: serde's own path stops at `motion`.
    let err = error(&insert_after(32, "      sped: 2"));
    assert_error(&err, "vehicles[1].motion.sped", 33);
    assert!(err.message.contains("unknown field `sped`"), "{err}");
}

#[test]
fn unknown_key_inside_flow_mapping() {
    let err = error(&replace_line(29, "    start: {x: 0, y: 10, zz: -10}"));
    assert_error(&err, "vehicles[1].start.zz", 29);
}

#[test]
fn wrong_type_string_for_number() {
    let err = error(&replace_line(2, "window_ms: ten"));
    assert_error(&err, "window_ms", 2);
    assert!(
        err.message.contains("invalid type: string \"ten\""),
        "{err}"
    );

    let err = error(&replace_line(32, "      speed_mps: fast"));
    assert_error(&err, "vehicles[1].motion.speed_mps", 32);

    let err = error(&replace_line(29, "    start: {x: 0, y: north, z: -10}"));
    assert_error(&err, "vehicles[1].start.y", 29);
}

#[test]
fn wrong_length_waypoint() {
    let err = error(&replace_line(37, "        - [0, 30]"));
    assert_error(&err, "vehicles[1].motion.waypoints[1]", 37);
}

#[test]
fn unknown_kind_names_the_tag() {
    let err = error(&replace_line(31, "      kind: patroll"));
    assert_error(&err, "vehicles[1].motion.kind", 31);
}

#[test]
fn missing_field_names_the_mapping() {
    let err = error(&replace_line(32, "      # no speed"));
    assert_error(&err, "vehicles[1].motion", 30);
    assert!(err.message.contains("missing field `speed_mps`"), "{err}");
}

#[test]
fn duplicate_ip_across_vehicles() {
    let err = error(&replace_line(26, "      - 10.0.0.1/24"));
    assert_error(&err, "vehicles[1].addresses[0]", 26);
    assert!(
        err.message.contains("vehicles[0].addresses[0] (line 13)"),
        "{err}"
    );
}

#[test]
fn duplicate_ip_with_other_prefix() {
    let err = error(&replace_line(26, "      - 10.0.0.1/16"));
    assert_error(&err, "vehicles[1].addresses[0]", 26);
    assert!(err.message.contains("10.0.0.1"), "{err}");

    // The same IPv6 address written differently.
    let err = error(&insert_after(27, "      - fd00:0:0::2/128"));
    assert_error(&err, "vehicles[1].addresses[2]", 28);
    assert!(
        err.message.contains("vehicles[1].addresses[1] (line 27)"),
        "{err}"
    );
}

#[test]
fn invalid_addresses() {
    for (bad, why) in [
        ("10.0.0.2", "IP/prefix"),
        ("10.0.0.2/33", "longer than 32"),
        ("fd00::2/129", "longer than 128"),
        ("10.0.0.300/24", "not an IP"),
        ("127.0.0.1/8", "unicast"),
        ("0.0.0.0/0", "unicast"),
        ("224.0.0.1/24", "unicast"),
        ("::1/128", "unicast"),
    ] {
        let err = error(&replace_line(26, &format!("      - {bad}")));
        assert_error(&err, "vehicles[1].addresses[0]", 26);
        assert!(err.message.contains(why), "{bad}: {err}");
    }
    let err = error(&replace_line(13, "    addresses: []"));
    assert_error(&err, "vehicles[0].addresses", 13);
}

#[test]
fn out_of_world_waypoint() {
    // The world is 200 m × 200 m: x and y within ±100 m.
    let err = error(&replace_line(38, "        - [-130, 30, -10]"));
    assert_error(&err, "vehicles[1].motion.waypoints[2]", 38);
    assert!(err.message.contains("outside"), "{err}");

    let err = error(&replace_line(29, "    start: {x: 0, y: 100.5, z: -10}"));
    assert_error(&err, "vehicles[1].start", 29);
}

#[test]
fn check_inside_world_for_file_terrains() {
    let loaded = parse(BASE).unwrap();
    loaded.check_inside_world([30.0, 30.0]).unwrap();
    let err = loaded.check_inside_world([25.0, 30.0]).unwrap_err();
    assert_error(&err, "vehicles[1].motion.waypoints[2]", 38);
}

#[test]
fn duplicate_vehicle_name() {
    let err = error(&replace_line(24, "  - name: a"));
    assert_error(&err, "vehicles[1].name", 24);
    assert!(err.message.contains("vehicles[0].name (line 12)"), "{err}");
}

#[test]
fn bad_vehicle_names() {
    for bad in ["\"\"", "Auv", "auv.1", "a_very_long_name"] {
        let err = error(&replace_line(24, &format!("  - name: {bad}")));
        assert_error(&err, "vehicles[1].name", 24);
    }
    let err = error(&replace_line(1, "name: my test"));
    assert_error(&err, "name", 1);
}

#[test]
fn duplicate_modem_port() {
    let err = error(&replace_line(28, "    modem: {tcp_port: 62000, id: 2}"));
    assert_error(&err, "vehicles[1].modem.tcp_port", 28);
    assert_eq!(err.column, Some(13), "{err}");
    assert!(
        err.message.contains("vehicles[0].modem.tcp_port (line 14)"),
        "{err}"
    );
}

#[test]
fn bad_modem_ids_and_ports() {
    let err = error(&replace_line(28, "    modem: {tcp_port: 62001, id: 1}"));
    assert_error(&err, "vehicles[1].modem.id", 28);
    let err = error(&replace_line(28, "    modem: {tcp_port: 62001, id: 128}"));
    assert_error(&err, "vehicles[1].modem.id", 28);
    let err = error(&replace_line(28, "    modem: {tcp_port: 0, id: 2}"));
    assert_error(&err, "vehicles[1].modem.tcp_port", 28);
}

#[test]
fn window_must_be_positive() {
    for bad in ["0", "-10", ".nan", ".inf"] {
        let err = error(&replace_line(2, &format!("window_ms: {bad}")));
        assert_error(&err, "window_ms", 2);
    }
    let err = error(&replace_line(3, "duration_s: 0.005"));
    assert_error(&err, "duration_s", 3);
}

#[test]
fn other_numeric_rules() {
    // (first line, last line) replaced by text; expected key path and line.
    let cases: &[((usize, usize), &str, &str, usize)] = &[
        ((3, 3), "duration_s: 5\nreal_time_factor: -1", "real_time_factor", 4),
        ((3, 3), "duration_s: 5\nnice: -21", "nice", 4),
        ((3, 3), "duration_s: 5\nnice: 20", "nice", 4),
        ((3, 3), "duration_s: 5\nrealtime_priority: 0", "realtime_priority", 4),
        ((3, 3), "duration_s: 5\nrealtime_priority: 100", "realtime_priority", 4),
        ((9, 9), "    cell_size_m: 0", "world.terrain.cell_size_m", 9),
        ((9, 9), "    cell_size_m: 0.01", "world.terrain.cell_size_m", 9),
        ((8, 8), "    size_m: [200, -1]", "world.terrain.size_m[1]", 8),
        ((18, 18), "      speed_mps: 0", "vehicles[0].motion.speed_mps", 18),
        ((19, 19), "      max_turn_rate_deg_s: -3", "vehicles[0].motion.max_turn_rate_deg_s", 19),
        ((20, 20), "      max_depth_rate_mps: .inf", "vehicles[0].motion.max_depth_rate_mps", 20),
        (
            (23, 23),
            "        - [20, 0, -10]\n      capture_radius_m: 0",
            "vehicles[0].motion.capture_radius_m",
            24,
        ),
        ((21, 23), "      waypoints: []", "vehicles[0].motion.waypoints", 21),
        (
            (10, 10),
            "    base_height_m: -50\n    ridges:\n      - {from: [0, 0], to: [1, 1], crest_height_m: -5, width_m: 0}",
            "world.terrain.ridges[0].width_m",
            12,
        ),
        ((5, 5), "  origin: {lat_deg: 91, lon_deg: -70.6}", "world.origin.lat_deg", 5),
    ];
    for &((from, to), text, key, expected_line) in cases {
        let err = error(&replace_lines(from, to, text));
        assert_error(&err, key, expected_line);
    }
    let err = error(&format!("{BASE}simulators:\n  timeout_ms: 0\n"));
    assert_error(&err, "simulators.timeout_ms", 41);
    let err = error(&format!("{BASE}simulators:\n  physics_step_ms: -1\n"));
    assert_error(&err, "simulators.physics_step_ms", 41);
    let err = error(&format!("{BASE}simulators:\n  channel_interval_ms: 25\n"));
    assert_error(&err, "simulators.channel_interval_ms", 41);
    assert!(
        err.message.contains("whole multiple of window_ms (10 ms)"),
        "{err}"
    );
    let err = error(&format!("{BASE}simulators:\n  channel_interval_ms: 0\n"));
    assert_error(&err, "simulators.channel_interval_ms", 41);
    let err = error(&format!(
        "{BASE}links:\n  default: {{model: ideal, rate_bps: 0, delay_ms: 0}}\n"
    ));
    assert_error(&err, "links.default.rate_bps", 41);
}

#[test]
fn zeromq_endpoint_scheme() {
    let text =
        format!("{BASE}simulators:\n  network:\n    kind: zeromq\n    endpoint: udp://1.2.3.4:5\n");
    let err = error(&text);
    assert_error(&err, "simulators.network.endpoint", 43);
}

/// A simulator kind in a role it cannot take: the scenario file is refused at load, located at
/// the `kind`, naming the kinds the role takes; the command line when the coordinators'
/// arguments are parsed (exit 2, located by the flag), naming only the forms that flag takes.
#[test]
fn a_simulator_in_the_wrong_role_is_refused_in_the_file_and_on_the_command_line() {
    use netsim_cosim::config::WrongRole;
    let cosim = env!("CARGO_BIN_EXE_cosim");
    let physics_coordinator = env!("CARGO_BIN_EXE_physics_coordinator");
    let network_coordinator = env!("CARGO_BIN_EXE_network_coordinator");
    let cases = [
        (
            "network",
            "gazebo",
            "--network-sim",
            "gazebo",
            WrongRole::GazeboAsNetwork,
        ),
        (
            "network",
            "auv_interface",
            "--network-sim",
            "auv",
            WrongRole::AuvInterfaceAsNetwork,
        ),
        (
            "physics",
            "ns3",
            "--physics-sim",
            "ns3",
            WrongRole::Ns3AsPhysics,
        ),
    ];
    for (role, kind, flag, arg, wrong) in cases {
        let err = error(&format!("{BASE}simulators:\n  {role}: {{kind: {kind}}}\n"));
        assert_error(&err, &format!("simulators.{role}.kind"), 41);
        assert_eq!(
            err.to_string(),
            format!("{FILE}:41:13: simulators.{role}.kind: {wrong}")
        );
        let mut commands = vec![
            (cosim, vec!["run", "config/default.yaml", flag, arg]),
            (physics_coordinator, vec!["config/default.yaml", flag, arg]),
        ];
        if role == "network" {
            commands.push((
                network_coordinator,
                vec![
                    "config/default.yaml",
                    "--bind",
                    "tcp://127.0.0.1:1",
                    flag,
                    arg,
                ],
            ));
        }
        for (exe, args) in commands {
            let out = std::process::Command::new(exe)
                .args(&args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{exe} {args:?}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "invalid value '{arg}' for '{flag} <ENDPOINT>': {}\n",
                    wrong.on_command_line()
                )),
                "{exe} {args:?}: {stderr}"
            );
        }
    }
    // `auv:HOST` is an AUV interface simulator too.
    let out = std::process::Command::new(cosim)
        .args([
            "run",
            "config/default.yaml",
            "--network-sim",
            "auv:10.0.0.7",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains(&WrongRole::AuvInterfaceAsNetwork.on_command_line()));
    // What a served simulator cannot listen at is refused when the arguments are parsed.
    for (bind, why) in [
        ("embedded", "`embedded` is not an endpoint to serve at"),
        (
            "ns3",
            "`ns3` is not an endpoint to serve at: the ns-3 adapter netsim-ns3 serves itself",
        ),
        (
            "gazebo",
            "`gazebo` is not an endpoint to serve at: Gazebo is reached through ros_gz_bridge",
        ),
        ("auv", "`auv` is not an endpoint to serve at"),
    ] {
        for serve in ["physics-sim", "network-sim"] {
            let out = std::process::Command::new(cosim)
                .args([serve, "config/default.yaml", "--bind", bind])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{serve} --bind {bind}: {stderr}"
            );
            assert!(
                stderr.contains(&format!(
                    "invalid value '{bind}' for '--bind <BIND>': {why}"
                )),
                "{stderr}"
            );
        }
    }
}

#[test]
fn no_vehicles() {
    let text: String = BASE.lines().take(10).collect::<Vec<_>>().join("\n") + "\nvehicles: []\n";
    let err = error(&text);
    assert_error(&err, "vehicles", 11);
}

#[test]
fn invalid_yaml_syntax() {
    // A tab where indentation is expected.
    let err = error(&replace_line(9, "\tcell_size_m: 2"));
    assert_eq!(err.file, PathBuf::from(FILE));
    assert_eq!(err.line, Some(9), "{err}");

    // Bad indentation.
    let err = error(&replace_line(10, "      base_height_m: -50"));
    assert_eq!(err.line, Some(10), "{err}");

    // An unclosed flow sequence.
    let err = error(&replace_line(8, "    size_m: [200, 200"));
    assert!(err.line.is_some_and(|l| (8..=9).contains(&l)), "{err}");
}

#[test]
fn missing_terrain_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = replace_lines(
        7,
        10,
        "    kind: csv\n    path: nowhere.csv\n    cell_size_m: 2",
    );
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, &text).unwrap();
    let err = config::load(&file).unwrap_err();
    assert_eq!(err.file, file);
    assert_eq!(err.key_path, "world.terrain.path");
    assert_eq!(err.line, Some(8), "{err}");
    assert!(err.message.contains("nowhere.csv"), "{err}");

    // Once the file exists, its path is resolved relative to the scenario file. (The grid is
    // as large as BASE's terrain: loading checks every start and waypoint against it.)
    let row = vec!["-50"; 101].join(",") + "\n";
    std::fs::write(dir.path().join("nowhere.csv"), row.repeat(101)).unwrap();
    let loaded = config::load(&file).unwrap();
    match &loaded.scenario.world.terrain {
        Terrain::Csv { path, .. } => assert_eq!(Path::new(path), dir.path().join("nowhere.csv")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn terrain_is_read_and_checked_at_load() {
    // BASE's floor is at -50 m: a start or waypoint at or below it is an error at load.
    let err = error(&replace_line(15, "    start: {x: 0, y: 0, z: -50}"));
    assert_error(&err, "vehicles[0].start", 15);
    assert!(
        err.message
            .contains("at or below the terrain there (-50.00 m)"),
        "{err}"
    );
    let err = error(&replace_line(37, "        - [0, 30, -60]"));
    assert_error(&err, "vehicles[1].motion.waypoints[1]", 37);
    let loaded = parse(BASE).unwrap();
    assert_eq!(loaded.terrain.dims(), (101, 101));
    assert_eq!(loaded.terrain.height_at(3.0, -7.0), Some(-50.0));

    // A terrain file is read at load: its errors name the scenario's key and line and the
    // file's own line and column; its extent is the grid's.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        replace_lines(
            7,
            10,
            "    kind: csv\n    path: grid.csv\n    cell_size_m: 2",
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("grid.csv"), "-50,-50\n-50,x\n").unwrap();
    let err = config::load(&file).unwrap_err();
    assert_eq!(
        (err.key_path.as_str(), err.line),
        ("world.terrain.path", Some(8)),
        "{err}"
    );
    assert!(err.message.contains("grid.csv:2:2: not a number"), "{err}");
    std::fs::write(dir.path().join("grid.csv"), "-50,-50\n-50,-50\n").unwrap();
    let err = config::load(&file).unwrap_err();
    assert_eq!(
        (err.key_path.as_str(), err.line),
        ("vehicles[0].motion.waypoints[0]", Some(21)),
        "{err}"
    );
    assert!(
        err.message
            .contains("outside the world [-1, 1] × [-1, 1] m"),
        "{err}"
    );
}

#[test]
fn unreadable_and_oversized_files() {
    let err = config::load(Path::new("/nonexistent/scenario.yaml")).unwrap_err();
    assert_eq!(err.line, None);
    assert!(
        err.to_string()
            .starts_with("/nonexistent/scenario.yaml: cannot open"),
        "{err}"
    );

    let big = "#".repeat(16 * 1024 * 1024 + 1);
    let err = error(&big);
    assert!(err.message.contains("larger than 16 MiB"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.yaml");
    std::fs::write(&file, &big).unwrap();
    let err = config::load(&file).unwrap_err();
    assert!(err.message.contains("larger than 16 MiB"), "{err}");
}

/// Hostile YAML (found fuzzing `config::parse_str`): deep flow nesting made serde_yaml's
/// scanner take time quadratic in the depth (200,000 unclosed `[` ran for minutes). Nesting
/// past `MAX_NESTING` is refused first, with its line; alias bombs hit serde_yaml's repetition
/// limit. Each is an error, quickly.
#[test]
fn deep_nesting_and_alias_bombs_are_errors_in_bounded_time() {
    let started = std::time::Instant::now();
    let deep = |text: String, line: usize| {
        let err = error(&text);
        assert_eq!(err.line, Some(line), "{err}");
        err
    };
    let err = deep(format!("name: {}\n", "[".repeat(200_000)), 1);
    assert!(err.message.contains("not read further"), "{err}");
    let err = deep(
        format!("name: {}{}\n", "[".repeat(20_000), "]".repeat(20_000)),
        1,
    );
    assert!(err.message.contains("not read further"), "{err}");
    let err = deep(format!("name:\n{}", "  [\n".repeat(100_000)), 257);
    assert!(err.message.contains("not read further"), "{err}");
    // What one parser rejects early another may read on: a syntax error followed by deep
    // nesting is reported at the error.
    let err = deep(format!("name: {}\n", "[\n".repeat(100_000)), 2);
    assert!(err.message.contains("not read further"), "{err}");
    let err = deep(
        format!("name: {}1{}\n", "{a: ".repeat(150), "}".repeat(150)),
        1,
    );
    assert_eq!(
        err.message,
        format!(
            "collections nested more than {} levels deep",
            config::MAX_NESTING
        )
    );
    let block: String = (0..150).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
    deep(block, 129);
    // 128 levels are within the limit: the typed pass reports what is wrong instead.
    let err = error(&format!("name: {}{}\n", "[".repeat(127), "]".repeat(127)));
    assert!(!err.message.contains("nested"), "{err}");

    let mut laughs =
        vec![r#"a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]"#.to_string()];
    for i in 1..10 {
        laughs.push(format!(
            "a{i}: &a{i} [{}]",
            vec![format!("*a{}", i - 1); 9].join(",")
        ));
    }
    for tail in ["name: *a9", "vehicles: *a9"] {
        let err = error(&format!("{}\n{tail}\n", laughs.join("\n")));
        assert!(
            err.line.is_some() || err.message.contains("repetition limit"),
            "{err}"
        );
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn error_display_and_error_at() {
    let loaded = parse(BASE).unwrap();
    let err = loaded.error_at(
        "vehicles[1].motion.waypoints[3]",
        "waypoint is below the terrain",
    );
    assert_eq!(
        err.to_string(),
        "scenarios/test.yaml:39:11: vehicles[1].motion.waypoints[3]: waypoint is below the terrain"
    );
    // A key that is not written in the file (a default) gets its nearest ancestor's line.
    let err = loaded.error_at("vehicles[0].motion.capture_radius_m", "too small");
    assert_eq!(err.line, Some(16));
    let err = loaded.error_at("", "whole file");
    assert!(
        err.to_string().starts_with("scenarios/test.yaml:1:"),
        "{err}"
    );
    assert!(err.to_string().ends_with(": whole file"), "{err}");
    let err = ConfigError {
        file: "f.yaml".into(),
        key_path: "a.b".into(),
        line: None,
        column: None,
        message: "m".into(),
    };
    assert_eq!(err.to_string(), "f.yaml: a.b: m");
    let _: &dyn std::error::Error = &err;
}

#[test]
fn every_shipped_scenario_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    for file in &files {
        let loaded = config::load(file).unwrap_or_else(|e| panic!("{e}"));
        if let Terrain::Png { path, .. } | Terrain::Csv { path, .. } =
            &loaded.scenario.world.terrain
        {
            assert!(Path::new(path).is_file(), "{path}");
            // The shipped grids are 200 m (CSV) and 320 m (PNG) wide.
            loaded
                .check_inside_world([100.0, 100.0])
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn default_scenario_is_as_documented() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = config::load(&dir.join("config/default.yaml"))
        .unwrap()
        .scenario;
    // The whole mission, paced: W = 1 ms at real time, one minute.
    assert_eq!(s.window_ms, 1.0);
    assert_eq!(s.duration_s, 60.0);
    assert_eq!(s.real_time_factor, 1.0);
    assert_eq!(s.seed, 42);
    let names: Vec<&str> = s.vehicles.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["usv1", "usv2", "auv1", "auv2", "auv3"]);
    assert_eq!(s.vehicles.iter().filter(|v| v.modem.is_some()).count(), 3);
    assert!(s.acoustic_modems.is_some() && s.netsim_manager.is_some());
    assert_eq!(s.network.capture, config::Capture::Tun);
    // iperf3 and the talker/listener inside the surface vessels, a client per AUV on the host.
    let inside: Vec<_> = s
        .programs
        .iter()
        .filter_map(|p| p.vehicle.as_deref())
        .collect();
    assert_eq!(inside, ["usv1", "usv1", "usv2", "usv2"]);
    assert_eq!(s.programs.iter().filter(|p| p.vehicle.is_none()).count(), 3);
    // The vessels' link is 802.11g with its medium access, the AUVs have no radio.
    assert!(matches!(s.links.default, config::LinkModel::None { .. }));
    assert!(matches!(
        &s.links.pairs[..],
        [config::LinkModel::Rf {
            mac: Some(config::WifiStandard::G),
            ..
        }]
    ));
    assert!(matches!(
        s.world.terrain,
        Terrain::Procedural {
            cell_size_m: 2.0,
            ..
        }
    ));
}

/// The physics-only patrol the lockstep tests and benchmarks run.
#[test]
fn patrol_scenario_is_as_documented() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = config::load(&dir.join("config/patrol.yaml"))
        .unwrap()
        .scenario;
    assert_eq!(s.window_ms, 10.0);
    assert_eq!(s.duration_s, 60.0);
    let names: Vec<&str> = s.vehicles.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["auv1", "auv2", "auv3"]);
    assert!(s.programs.is_empty());
}

// ---- SourceMap ----

#[test]
fn source_map_nested_sequences_and_comments() {
    let text = "\
# leading comment
a:
  b:
    - [1, 2]   # trailing comment
    -
      - x
      - c: 3

        d: 4
e: 5
";
    let m = SourceMap::parse(text);
    assert_eq!(m.line_of(""), Some(2));
    assert_eq!(m.line_of("a"), Some(2));
    assert_eq!(m.line_of("a.b"), Some(3));
    assert_eq!(m.line_of("a.b[0]"), Some(4));
    assert_eq!(m.line_of("a.b[0][1]"), Some(4));
    assert_eq!(m.line_of("a.b[1][0]"), Some(6));
    assert_eq!(m.line_of("a.b[1][1]"), Some(7));
    assert_eq!(m.line_of("a.b[1][1].c"), Some(7));
    assert_eq!(m.line_of("a.b[1][1].d"), Some(9));
    assert_eq!(m.line_of("e"), Some(10));
    assert_eq!(m.line_of("a.b[2]"), None);
    assert_eq!(m.line_of("x"), None);
}

#[test]
fn source_map_flow_style() {
    let text = "v: [1, 2, 3]\nw: {p: [4, {q: 5}],\n    r: 6}\n";
    let m = SourceMap::parse(text);
    assert_eq!(m.line_of("v"), Some(1));
    assert_eq!(m.line_of("v[2]"), Some(1));
    assert_eq!(m.column_of("v[2]"), Some(11));
    assert_eq!(m.line_of("w.p[1].q"), Some(2));
    assert_eq!(m.line_of("w.r"), Some(3));
}

#[test]
fn source_map_anchors_aliases_and_documents() {
    let text = "\
base: &b
  x: 1
  y: [1, 2]
copy: *b
list: [*b, &c 3, *c]
? [complex, key]
: value
after: 1
---
second: 2
";
    let m = SourceMap::parse(text);
    assert_eq!(m.line_of("base.y[1]"), Some(3));
    assert_eq!(m.line_of("copy"), Some(4));
    assert_eq!(m.line_of("copy.x"), None);
    assert_eq!(m.line_of("list[2]"), Some(5));
    assert_eq!(m.line_of("after"), Some(8));
    assert_eq!(
        m.line_of("second"),
        None,
        "only the first document is mapped"
    );
}

#[test]
fn source_map_syntax_error_keeps_what_came_before() {
    let m = SourceMap::parse("a: 1\nb:\n  c: 2\n\td: 3\n");
    assert_eq!(m.line_of("b.c"), Some(3));
    assert_eq!(m.line_of("d"), None);
}

#[test]
fn source_map_survives_deep_nesting() {
    let deep = "[".repeat(200_000);
    let _ = SourceMap::parse(&deep);
    assert!(parse(&deep).is_err());
    let deep_map = "a: ".repeat(10_000) + "1";
    let _ = SourceMap::parse(&deep_map);
    assert!(parse(&deep_map).is_err());
}

// ---- robustness ----

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn never_panics_on_mutated_input() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let original = std::fs::read(dir.join("config/default.yaml")).unwrap();
    let file = dir.join("config/fuzz.yaml");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let specials = b"\t\n :-[]{},#&*!|>'\"%@`?\x00\xff";
    let mut errors = 0;
    for i in 0..3000 {
        let mut bytes = original.clone();
        match i % 4 {
            0 => bytes.truncate(rng.below(bytes.len())),
            1 => {
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(bytes.len());
                    bytes[at] = if rng.below(2) == 0 {
                        specials[rng.below(specials.len())]
                    } else {
                        rng.next() as u8
                    };
                }
            }
            2 => {
                let mut lines: Vec<&[u8]> = original.split(|&b| b == b'\n').collect();
                for _ in 0..1 + rng.below(5) {
                    let at = rng.below(lines.len());
                    lines.remove(at);
                }
                bytes = lines.join(&b'\n');
            }
            _ => {
                // Duplicate or swap random lines.
                let mut lines: Vec<&[u8]> = original.split(|&b| b == b'\n').collect();
                let a = rng.below(lines.len());
                let b = rng.below(lines.len());
                if rng.below(2) == 0 {
                    lines.swap(a, b);
                } else {
                    let line = lines[a];
                    lines.insert(b, line);
                }
                bytes = lines.join(&b'\n');
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let _ = SourceMap::parse(&text);
        if let Err(e) = config::parse_str(&text, &file) {
            errors += 1;
            assert_eq!(e.file, file);
            assert!(!e.message.is_empty());
            let _ = e.to_string();
        }
    }
    assert!(
        errors > 1000,
        "mutations should mostly break the scenario ({errors})"
    );
    // Pure garbage.
    for len in [0, 1, 7, 100, 5000] {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = SourceMap::parse(&text);
        assert!(config::parse_str(&text, &file).is_err());
    }
}

// ---- links and water ----

#[test]
fn links_pairs_water_and_endpoints() {
    use netsim_cosim::config::{
        ErrorHandling, LinkModel, NetworkEndpoint, PeerEndpoint, SoundSpeed,
    };
    let text = format!(
        "{BASE}links:\n  default: {{model: acoustic, micromodem_rate: 0}}\n  pairs:\n    - between: [b, a]\n      model: disk\n      range_m: 50\n  queue_packets: 3\n  errors: flip\n"
    );
    let s = parse(&text).unwrap().scenario;
    assert!(
        matches!(s.links.default, LinkModel::Acoustic { micromodem_rate: 0, spreading_factor, .. } if spreading_factor == 1.5)
    );
    assert_eq!(
        s.links.pairs[0].between(),
        Some(&["b".to_string(), "a".to_string()])
    );
    assert_eq!(
        (s.links.queue_packets, s.links.errors),
        (3, ErrorHandling::Flip)
    );
    assert_eq!(s.world.water.sound_speed, SoundSpeed::default());

    let text = insert_after(
        10,
        "  water: {temperature_c: 4, sound_speed: 1480, shipping: 1}",
    );
    let w = parse(&text).unwrap().scenario.world.water;
    assert_eq!(
        (w.temperature_c, w.sound_speed, w.shipping, w.salinity_ppt),
        (4.0, SoundSpeed::Fixed(1480.0), 1.0, 35.0)
    );

    let text = format!(
        "{BASE}simulators:\n  network: {{kind: rosnetsim, address: unix:/tmp/net_server_socket}}\n"
    );
    let s = parse(&text).unwrap().scenario;
    assert_eq!(
        s.simulators.network,
        NetworkEndpoint::Peer(PeerEndpoint::Rosnetsim(
            "unix:/tmp/net_server_socket".parse().unwrap()
        ))
    );
}

#[test]
fn links_and_water_errors_name_key_and_line() {
    let cases: &[(&str, &str, usize)] = &[
        ("links:\n  default: {model: disk, range_m: 0}\n", "links.default.range_m", 41),
        ("links:\n  default: {model: ideal, between: [a, b]}\n", "links.default.between", 41),
        ("links:\n  default: {model: acoustic, micromodem_rate: 7}\n", "links.default.micromodem_rate", 41),
        ("links:\n  default: {model: acoustic, spreading_factor: 4}\n", "links.default.spreading_factor", 41),
        ("links:\n  default: {model: acoustic, capture_sir_db: -1}\n", "links.default.capture_sir_db", 41),
        ("links:\n  default: {model: rf, frequency_ghz: -2.4}\n", "links.default.frequency_ghz", 41),
        ("links:\n  default:\n    model: rf\n    rates:\n      - {snr_db: 10, rate_bps: 1e6}\n      - {snr_db: 9, rate_bps: 2e6}\n", "links.default.rates[1].snr_db", 45),
        ("links:\n  default:\n    model: rf\n    mac: 80211g\n    rates:\n      - {snr_db: 10, rate_bps: 1e6}\n", "links.default.rates", 44),
        ("links:\n  default:\n    model: rf\n    channel: 6\n", "links.default.channel", 43),
        ("links:\n  default:\n    model: rf\n    rate_mbps: 54\n", "links.default.rate_mbps", 43),
        ("links:\n  default:\n    model: rf\n    mac: 80211n-5\n    rate_mbps: 54\n", "links.default.rate_mbps", 44),
        ("links:\n  pairs:\n    - {between: [a, c], model: ideal}\n", "links.pairs[0].between", 42),
        ("links:\n  pairs:\n    - {between: [a, a], model: ideal}\n", "links.pairs[0].between", 42),
        ("links:\n  pairs:\n    - {model: ideal}\n", "links.pairs[0]", 42),
        ("links:\n  pairs:\n    - {between: [a, b], model: ideal}\n    - {between: [b, a], model: ideal}\n", "links.pairs[1].between", 43),
        ("links:\n  queue_packets: 0\n", "links.queue_packets", 41),
        ("links:\n  default: {model: acoustic, colour: red}\n", "links.default.colour", 41),
        ("simulators:\n  network: {kind: rosnetsim, address: 'ipc:///x'}\n", "simulators.network.address", 41),
        ("simulators:\n  physics: {kind: rosnetsim, address: 'tcp:host'}\n", "simulators.physics.address", 41),
        ("viewer:\n  address: 0.0.0.0:8765\n", "viewer.address", 41),
        ("viewer:\n  tls: {cert_file: v.crt}\n", "viewer.tls", 41),
    ];
    for &(tail, key, line) in cases {
        let err = error(&format!("{BASE}{tail}"));
        assert_error(&err, key, line);
    }
    let err = error(&format!("{BASE}links:\n  pairs:\n    - {{between: [a, b], model: ideal}}\n    - {{between: [b, a], model: ideal}}\n"));
    assert!(
        err.message
            .contains("already given at links.pairs[0] (line 42)"),
        "{err}"
    );
    let err = error(&format!(
        "{BASE}links:\n  default:\n    model: rf\n    mac: 80211n-5\n    rate_mbps: 54\n"
    ));
    assert!(
        err.message
            .contains("54 is not a rate of 80211n-5: one of 6.5, 13, 19.5, 26, 39, 52, 58.5, 65"),
        "{err}"
    );
    let water: &[(&str, &str)] = &[
        ("temperature_c: 50", "world.water.temperature_c"),
        ("salinity_ppt: -1", "world.water.salinity_ppt"),
        ("ph: 3", "world.water.ph"),
        ("sound_speed: 900", "world.water.sound_speed"),
        // Sea water's range, as a profile's: 1350 m/s is a typo or a unit mistake.
        ("sound_speed: 1350", "world.water.sound_speed"),
        ("wind_mps: -2", "world.water.wind_mps"),
        ("shipping: 2", "world.water.shipping"),
    ];
    for &(kv, key) in water {
        let err = error(&insert_after(10, &format!("  water: {{{kv}}}")));
        assert_error(&err, key, 11);
    }
    let err = error(&insert_after(10, "  water: {sound_speed: wilson}"));
    assert_eq!(err.line, Some(11), "{err}");
}

// ---- programs ----

#[test]
fn programs_keys_and_defaults() {
    use netsim_cosim::config::{ProgramCommand, StopSignal};
    let text = format!(
        "{BASE}real_time_factor: 1\nnetwork: {{capture: tun}}\nprograms:\n  - name: iperf_server-1\n    vehicle: b\n    start_s: 1.5\n    command: [iperf3, -s, -p, 5201]\n    env: {{N: 5, B: true, S: x}}\n    cwd: /tmp\n    stop_signal: TERM\n    stop_timeout_s: 0\n  - {{name: h, command: 'echo hi'}}\n"
    );
    let s = parse(&text).unwrap().scenario;
    let p = &s.programs[0];
    assert_eq!(
        (p.name.as_str(), p.vehicle.as_deref(), p.start_s),
        ("iperf_server-1", Some("b"), 1.5)
    );
    assert_eq!(
        p.command,
        ProgramCommand::Argv(["iperf3", "-s", "-p", "5201"].map(String::from).to_vec())
    );
    let env: Vec<(&str, &str)> = p
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, [("B", "true"), ("N", "5"), ("S", "x")]);
    assert_eq!(
        (p.cwd.as_deref(), p.stop_signal, p.stop_timeout_s),
        (Some("/tmp"), StopSignal::Term, 0.0)
    );
    let h = &s.programs[1];
    assert_eq!(h.command, ProgramCommand::Shell("echo hi".into()));
    assert_eq!(
        (
            h.vehicle.as_deref(),
            h.start_s,
            h.cwd.as_deref(),
            h.stop_signal,
            h.stop_timeout_s
        ),
        (None, 0.0, None, StopSignal::Int, 5.0)
    );
    assert!(h.env.is_empty());
    assert!(parse(&format!("{BASE}programs: []\n"))
        .unwrap()
        .scenario
        .programs
        .is_empty());
}

#[test]
fn programs_errors_name_key_and_line() {
    let long = "p".repeat(33);
    let cases: &[(&str, &str, usize, &str)] = &[
        (
            "programs:\n  - {name: 'a b', command: x}\n",
            "programs[0].name",
            41,
            "may contain only",
        ),
        (
            "programs:\n  - {name: '', command: x}\n",
            "programs[0].name",
            41,
            "must not be empty",
        ),
        (
            &format!("programs:\n  - {{name: {long}, command: x}}\n"),
            "programs[0].name",
            41,
            "longer than 32",
        ),
        (
            "programs:\n  - {name: p, command: x}\n  - {name: p, command: y}\n",
            "programs[1].name",
            42,
            "already used at programs[0].name (line 41)",
        ),
        (
            "programs:\n  - {name: p, vehicle: zz, command: x}\n",
            "programs[0].vehicle",
            41,
            "no vehicle is named \"zz\"",
        ),
        (
            "programs:\n  - {name: p, vehicle: a, command: x}\n",
            "programs[0].vehicle",
            41,
            "network.capture: tun",
        ),
        (
            "programs:\n  - {name: p, start_s: 5, command: x}\n",
            "programs[0].start_s",
            41,
            "below duration_s (5 s)",
        ),
        (
            "programs:\n  - {name: p, start_s: -1, command: x}\n",
            "programs[0].start_s",
            41,
            "≥ 0",
        ),
        (
            "programs:\n  - name: p\n    command: '  '\n",
            "programs[0].command",
            42,
            "must not be empty",
        ),
        (
            "programs:\n  - name: p\n    command: []\n",
            "programs[0].command",
            42,
            "needs at least the program",
        ),
        (
            "programs:\n  - name: p\n    command: ['', x]\n",
            "programs[0].command[0]",
            42,
            "must name the program",
        ),
        (
            "programs:\n  - name: p\n    command: {run: x}\n",
            "programs[0].command",
            42,
            "a string (run by sh -c) or a list of strings",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    env: {COSIM_OUT: x}\n",
            "programs[0].env.COSIM_OUT",
            43,
            "set by the run",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    env: {'A=B': x}\n",
            "programs[0].env",
            43,
            "is not a variable name",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    cwd: no/such/dir\n",
            "programs[0].cwd",
            43,
            "is not a directory",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    stop_signal: KILL\n",
            "programs[0].stop_signal",
            43,
            "unknown variant `KILL`",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    stop_timeout_s: -1\n",
            "programs[0].stop_timeout_s",
            43,
            "≥ 0",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    stop_timeout_s: 1e9\n",
            "programs[0].stop_timeout_s",
            43,
            "at most 3600 s",
        ),
        (
            "programs:\n  - name: p\n    command: x\n    colour: red\n",
            "programs[0].colour",
            43,
            "unknown field `colour`",
        ),
        (
            "programs:\n  - {command: x}\n",
            "programs[0]",
            41,
            "missing field `name`",
        ),
    ];
    for &(tail, key, line, message) in cases {
        let err = error(&format!("{BASE}{tail}"));
        assert_error(&err, key, line);
        assert!(err.message.contains(message), "{tail}: {err}");
    }
}

#[test]
fn pcap_snap_length_defaults_to_whole_packets_and_must_be_positive() {
    assert_eq!(parse(BASE).unwrap().scenario.network.pcap_snaplen, 262_144);
    assert_eq!(
        parse(&format!(
            "{BASE}network: {{pcap: true, pcap_snaplen: 128}}\n"
        ))
        .unwrap()
        .scenario
        .network
        .pcap_snaplen,
        128
    );
    let err = error(&format!("{BASE}network:\n  pcap_snaplen: 0\n"));
    assert_error(&err, "network.pcap_snaplen", 41);
    assert!(err.message.contains("≥ 1"), "{err}");
}

#[test]
fn record_section_has_defaults_and_positive_intervals() {
    let r = parse(BASE).unwrap().scenario.record;
    assert_eq!(
        (r.pose_interval_s, r.channel_interval_s, r.timeline_jsonl),
        (0.1, 1.0, false)
    );
    let r = parse(&format!(
        "{BASE}record: {{pose_interval_s: 0.001, channel_interval_s: 5, timeline_jsonl: true}}\n"
    ))
    .unwrap()
    .scenario
    .record;
    assert_eq!(
        (r.pose_interval_s, r.channel_interval_s, r.timeline_jsonl),
        (0.001, 5.0, true)
    );
    let cases: &[(&str, &str, usize)] = &[
        (
            "record:\n  pose_interval_s: 0\n",
            "record.pose_interval_s",
            41,
        ),
        (
            "record:\n  channel_interval_s: -1\n",
            "record.channel_interval_s",
            41,
        ),
        ("record:\n  every: 1\n", "record.every", 41),
    ];
    for &(tail, key, line) in cases {
        let err = error(&format!("{BASE}{tail}"));
        assert_error(&err, key, line);
    }
}

/// The rules for the network and physics simulators a scenario names (ns-3's links and
/// settings, Gazebo's, a kind in the wrong role), through the loader.
mod simulator_rules {
    use netsim_cosim::config;
    use std::path::Path;

    /// Three vessels and an AUV, all but the links and the network simulator fixed.
    fn scenario(links: &str, network: &str) -> String {
        format!(
            "name: n
window_ms: 1
duration_s: 1
world:
  origin: {{lat_deg: 0, lon_deg: 0}}
  terrain: {{kind: procedural, size_m: [400, 400], cell_size_m: 10, base_height_m: -40}}
vehicles:
  - {{name: usv1, addresses: [10.0.0.1/24], start: {{x: 0, y: 0, z: 1}}, motion: {{kind: stationary}}}}
  - {{name: usv2, addresses: [10.0.0.2/24], start: {{x: 10, y: 0, z: 1}}, motion: {{kind: stationary}}}}
  - {{name: usv3, addresses: [10.0.0.3/24], start: {{x: 20, y: 0, z: 1}}, motion: {{kind: stationary}}}}
  - {{name: auv1, addresses: [10.0.0.4/24], start: {{x: 30, y: 0, z: -10}}, motion: {{kind: stationary}}}}
links:
{links}
simulators:
  network:
{network}
"
        )
    }

    fn load(links: &str, network: &str) -> Result<(), String> {
        config::parse_str(&scenario(links, network), Path::new("s.yaml"))
            .map(drop)
            .map_err(|e| e.to_string())
    }

    const NS3: &str = "    kind: ns3";
    const VESSELS_RF: &str = "  default: {model: none}
  pairs:
    - {between: [usv1, usv2], model: rf}
    - {between: [usv1, usv3], model: rf}
    - {between: [usv2, usv3], model: rf}";

    #[test]
    fn a_scenario_that_ns3_can_build_loads() {
        load(VESSELS_RF, NS3).unwrap();
        load("  default: {model: none}", NS3).unwrap();
        load("  default: {model: acoustic}", NS3).unwrap();
        load(
            VESSELS_RF,
            "    kind: ns3\n    wifi: {rate_manager: constant, data_mode: ErpOfdmRate54Mbps}",
        )
        .unwrap();
        load(
            VESSELS_RF,
            "    kind: ns3\n    endpoint: tcp://10.0.0.9:5602\n  insecure_peers: true",
        )
        .unwrap();
    }

    /// `kind: secure` takes an address and a key file; either missing, or an address without
    /// its port, is refused at its key with the file's line.
    #[test]
    fn a_secure_simulator_needs_its_address_and_key_file() {
        load(
            "  default: {model: none}",
            "    kind: secure\n    address: 10.0.0.9:5602\n    key_file: run.key",
        )
        .unwrap();
        let no_key = load(
            "  default: {model: none}",
            "    kind: secure\n    address: 10.0.0.9:5602",
        )
        .unwrap_err();
        assert!(no_key.contains("key_file"), "{no_key}");
        let no_port = load(
            "  default: {model: none}",
            "    kind: secure\n    address: 10.0.0.9\n    key_file: run.key",
        )
        .unwrap_err();
        assert!(
            no_port.starts_with("s.yaml:") && no_port.contains("expected host:port"),
            "{no_port}"
        );
    }

    /// A simulator on another host over ZeroMQ or ROS-NetSim's framing (the ns-3 adapter's
    /// endpoint too) is refused at its key and line, saying how to reach it securely or allow
    /// it; `insecure_peers: true` allows it; loopback needs nothing.
    #[test]
    fn a_plaintext_simulator_on_another_host_needs_insecure_peers() {
        for network in [
            "    kind: zeromq\n    endpoint: tcp://10.0.0.9:5602",
            "    kind: rosnetsim\n    address: tcp:10.0.0.9:10000",
            "    kind: ns3\n    endpoint: tcp://10.0.0.9:5602",
        ] {
            let e = load(VESSELS_RF, network).unwrap_err();
            assert!(
                e.starts_with("s.yaml:19:3: simulators.network: ")
                    && e.contains("10.0.0.9:")
                    && e.contains("is on another host")
                    && e.contains("simulators.insecure_peers: true"),
                "{e}"
            );
            load(VESSELS_RF, &format!("{network}\n  insecure_peers: true")).unwrap();
        }
        load(
            VESSELS_RF,
            "    kind: zeromq\n    endpoint: tcp://127.0.0.1:5602",
        )
        .unwrap();
    }

    #[test]
    fn ns3_has_no_ideal_or_disk_link() {
        assert_eq!(load("  default: {model: ideal}", NS3).unwrap_err(), "s.yaml:13:13: links.default.model: usv1 - usv2: ns-3 has no `ideal` link; use rf, acoustic or none");
        let disk =
            format!("{VESSELS_RF}\n    - {{between: [usv3, auv1], model: disk, range_m: 50}}");
        assert_eq!(load(&disk, NS3).unwrap_err(), "s.yaml:18:31: links.pairs[3].model: usv3 - auv1: ns-3 has no `disk` link; use rf, acoustic or none");
        // The embedded simulator has both.
        load(&disk, "    kind: embedded").unwrap();
    }

    #[test]
    fn every_rf_pair_shares_one_channel() {
        let differ = VESSELS_RF.replace(
            "[usv2, usv3], model: rf}",
            "[usv2, usv3], model: rf, tx_power_dbm: 23}",
        );
        assert_eq!(
            load(&differ, NS3).unwrap_err(),
            "s.yaml:17:7: links.pairs[2]: usv2 - usv3: under ns-3 every rf link is one Wi-Fi channel with one set of settings, \
             and this one differs from links.pairs[0] (line 15); give every rf pair the same settings"
        );
        let acoustic = "  default: {model: acoustic}\n  pairs:\n    - {between: [usv1, auv1], model: acoustic, micromodem_rate: 5}";
        assert!(load(acoustic, NS3).unwrap_err().contains(
            "links.pairs[0]: usv1 - auv1: under ns-3 every acoustic link is one UAN channel"
        ));
    }

    #[test]
    fn a_vehicle_has_one_kind_of_device_and_a_none_pair_no_shared_channel() {
        let both = format!("{VESSELS_RF}\n    - {{between: [usv3, auv1], model: acoustic}}");
        assert_eq!(
            load(&both, NS3).unwrap_err(),
            "s.yaml:18:7: links.pairs[3]: usv3 has an rf link (links.pairs[1] (line 16)) and an acoustic one: under ns-3 a vehicle has one device, Wi-Fi or UAN"
        );
        let gap = VESSELS_RF.replace("[usv2, usv3], model: rf}", "[usv2, usv3], model: none}");
        assert_eq!(
            load(&gap, NS3).unwrap_err(),
            "s.yaml:17:31: links.pairs[2].model: usv2 - usv3: both have Wi-Fi devices (from their rf links) and ns-3 puts every Wi-Fi device \
             on one channel, so this `none` link would carry their packets; make it rf like their other links"
        );
    }

    #[test]
    fn ns3_settings_are_checked() {
        let err = |network: &str| load(VESSELS_RF, network).unwrap_err();
        assert_eq!(
            err("    kind: ns3\n    wifi: {rate_manager: constant}"),
            "s.yaml:21:12: simulators.network.wifi.rate_manager: `constant` needs wifi.data_mode, the ns-3 mode name: e.g. ErpOfdmRate54Mbps (802.11g), OfdmRate54Mbps (802.11a), HtMcs7 (802.11n)"
        );
        assert_eq!(err("    kind: ns3\n    wifi: {data_mode: HtMcs7}"), "s.yaml:21:12: simulators.network.wifi.data_mode: only rate_manager: constant uses a data_mode (rate_manager is minstrel)");
        assert!(
            err("    kind: ns3\n    wifi: {rate_manager: constant, data_mode: 'Ht Mcs7'}")
                .contains("\"Ht Mcs7\" is not an ns-3 mode name")
        );
        assert_eq!(
            err("    kind: ns3\n    wifi: {queue_packets: 0}"),
            "s.yaml:21:12: simulators.network.wifi.queue_packets: must be > 0"
        );
        assert_eq!(
            err("    kind: ns3\n    endpoint: tcp://h:5602\n    program: /opt/netsim-ns3"),
            "s.yaml:22:5: simulators.network.program: is not used with `endpoint`: the adapter at tcp://h:5602 is already running"
        );
        assert!(err("    kind: ns3\n    wifi: {standard: 80211ac}").contains("simulators.network"));
        assert!(err("    kind: ns3\n    colour: blue").contains("unknown field `colour`"));
        let offload = format!("{VESSELS_RF}\nnetwork: {{offload: true}}");
        let e = load(&offload, NS3).unwrap_err();
        assert!(
            e.starts_with(
                "s.yaml:18:11: network.offload: must be false with ns-3: an offloaded packet"
            ),
            "{e}"
        );
        load(&offload, "    kind: embedded").unwrap();
    }

    #[test]
    fn ns3_is_no_physics_simulator() {
        let text = scenario(VESSELS_RF, "    kind: embedded")
            .replace("simulators:\n", "simulators:\n  physics: {kind: ns3}\n");
        let e = config::parse_str(&text, Path::new("s.yaml")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.yaml:19:13: simulators.physics.kind: ns-3 is a network simulator: `ns3` belongs in simulators.network (--network-sim ns3); \
             the physics simulator is one of embedded, zeromq, rosnetsim, secure, gazebo, auv_interface"
        );
    }

    /// The scenario of these tests with Gazebo as its physics simulator (`physics` its keys)
    /// and every motion `motion`.
    fn gazebo(physics: &str, motion: &str) -> Result<(), String> {
        let text = scenario(VESSELS_RF, "    kind: embedded")
            .replace(
                "simulators:\n",
                &format!("simulators:\n  physics: {{kind: gazebo{physics}}}\n"),
            )
            .replace("motion: {kind: stationary}", motion);
        config::parse_str(&text, Path::new("s.yaml"))
            .map(drop)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn gazebo_settings_are_checked() {
        const EXT: &str = "motion: {kind: external}";
        gazebo("", EXT).unwrap();
        gazebo(
            ", world: harbour, step_ms: 0.5, models: {usv1: boat_1}",
            EXT,
        )
        .unwrap();
        assert_eq!(gazebo(", step_ms: 0.3", EXT).unwrap_err(), "s.yaml:19:27: simulators.physics.step_ms: the window (1 ms) must be a whole number of Gazebo steps of 0.3 ms (it is 3.333333 of them)");
        assert_eq!(gazebo(", step_ms: 2", EXT).unwrap_err(), "s.yaml:19:27: simulators.physics.step_ms: the window (1 ms) must be a whole number of Gazebo steps of 2 ms (it is 0.500000 of them)");
        assert!(gazebo(", models: {usv9: boat}", EXT)
            .unwrap_err()
            .contains("simulators.physics.models.usv9: \"usv9\" is not a vehicle of the scenario"));
        assert!(gazebo(", models: {usv1: usv2}", EXT).unwrap_err().ends_with("simulators.physics.models: vehicles \"usv1\" and \"usv2\" are both the Gazebo model \"usv2\""));
        assert!(gazebo(", models: {usv1: 'a b'}", EXT)
            .unwrap_err()
            .contains("\"a b\" cannot name a Gazebo model"));
        assert!(gazebo(", world: my-world", EXT)
            .unwrap_err()
            .contains("simulators.physics.world: \"my-world\" cannot name a Gazebo world"));
        assert!(gazebo("", "motion: {kind: stationary}").unwrap_err().ends_with("vehicles[0].motion: Gazebo moves the vehicles: \"usv1\"'s motion must be `{kind: external}`"));
        let net = scenario(VESSELS_RF, "    kind: gazebo");
        let e = config::parse_str(&net, Path::new("s.yaml")).unwrap_err();
        assert!(
            e.to_string()
                .contains("simulators.network.kind: Gazebo is a physics simulator"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "s.yaml:20:5: simulators.network.kind: {}",
                config::WrongRole::GazeboAsNetwork
            )
        );
    }
}

// ---- Empty files, duplicate keys, tabs ----

/// A file with no scenario in it says so, naming the file, instead of a missing `name`.
#[test]
fn an_empty_or_comment_only_scenario_says_the_file_is_empty() {
    for text in [
        "",
        "\n\n",
        "# a comment\n",
        "# yaml-language-server: $schema=../schema/scenario.schema.json\n# nothing else\n",
        "---\n",
        "--- # a comment\n",
        "~\n",
        "null\n",
    ] {
        let err = error(text);
        assert_eq!(err.file, PathBuf::from(FILE), "{text:?}: {err}");
        assert_eq!((err.key_path.as_str(), err.line), ("", None), "{err}");
        assert!(
            err.to_string()
                .starts_with("scenarios/test.yaml: the scenario file is empty"),
            "{text:?}: {err}"
        );
        assert!(!err.message.contains("missing field"), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.yaml");
    std::fs::write(&file, "# to do\n").unwrap();
    let err = config::load(&file).unwrap_err();
    assert_eq!(err.file, file);
    assert!(
        err.to_string()
            .starts_with(&format!("{}: the scenario file is empty", file.display())),
        "{err}"
    );
    // A quoted empty string is a value, not an empty file.
    let err = error("''\n");
    assert!(!err.message.contains("is empty"), "{err}");
}

/// A key written twice is reported at the second one, naming the first one's line.
#[test]
fn a_duplicate_key_is_reported_at_its_own_line() {
    // At the top level.
    let err = error(&insert_after(3, "window_ms: 20"));
    assert_error(&err, "window_ms", 4);
    assert_eq!(err.column, Some(1), "{err}");
    assert!(
        err.message
            .contains("duplicate key `window_ms` (first written at line 2)"),
        "{err}"
    );
    // Deep in a block mapping, far from the mapping's start.
    let err = error(&insert_after(32, "      speed_mps: 2"));
    assert_error(&err, "vehicles[1].motion.speed_mps", 33);
    assert_eq!(err.column, Some(7), "{err}");
    assert!(err.message.contains("first written at line 32"), "{err}");
    // In a flow mapping: the line and the column of the second `x`.
    let err = error(&replace_line(29, "    start: {x: 0, y: 10, x: 5, z: -10}"));
    assert_error(&err, "vehicles[1].start.x", 29);
    assert_eq!(err.column, Some(26), "{err}");
    assert!(err.message.contains("first written at line 29"), "{err}");
    // In a map of free keys (a program's environment), where serde would keep the last one.
    let err = error(&format!(
        "{BASE}programs:\n  - name: p\n    command: 'true'\n    env:\n      A: 1\n      B: 2\n      A: 3\n"
    ));
    assert_error(&err, "programs[0].env.A", 46);
    assert!(
        err.message
            .contains("duplicate key `A` (first written at line 44)"),
        "{err}"
    );
    // The same key in two different mappings is no duplicate.
    parse(BASE).unwrap();
}

/// A tab in indentation is reported at the tab, saying YAML cannot be indented with tabs.
#[test]
fn a_tab_is_reported_at_its_line_and_column() {
    for (line, text, column) in [
        (9, "\tcell_size_m: 2", 1),
        (9, "  \tcell_size_m: 2", 3),
        (2, "\twindow_ms: 10", 1),
        (36, "\t\t- [0, 30, -10]", 1),
    ] {
        let err = error(&replace_line(line, text));
        assert_eq!(err.file, PathBuf::from(FILE));
        assert_eq!(
            (err.line, err.column),
            (Some(line), Some(column)),
            "{text:?}: {err}"
        );
        assert_eq!(err.key_path, "", "{text:?}: {err}");
        assert!(
            err.message.contains("tabs cannot indent YAML"),
            "{text:?}: {err}"
        );
    }
}

// ---- A whole number of windows ----

/// `duration_s` must be a whole number of windows: 0.015 s at W = 10 ms is refused, naming both
/// keys, their values and the two nearest durations that are; float noise (0.1 s / 0.01 s) is
/// not an error. The command line's `--duration-s` and the `window_ms` parameter follow the
/// same rule.
#[test]
fn a_duration_not_a_whole_number_of_windows_is_refused() {
    let err = error(&replace_line(3, "duration_s: 0.015"));
    assert_error(&err, "duration_s", 3);
    assert_eq!(
        err.to_string(),
        "scenarios/test.yaml:3:1: duration_s: duration_s = 0.015 s is not a whole number of \
         windows of window_ms = 10 ms (it is 1.5 windows): the nearest durations that are whole \
         numbers of windows are 0.01 s (1 window) and 0.02 s (2 windows)"
    );
    let err = error(&replace_lines(2, 3, "window_ms: 3\nduration_s: 5"));
    assert_error(&err, "duration_s", 3);
    assert!(
        err.message
            .contains("4.998 s (1666 windows) and 5.001 s (1667 windows)"),
        "{err}"
    );
    // Whole numbers of windows, whatever the binary fractions make of them.
    for (w, d, windows) in [
        ("10", "0.1", 10),
        ("0.01", "0.1", 10_000),
        ("0.1", "0.3", 3000),
        ("10", "5", 500),
        ("1.5", "0.0045", 3),
        ("20", "3600", 180_000),
    ] {
        let loaded = parse(&replace_lines(
            2,
            3,
            &format!("window_ms: {w}\nduration_s: {d}"),
        ))
        .unwrap_or_else(|e| panic!("W {w} ms, {d} s: {e}"));
        assert_eq!(loaded.schedule().windows, windows, "W {w} ms, {d} s");
    }

    // The overrides.
    let mut loaded = parse(BASE).unwrap();
    let e = loaded.set_duration_s(0.015).unwrap_err();
    assert!(
        e.contains("duration_s = 0.015 s is not a whole number of windows of window_ms = 10 ms")
            && e.contains("0.01 s (1 window) and 0.02 s (2 windows)"),
        "{e}"
    );
    assert_eq!(loaded.scenario.duration_s, 5.0);
    loaded.set_duration_s(0.02).unwrap();
    assert_eq!(loaded.schedule().windows, 2);
    let mut loaded = parse(BASE).unwrap();
    let e = loaded.set_window_ms(3.0).unwrap_err();
    assert!(
        e.contains("duration_s = 5 s is not a whole number of windows of window_ms = 3 ms"),
        "{e}"
    );
    assert_eq!(loaded.scenario.window_ms, 10.0);
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(loaded.set_window_ms(bad).is_err(), "{bad}");
    }
    assert!(loaded
        .set_window_ms(6000.0)
        .unwrap_err()
        .contains("shorter than one window"));
    loaded.set_window_ms(20.0).unwrap();
    assert_eq!(loaded.schedule().windows, 250);
    // W must also keep the channel sampling interval a whole number of windows.
    let mut loaded = parse(&format!("{BASE}simulators:\n  channel_interval_ms: 20\n")).unwrap();
    let e = loaded.set_window_ms(8.0).unwrap_err();
    assert!(
        e.contains(
            "simulators.channel_interval_ms = 20 ms: must be a whole multiple of window_ms (8 ms)"
        ),
        "{e}"
    );
    loaded.set_window_ms(5.0).unwrap();
}

// ---- The JSON Schema of the scenario file ----

/// The line that points editors (yaml-language-server) at the schema.
const SCHEMA_LINE: &str = "# yaml-language-server: $schema=../schema/scenario.schema.json";

/// The shipped scenarios: every `config/*.yaml`.
fn shipped_scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    files
}

/// The scenario reference's table of shipped scenarios has a row for each `config/*.yaml`, and
/// no row for a file that is not there.
#[test]
fn the_scenario_reference_lists_every_shipped_scenario() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference/scenario.md"),
    )
    .unwrap();
    let table = page
        .split("## Shipped scenarios")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("a section \"Shipped scenarios\"");
    let rows: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `config/"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let files: BTreeSet<String> = shipped_scenarios()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files.difference(&rows).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "shipped scenarios without a row in docs/src/reference/scenario.md"
    );
    assert_eq!(
        rows.difference(&files).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "rows of docs/src/reference/scenario.md naming no file of config/"
    );
}

#[test]
fn every_shipped_scenario_names_the_schema_on_its_first_line() {
    for file in shipped_scenarios() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(SCHEMA_LINE),
            "{} must start with `{SCHEMA_LINE}`",
            file.display()
        );
        // The path is relative to the scenario, as in the installed share/netsim_cosim/.
        let schema = file
            .parent()
            .unwrap()
            .join(SCHEMA_LINE.split_once("$schema=").unwrap().1);
        assert!(schema.is_file(), "{}", schema.display());
    }
}

/// Validates `instances` (name, YAML text) against the committed schema with Python's
/// `jsonschema` (draft 2020-12), the YAML read by the crate's own YAML parser; returns each
/// name with `None` if valid, else the validator's first errors.
fn validate_with_jsonschema(instances: &[(String, String)]) -> Vec<(String, Option<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schema/scenario.schema.json")).unwrap(),
    )
    .unwrap();
    let instances: Vec<serde_json::Value> = instances
        .iter()
        .map(|(name, yaml)| {
            let value: serde_json::Value = serde_yaml::from_str(yaml)
                .unwrap_or_else(|e| panic!("{name}: not YAML the loader reads: {e}"));
            serde_json::json!([name, value])
        })
        .collect();
    let input = serde_json::json!({"schema": schema, "instances": instances});
    let script = r#"
import json, sys
from jsonschema import Draft202012Validator
d = json.load(sys.stdin)
Draft202012Validator.check_schema(d["schema"])
v = Draft202012Validator(d["schema"])
out = []
for name, inst in d["instances"]:
    errs = sorted(v.iter_errors(inst), key=lambda e: list(map(str, e.absolute_path)))
    out.append([name, "; ".join("/".join(map(str, e.absolute_path)) + ": " + e.message[:300] for e in errs[:3]) or None])
json.dump(out, sys.stdout)
"#;
    let python = root.join(".venv-test/bin/python");
    let mut child = std::process::Command::new(&python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (scripts/setup --test installs it with jsonschema)",
                python.display()
            )
        });
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the validator failed (scripts/setup --test installs jsonschema into .venv-test): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every shipped scenario is valid under the schema; a misspelt key, a wrongly typed value and
/// a simulator in the wrong role are not (nor does the loader take them).
#[test]
fn the_schema_takes_every_shipped_scenario_and_refuses_mistakes() {
    let mut instances: Vec<(String, String)> = shipped_scenarios()
        .iter()
        .map(|f| {
            (
                f.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(f).unwrap(),
            )
        })
        .collect();
    let shipped = instances.len();
    instances.push(("BASE".into(), BASE.into()));
    let mistakes = [
        ("misspelt top-level key", insert_after(3, "sed: 4")),
        (
            "misspelt nested key",
            replace_line(29, "    start: {x: 0, y: 10, z: -10, heading_dg: 90}"),
        ),
        (
            "misspelt key of a tagged choice",
            insert_after(32, "      capture_radius: 3"),
        ),
        ("wrongly typed value", replace_line(2, "window_ms: ten")),
        (
            "wrongly typed nested value",
            replace_line(18, "      speed_mps: fast"),
        ),
        ("unknown kind", replace_line(17, "      kind: hover")),
        (
            "a network simulator as the physics simulator",
            format!("{BASE}simulators:\n  physics: {{kind: ns3}}\n"),
        ),
        (
            "a ZeroMQ endpoint without its scheme",
            format!("{BASE}simulators:\n  network: {{kind: zeromq, endpoint: '127.0.0.1:5601'}}\n"),
        ),
        (
            "an attach naming neither a container nor a namespace",
            insert_after(28, "    attach: {engine: docker}")
                + "real_time_factor: 1\nnetwork: {capture: tun}\n",
        ),
        (
            "an attach naming both a container and a namespace",
            insert_after(28, "    attach: {container: ct, netns: /run/netns/lab}")
                + "real_time_factor: 1\nnetwork: {capture: tun}\n",
        ),
        (
            "an engine for a namespace",
            insert_after(28, "    attach: {netns: /run/netns/lab, engine: podman}")
                + "real_time_factor: 1\nnetwork: {capture: tun}\n",
        ),
    ];
    for (name, text) in &mistakes {
        assert!(parse(text).is_err(), "the loader takes the {name}");
        instances.push((name.to_string(), text.clone()));
    }
    let results = validate_with_jsonschema(&instances);
    assert_eq!(results.len(), instances.len());
    for (name, error) in &results[..=shipped] {
        assert!(
            error.is_none(),
            "{name} is not valid under the schema: {error:?}"
        );
    }
    for (name, error) in &results[shipped + 1..] {
        assert!(error.is_some(), "the schema takes the {name}");
    }
}

/// `config/default.yaml` documents every key: each key the schema knows is written in it, as a
/// key or in its comments, and its commented `auv_interface` section is a valid one.
#[test]
fn the_default_scenario_names_every_key_of_the_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schema/scenario.schema.json")).unwrap(),
    )
    .unwrap();
    let mut keys = std::collections::BTreeSet::new();
    fn collect(v: &serde_json::Value, keys: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Object(p)) = m.get("properties") {
                    keys.extend(p.keys().cloned());
                }
                m.values().for_each(|v| collect(v, keys));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| collect(v, keys)),
            _ => {}
        }
    }
    collect(&schema, &mut keys);
    assert!(keys.len() > 100, "{keys:?}");
    let text = std::fs::read_to_string(root.join("config/default.yaml")).unwrap();
    let words: std::collections::BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| !words.contains(k.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "config/default.yaml does not show these keys: {missing:?}"
    );

    let (_, section) = text.split_once("\n# auv_interface:\n").unwrap();
    let section: String = section
        .lines()
        .map(|l| l.strip_prefix("# ").unwrap_or_else(|| panic!("{l:?}")))
        .map(|l| format!("{l}\n"))
        .collect();
    let with = format!("{text}auv_interface:\n{section}");
    let loaded = config::parse_str(&with, &root.join("config/default.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        loaded.scenario.auv_interface,
        config::AuvInterface::default()
    );
}

// ---- The command line: `cosim check`, the overrides it shares with `cosim run`, ROS 2 ----

/// `cosim ARGS` from the crate's root: exit code, stdout, stderr.
fn cosim(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The terrain is told by its height samples, their spacing and the extent they span (the
/// default scenario's 1000 m × 400 m at 2 m: 501 × 201 samples); an ns-3 scenario's adapter
/// line has only the devices the scenario has.
#[test]
fn cosim_check_describes_the_terrain_and_only_what_the_scenario_has() {
    let (code, stdout, stderr) = cosim(&["check", "config/default.yaml"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout.lines().next().unwrap(),
        "config/default.yaml: ok — 5 vehicles, 60000 windows of 1 ms (60 s), terrain 501×201 samples, 2 m spacing, 1000 m × 400 m",
    );
    assert!(!stdout.contains("cells"), "{stdout}");
    let (code, stdout, stderr) = cosim(&["check", "config/ns3_acoustic.yaml"]);
    assert_eq!(code, Some(0), "{stderr}");
    let adapter = stdout
        .lines()
        .find(|l| l.starts_with("ns-3 adapter: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(adapter.contains("--uanNodes=0,1,2"), "{adapter}");
    assert!(
        !adapter.contains("wifi"),
        "no Wi-Fi in the scenario: {adapter}"
    );
}

/// `cosim check` takes `cosim run`'s overrides and checks the simulators they choose as a
/// scenario file choosing them is checked.
#[test]
fn cosim_check_validates_the_overrides_run_takes() {
    let (code, stdout, stderr) = cosim(&[
        "check",
        "config/default.yaml",
        "--network-sim",
        "ns3",
        "--duration-s",
        "5",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("5000 windows of 1 ms (5 s)")
            && stdout.contains("network ns3")
            && stdout.contains("ns-3 adapter: netsim-ns3 --bind=ENDPOINT --nodes=5")
            && stdout.contains("--windows=5000"),
        "{stdout}"
    );
    let (code, _, stderr) = cosim(&["check", "config/default.yaml", "--physics-sim", "gazebo"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("error: --physics-sim gazebo: config/default.yaml:")
            && stderr.contains("Gazebo moves the vehicles"),
        "{stderr}"
    );
    let (code, _, stderr) = cosim(&["check", "config/acoustic.yaml", "--network-sim", "ns3"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("--network-sim ns3: config/acoustic.yaml:")
            && stderr.contains("every acoustic link is one UAN channel"),
        "{stderr}"
    );
    // A simulator in the wrong role is refused as `cosim run` refuses it.
    let (code, _, stderr) = cosim(&["check", "config/default.yaml", "--network-sim", "gazebo"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(&config::WrongRole::GazeboAsNetwork.on_command_line()),
        "{stderr}"
    );
}

/// Every program that runs a scenario takes a simulator chosen on its command line through the
/// same checks as `cosim check` and a scenario file choosing it: Gazebo's, the AUV interface's
/// and ns-3's rules refuse the run at loading, naming the flag and the located rule, before
/// anything starts (no output folder is made).
#[test]
fn every_program_checks_the_simulators_its_command_line_chooses_as_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "config/default.yaml",
            "--physics-sim",
            "gazebo",
            "Gazebo moves the vehicles",
        ),
        (
            "config/default.yaml",
            "--physics-sim",
            "auv",
            "the AUV interface simulator moves every vehicle",
        ),
        (
            "config/acoustic.yaml",
            "--network-sim",
            "ns3",
            "every acoustic link is one UAN channel",
        ),
    ];
    for (scenario, flag, kind, rule) in cases {
        let mut programs = vec![
            (
                env!("CARGO_BIN_EXE_cosim"),
                vec!["run", scenario, flag, kind, "--out", out],
            ),
            (
                env!("CARGO_BIN_EXE_physics_coordinator"),
                vec![scenario, flag, kind, "--out", out],
            ),
        ];
        if flag == "--network-sim" {
            programs.push((
                env!("CARGO_BIN_EXE_network_coordinator"),
                vec![
                    scenario,
                    "--bind",
                    "tcp://127.0.0.1:0",
                    flag,
                    kind,
                    "--out",
                    out,
                ],
            ));
        }
        for (program, args) in programs {
            let o = std::process::Command::new(program)
                .args(&args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{program} {args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("{flag} {kind}: {scenario}:")) && stderr.contains(rule),
                "{program} {args:?}: {stderr}"
            );
            assert!(
                !Path::new(out).exists(),
                "{program} {args:?} made its output folder"
            );
        }
    }
}

/// A build without the `ros` feature refuses what only ROS 2 gives, each saying how to build
/// with it, before anything runs; `--version` names the build's features.
#[test]
fn without_the_ros_feature_ros_arguments_and_commands_are_refused_by_name() {
    let (code, stdout, _) = cosim(&["--version"]);
    assert_eq!(code, Some(0));
    if cfg!(feature = "ros") {
        assert!(stdout.contains("(features: ros"), "{stdout}");
        return;
    }
    assert_eq!(
        stdout,
        format!(
            "cosim {} (features: none; without ros, gazebo)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    let how = "build with `cargo build --features ros`";
    // A short unpaced scenario: a build that took these would run it and exit 0 at once.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = cosim(&[
        "run",
        "config/patrol.yaml",
        "--duration-s",
        "0.1",
        "--out",
        out,
        "--ros-args",
        "-p",
        "real_time_factor:=1.0",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: `--ros-args -p real_time_factor:=1.0`: ")
            && stderr.contains(how),
        "{stderr}"
    );
    let (code, _, stderr) = cosim(&[
        "run",
        "config/patrol.yaml",
        "--duration-s",
        "0.1",
        "--out",
        out,
        "--vehicle-netns",
        "ncs-{vehicle}",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("error: --vehicle-netns: ") && stderr.contains(how),
        "{stderr}"
    );
    assert!(
        std::fs::read_dir(out).unwrap().next().is_none(),
        "refused before anything runs"
    );
    let (code, _, stderr) = cosim(&["ros-vehicle-bridge", "--vehicle", "usv1"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("error: ros-vehicle-bridge: ") && stderr.contains(how),
        "{stderr}"
    );
    // Without arguments: its help, which says what it needs.
    let (code, _, stderr) = cosim(&["ros-vehicle-bridge"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("Needs a build with the `ros` feature"),
        "{stderr}"
    );
}

/// An argument that is not UTF-8 is refused by position, never a panic.
#[test]
fn an_argument_that_is_not_utf8_is_refused_without_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cosim"))
        .arg("check")
        .arg(std::ffi::OsStr::from_bytes(b"\xff.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: argument 2 (\u{fffd}.yaml) is not valid UTF-8"),
        "{stderr}"
    );
}

/// `ros` at the top is every vehicle's default; a vehicle's own `ros` overrides it key by key;
/// absent, nothing is set.
#[test]
fn ros_settings_default_to_the_top_level_and_a_vehicle_overrides_them() {
    let loaded = parse(BASE).unwrap();
    let s = &loaded.scenario;
    for v in &s.vehicles {
        assert_eq!(s.vehicle_ros(v), config::RosSettings::default());
        assert!(s.vehicle_ros(v).env().is_empty());
        assert!(!s.vehicle_ros(v).sim_time());
    }
    let text = insert_after(14, "    ros: {domain_id: 9, use_sim_time: false}")
        + "ros: {domain_id: 7, use_sim_time: true, namespace: /fleet}\n";
    let loaded = parse(&text).unwrap();
    let s = &loaded.scenario;
    let a = s.vehicle_ros(&s.vehicles[0]);
    let b = s.vehicle_ros(&s.vehicles[1]);
    assert_eq!((a.domain_id, a.use_sim_time), (Some(9), Some(false)));
    assert_eq!(a.namespace.as_deref(), Some("/fleet"));
    assert_eq!((b.domain_id, b.sim_time()), (Some(7), true));
    let env = |k: &str| {
        b.env()
            .into_iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v)
    };
    assert_eq!(env("ROS_DOMAIN_ID").as_deref(), Some("7"));
    assert_eq!(env("COSIM_ROS_NAMESPACE").as_deref(), Some("/fleet"));
    assert_eq!(env("COSIM_ROS_USE_SIM_TIME").as_deref(), Some("true"));
    // Peers over the vehicle's interface, whatever the caller's shell set.
    assert_eq!(
        env("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref(),
        Some("SUBNET")
    );
    assert_eq!(
        env("COSIM_ROS_ARGS").as_deref(),
        Some("--ros-args -r __ns:=/fleet -p use_sim_time:=true")
    );
    assert_eq!(loaded.source.line_of("vehicles[0].ros.domain_id"), Some(15));
}

/// A domain id beyond ROS 2's 232 and a namespace ROS 2 would refuse are errors at their key
/// and line; unknown keys too.
#[test]
fn ros_settings_are_checked_where_they_are_written() {
    let err = error(&insert_after(3, "ros: {domain_id: 233}"));
    assert_error(&err, "ros.domain_id", 4);
    assert!(err.message.contains("0 to 232 (got 233)"), "{err}");
    for (ns, why) in [
        ("fleet", "must start with '/'"),
        ("/a//b", "empty name"),
        ("/a/", "empty name"),
        ("/1a", "\"1a\" starts with a digit"),
        ("/a-b", "(found '-')"),
    ] {
        let err = error(&insert_after(
            14,
            &format!("    ros:\n      namespace: \"{ns}\""),
        ));
        assert_error(&err, "vehicles[0].ros.namespace", 16);
        assert!(
            err.message.contains(why) && err.message.contains(&format!("{ns:?}")),
            "{ns}: {err}"
        );
    }
    let long = format!("/{}", "a".repeat(300));
    let err = error(&insert_after(3, &format!("ros: {{namespace: \"{long}\"}}")));
    assert_error(&err, "ros.namespace", 4);
    assert!(err.message.len() < 200, "{err}");
    for ns in ["/", "/fleet/auv_1", "/_x"] {
        parse(&insert_after(
            3,
            &format!("ros: {{namespace: \"{ns}\", domain_id: 232}}"),
        ))
        .unwrap_or_else(|e| panic!("{ns}: {e}"));
    }
    let err = error(&insert_after(14, "    ros: {domain: 3}"));
    assert_eq!(err.line, Some(15), "{err}");
    assert!(err.message.contains("domain"), "{err}");
}

/// A build without the `ros` feature refuses a live scenario (`network.capture: tun`) that asks
/// for sim time before `cosim run` starts anything, naming the key, its line and the feature;
/// `cosim check` finds the scenario valid and says the same in a note; without live capture
/// there is no bridge to start.
#[test]
fn without_the_ros_feature_a_scenario_on_sim_time_is_refused_by_its_key() {
    if cfg!(feature = "ros") {
        return;
    }
    let how = "build with `cargo build --features ros`";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    let path = file.to_str().unwrap();
    let live = insert_after(3, "network: {capture: tun}\nreal_time_factor: 1");
    std::fs::write(
        &file,
        live.replace(
            "  - name: b\n",
            "  - name: b\n    ros: {use_sim_time: true}\n",
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = cosim(&["check", path]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("note: valid, but `cosim run` of this build refuses it: ")
            && stderr.contains(&format!("{path}:27:"))
            && stderr.contains(": vehicles[1].ros.use_sim_time: ")
            && stderr.contains("vehicle b runs on sim time")
            && stderr.contains(how),
        "{stderr}"
    );
    std::fs::write(
        &file,
        insert_after(
            3,
            "network: {capture: tun}\nreal_time_factor: 1\nros: {use_sim_time: true}",
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = cosim(&[
        "run",
        path,
        "--duration-s",
        "0.01",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(": ros.use_sim_time: ") && stderr.contains(how),
        "{stderr}"
    );
    assert!(!out.exists(), "refused before anything runs");
    // The same scenario with its vehicle's key: refused by that key and its line.
    std::fs::write(
        &file,
        live.replace(
            "  - name: b\n",
            "  - name: b\n    ros: {use_sim_time: true}\n",
        ),
    )
    .unwrap();
    let (code, _, stderr) = cosim(&[
        "run",
        path,
        "--duration-s",
        "0.01",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{path}:27:"))
            && stderr.contains(": vehicles[1].ros.use_sim_time: ")
            && stderr.contains(how),
        "{stderr}"
    );
    assert!(!out.exists(), "refused before anything runs");
    // Without live capture: nothing to bridge, the scenario runs.
    std::fs::write(&file, insert_after(3, "ros: {use_sim_time: true}")).unwrap();
    let (code, _, stderr) = cosim(&["check", path]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// `vehicles[].attach` (a container or an existing namespace) is checked where it is written:
/// exactly one of the two, a container name the engines take, an absolute namespace path that
/// is not one of the runs' own, one vehicle per namespace, only with live capture, not on sim
/// time, no `cwd` for a container's programs. Neither the container nor the path needs to exist.
#[test]
fn attach_is_checked_where_it_is_written() {
    let live = |attach_b: &str, extra: &str| {
        let mut text = insert_after(28, &format!("    attach: {attach_b}"));
        text += "real_time_factor: 1\nnetwork: {capture: tun}\n";
        text += extra;
        text
    };
    // Valid, with nothing of it on this machine.
    for a in [
        "{container: lab-robot_1.v2}",
        "{container: 3f2a9c, engine: docker}",
        "{netns: /run/netns/lab}",
        "{netns: /proc/4242/ns/net}",
    ] {
        let loaded = parse(&live(a, "")).unwrap_or_else(|e| panic!("{a}: {e}"));
        assert!(loaded.scenario.vehicles[1].attach.is_some());
    }
    let loaded = parse(&live("{container: ct}", "")).unwrap();
    assert_eq!(
        loaded.scenario.vehicles[1]
            .attach
            .as_ref()
            .unwrap()
            .target(),
        Some(config::AttachTo::Container {
            engine: config::ContainerEngine::Podman,
            name: "ct"
        })
    );
    for (a, key, why) in [
        (
            "{}",
            "vehicles[1].attach",
            "exactly one of `container: NAME`",
        ),
        (
            "{container: ct, netns: /run/netns/x}",
            "vehicles[1].attach",
            "exactly one of",
        ),
        (
            "{container: -ct}",
            "vehicles[1].attach.container",
            "\"-ct\" is not a container name: it must start with a letter or digit",
        ),
        (
            "{container: \"c t\"}",
            "vehicles[1].attach.container",
            "(found ' ')",
        ),
        (
            "{container: \"\"}",
            "vehicles[1].attach.container",
            "must name a container",
        ),
        (
            "{netns: run/netns/x}",
            "vehicles[1].attach.netns",
            "\"run/netns/x\" is not an absolute path",
        ),
        (
            "{netns: /run/netns/../x}",
            "vehicles[1].attach.netns",
            "must not contain '..'",
        ),
        (
            "{netns: /run/netns/ncs-b}",
            "vehicles[1].attach.netns",
            "named like the namespaces runs create and remove (ncs-*)",
        ),
        (
            "{netns: /run/netns/x, engine: docker}",
            "vehicles[1].attach.engine",
            "a `netns` needs none",
        ),
    ] {
        let err = error(&live(a, ""));
        assert_eq!(err.key_path, key, "{a}: {err}");
        assert!(err.line.is_some_and(|l| l == 29), "{a}: {err}");
        assert!(err.message.contains(why), "{a}: {err}");
    }
    let err = error(&insert_after(28, "    attach: {engine: lxc, container: x}"));
    assert_eq!(err.line, Some(29), "{err}");
    assert!(err.message.contains("lxc"), "{err}");
    // Only with live capture.
    let err = error(&insert_after(28, "    attach: {container: ct}"));
    assert_error(&err, "vehicles[1].attach", 29);
    assert!(
        err.message
            .contains("vehicle \"b\" lives in a podman container ct, which only live capture uses: set network.capture: tun"),
        "{err}"
    );
    // One vehicle per container or namespace.
    let text = insert_after(28, "    attach: {netns: /run/netns/lab}");
    let text = {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(14, "    attach: {netns: /run/netns/lab}");
        lines.join("\n") + "\nreal_time_factor: 1\nnetwork: {capture: tun}\n"
    };
    let err = error(&text);
    assert_error(&err, "vehicles[1].attach.netns", 30);
    assert!(
        err.message.contains(
            "namespace /run/netns/lab is already a vehicle's at vehicles[0].attach.netns (line 15)"
        ),
        "{err}"
    );
    // Not on sim time: its /clock bridge runs in namespaces the run creates.
    let err = error(&live("{container: ct}", "ros: {use_sim_time: true}\n"));
    assert_error(&err, "vehicles[1].attach", 29);
    assert!(
        err.message
            .contains("runs on sim time (ros.use_sim_time (line")
            && err.message.contains("set use_sim_time: false"),
        "{err}"
    );
    // A container's program starts in its /.
    let programs = "programs:\n  - {name: p, vehicle: b, command: \"true\", cwd: /}\n";
    parse(&live("{netns: /run/netns/lab}", programs)).unwrap();
    let err = error(&live("{container: ct}", programs));
    assert_eq!(err.key_path, "programs[0].cwd", "{err}");
    assert!(
        err.message
            .contains("runs in its container's file system and starts in its /")
            && err.message.contains("vehicles[1].attach (line 29)"),
        "{err}"
    );
}

// ---- beam tracing: the sound-speed profile, the seabed, the tracer's settings ----

/// `  water:` with `rows` (one flow mapping each) as its profile, after BASE's terrain: the
/// water is line 11, the profile line 12, row i line 13 + i.
fn with_profile(rows: &[&str]) -> String {
    let rows: Vec<String> = rows.iter().map(|r| format!("      - {r}")).collect();
    insert_after(10, &format!("  water:\n    profile:\n{}", rows.join("\n")))
}

#[test]
fn beam_settings_have_their_documented_defaults_and_the_profile_resolves_through_mackenzie() {
    use netsim_cosim::config::{sound_speed_mackenzie, AcousticPaths, Propagation, Seabed};
    let loaded = parse(BASE).unwrap();
    let w = &loaded.scenario.world;
    assert_eq!(
        w.seabed,
        Seabed {
            sound_speed_mps: 1650.0,
            density_ratio: 1.9,
            attenuation_db_per_wavelength: 0.8
        }
    );
    assert_eq!(
        w.acoustic_paths,
        AcousticPaths {
            beams: 400,
            launch_angle_deg: 80.0,
            max_arrivals: 64,
            refresh_s: 1.0,
            tolerance_m: 2.0
        }
    );
    assert_eq!(w.water.profile, None);
    // No profile: the water's own temperature and salinity down to the 50 m deep floor.
    let (depths, speeds) = loaded.sound_speed_profile();
    assert_eq!(depths, [0.0, 50.0]);
    assert_eq!(
        speeds,
        [
            sound_speed_mackenzie(10.0, 35.0, 0.0),
            sound_speed_mackenzie(10.0, 35.0, 50.0)
        ]
    );
    let given = parse(&with_profile(&[
        "{depth_m: 0, temperature_c: 20, salinity_ppt: 31}",
        "{depth_m: 20, speed_mps: 1505}",
        "{depth_m: 60, temperature_c: 9}",
    ]))
    .unwrap();
    let (depths, speeds) = given.sound_speed_profile();
    assert_eq!(depths, [0.0, 20.0, 60.0]);
    assert_eq!(
        speeds,
        [
            sound_speed_mackenzie(20.0, 31.0, 0.0),
            1505.0,
            sound_speed_mackenzie(9.0, 35.0, 60.0)
        ]
    );
    let links = parse(&format!(
        "{BASE}links:\n  default: {{model: acoustic, propagation: beam, multipath_window_ms: 12.5}}\n"
    ))
    .unwrap();
    assert!(matches!(
        links.scenario.links.default,
        config::LinkModel::Acoustic {
            propagation: Propagation::Beam,
            multipath_window_ms: Some(w),
            ..
        } if w == 12.5
    ));
    let straight = parse(&format!("{BASE}links:\n  default: {{model: acoustic}}\n")).unwrap();
    assert!(matches!(
        straight.scenario.links.default,
        config::LinkModel::Acoustic {
            propagation: Propagation::Straight,
            multipath_window_ms: None,
            ..
        }
    ));
}

#[test]
fn a_bad_profile_is_located_at_its_row_and_says_why() {
    let cases: &[(&[&str], &str, usize, &str)] = &[
        (
            &[
                "{depth_m: 0, speed_mps: 1500}",
                "{depth_m: 30, speed_mps: 1490}",
                "{depth_m: 20, speed_mps: 1495}",
                "{depth_m: 60, speed_mps: 1495}",
            ],
            "world.water.profile[2].depth_m",
            15,
            "depths must increase from row to row: row 2 is at 20 m, row 1 at 30 m",
        ),
        (
            &[
                "{depth_m: 0, speed_mps: 1500}",
                "{depth_m: 0, speed_mps: 1500}",
            ],
            "world.water.profile[1].depth_m",
            14,
            "row 1 is at 0 m, row 0 at 0 m",
        ),
        (
            &[
                "{depth_m: 5, speed_mps: 1500}",
                "{depth_m: 60, speed_mps: 1500}",
            ],
            "world.water.profile[0].depth_m",
            13,
            "the first row must be at the surface, depth 0 m (got 5 m)",
        ),
        (
            &[
                "{depth_m: 0, speed_mps: 1500}",
                "{depth_m: 60, speed_mps: 1350}",
            ],
            "world.water.profile[1].speed_mps",
            14,
            "the sound speed must be in [1400, 1700] m/s (got 1350.0 m/s)",
        ),
        (
            &[
                "{depth_m: 0, speed_mps: 1800}",
                "{depth_m: 60, speed_mps: 1500}",
            ],
            "world.water.profile[0].speed_mps",
            13,
            "(got 1800.0 m/s)",
        ),
        (
            &[
                "{depth_m: 0, temperature_c: -2, salinity_ppt: 0}",
                "{depth_m: 60, speed_mps: 1500}",
            ],
            "world.water.profile[0].temperature_c",
            13,
            "m/s (Mackenzie at -2 °C, 0 ppt, 0 m)",
        ),
        (
            &[
                "{depth_m: 0, speed_mps: 1500, temperature_c: 10}",
                "{depth_m: 60, speed_mps: 1500}",
            ],
            "world.water.profile[0]",
            13,
            "gives both speed_mps and temperature_c",
        ),
        (
            &[
                "{depth_m: 0, speed_mps: 1500}",
                "{depth_m: 60, salinity_ppt: 35}",
            ],
            "world.water.profile[1]",
            14,
            "gives neither speed_mps nor temperature_c",
        ),
        (
            &[
                "{depth_m: 0, speed_mps: 1500}",
                "{depth_m: 40, speed_mps: 1500}",
            ],
            "world.water.profile",
            12,
            "the last row is at 40 m but the terrain reaches 50.00 m deep",
        ),
    ];
    for &(rows, key, line, message) in cases {
        let err = error(&with_profile(rows));
        assert_error(&err, key, line);
        assert!(err.message.contains(message), "{err}");
    }
}

#[test]
fn bad_seabed_tracer_and_window_settings_name_key_and_line() {
    let world: &[(&str, &str, &str)] = &[
        (
            "  seabed: {density_ratio: -1}",
            "world.seabed.density_ratio",
            "must be > 0",
        ),
        (
            "  seabed: {attenuation_db_per_wavelength: -0.1}",
            "world.seabed.attenuation_db_per_wavelength",
            "must be ≥ 0 and finite (got -0.1)",
        ),
        (
            "  seabed: {sound_speed_mps: 0}",
            "world.seabed.sound_speed_mps",
            "must be > 0",
        ),
        (
            "  acoustic_paths: {beams: 2}",
            "world.acoustic_paths.beams",
            "[3, 10000] (got 2)",
        ),
        (
            "  acoustic_paths: {launch_angle_deg: 95}",
            "world.acoustic_paths.launch_angle_deg",
            "(0, 90] degrees (got 95)",
        ),
        (
            "  acoustic_paths: {max_arrivals: 300}",
            "world.acoustic_paths.max_arrivals",
            "[1, 256] (got 300)",
        ),
        (
            "  acoustic_paths: {refresh_s: 0}",
            "world.acoustic_paths.refresh_s",
            "must be > 0",
        ),
        (
            "  acoustic_paths: {tolerance_m: -1}",
            "world.acoustic_paths.tolerance_m",
            "must be ≥ 0",
        ),
    ];
    for &(text, key, message) in world {
        let err = error(&insert_after(10, text));
        assert_error(&err, key, 11);
        assert!(err.message.contains(message), "{err}");
    }
    let err = error(&format!(
        "{BASE}links:\n  default: {{model: acoustic, multipath_window_ms: 0}}\n"
    ));
    assert_error(&err, "links.default.multipath_window_ms", 41);
    let err = error(&format!(
        "{BASE}links:\n  default: {{model: acoustic, propagation: curved}}\n"
    ));
    assert_eq!(err.line, Some(41), "{err}");
    let err = error(&format!(
        "{BASE}acoustic_modems:\n  propagation: beam\n  multipath_window_ms: -1\n"
    ));
    assert_error(&err, "acoustic_modems.multipath_window_ms", 42);
}

/// `vehicles[].host` and `network.agents`: each rule's error at its key and line.
#[test]
fn a_vehicle_on_another_machine_is_checked() {
    // Vehicle b, its modem left out, on agent hostb; live, paced.
    let live = |extra: &str| {
        let text = replace_line(28, "    host: hostb")
            .replace("name: test\n", "name: test\nreal_time_factor: 1.0\n");
        format!("{text}network:\n  capture: tun\n{extra}")
    };
    let ok = parse(&live("")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.scenario.agents(), vec!["hostb".to_owned()]);
    assert_eq!(ok.scenario.network.agents.bind, "127.0.0.1:5610");

    let e = error(&replace_line(28, "    host: hostb"));
    assert_error(&e, "vehicles[1].host", 28);
    assert!(e.message.contains("only live capture uses"), "{e}");

    let e = error(&live("").replace("    host: hostb", "    host: Host_B"));
    assert_error(&e, "vehicles[1].host", 29);
    assert!(e.message.contains("character 1 ('H')"), "{e}");

    let e = error(&live("").replace("  - name: a\n", "  - name: a\n    host: hostc\n"));
    assert_error(&e, "vehicles[0].host", 14);
    assert!(e.message.contains("has a modem"), "{e}");

    let e = error(&live("  offload: true\n"));
    assert_error(&e, "network.offload", 43);
    assert!(e.message.contains("set network.offload: false"), "{e}");

    let e = error(&live("  agents: {bind: \"localhost:5610\"}\n"));
    assert_error(&e, "network.agents.bind", 43);
    assert!(e.message.contains("must be ADDRESS:PORT"), "{e}");

    let e = error(&live("  agents: {timeout_ms: 0}\n"));
    assert_error(&e, "network.agents.timeout_ms", 43);

    let e = error(&live("ros: {use_sim_time: true}\n"));
    assert_error(&e, "vehicles[1].host", 29);
    assert!(e.message.contains("/clock bridge"), "{e}");
}

#[test]
fn traffic_flows_are_checked_key_by_key() {
    // BASE then `traffic.flows` from line 42, one flow per line; key path and line expected.
    let with = |flows: &[&str]| format!("{BASE}traffic:\n  flows:\n{}\n", flows.join("\n"));
    let ok = "    - {name: ok, from: a, to: b, send: {kind: udp, rate_kbps: 10}}";
    let cases: &[(&[&str], &str, usize, &str)] = &[
        (&[ok, ok], "traffic.flows[1].name", 43, "already used at traffic.flows[0].name (line 42)"),
        (&["    - {name: x, from: a, to: z, send: {kind: ping}}"], "traffic.flows[0].to", 42, "no vehicle is named \"z\""),
        (&["    - {name: x, from: a, to: a, send: {kind: ping}}"], "traffic.flows[0].to", 42, "is the sender"),
        (&["    - {name: x, from: a, to: b, send: {kind: heartbeat}}"], "traffic.flows[0].to", 42, "leave `to` out"),
        (&["    - {name: x, from: a, send: {kind: udp, rate_kbps: 10}}"], "traffic.flows[0]", 42, "needs `to`"),
        (&["    - {name: x, from: a, to: b, send: {kind: udp, rate_kbps: 10, size_bytes: 8}}"], "traffic.flows[0].send.size_bytes", 42, "16 to 1472"),
        (&["    - {name: x, from: a, to: b, send: {kind: udp, rate_kbps: 0}}"], "traffic.flows[0].send.rate_kbps", 42, "> 0"),
        (&["    - {name: x, from: a, to: b, start_s: 5, send: {kind: ping}}"], "traffic.flows[0].start_s", 42, "below duration_s"),
        (&["    - {name: x, from: a, to: b, start_s: 2, stop_s: 1, send: {kind: ping}}"], "traffic.flows[0].stop_s", 42, "after start_s"),
        (&["    - {name: x, from: a, send: {kind: heartbeat, group: 10.0.0.9}}"], "traffic.flows[0].send.group", 42, "not an IPv4 multicast group"),
        (&[ok, "    - {name: y, from: a, to: b, send: {kind: udp, rate_kbps: 5}}"], "traffic.flows[1].send.port", 43, "udp port 5000 of \"b\" is already the receiving end of traffic.flows[0] (line 42)"),
        (&["    - {name: x, from: a, to: b, send: {kind: tcp, bytes: 0}}"], "traffic.flows[0].send.bytes", 42, "must be > 0"),
        (&["    - {name: x, from: a, to: b, send: {kind: ping, rate_kbps: 1}}"], "traffic.flows[0].send.rate_kbps", 42, "unknown field `rate_kbps`, expected `interval_s` or `size_bytes`"),
        (&["    - {name: x, from: a, to: b, send: {kind: udp, rate_kbps: 1, pattern: {kind: on_off, on_s: 0, off_s: 1}}}"], "traffic.flows[0].send.pattern.on_s", 42, "> 0"),
        (&["    - {name: x, from: a, to: b, send: {kind: request, response_bytes: 0}}"], "traffic.flows[0].send.response_bytes", 42, "must be 1 to 67108864 bytes"),
        (&["    - {name: x, from: a, to: b, send: {kind: request, interval_s: 0}}"], "traffic.flows[0].send.interval_s", 42, "> 0"),
        (&["    - {name: x, from: a, to: b, send: {kind: request, buffer_bytes: 100}}"], "traffic.flows[0].send.buffer_bytes", 42, "4096 to 4194304"),
        (&["    - {name: x, from: a, to: b, send: {kind: tcp, port: 8080}}", "    - {name: y, from: a, to: b, send: {kind: request}}"], "traffic.flows[1].send.port", 43, "tcp port 8080 of \"b\" is already the receiving end of traffic.flows[0] (line 42)"),
    ];
    for &(flows, key, line, says) in cases {
        let err = error(&with(flows));
        assert_error(&err, key, line);
        assert!(err.message.contains(says), "{err}");
    }
    let ok_text = with(&[ok, "    - {name: hb, from: b, send: {kind: heartbeat}}"]);
    assert_eq!(parse(&ok_text).unwrap().scenario.traffic.flows.len(), 2);
    // Generated traffic runs beside live traffic.
    let both = parse(&format!(
        "{ok_text}network: {{capture: tun}}\nreal_time_factor: 1\n"
    ))
    .unwrap();
    assert_eq!(both.scenario.traffic.flows.len(), 2);
}
