//! `cosim export-gazebo`: the world it writes is accepted by the real SDFormat parser
//! (Debian's libsdformat 12, `ign sdf -k`, installed by `scripts/setup --test`), and the
//! heightmap it writes gives back the scenario's terrain heights within one cell's
//! interpolation at sampled points.

use netsim_cosim::config;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// `ign sdf -k FILE`: whether the parser accepts it, and what it said.
fn sdf_check(file: &Path) -> (bool, String) {
    let out = Command::new("ign")
        .args(["sdf", "-k"])
        .arg(file)
        .output()
        .expect("ign (ignition-tools, libsdformat-dev) is missing: scripts/setup --test");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The 16-bit grayscale PNG at `path`: side and values.
fn read_png(path: &Path) -> (usize, Vec<u16>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let info = reader.info().clone();
    assert_eq!(
        (info.width, info.color_type, info.bit_depth),
        (
            info.height,
            png::ColorType::Grayscale,
            png::BitDepth::Sixteen
        )
    );
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    (
        info.width as usize,
        buf.chunks(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .collect(),
    )
}

/// The numbers in the first `<tag>` element of `text`.
fn numbers(text: &str, tag: &str) -> Vec<f64> {
    let start = text
        .find(&format!("<{tag}>"))
        .unwrap_or_else(|| panic!("no <{tag}>"))
        + tag.len()
        + 2;
    let end = start + text[start..].find('<').unwrap();
    text[start..end]
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn the_exported_world_is_valid_sdf_and_its_heightmap_is_the_terrain() {
    for scenario in ["config/default.yaml", "config/seamount_png.yaml"] {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_cosim"))
            .args(["export-gazebo", repo(scenario).to_str().unwrap()])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{scenario}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let world = dir.path().join("world.sdf");
        let (ok, said) = sdf_check(&world);
        assert!(
            ok,
            "{scenario}: the SDFormat parser refused the world:\n{said}"
        );

        // The parser is not a rubber stamp: the same world with a step that is not a number, or
        // with two models of one name, is refused.
        let text = std::fs::read_to_string(&world).unwrap();
        let loaded = config::load(&repo(scenario)).unwrap();
        let (first, second) = (
            &loaded.scenario.vehicles[0].name,
            &loaded.scenario.vehicles[1].name,
        );
        let broken = dir.path().join("broken.sdf");
        let step = text.find("<max_step_size>").unwrap();
        let end = step + text[step..].find("</max_step_size>").unwrap();
        for bad in [
            format!("{}<max_step_size>fast{}", &text[..step], &text[end..]),
            text.replace(
                &format!("<model name=\"{second}\">"),
                &format!("<model name=\"{first}\">"),
            ),
        ] {
            std::fs::write(&broken, bad).unwrap();
            assert!(!sdf_check(&broken).0, "{scenario}: a broken world passed");
        }

        // Every vehicle is a model at its start pose; the world steps W in whole steps.
        for v in &loaded.scenario.vehicles {
            assert!(
                text.contains(&format!("<model name=\"{}\">", v.name)),
                "{scenario}: no model {}",
                v.name
            );
        }
        let step = numbers(&text, "max_step_size")[0];
        let per_window = loaded.schedule().window_s() / step;
        assert!(
            (per_window - per_window.round()).abs() < 1e-9 && per_window >= 1.0,
            "{scenario}: step {step} s"
        );

        // The heightmap: square, 2^n + 1 a side, its extent and heights those of the terrain.
        let (side, pixels) = read_png(&dir.path().join("terrain.png"));
        let brightest = pixels.iter().copied().max().unwrap().max(1);
        assert!(
            side >= 3 && (side - 1).is_power_of_two(),
            "{scenario}: side {side}"
        );
        let size = numbers(&text, "size");
        // The terrain model's pose (the first <pose> after it) lifts the heightmap to its lowest height.
        let terrain = &text[text.find("<model name=\"terrain\">").unwrap()..];
        let lift = numbers(terrain, "pose")[2];
        let grid = &loaded.terrain;
        let half = grid.half_extent();
        assert_eq!(
            (size[0], size[1]),
            (2.0 * half[0], 2.0 * half[1]),
            "{scenario}: extent"
        );
        // What Gazebo rebuilds: z = the model's z + value / (brightest value) · size.z, bilinear
        // between pixels, the image's top row at +y.
        let gazebo = |x: f64, y: f64| {
            let n = (side - 1) as f64;
            let gx = (x + half[0]) / size[0] * n;
            let gy = (half[1] - y) / size[1] * n;
            let (j, i) = (
                (gx.floor() as usize).min(side - 2),
                (gy.floor() as usize).min(side - 2),
            );
            let (u, v) = (gx - j as f64, gy - i as f64);
            let p = |i: usize, j: usize| f64::from(pixels[i * side + j]);
            let value = (1.0 - v) * ((1.0 - u) * p(i, j) + u * p(i, j + 1))
                + v * ((1.0 - u) * p(i + 1, j) + u * p(i + 1, j + 1));
            lift + value / f64::from(brightest) * size[2]
        };
        // Sampled points on a 37 × 23 lattice (not aligned with either grid); the tolerance is
        // what the terrain spans within one cell of the point, plus the 16-bit step.
        let (cols, rows) = grid.dims();
        let cell = grid.cell_size();
        let mut worst: f64 = 0.0;
        for a in 0..37 {
            for b in 0..23 {
                let x = -half[0] + (a as f64 + 0.37) / 37.0 * 2.0 * half[0];
                let y = -half[1] + (b as f64 + 0.61) / 23.0 * 2.0 * half[1];
                let want = grid.height_at(x, y).unwrap();
                let c = (((x + half[0]) / cell).floor() as usize).min(cols - 2);
                let r = (((half[1] - y) / cell).floor() as usize).min(rows - 2);
                // The samples within one cell of the point in every direction (the heightmap's
                // pixels are at most a cell apart, so its interpolation stays among them).
                let near: Vec<f64> = (r.saturating_sub(1)..=(r + 2).min(rows - 1))
                    .flat_map(|i| {
                        (c.saturating_sub(1)..=(c + 2).min(cols - 1)).map(move |j| (i, j))
                    })
                    .map(|(i, j)| grid.h(i, j))
                    .collect();
                let span = near.iter().fold(f64::MIN, |m, &h| m.max(h))
                    - near.iter().fold(f64::MAX, |m, &h| m.min(h));
                let got = gazebo(x, y);
                assert!((got - want).abs() <= span + size[2] / 65535.0 + 1e-9, "{scenario}: at ({x:.2}, {y:.2}) Gazebo gets {got:.4} m, the terrain is {want:.4} m (cell spans {span:.4} m)");
                worst = worst.max((got - want).abs());
            }
        }
        println!("{scenario}: {side}×{side} heightmap over {}×{} samples; worst height difference {worst:.4} m", cols, rows);
    }
}

/// With Gazebo as its physics simulator, the scenario's Gazebo settings name the exported world
/// and models, and set its step: config/gazebo.yaml with `world: harbour` and auv1 as the model
/// `my_auv`. The bridge then carries that world's control service and those models' poses, and
/// Gazebo's clock on /gazebo/clock (/clock is the coordinator's).
#[test]
fn the_exported_world_takes_the_scenarios_gazebo_names_and_step() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("config/gazebo.yaml")).unwrap();
    let named = text.replace(
        "    # models: {auv1: my_auv}",
        "    models: {auv1: my_auv}\n    world: harbour",
    );
    assert_ne!(named, text);
    let scenario = dir.path().join("gz.yaml");
    std::fs::write(&scenario, named).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .arg("export-gazebo")
        .arg(&scenario)
        .arg(dir.path().join("w"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let world = dir.path().join("w/world.sdf");
    let (ok, said) = sdf_check(&world);
    assert!(ok, "{said}");
    let sdf = std::fs::read_to_string(&world).unwrap();
    assert!(sdf.contains("<world name=\"harbour\">"), "{sdf}");
    assert!(sdf.contains("<model name=\"my_auv\">") && !sdf.contains("<model name=\"auv1\">"));
    assert!(sdf.contains("<model name=\"usv1\">") && sdf.contains("<model name=\"usv2\">"));
    assert_eq!(
        numbers(&sdf, "max_step_size"),
        vec![0.002],
        "W = 10 ms in 5 steps of physics_step_ms"
    );
    let bridge = std::fs::read_to_string(dir.path().join("w/bridge.yaml")).unwrap();
    for s in [
        "service_name: \"/world/harbour/control\"",
        "\"/model/my_auv/pose\"",
        "ros_topic_name: \"/gazebo/clock\"",
        "gz_topic_name: \"/clock\"",
    ] {
        assert!(bridge.contains(s), "{s} not in {bridge}");
    }
    assert!(!bridge.contains("/model/auv1/pose"), "{bridge}");
}
