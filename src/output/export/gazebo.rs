//! A scenario as a Gazebo (gz-sim) world, for `cosim export-gazebo SCENARIO DIR`: the terrain
//! as a heightmap with the same extent and heights, the vehicles as models at their start poses
//! that publish their poses, the world's step size, and the `ros_gz_bridge` configuration for
//! the world's control service, the vehicles' poses and the clock. Gazebo and the channel's
//! raycasts then see the same seafloor.
//!
//! The heightmap is a square 16-bit grayscale PNG of 2^n + 1 pixels a side (what Gazebo
//! accepts), the smallest such side that is at least the grid's samples along its longer side.
//! Pixel (i, j) samples the terrain's surface at x = −X/2 + j·X/(N−1), y = Y/2 − i·Y/(N−1), where X
//! and Y are the terrain's extent, so row 0 is the northern edge. The lowest height maps to 0 and
//! the highest to 65535. Gazebo (gz-common's `ImageHeightmap`, then gz-physics and gz-rendering)
//! scales a pixel by the image's brightest one to `<size>`'s z, and places the shape centred on its
//! link; gz-physics ignores `<pos>`. So the SDF states `<size>X Y (max − min)</size>` and the
//! terrain model's `<pose>` lifts it to `min`: z = min + v / 65535 · (max − min).

use crate::config::{GazeboSettings, HeightGrid, LoadedScenario};
use anyhow::Context;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The largest heightmap side written (2^12 + 1 pixels).
pub const MAX_SIDE: usize = 4097;

/// The terrain resampled for Gazebo.
#[derive(Debug, Clone, PartialEq)]
pub struct Heightmap {
    /// Pixels per side (2^n + 1).
    pub side: usize,
    /// Row-major 16-bit values, row 0 = north.
    pub pixels: Vec<u16>,
    /// Height of value 0 and of value 65535 (m).
    pub min_m: f64,
    pub max_m: f64,
    /// Extent, `[x, y]` (m), centred on the origin.
    pub size_m: [f64; 2],
}

impl Heightmap {
    /// `grid` resampled onto the smallest square of 2^n + 1 pixels that keeps its resolution.
    pub fn from_grid(grid: &HeightGrid) -> Heightmap {
        let (cols, rows) = grid.dims();
        let side = side_for(cols.max(rows));
        let half = grid.half_extent();
        let size_m = [2.0 * half[0], 2.0 * half[1]];
        let step = |n: usize, extent: f64| extent / (side - 1) as f64 * n as f64;
        let mut heights = Vec::with_capacity(side * side);
        for i in 0..side {
            let y = half[1] - step(i, size_m[1]);
            for j in 0..side {
                let x = -half[0] + step(j, size_m[0]);
                heights.push(grid.height_at_unchecked(x, y));
            }
        }
        let min_m = heights.iter().copied().fold(f64::INFINITY, f64::min);
        let max_m = heights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = max_m - min_m;
        let pixels = heights
            .iter()
            .map(|h| {
                if range > 0.0 {
                    ((h - min_m) / range * 65535.0).round().clamp(0.0, 65535.0) as u16
                } else {
                    0
                }
            })
            .collect();
        Heightmap {
            side,
            pixels,
            min_m,
            max_m,
            size_m,
        }
    }

    /// The 16-bit grayscale PNG.
    pub fn png(&self) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        let side = u32::try_from(self.side).context("heightmap side")?;
        let mut enc = png::Encoder::new(&mut out, side, side);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        let mut writer = enc.write_header()?;
        let bytes: Vec<u8> = self.pixels.iter().flat_map(|v| v.to_be_bytes()).collect();
        writer.write_image_data(&bytes)?;
        writer.finish()?;
        Ok(out)
    }

    /// Height span written in the SDF (`<size>`'s z): at least 1 mm, as Gazebo needs one.
    pub fn span_m(&self) -> f64 {
        (self.max_m - self.min_m).max(1e-3)
    }
}

/// The smallest 2^n + 1 ≥ `samples` (at least 3), at most [`MAX_SIDE`].
pub fn side_for(samples: usize) -> usize {
    let mut side = 3;
    while side < samples && side < MAX_SIDE {
        side = (side - 1) * 2 + 1;
    }
    side
}

/// The Gazebo world's step (s) and steps per window: the scenario's `simulators.physics`
/// settings if it is Gazebo (see [`GazeboSettings::steps`]), else W split into the fewest equal
/// steps no longer than `simulators.physics_step_ms`.
pub fn step_s(loaded: &LoadedScenario) -> anyhow::Result<(f64, u32)> {
    let s = &loaded.scenario;
    GazeboSettings::of(&s.simulators.physics)
        .steps(s.window_ms, s.simulators.physics_step_ms)
        .map_err(|e| anyhow::anyhow!("simulators.physics.step_ms: {e}"))
}

/// What [`export`] wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    pub world: PathBuf,
    pub heightmap: PathBuf,
    pub bridge: PathBuf,
    pub map: Heightmap,
    /// The world's step (s) and steps per window.
    pub step_s: f64,
    pub steps_per_window: u32,
}

/// Writes `world.sdf`, `terrain.png` and `bridge.yaml` for `loaded` into `dir` (created).
pub fn export(loaded: &LoadedScenario, dir: &Path) -> anyhow::Result<Exported> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let map = Heightmap::from_grid(&loaded.terrain);
    let (step_s, steps_per_window) = step_s(loaded)?;
    let heightmap = dir.join("terrain.png");
    std::fs::write(&heightmap, map.png()?)
        .with_context(|| format!("cannot write {}", heightmap.display()))?;
    let world = dir.join("world.sdf");
    std::fs::write(&world, world_sdf(loaded, &map, step_s))
        .with_context(|| format!("cannot write {}", world.display()))?;
    let bridge = dir.join("bridge.yaml");
    std::fs::write(&bridge, bridge_yaml(loaded))
        .with_context(|| format!("cannot write {}", bridge.display()))?;
    Ok(Exported {
        world,
        heightmap,
        bridge,
        map,
        step_s,
        steps_per_window,
    })
}

/// The scenario's Gazebo settings (its `simulators.physics` if that is Gazebo, else the defaults).
fn settings(loaded: &LoadedScenario) -> GazeboSettings {
    GazeboSettings::of(&loaded.scenario.simulators.physics)
}

fn world_sdf(loaded: &LoadedScenario, map: &Heightmap, step_s: f64) -> String {
    let g = settings(loaded);
    let name = g.world_name(&loaded.scenario.name);
    let [sx, sy] = map.size_m;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<?xml version="1.0"?>
<!-- Written by `cosim export-gazebo` from the scenario {file}: the terrain as a heightmap
     (terrain.png, {side}×{side} pixels over {sx} × {sy} m, heights {min:.3} to {max:.3} m), the
     vehicles at their start poses, a step of {step_ms} ms. -->
<sdf version="1.9">
  <world name="{name}">
    <physics name="lockstep" type="ignored">
      <max_step_size>{step_s}</max_step_size>
      <real_time_factor>0</real_time_factor>
    </physics>
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <plugin filename="gz-sim-user-commands-system" name="gz::sim::systems::UserCommands"/>
    <plugin filename="gz-sim-scene-broadcaster-system" name="gz::sim::systems::SceneBroadcaster"/>
    <gravity>0 0 -9.8</gravity>
    <model name="terrain">
      <static>true</static>
      <pose>0 0 {min} 0 0 0</pose>
      <link name="seafloor">
        <collision name="collision">{heightmap}</collision>
        <visual name="visual">{heightmap}</visual>
      </link>
    </model>
"#,
        file = loaded.file.display(),
        side = map.side,
        min = map.min_m,
        max = map.max_m,
        step_ms = step_s * 1e3,
        heightmap = format!(
            "\n          <geometry>\n            <heightmap>\n              <uri>terrain.png</uri>\n              <size>{sx} {sy} {span}</size>\n              \
             <pos>0 0 0</pos>\n            </heightmap>\n          </geometry>\n        ",
            span = map.span_m()
        ),
    );
    for v in &loaded.scenario.vehicles {
        let start = v.start();
        let yaw = (90.0 - start.heading_deg).to_radians(); // compass heading → ENU yaw
        let _ = write!(
            s,
            r#"    <model name="{name}">
      <pose>{x} {y} {z} 0 0 {yaw}</pose>
      <link name="base_link">
        <gravity>false</gravity>
        <inertial><mass>100</mass></inertial>
        <collision name="collision"><geometry><box><size>2 0.5 0.5</size></box></geometry></collision>
        <visual name="visual"><geometry><box><size>2 0.5 0.5</size></box></geometry></visual>
      </link>
      <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">
        <publish_link_pose>false</publish_link_pose>
        <publish_model_pose>true</publish_model_pose>
        <use_pose_vector_msg>false</use_pose_vector_msg>
        <update_frequency>-1</update_frequency>
      </plugin>
    </model>
"#,
            name = g.model(&v.name),
            x = start.x,
            y = start.y,
            z = start.z,
        );
    }
    s.push_str("  </world>\n</sdf>\n");
    s
}

fn bridge_yaml(loaded: &LoadedScenario) -> String {
    let g = settings(loaded);
    let name = g.world_name(&loaded.scenario.name);
    let control = g.control_service(&loaded.scenario.name);
    let mut s = format!(
        "# ros_gz_bridge configuration written by `cosim export-gazebo` for the world `{name}`:\n\
         # Gazebo's clock (on /gazebo/clock: /clock is the lockstep's, the coordinator's), every\n\
         # vehicle's pose from Gazebo, the world's control service to it.\n\
         - ros_topic_name: \"/gazebo/clock\"\n  gz_topic_name: \"/clock\"\n  ros_type_name: \"rosgraph_msgs/msg/Clock\"\n  gz_type_name: \"gz.msgs.Clock\"\n  direction: GZ_TO_ROS\n\
         - service_name: \"{control}\"\n  ros_type_name: \"ros_gz_interfaces/srv/ControlWorld\"\n  gz_req_type_name: \"gz.msgs.WorldControl\"\n  gz_rep_type_name: \"gz.msgs.Boolean\"\n"
    );
    for v in &loaded.scenario.vehicles {
        let _ = write!(
            s,
            "- ros_topic_name: \"{t}\"\n  gz_topic_name: \"{t}\"\n  ros_type_name: \"geometry_msgs/msg/PoseStamped\"\n  gz_type_name: \"gz.msgs.Pose\"\n  direction: GZ_TO_ROS\n",
            t = GazeboSettings::pose_topic(g.model(&v.name))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_two_to_the_n_plus_one() {
        assert_eq!(
            [2, 3, 4, 33, 34, 500, 501, 5000].map(side_for),
            [3, 3, 5, 33, 65, 513, 513, MAX_SIDE]
        );
    }

    #[test]
    fn the_heightmap_rebuilds_the_grid_and_its_corners_exactly() {
        // 5 × 3 samples, 10 m apart: a slope east plus a bump; heights −40 … −24.
        let heights: Vec<f64> = (0..15)
            .map(|k| -40.0 + (k % 5) as f64 * 4.0 + if k == 7 { 4.0 } else { 0.0 })
            .collect();
        let grid = HeightGrid::new("t", heights, 5, 3, 10.0).unwrap();
        let map = Heightmap::from_grid(&grid);
        assert_eq!((map.side, map.size_m), (5, [40.0, 20.0]));
        assert_eq!((map.min_m, map.max_m), (-40.0, -24.0));
        // Pixel (i, j) is the surface at x = −20 + 10·j, y = 10 − 5·i; its value scales back.
        let height = |i: usize, j: usize| {
            map.min_m + f64::from(map.pixels[i * map.side + j]) / 65535.0 * (map.max_m - map.min_m)
        };
        for (i, j) in [(0, 0), (4, 4), (2, 2), (4, 0), (1, 3)] {
            let (x, y) = (-20.0 + 10.0 * j as f64, 10.0 - 5.0 * i as f64);
            let (a, b) = (height(i, j), grid.height_at(x, y).unwrap());
            assert!((a - b).abs() < 16.0 / 65535.0, "({x}, {y}): {a} vs {b}");
        }
        let png = map.png().unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().unwrap();
        assert_eq!(
            (reader.info().width, reader.info().bit_depth),
            (5, png::BitDepth::Sixteen)
        );
    }
}
