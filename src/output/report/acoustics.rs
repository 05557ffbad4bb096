//! Pictures of acoustic paths ([`crate::model::beam`]) along one pair's bearing, as PNG:
//! - [`tl_field`]: the transmission-loss field, range × depth, on a perceptual ramp with its
//!   colour bar, the bathymetry filled, source and receiver marked;
//! - [`ray_fan`]: the rays of the fan over the same section, coloured by what they bounce off,
//!   the eigenrays (those that reach the receiver) drawn bold up to it;
//! - [`arrival_stems`]: one moment's arrivals, delay × level (dB re the strongest);
//! - [`arrival_pattern`]: a pair's arrivals over a run, time × delay after the first arrival,
//!   coloured by level.
//!
//! [`Traced::compute`] traces what the first two show; `cosim acoustics` and the run report
//! draw from it.

use super::plots::{render, LABEL, TITLE};
use crate::config::{Absorption, LinkModel, LoadedScenario};
use crate::model::acoustic;
use crate::model::beam::{self, Arrival, Environment, Fan, Ray, Seabed, Section, Sum};
use crate::model::sound_speed::SoundSpeed;
use crate::sim::acoustic_paths::PathSettings;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;

type Drawn = Result<(), Box<dyn Error>>;

/// Size of every picture here (pixels).
pub const SIZE: (u32, u32) = (1200, 700);
/// Grid of the transmission-loss field: columns in range, rows in depth.
pub const FIELD_GRID: (usize, usize) = (300, 140);
/// Span of the field's colour ramp, dB above its lowest loss.
pub const FIELD_SPAN_DB: f64 = 50.0;
/// Arrivals below the strongest by more than this are not drawn (dB).
pub const ARRIVAL_FLOOR_DB: f64 = 40.0;
/// At most this many rays of the fan are drawn behind the eigenrays.
pub const MAX_FAN_RAYS: usize = 90;
/// At most this many moments in an arrival pattern (evenly thinned beyond).
pub const MAX_PATTERN_COLUMNS: usize = 2000;

/// The seabed's fill.
pub const SEABED: RGBColor = RGBColor(196, 168, 122);
/// Where nothing arrives in the field.
pub const NO_ARRIVAL: RGBColor = RGBColor(236, 236, 236);
/// The source's and the receiver's markers.
pub const SOURCE: RGBColor = RGBColor(220, 30, 40);
pub const RECEIVER: RGBColor = RGBColor(255, 255, 255);

/// Viridis (van der Walt & Smith, matplotlib 2.0), perceptually uniform, at nine stops.
const VIRIDIS: [[f64; 3]; 9] = [
    [68.0, 1.0, 84.0],
    [71.0, 44.0, 122.0],
    [59.0, 81.0, 139.0],
    [44.0, 113.0, 142.0],
    [33.0, 144.0, 141.0],
    [39.0, 173.0, 129.0],
    [92.0, 200.0, 99.0],
    [170.0, 220.0, 50.0],
    [253.0, 231.0, 37.0],
];

/// Viridis at `u` in [0, 1] (clamped; NaN is 0): dark purple to yellow.
pub fn viridis(u: f64) -> RGBColor {
    let u = if u.is_nan() { 0.0 } else { u.clamp(0.0, 1.0) };
    let x = u * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let c = |k: usize| (VIRIDIS[i][k] + f * (VIRIDIS[i + 1][k] - VIRIDIS[i][k])).round() as u8;
    RGBColor(c(0), c(1), c(2))
}

/// What a path bounces off on its way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounces {
    /// Direct or refracted: no boundary.
    None,
    /// The surface only.
    Surface,
    /// The bottom (and maybe the surface).
    Bottom,
}

impl Bounces {
    pub fn of(surface: u32, bottom: u32) -> Bounces {
        match (surface, bottom) {
            (_, b) if b > 0 => Bounces::Bottom,
            (s, _) if s > 0 => Bounces::Surface,
            _ => Bounces::None,
        }
    }

    pub fn colour(self) -> RGBColor {
        match self {
            Bounces::None => RGBColor(31, 119, 180),
            Bounces::Surface => RGBColor(44, 160, 44),
            Bounces::Bottom => RGBColor(214, 120, 20),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Bounces::None => "direct or refracted",
            Bounces::Surface => "surface bounces only",
            Bounces::Bottom => "bottom bounces",
        }
    }

    const ALL: [Bounces; 3] = [Bounces::None, Bounces::Surface, Bounces::Bottom];
}

/// What tracing a pair of a scenario takes besides the bathymetry: the water's sound speed,
/// the seabed, the fan, and the frequency and volume absorption of the pair's link.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub sound_speed: SoundSpeed,
    pub seabed: Seabed,
    pub fan: Fan,
    pub frequency_hz: f64,
    pub absorption_db_per_km: f64,
}

impl Settings {
    /// The settings of `loaded` for the pair of vehicles `a` and `b` over water `max_depth_m`
    /// deep at its deepest: the profile, seabed and fan the physics side traces with
    /// ([`PathSettings::from_scenario`]); the frequency of the pair's acoustic link (else the
    /// modems', else 25 kHz) and its absorption model at half the deepest depth.
    pub fn of(loaded: &LoadedScenario, a: usize, b: usize, max_depth_m: f64) -> Settings {
        let scenario = &loaded.scenario;
        let w = &scenario.world.water;
        let deepest = max_depth_m.max(1.0);
        let traced = PathSettings::from_scenario(loaded);
        let (lo, hi) = (a.min(b), a.max(b));
        let link = scenario
            .pair_links()
            .into_iter()
            .find(|(i, j, _, _)| (*i, *j) == (lo, hi))
            .map(|(_, _, _, m)| m);
        let (frequency_khz, absorption) = match (link, &scenario.acoustic_modems) {
            (
                Some(LinkModel::Acoustic {
                    frequency_khz,
                    absorption,
                    ..
                }),
                _,
            ) => (*frequency_khz, *absorption),
            (_, Some(m)) => (m.frequency_khz, m.absorption),
            _ => (25.0, Absorption::FrancoisGarrison),
        };
        let absorption_db_per_km = match absorption {
            Absorption::Thorp => acoustic::absorption_thorp_db_per_km(frequency_khz),
            Absorption::FrancoisGarrison => acoustic::absorption_francois_garrison_db_per_km(
                frequency_khz,
                w.temperature_c,
                w.salinity_ppt,
                deepest / 2.0,
                w.ph,
            ),
        };
        Settings {
            sound_speed: traced.sound_speed,
            seabed: traced.seabed,
            fan: traced.fan,
            frequency_hz: frequency_khz * 1e3,
            absorption_db_per_km,
        }
    }
}

/// The two ends of a pair in the vertical plane of its bearing: the source at range 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Ends {
    pub source: String,
    pub receiver: String,
    pub source_depth_m: f64,
    pub receiver_range_m: f64,
    pub receiver_depth_m: f64,
}

/// A transmission-loss field on a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub ranges_m: Vec<f64>,
    pub depths_m: Vec<f64>,
    /// Row-major by depth; +∞ where nothing arrives.
    pub tl_db: Vec<f64>,
}

/// What a pair's pictures show, traced.
#[derive(Debug, Clone)]
pub struct Traced {
    pub ends: Ends,
    pub section: Section,
    pub field: Field,
    pub rays: Vec<Ray>,
    /// Indices into `rays` of those that reach the receiver.
    pub eigenrays: Vec<usize>,
    pub arrivals: Vec<Arrival>,
    /// The frequency and volume absorption the field was computed at.
    pub frequency_hz: f64,
    pub absorption_db_per_km: f64,
}

impl Traced {
    /// Traces `env` (its section reaching somewhat beyond the receiver) with `fan`: the field
    /// (incoherent sum) out to the section's end, the rays, the arrivals at the receiver.
    pub fn compute(
        env: &Environment,
        fan: &Fan,
        ends: Ends,
        frequency_hz: f64,
        absorption_db_per_km: f64,
    ) -> Traced {
        let max_range = env
            .section
            .range_m
            .last()
            .copied()
            .unwrap_or(0.0)
            .max(ends.receiver_range_m)
            .max(1.0);
        let max_depth = env.section.max_depth().max(ends.receiver_depth_m).max(1.0);
        let (nr, nz) = FIELD_GRID;
        let ranges_m: Vec<f64> = (1..=nr).map(|i| max_range * i as f64 / nr as f64).collect();
        let depths_m: Vec<f64> = (0..nz)
            .map(|j| max_depth * (j as f64 + 0.5) / nz as f64)
            .collect();
        let tl_db = beam::field(
            env,
            fan,
            ends.source_depth_m,
            frequency_hz,
            absorption_db_per_km,
            &ranges_m,
            &depths_m,
            Sum::Incoherent,
        );
        let rays = beam::rays(env, fan, ends.source_depth_m, max_range);
        let mut arrivals = Vec::new();
        beam::arrivals(
            env,
            fan,
            ends.source_depth_m,
            ends.receiver_range_m,
            ends.receiver_depth_m,
            &mut arrivals,
        );
        let eigenrays = eigenrays(&rays, &arrivals, fan, &ends, &env.section);
        Traced {
            ends,
            section: env.section.clone(),
            field: Field {
                ranges_m,
                depths_m,
                tl_db,
            },
            rays,
            eigenrays,
            arrivals,
            frequency_hz,
            absorption_db_per_km,
        }
    }
}

/// The bathymetry's depth at range `r` (linear between samples, constant beyond the ends).
fn bottom_at(section: &Section, r: f64) -> f64 {
    let k = section.range_m.partition_point(|&x| x <= r);
    match (k, section.depth_m.len()) {
        (_, 0) => f64::INFINITY,
        (0, _) => section.depth_m[0],
        (k, n) if k >= n || k >= section.range_m.len() => section.depth_m[n - 1],
        (k, _) => {
            let (r0, r1) = (section.range_m[k - 1], section.range_m[k]);
            let (d0, d1) = (section.depth_m[k - 1], section.depth_m[k]);
            if r1 > r0 {
                d0 + (d1 - d0) * (r - r0) / (r1 - r0)
            } else {
                d1
            }
        }
    }
}

/// Where `ray` first crosses range `r`: its depth there and its surface and bottom bounces
/// before (None where it never gets there).
fn crossing(ray: &Ray, section: &Section, r: f64) -> Option<(f64, u32, u32)> {
    let (mut surface, mut bottom) = (0u32, 0u32);
    // A reflection may end one segment and start the next a few millimetres on (or a
    // zero-length one): points within 1 cm are one point of the path.
    let mut points: Vec<[f64; 2]> = Vec::with_capacity(ray.points.len());
    for &p in &ray.points {
        if points
            .last()
            .is_none_or(|q| (p[0] - q[0]).abs() + (p[1] - q[1]).abs() > 1e-2)
        {
            points.push(p);
        }
    }
    for (k, w) in points.windows(2).enumerate() {
        let ([r0, z0], [r1, z1]) = (w[0], w[1]);
        if k > 0 {
            // A point on a boundary between two segments is a reflection.
            if z0 <= 1e-3 {
                surface += 1;
            } else if z0 >= bottom_at(section, r0) - 1e-3 {
                bottom += 1;
            }
        }
        let (lo, hi) = (r0.min(r1), r0.max(r1));
        if lo <= r && r <= hi {
            let z = if hi > lo {
                z0 + (z1 - z0) * (r - r0) / (r1 - r0)
            } else {
                z0
            };
            return Some((z, surface, bottom));
        }
    }
    None
}

/// The points of `ray` up to where it first reaches range `r`.
fn to_range(ray: &Ray, r: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(ray.points.len());
    for w in ray.points.windows(2) {
        let ([r0, z0], [r1, z1]) = (w[0], w[1]);
        out.push((r0, z0));
        if (r0.min(r1)..=r0.max(r1)).contains(&r) {
            let z = if r1 != r0 {
                z0 + (z1 - z0) * (r - r0) / (r1 - r0)
            } else {
                z1
            };
            out.push((r, z));
            return out;
        }
    }
    out.extend(ray.points.last().map(|p| (p[0], p[1])));
    out
}

/// Per arrival, its eigenray among `rays`: of the rays launched within a few beam spacings of
/// it that reach the receiver's range with its bounce counts, the one passing closest to the
/// receiver, if within about a beam spacing there.
pub fn eigenrays(
    rays: &[Ray],
    arrivals: &[Arrival],
    fan: &Fan,
    ends: &Ends,
    section: &Section,
) -> Vec<usize> {
    let step = if fan.beams > 1 {
        (fan.max_deg - fan.min_deg).abs() / (fan.beams - 1) as f64
    } else {
        1.0
    };
    let crossings: Vec<Option<(f64, u32, u32)>> = rays
        .iter()
        .map(|r| crossing(r, section, ends.receiver_range_m))
        .collect();
    let mut out: Vec<usize> = arrivals
        .iter()
        .filter_map(|a| {
            let path = a.path_m.max(ends.receiver_range_m);
            let tolerance = path * step.to_radians() + 0.5;
            rays.iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.launch_deg >= a.launch_deg - 2.0 * step
                        && r.launch_deg <= a.launch_deg + 4.0 * step
                })
                .filter_map(|(i, _)| match crossings[i] {
                    Some((z, s, b)) if s == a.surface_bounces && b == a.bottom_bounces => {
                        Some((i, (z - ends.receiver_depth_m).abs()))
                    }
                    _ => None,
                })
                .filter(|(_, miss)| *miss <= tolerance)
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map(|(i, _)| i)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

type Chart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The section's axes: range 0..`max_range`, depth `max_depth` (bottom) to 0 (top).
fn section_chart<'a, 'b>(
    area: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    title: &str,
    max_range: f64,
    max_depth: f64,
) -> Result<Chart<'a, 'b>, Box<dyn Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(title, TITLE)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_range, max_depth..0.0)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("range along the bearing (m)")
        .y_desc("depth (m)")
        .label_style(LABEL)
        .axis_desc_style(LABEL)
        .draw()?;
    Ok(chart)
}

/// The seabed under `section` filled to the chart's bottom (land up to the surface).
fn draw_seabed(
    chart: &mut Chart<'_, '_>,
    section: &Section,
    max_range: f64,
    max_depth: f64,
) -> Drawn {
    let mut outline: Vec<(f64, f64)> = section
        .range_m
        .iter()
        .zip(&section.depth_m)
        .filter(|(r, _)| **r <= max_range)
        .map(|(&r, &d)| (r, d.clamp(0.0, max_depth)))
        .collect();
    if let (Some(&(r, _)), Some(&last)) = (outline.last(), section.depth_m.last()) {
        if r < max_range {
            outline.push((max_range, last.clamp(0.0, max_depth)));
        }
    }
    if outline.is_empty() {
        return Ok(());
    }
    let mut polygon = outline.clone();
    polygon.push((max_range, max_depth));
    polygon.push((0.0, max_depth));
    chart.draw_series(std::iter::once(Polygon::new(polygon, SEABED.filled())))?;
    chart.draw_series(std::iter::once(PathElement::new(
        outline,
        RGBColor(90, 70, 40).stroke_width(2),
    )))?;
    Ok(())
}

/// The source (filled red circle) and the receiver (white circle ringed black), named.
fn draw_ends(chart: &mut Chart<'_, '_>, ends: &Ends) -> Drawn {
    let label = |name: &str| {
        Text::new(
            name.to_owned(),
            (10, -24),
            TextStyle::from(("sans-serif", 15).into_font()).color(&BLACK),
        )
    };
    chart.draw_series(std::iter::once(
        EmptyElement::at((0.0, ends.source_depth_m))
            + Circle::new((0, 0), 8, SOURCE.filled())
            + Circle::new((0, 0), 8, BLACK.stroke_width(1))
            + label(&format!("{} (source)", ends.source)),
    ))?;
    chart.draw_series(std::iter::once(
        EmptyElement::at((ends.receiver_range_m, ends.receiver_depth_m))
            + Circle::new((0, 0), 8, RECEIVER.filled())
            + Circle::new((0, 0), 8, BLACK.stroke_width(2))
            + label(&ends.receiver),
    ))?;
    Ok(())
}

/// The extent of a section's picture: its range and the depth axis's bottom.
fn extent(section: &Section, ends: &Ends) -> (f64, f64) {
    let max_range = section
        .range_m
        .last()
        .copied()
        .unwrap_or(0.0)
        .max(ends.receiver_range_m)
        .max(1.0);
    let max_depth = section
        .max_depth()
        .max(ends.receiver_depth_m)
        .max(ends.source_depth_m)
        .max(1.0)
        * 1.06;
    (max_range, max_depth)
}

/// Checks that a picture's numbers are finite where they must be.
fn finite(what: &str, values: &[f64]) -> Result<(), String> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(format!("{what}[{i}] is {} (not finite)", values[i])),
        None => Ok(()),
    }
}

fn check_ends(ends: &Ends, section: &Section) -> Result<(), String> {
    finite(
        "source and receiver",
        &[
            ends.source_depth_m,
            ends.receiver_range_m,
            ends.receiver_depth_m,
        ],
    )?;
    finite("section ranges", &section.range_m)?;
    finite("section depths", &section.depth_m)
}

/// The colour range of a field: from its 2nd percentile of finite loss (rounded down to 5 dB)
/// over [`FIELD_SPAN_DB`], so that the few cells by the source do not take the ramp; None when
/// nothing arrives anywhere.
pub fn field_scale(tl_db: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = tl_db.iter().copied().filter(|v| v.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let k = (v.len() - 1) * 2 / 100;
    let (_, lo, _) = v.select_nth_unstable_by(k, f64::total_cmp);
    let lo = (*lo / 5.0).floor() * 5.0;
    Some((lo, lo + FIELD_SPAN_DB))
}

/// The transmission-loss field of `t`: range × depth, colour the loss (yellow little, purple
/// much; light grey where nothing arrives), the seabed filled, source and receiver marked.
pub fn tl_field(t: &Traced, title: &str) -> Result<Vec<u8>, String> {
    let f = &t.field;
    check_ends(&t.ends, &t.section)?;
    finite("field ranges", &f.ranges_m)?;
    finite("field depths", &f.depths_m)?;
    if f.tl_db.len() != f.ranges_m.len() * f.depths_m.len()
        || f.ranges_m.is_empty()
        || f.depths_m.is_empty()
    {
        return Err(format!(
            "the field has {} values for {} ranges × {} depths",
            f.tl_db.len(),
            f.ranges_m.len(),
            f.depths_m.len()
        ));
    }
    let scale = field_scale(&f.tl_db);
    let (max_range, max_depth) = extent(&t.section, &t.ends);
    render(SIZE.0, SIZE.1, |root| {
        let (plot, bar) = root.split_horizontally(SIZE.0 - 130);
        let mut chart = section_chart(&plot, title, max_range, max_depth)?;
        // Cells span half-way to their neighbours.
        let edges = |v: &[f64], lo: f64| -> Vec<f64> {
            let mut e = Vec::with_capacity(v.len() + 1);
            e.push(lo.min(v[0]));
            for w in v.windows(2) {
                e.push(0.5 * (w[0] + w[1]));
            }
            e.push(v[v.len() - 1]);
            e
        };
        let re = edges(&f.ranges_m, 0.0);
        let ze = edges(&f.depths_m, 0.0);
        let nr = f.ranges_m.len();
        chart.draw_series((0..f.depths_m.len()).flat_map(|j| {
            let (re, ze) = (&re, &ze);
            (0..nr).map(move |i| {
                let tl = f.tl_db[j * nr + i];
                let colour = match scale {
                    Some((lo, hi)) if tl.is_finite() => viridis((hi - tl) / (hi - lo)),
                    _ => NO_ARRIVAL,
                };
                Rectangle::new([(re[i], ze[j]), (re[i + 1], ze[j + 1])], colour.filled())
            })
        }))?;
        draw_seabed(&mut chart, &t.section, max_range, max_depth)?;
        draw_ends(&mut chart, &t.ends)?;
        colour_bar(&bar, scale)?;
        Ok(())
    })
}

/// The field's colour bar: the ramp from the lowest loss (top) to the span's end.
fn colour_bar(area: &DrawingArea<BitMapBackend<'_>, Shift>, scale: Option<(f64, f64)>) -> Drawn {
    let Some((lo, hi)) = scale else {
        let style = TextStyle::from(LABEL.into_font()).color(&BLACK);
        area.draw(&Text::new("TL (dB)", (10, 30), style.clone()))?;
        area.draw(&Text::new("nothing", (15, 60), style.clone()))?;
        area.draw(&Text::new("arrives", (15, 78), style))?;
        return Ok(());
    };
    ramp_bar(area, ("TL (dB)", 10), (lo, hi), 5, 60)
}

/// A vertical viridis ramp (yellow at the top) labelled `label` at x = `label_x`, from 60 px
/// to `margin` px above the area's bottom, with `steps` + 1 ticks valued `values.0` at the top
/// to `values.1` at the bottom, and the grey "none" swatch of cells nothing reaches under it.
fn ramp_bar(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    (label, label_x): (&str, i32),
    values: (f64, f64),
    steps: u32,
    margin: i32,
) -> Drawn {
    let (_, h) = area.dim_in_pixel();
    let (y0, y1) = (60i32, h as i32 - margin);
    let (x0, x1) = (15i32, 39i32);
    let style = TextStyle::from(LABEL.into_font()).color(&BLACK);
    area.draw(&Text::new(label, (label_x, y0 - 30), style.clone()))?;
    let rows = (y1 - y0).max(1);
    for k in 0..rows {
        area.draw(&Rectangle::new(
            [(x0, y0 + k), (x1, y0 + k + 1)],
            viridis(1.0 - k as f64 / rows as f64).filled(),
        ))?;
    }
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], BLACK.stroke_width(1)))?;
    for s in 0..=steps {
        let u = f64::from(s) / f64::from(steps);
        let v = values.0 + (values.1 - values.0) * u;
        let y = y0 + (f64::from(y1 - y0) * u).round() as i32;
        area.draw(&PathElement::new(vec![(x1, y), (x1 + 5, y)], BLACK))?;
        area.draw(&Text::new(
            format!("{v:.0}"),
            (x1 + 8, y - 7),
            style.clone(),
        ))?;
    }
    area.draw(&Rectangle::new(
        [(x0, y1 + 20), (x1, y1 + 34)],
        NO_ARRIVAL.filled(),
    ))?;
    area.draw(&Rectangle::new(
        [(x0, y1 + 20), (x1, y1 + 34)],
        BLACK.stroke_width(1),
    ))?;
    area.draw(&Text::new("none", (x1 + 8, y1 + 20), style))?;
    Ok(())
}

/// Lighter: `c` mixed with white by `k` in [0, 1].
fn faded(c: RGBColor, k: f64) -> RGBColor {
    let m = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * k).round() as u8;
    RGBColor(m(c.0), m(c.1), m(c.2))
}

/// The ray fan of `t` over its section: at most [`MAX_FAN_RAYS`] of the fan's rays, evenly
/// chosen, thin and pale, and the eigenrays bold, each coloured by what it bounces off.
pub fn ray_fan(t: &Traced, title: &str) -> Result<Vec<u8>, String> {
    check_ends(&t.ends, &t.section)?;
    let (max_range, max_depth) = extent(&t.section, &t.ends);
    let every = t.rays.len().div_ceil(MAX_FAN_RAYS).max(1);
    render(SIZE.0, SIZE.1, |root| {
        let mut chart = section_chart(root, title, max_range, max_depth)?;
        chart.draw_series(
            t.rays
                .iter()
                .enumerate()
                .filter(|(i, _)| i % every == 0 && !t.eigenrays.contains(i))
                .map(|(_, r)| {
                    let c = faded(
                        Bounces::of(r.surface_bounces, r.bottom_bounces).colour(),
                        0.55,
                    );
                    PathElement::new(
                        r.points.iter().map(|p| (p[0], p[1])).collect::<Vec<_>>(),
                        c.stroke_width(1),
                    )
                }),
        )?;
        draw_seabed(&mut chart, &t.section, max_range, max_depth)?;
        for &i in &t.eigenrays {
            let Some(r) = t.rays.get(i) else { continue };
            let c = Bounces::of(r.surface_bounces, r.bottom_bounces).colour();
            chart.draw_series(std::iter::once(PathElement::new(
                to_range(r, t.ends.receiver_range_m),
                c.stroke_width(3),
            )))?;
        }
        draw_ends(&mut chart, &t.ends)?;
        for b in Bounces::ALL {
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
                .label(b.label())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], b.colour().stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(LABEL)
            .draw()?;
        Ok(())
    })
}

/// Level of each arrival in dB re the strongest (None without any positive amplitude).
fn relative_db(arrivals: &[Arrival]) -> Option<Vec<f64>> {
    let strongest = arrivals
        .iter()
        .map(|a| a.amplitude)
        .filter(|a| a.is_finite())
        .fold(0.0, f64::max);
    (strongest > 0.0).then(|| {
        arrivals
            .iter()
            .map(|a| 20.0 * (a.amplitude / strongest).log10())
            .collect()
    })
}

/// One moment's arrivals as stems: delay (ms) × level (dB re the strongest), coloured by what
/// each bounced off; those more than [`ARRIVAL_FLOOR_DB`] below the strongest are left out.
/// No arrival: the picture says it is a shadow zone.
pub fn arrival_stems(arrivals: &[Arrival], title: &str) -> Result<Vec<u8>, String> {
    for (i, a) in arrivals.iter().enumerate() {
        finite(&format!("arrival {i}"), &[a.delay_s, a.amplitude])?;
    }
    let levels = relative_db(arrivals);
    let (lo, hi) = match arrivals
        .iter()
        .map(|a| a.delay_s * 1e3)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), d| {
            (l.min(d), h.max(d))
        }) {
        (l, h) if l.is_finite() => {
            let pad = ((h - l) * 0.08).max(0.5);
            (l - pad, h + pad)
        }
        _ => (0.0, 1.0),
    };
    render(SIZE.0, SIZE.1 - 200, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, TITLE)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi, -ARRIVAL_FLOOR_DB..3.0)?;
        chart
            .configure_mesh()
            .x_desc("delay (ms)")
            .y_desc("level (dB re the strongest)")
            .label_style(LABEL)
            .axis_desc_style(LABEL)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let Some(levels) = levels else {
            root.draw(&Text::new(
                "no arrival: a shadow zone",
                (SIZE.0 as i32 / 2 - 100, (SIZE.1 as i32 - 200) / 2),
                TextStyle::from(TITLE.into_font()).color(&RGBColor(120, 120, 120)),
            ))?;
            return Ok(());
        };
        let mut order: Vec<usize> = (0..arrivals.len()).collect();
        order.sort_by(|&a, &b| levels[a].total_cmp(&levels[b]));
        for i in order {
            let (a, l) = (&arrivals[i], levels[i]);
            if l < -ARRIVAL_FLOOR_DB {
                continue;
            }
            let c = Bounces::of(a.surface_bounces, a.bottom_bounces).colour();
            let d = a.delay_s * 1e3;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(d, -ARRIVAL_FLOOR_DB), (d, l)],
                c.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Circle::new((d, l), 4, c.filled())))?;
        }
        for b in Bounces::ALL {
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
                .label(b.label())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], b.colour().stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(LABEL)
            .draw()?;
        Ok(())
    })
}

/// One moment of an arrival pattern: its time (s) and its arrivals (empty: nothing arrives).
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    pub t_s: f64,
    pub arrivals: Vec<Arrival>,
}

/// A pair's arrivals over time: time (s) × delay after each moment's first arrival (ms),
/// colour the arrival's level (20·log10 of its amplitude, dB re the source at 1 m, without
/// volume absorption) over the [`ARRIVAL_FLOOR_DB`] below the run's strongest; moments with
/// no arrival (shadow zones) shaded grey. `moments` in time order.
pub fn arrival_pattern(moments: &[Moment], title: &str) -> Result<Vec<u8>, String> {
    if moments.is_empty() {
        return Err("no moment to draw".into());
    }
    for m in moments {
        finite(&format!("moment at {} s", m.t_s), &[m.t_s])?;
        for a in &m.arrivals {
            finite(
                &format!("arrival at {} s", m.t_s),
                &[a.delay_s, a.amplitude],
            )?;
        }
    }
    let every = moments.len().div_ceil(MAX_PATTERN_COLUMNS).max(1);
    let shown: Vec<&Moment> = moments.iter().step_by(every).collect();
    let level = |a: &Arrival| 20.0 * a.amplitude.max(1e-30).log10();
    let top = shown
        .iter()
        .flat_map(|m| m.arrivals.iter())
        .filter(|a| a.amplitude > 0.0)
        .map(level)
        .fold(f64::NEG_INFINITY, f64::max);
    let top = if top.is_finite() { top } else { 0.0 };
    let bottom = top - ARRIVAL_FLOOR_DB;
    let spread = shown
        .iter()
        .filter_map(|m| {
            let first = m
                .arrivals
                .iter()
                .map(|a| a.delay_s)
                .fold(f64::INFINITY, f64::min);
            let last = m
                .arrivals
                .iter()
                .map(|a| a.delay_s)
                .fold(f64::NEG_INFINITY, f64::max);
            first.is_finite().then_some((last - first) * 1e3)
        })
        .fold(0.0, f64::max);
    let max_delay = (spread * 1.08).max(1.0);
    let t0 = shown[0].t_s;
    let step = if shown.len() > 1 {
        (shown[shown.len() - 1].t_s - t0) / (shown.len() - 1) as f64
    } else {
        1.0
    };
    let t1 = shown[shown.len() - 1].t_s + step.max(1e-3);
    render(SIZE.0, SIZE.1 - 100, |root| {
        let (plot, bar) = root.split_horizontally(SIZE.0 - 130);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, TITLE)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(t0..t1, max_delay..0.0)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("time (s)")
            .y_desc("delay after the first arrival (ms)")
            .label_style(LABEL)
            .axis_desc_style(LABEL)
            .draw()?;
        // A mark a little taller than a pixel row of the delay axis.
        let mark = max_delay / 150.0;
        for (k, m) in shown.iter().enumerate() {
            let end = shown.get(k + 1).map_or(t1, |n| n.t_s);
            if m.arrivals.is_empty() {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(m.t_s, max_delay), (end, 0.0)],
                    NO_ARRIVAL.filled(),
                )))?;
                continue;
            }
            let first = m
                .arrivals
                .iter()
                .map(|a| a.delay_s)
                .fold(f64::INFINITY, f64::min);
            let mut order: Vec<&Arrival> = m.arrivals.iter().collect();
            order.sort_by(|a, b| a.amplitude.total_cmp(&b.amplitude));
            chart.draw_series(
                order
                    .into_iter()
                    .filter(|a| a.amplitude > 0.0 && level(a) >= bottom)
                    .map(|a| {
                        let d = (a.delay_s - first) * 1e3;
                        let u = (level(a) - bottom) / (top - bottom);
                        Rectangle::new([(m.t_s, d - mark), (end, d + mark)], viridis(u).filled())
                    }),
            )?;
        }
        pattern_bar(&bar, bottom, top)?;
        Ok(())
    })
}

/// The arrival pattern's colour bar: level from `top` (yellow) down to `bottom`.
fn pattern_bar(area: &DrawingArea<BitMapBackend<'_>, Shift>, bottom: f64, top: f64) -> Drawn {
    ramp_bar(area, ("level (dB)", 7), (top, bottom), 4, 90)
}

#[cfg(test)]
mod tests;
