//! The rules of the scenario's own keys, and [`validate`], which runs every section's rules in
//! their order:
//!
//! - `name`: non-empty, only `[A-Za-z0-9_-]`.
//! - `window_ms` > 0 and finite; `duration_s` > 0, finite and a whole number of windows (at
//!   least one): sim time is counted in whole nanoseconds, so both are taken to the nearest
//!   nanosecond and the duration must then be an exact multiple of W (0.1 s at W = 10 ms is 10
//!   windows; 0.015 s is refused, naming 0.01 s and 0.02 s). The same holds for the command
//!   line's `--duration-s` and the `window_ms` parameter ([`LoadedScenario::set_duration_s`],
//!   [`LoadedScenario::set_window_ms`]). `real_time_factor` ≥ 0 and finite.
//! - `nice` is a nice value, −20 to 19.
//!
//! [`LoadedScenario::set_duration_s`]: crate::config::LoadedScenario::set_duration_s
//! [`LoadedScenario::set_window_ms`]: crate::config::LoadedScenario::set_window_ms

use super::acoustic_modems::acoustic_modems;
use super::auv_interface::auv_interface;
use super::links::links;
use super::netsim_manager::netsim_manager;
use super::network::network;
use super::programs::programs;
use super::record::{record, viewer};
use super::ros::ros;
use super::simulators::simulators;
use super::traffic::traffic;
use super::vehicles::{attach, vehicles};
use super::water::water;
use super::world::{check_inside_world, seabed_and_acoustic_paths, world};
use super::{Check, Ctx};
use crate::config::Terrain;

pub(in crate::config) fn validate(cx: &Ctx) -> Check {
    let s = cx.scenario;

    if s.name.is_empty() {
        return Err(cx.err("name", "must not be empty"));
    }
    if let Some(c) = s
        .name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    {
        return Err(cx.err(
            "name",
            format!("may contain only A-Z, a-z, 0-9, '_' and '-' (found {c:?})"),
        ));
    }
    cx.positive("window_ms", s.window_ms)?;
    cx.positive("duration_s", s.duration_s)?;
    if s.duration_s * 1000.0 < s.window_ms {
        return Err(cx.err(
            "duration_s",
            format!(
                "must last at least one window ({} ms), got {} s",
                s.window_ms, s.duration_s
            ),
        ));
    }
    whole_windows(s.window_ms, s.duration_s).map_err(|e| cx.err("duration_s", e))?;
    cx.non_negative("real_time_factor", s.real_time_factor)?;
    if !(-20..=19).contains(&s.nice) {
        return Err(cx.err(
            "nice",
            format!("must be a nice value, -20 to 19 (got {})", s.nice),
        ));
    }
    if let Some(p) = s.realtime_priority.filter(|p| !(1..=99).contains(p)) {
        return Err(cx.err(
            "realtime_priority",
            format!("must be a SCHED_FIFO priority, 1 to 99 (got {p})"),
        ));
    }

    world(cx)?;
    water(cx)?;
    seabed_and_acoustic_paths(cx)?;
    vehicles(cx)?;
    links(cx)?;
    simulators(cx)?;
    netsim_manager(cx)?;
    network(cx)?;
    acoustic_modems(cx)?;
    programs(cx)?;
    traffic(cx)?;
    ros(cx)?;
    attach(cx)?;
    auv_interface(cx)?;
    record(cx)?;
    viewer(cx)?;

    if let Terrain::Procedural { size_m, .. } = &s.world.terrain {
        check_inside_world(cx, [size_m[0] / 2.0, size_m[1] / 2.0])?;
    }
    Ok(())
}

/// The run's length is a whole number of windows: sim time is counted in whole nanoseconds
/// ([`crate::clock::Schedule`]), so `window_ms` and `duration_s` are taken to the nearest
/// nanosecond and the duration must then be 1 to 2³² − 1 windows exactly (0.1 s at W = 10 ms is
/// 10 windows; 0.015 s is refused). The error names both keys and the two nearest durations
/// that are whole numbers of windows. `window_ms` > 0 and `duration_s` > 0 are checked before.
pub(in crate::config) fn whole_windows(window_ms: f64, duration_s: f64) -> Result<(), String> {
    let window_ns = ((window_ms * 1e6).round() as u64).max(1);
    let duration_ns = (duration_s * 1e9).round() as u64;
    let windows = duration_ns / window_ns;
    let seconds = |ns: u64| ns as f64 / 1e9;
    let count = |n: u64| match n {
        1 => "1 window".to_owned(),
        n => format!("{n} windows"),
    };
    if windows == 0 {
        return Err(format!(
            "duration_s = {duration_s} s is shorter than one window (window_ms = {window_ms} ms)"
        ));
    }
    if windows > u64::from(u32::MAX) {
        return Err(format!(
            "duration_s = {duration_s} s is more than {} windows of window_ms = {window_ms} ms",
            u32::MAX
        ));
    }
    if duration_ns % window_ns != 0 {
        let lower = windows * window_ns;
        let upper = lower + window_ns;
        let ratio = format!("{:.3}", duration_ns as f64 / window_ns as f64);
        let ratio = ratio.trim_end_matches('0').trim_end_matches('.');
        return Err(format!(
            "duration_s = {duration_s} s is not a whole number of windows of window_ms = \
             {window_ms} ms (it is {ratio} windows): the nearest durations that are whole numbers \
             of windows are {} s ({}) and {} s ({})",
            seconds(lower),
            count(windows),
            seconds(upper),
            count(windows + 1),
        ));
    }
    Ok(())
}
