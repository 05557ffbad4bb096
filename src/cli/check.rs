//! `cosim check`: a scenario loaded and validated with the overrides `cosim run` would take
//! (`--physics-sim`, `--network-sim`, `--duration-s`), and what it holds printed.

use super::args::CheckArgs;
use super::overrides::apply;
use crate::config::cast::SpeedFrom;
use crate::config::{
    LoadedScenario, Motion, NetworkEndpoint, PhysicsEndpoint, RasterValues, Terrain, TrackEnd,
};

/// `cosim check SCENARIO [overrides]`: prints the scenario's description, exit code 0; the
/// first problem as an error otherwise. What only `cosim run` of this build refuses (sim time
/// without the `ros` feature) is a note on stderr: the scenario itself is valid.
pub fn command(args: &CheckArgs) -> anyhow::Result<i32> {
    // Loading reads the terrain and checks every start and waypoint against it.
    let mut loaded = super::load(&args.scenario)?;
    apply(&mut loaded, &args.overrides)?;
    if let Some(e) = super::sim_time_refused(&loaded) {
        eprintln!("note: valid, but `cosim run` of this build refuses it: {e}");
    }
    print!("{}", describe(&loaded)?);
    Ok(0)
}

/// What `cosim check` prints for a valid scenario: its vehicles, windows and terrain, its
/// simulators and, for those run from elsewhere, what they need (the ns-3 adapter's command
/// line, Gazebo's world, steps and models). Only what the scenario has.
pub fn describe(loaded: &LoadedScenario) -> anyhow::Result<String> {
    let s = &loaded.scenario;
    let schedule = loaded.schedule();
    let (cols, rows) = loaded.terrain.dims();
    let cell = loaded.terrain.cell_size();
    let mut text = format!(
        "{}: ok — {} vehicles, {} windows of {} ms ({} s), terrain {cols}×{rows} samples, {} m spacing, {} m × {} m\n",
        loaded.file.display(),
        s.vehicles.len(),
        schedule.windows,
        s.window_ms,
        metres(schedule.duration_ns() as f64 / 1e9),
        metres(cell),
        metres(cols.saturating_sub(1) as f64 * cell),
        metres(rows.saturating_sub(1) as f64 * cell),
    );
    text.push_str(&format!(
        "simulators: physics {}, network {}\n",
        s.simulators.physics, s.simulators.network
    ));
    // A georeferenced terrain: the file, what its values are, its cells and their CRS.
    let raster = match &s.world.terrain {
        Terrain::AsciiGrid { path, values, .. } => Some(("ESRI ASCII grid", path, values)),
        Terrain::Geotiff { path, values, .. } => Some(("GeoTIFF", path, values)),
        Terrain::Netcdf { path, values, .. } => Some(("NetCDF grid", path, values)),
        _ => None,
    };
    if let Some((kind, path, values)) = raster {
        let what = match values {
            RasterValues::Height => "heights",
            RasterValues::Depth => "depths",
        };
        text.push_str(&format!(
            "terrain from {path}: {kind} of {what}, {}, resampled around ({}, {})\n",
            loaded.terrain.source().unwrap_or("its cells"),
            s.world.origin.lat_deg,
            s.world.origin.lon_deg
        ));
    }
    // Each CTD cast: its file, where it was taken, its depths and speeds.
    for c in s.world.water.casts.iter().flatten() {
        if let (Some(read), Some(at)) = (&c.read, c.at) {
            let (lo, hi) = read
                .speed_mps
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            let from = match read.speed_from {
                SpeedFrom::Measured => "measured",
                SpeedFrom::TemperatureSalinity => "Mackenzie from temperature and salinity",
                SpeedFrom::Temperature => "Mackenzie from temperature, the water's salinity",
            };
            let depth = read.depth_m.last().copied().unwrap_or(0.0);
            let held = if depth < loaded.deepest_m() {
                format!(", held below to {} m", metres(loaded.deepest_m()))
            } else {
                String::new()
            };
            text.push_str(&format!(
                "cast {}: at ({}, {}) m, {} rows from {} to {} m{}{}, {lo:.1}–{hi:.1} m/s \
                 ({from}){held}\n",
                read.file,
                metres(at[0]),
                metres(at[1]),
                read.depth_m.len(),
                metres(read.depth_m[0]),
                metres(depth),
                if read.from_pressure {
                    " (from pressure)"
                } else {
                    ""
                },
                if read.left_out > 0 {
                    format!(", {} rows left out", read.left_out)
                } else {
                    String::new()
                },
            ));
        }
    }
    // Each logged track: its file, samples, span and how it is replayed.
    for v in &s.vehicles {
        if let Motion::Track(t) = &v.motion {
            if let Some(log) = &t.log {
                let at_end = match t.at_end {
                    TrackEnd::Hold => "then holds",
                    TrackEnd::Loop => "then loops",
                    TrackEnd::EndRun => "then the run ends",
                };
                let topic = t.topic.as_ref().map_or(String::new(), |t| format!(" {t}"));
                text.push_str(&format!(
                    "track {}: {}{topic} ({} samples, {} over {} s{}), from {} s, {at_end}\n",
                    v.name,
                    log.file,
                    log.samples.len(),
                    if log.positions == "lat_lon" {
                        "latitude/longitude"
                    } else {
                        "x/y"
                    },
                    metres(log.duration_s()),
                    if log.headings { ", headings" } else { "" },
                    metres(t.offset_s),
                ));
            }
        }
    }
    // The command line an ns-3 adapter started by hand (e.g. on another host) needs.
    if let NetworkEndpoint::Ns3(settings) = &s.simulators.network {
        let args = crate::model::ns3::adapter_args(loaded, settings);
        text.push_str(&format!(
            "ns-3 adapter: {} --bind=ENDPOINT {}\n",
            crate::io::simulators::ns3::PROGRAM,
            args.join(" ")
        ));
    }
    // The capture agents, each started by hand on its machine with the run's secret.
    let key = match &s.network.agents.key_file {
        Some(f) => loaded.relative(f).display().to_string(),
        None => "<OUT>/agent.key".to_owned(),
    };
    for agent in s.agents() {
        let vehicles: Vec<&str> = (s.vehicles.iter())
            .filter(|v| v.host.as_deref() == Some(agent.as_str()))
            .map(|v| v.name.as_str())
            .collect();
        text.push_str(&format!(
            "agent {agent} ({}): {}\n",
            vehicles.join(", "),
            crate::io::traffic::agents::hub::command_line(loaded, &agent, &key)
        ));
    }
    if let PhysicsEndpoint::Gazebo(g) = &s.simulators.physics {
        let (step_s, steps) = g
            .steps(s.window_ms, s.simulators.physics_step_ms)
            .map_err(anyhow::Error::msg)?;
        let models: Vec<String> = s
            .vehicles
            .iter()
            .map(|v| format!("{} = {}", v.name, g.model(&v.name)))
            .collect();
        text.push_str(&format!(
            "Gazebo: world `{}`, {steps} steps of {} ms per window through {}; models {}\n",
            g.world_name(&s.name),
            step_s * 1e3,
            g.control_service(&s.name),
            models.join(", ")
        ));
    }
    Ok(text)
}

/// A length as written for people: at most three decimals, no trailing zeros.
fn metres(x: f64) -> f64 {
    // + 0.0: no "-0" for a value that rounds to zero from below.
    (x * 1e3).round() / 1e3 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn load(path: &str) -> LoadedScenario {
        crate::config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
    }

    /// The default scenario's terrain: 1000 m × 400 m at 2 m, i.e. 501 × 201 height samples
    /// (500 × 200 cells).
    #[test]
    fn the_terrain_is_described_by_its_samples_spacing_and_extent() {
        let text = describe(&load("config/default.yaml")).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.ends_with(
                ": ok — 5 vehicles, 60000 windows of 1 ms (60 s), terrain 501×201 samples, 2 m spacing, 1000 m × 400 m"
            ),
            "{first}"
        );
        assert!(!text.contains("cells"), "{text}");
    }

    #[test]
    fn only_the_devices_the_scenario_has_are_printed() {
        let text = describe(&load("config/ns3_acoustic.yaml")).unwrap();
        let adapter = text
            .lines()
            .find(|l| l.starts_with("ns-3 adapter: "))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(adapter.contains("--uanNodes=") && adapter.contains("--uanMac="));
        assert!(!adapter.contains("--wifi"), "{adapter}");
        let text = describe(&load("config/ns3_wifi.yaml")).unwrap();
        assert!(
            text.contains("--wifiNodes=") && !text.contains("--uan"),
            "{text}"
        );
        let text = describe(&load("config/default.yaml")).unwrap();
        assert!(!text.contains("ns-3") && !text.contains("Gazebo"), "{text}");
        assert!(
            text.contains("simulators: physics embedded, network embedded"),
            "{text}"
        );
    }

    #[test]
    fn each_agent_s_command_line_is_printed() {
        let text = describe(&load("config/agents.yaml")).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("agent ")).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("agent hostb (ugv3, ugv4): cosim agent ")
                && lines[0].ends_with(
                    "config/agents.yaml --name hostb --coordinator 127.0.0.1:5610 --key <OUT>/agent.key"
                ),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("agent hostc (ugv5): "), "{}", lines[1]);
        let text = describe(&load("config/default.yaml")).unwrap();
        assert!(!text.contains("cosim agent"), "{text}");
    }

    #[test]
    fn lengths_are_written_plainly() {
        assert_eq!(metres(2.0).to_string(), "2");
        assert_eq!(metres(2000.0 * 0.1).to_string(), "200");
        assert_eq!(metres(0.25).to_string(), "0.25");
    }
}
