//! The report's maps, top-down (x east, y north), from the record alone:
//! - `map.png` ([`draw_map`]): the terrain of `/scene/terrain` as shaded relief tinted by
//!   height, with contour lines and the waterline, every vehicle's track from `/poses`, a scale
//!   bar and north; without a terrain in the record, the tracks on a plain background;
//! - `map_pairs.png` ([`draw_pairs`]): one small map per pair, its two tracks coloured by the
//!   pair's state at each time (LOS, NLOS, out of range) and sight lines between the two at
//!   evenly spaced times, each coloured the same way.
//!
//! The terrain is drawn into a pixel grid straight from the mesh: each triangle fills the
//! pixels whose centres it covers with its height and normal interpolated from its corners
//! (the highest surface wins where triangles overlap), which keeps a 128×128 mesh well below a
//! second.

use super::mapdata::ground;
pub use super::mapdata::{
    MapData, MapFrame, Mesh, Track, TrackPoint, MAX_TRACK_POINTS, MAX_TRIANGLES,
};
use super::plots::{self, line_colour, LABEL, TITLE};
use super::series::{Analysis, ChannelState, Interval, PairSeries};
use crate::output::scene::waterline_tint;
use plotters::coord::Shift;
use plotters::element::BitMapElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::HashMap;
use std::error::Error;

/// Size of `map.png` (pixels).
pub const MAP_SIZE: (u32, u32) = (1200, 900);
/// Width of `map_pairs.png` (pixels); its height follows from the number of pairs.
pub const PAIRS_WIDTH: u32 = 1200;
/// At most this many pairs get a small map (those with traffic and the most changes first).
pub const MAX_MAP_PAIRS: usize = 12;
/// At most this many pixel tests while filling the terrain (a mesh of huge triangles is drawn
/// in part, with a note, rather than taking minutes).
const MAX_PIXEL_TESTS: u64 = 200_000_000;

const TITLE_H: u32 = 40;
const LEGEND_W: u32 = 250;
const MARGIN: u32 = 10;
const X_LABELS: u32 = 50;
const Y_LABELS: u32 = 70;

/// Sight lines per pair in `map_pairs.png`.
pub const SIGHT_LINES: usize = 12;

/// Where no terrain is.
const PLAIN: [f32; 3] = [244.0, 244.0, 240.0];
/// Height tints: under water from the waterline down to the deepest point, and above it from
/// the waterline up to the highest.
/// Paler than the scene's ([`crate::output::scene`]): the hillshade darkens them.
const WATER: [(f64, [f64; 3]); 2] = [(0.0, [206.0, 228.0, 242.0]), (1.0, [118.0, 163.0, 204.0])];
const LAND: [(f64, [f64; 3]); 3] = [
    (0.0, [222.0, 226.0, 178.0]),
    (0.5, [176.0, 198.0, 132.0]),
    (1.0, [168.0, 140.0, 104.0]),
];
const SHORE: [f32; 3] = [40.0, 70.0, 110.0];

/// The light of the hillshade: from the north-west (azimuth 315°), 45° above the horizon.
const LIGHT: [f64; 3] = [-0.5, 0.5, std::f64::consts::FRAC_1_SQRT_2];

/// The colours of a pair's states on the small maps.
pub fn state_colour(state: ChannelState) -> RGBColor {
    match state {
        ChannelState::Los => RGBColor(44, 160, 44),
        ChannelState::Nlos => RGBColor(255, 127, 14),
        ChannelState::OutOfRange => RGBColor(140, 140, 140),
    }
}

/// The colour of the `i`-th vehicle's track (the report's line colours, in the run's order).
pub fn vehicle_colour(i: usize) -> RGBColor {
    line_colour(i)
}

/// Pixel size of `map.png`'s map (its plotting area) and its top-left corner in the image.
pub fn plot_area() -> ((u32, u32), (i32, i32)) {
    let w = MAP_SIZE.0 - LEGEND_W - 2 * MARGIN - Y_LABELS;
    let h = MAP_SIZE.1 - TITLE_H - 2 * MARGIN - X_LABELS;
    (
        (w, h),
        ((MARGIN + Y_LABELS) as i32, (TITLE_H + MARGIN) as i32),
    )
}

/// The frame of `map.png`'s map for `d` (None when there is nothing to draw).
pub fn frame(d: &MapData) -> Option<MapFrame> {
    let b = ground(d)?;
    let ((w, h), _) = plot_area();
    let within = d.terrain.as_ref().and_then(Mesh::bounds);
    Some(MapFrame::fit(b, within, w, h))
}

/// Height and shading of each pixel of a frame (NaN height: no terrain there).
struct Relief {
    height: Vec<f32>,
    /// n·light of the interpolated normal.
    shade: Vec<f32>,
    /// The pixel budget ran out: part of the terrain is not drawn.
    cut: bool,
}

/// Fills the pixels of `f` from the triangles of `mesh`.
fn rasterize(mesh: &Mesh, f: &MapFrame) -> Relief {
    let (w, h) = (f.w as usize, f.h as usize);
    let mut r = Relief {
        height: vec![f32::NAN; w * h],
        shade: vec![0.0; w * h],
        cut: false,
    };
    // Per vertex the area-weighted sum of its triangles' upward normals.
    let mut normals = vec![[0.0f64; 3]; mesh.vertices.len()];
    for t in &mesh.triangles {
        let [a, b, c] = t.map(|k| mesh.vertices[k as usize]);
        let (e1, e2) = (
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
            [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
        );
        let mut n = [
            e1[1] * e2[2] - e1[2] * e2[1],
            e1[2] * e2[0] - e1[0] * e2[2],
            e1[0] * e2[1] - e1[1] * e2[0],
        ];
        if n[2] < 0.0 {
            n = n.map(|v| -v);
        }
        for &k in t {
            let s = &mut normals[k as usize];
            for i in 0..3 {
                s[i] += n[i];
            }
        }
    }
    let shade_of = |n: [f64; 3]| {
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if len > 0.0 && len.is_finite() {
            ((n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2]) / len).max(0.0)
        } else {
            LIGHT[2]
        }
    };
    let mut tests: u64 = 0;
    for t in &mesh.triangles {
        // Pixel centres at whole numbers.
        let p = t.map(|k| {
            let v = mesh.vertices[k as usize];
            let (u, v2) = f.pixel(v[0], v[1]);
            (u - 0.5, v2 - 0.5, v[2])
        });
        let area = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
        if area.abs() < 1e-12 || !area.is_finite() {
            continue;
        }
        let lo_u = p.iter().map(|q| q.0).fold(f64::INFINITY, f64::min).ceil();
        let hi_u = p
            .iter()
            .map(|q| q.0)
            .fold(f64::NEG_INFINITY, f64::max)
            .floor();
        let lo_v = p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min).ceil();
        let hi_v = p
            .iter()
            .map(|q| q.1)
            .fold(f64::NEG_INFINITY, f64::max)
            .floor();
        if hi_u < 0.0 || hi_v < 0.0 || lo_u > (w - 1) as f64 || lo_v > (h - 1) as f64 {
            continue;
        }
        let (i0, i1) = (lo_u.max(0.0) as usize, hi_u.min((w - 1) as f64) as usize);
        let (j0, j1) = (lo_v.max(0.0) as usize, hi_v.min((h - 1) as f64) as usize);
        if i0 > i1 || j0 > j1 {
            continue;
        }
        tests += ((i1 - i0 + 1) * (j1 - j0 + 1)) as u64;
        if tests > MAX_PIXEL_TESTS {
            r.cut = true;
            break;
        }
        let n = t.map(|k| normals[k as usize]);
        let eps = 1e-9;
        for j in j0..=j1 {
            let y = j as f64;
            for i in i0..=i1 {
                let x = i as f64;
                let b0 = ((p[1].0 - x) * (p[2].1 - y) - (p[2].0 - x) * (p[1].1 - y)) / area;
                let b1 = ((p[2].0 - x) * (p[0].1 - y) - (p[0].0 - x) * (p[2].1 - y)) / area;
                let b2 = 1.0 - b0 - b1;
                if b0 < -eps || b1 < -eps || b2 < -eps {
                    continue;
                }
                let z = (b0 * p[0].2 + b1 * p[1].2 + b2 * p[2].2) as f32;
                let k = j * w + i;
                let old = r.height[k];
                if old.is_nan() || z > old {
                    r.height[k] = z;
                    let nn = [0, 1, 2].map(|c| b0 * n[0][c] + b1 * n[1][c] + b2 * n[2][c]);
                    r.shade[k] = shade_of(nn) as f32;
                }
            }
        }
    }
    r
}

/// The tint of height `z` on a terrain from `lo` to `hi` (the waterline at 0).
fn tint(z: f32, lo: f32, hi: f32) -> [f32; 3] {
    waterline_tint(z.into(), lo.into(), hi.into(), &WATER, &LAND).map(|c| c as f32)
}

/// A round step at least `x`: 1, 2, 2.5 or 5 times a power of ten.
fn nice_step(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// A round length at most `x`: 1, 2 or 5 times a power of ten.
fn round_down(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s <= x * (1.0 + 1e-9))
        .unwrap_or(p)
}

/// How the terrain is coloured: its height range and the contour interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeightKey {
    pub lo_m: f64,
    pub hi_m: f64,
    pub contour_m: f64,
}

impl HeightKey {
    fn of(mesh: &Mesh) -> Option<HeightKey> {
        let (lo, hi) = mesh.height_range()?;
        Some(HeightKey {
            lo_m: lo,
            hi_m: hi,
            contour_m: nice_step((hi - lo) / 8.0),
        })
    }

    /// Whether `level` gets a contour line: not the waterline (drawn on its own) and not within
    /// half an interval of the lowest or highest ground (a flat floor would draw its noise).
    fn contoured(&self, level: f64) -> bool {
        level != 0.0
            && level > self.lo_m + 0.5 * self.contour_m
            && level < self.hi_m - 0.5 * self.contour_m
    }
}

/// The map's pixels as RGB: the relief tinted, hillshaded, contoured; `fade` (0–1) blends it
/// towards white.
fn relief_pixels(mesh: Option<&Mesh>, f: &MapFrame, fade: f32) -> (Vec<u8>, bool) {
    let (w, h) = (f.w as usize, f.h as usize);
    let mut px = vec![0u8; w * h * 3];
    let put = |px: &mut [u8], k: usize, c: [f32; 3]| {
        for i in 0..3 {
            let v = c[i] + fade * (255.0 - c[i]);
            px[3 * k + i] = v.round().clamp(0.0, 255.0) as u8;
        }
    };
    let (Some(mesh), Some(info)) = (mesh, mesh.and_then(HeightKey::of)) else {
        for k in 0..w * h {
            put(&mut px, k, PLAIN);
        }
        return (px, false);
    };
    let r = rasterize(mesh, f);
    let (lo, hi) = (info.lo_m as f32, info.hi_m as f32);
    let iv = info.contour_m;
    let level = |z: f32| (f64::from(z) / iv).floor();
    let flat = LIGHT[2] as f32;
    for j in 0..h {
        for i in 0..w {
            let k = j * w + i;
            let z = r.height[k];
            if z.is_nan() {
                put(&mut px, k, PLAIN);
                continue;
            }
            let s = r.shade[k];
            let light = (0.62 + 0.38 * s / flat).clamp(0.5, 1.15);
            let mut c = tint(z, lo, hi).map(|v| v * light);
            // Contours and the waterline where the next pixel right or down is across one.
            let mut shore = false;
            let mut contour = false;
            for n in [(i + 1 < w).then(|| k + 1), (j + 1 < h).then(|| k + w)]
                .into_iter()
                .flatten()
            {
                let zn = r.height[n];
                if zn.is_nan() {
                    continue;
                }
                if (z < 0.0) != (zn < 0.0) {
                    shore = true;
                }
                let (a, b) = (level(z), level(zn));
                if a != b && info.contoured(a.max(b) * iv) {
                    contour = true;
                }
            }
            if shore {
                c = SHORE;
            } else if contour {
                c = c.map(|v| v * 0.72);
            }
            put(&mut px, k, c);
        }
    }
    (px, r.cut)
}

type Drawn = Result<(), Box<dyn Error>>;
type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// What `map.png` shows, for its caption.
#[derive(Debug, Clone, PartialEq)]
pub struct MapInfo {
    /// The terrain's heights and contour interval; None: drawn without terrain.
    pub relief: Option<HeightKey>,
    pub frame: MapFrame,
    /// Length of the scale bar (m).
    pub scale_m: f64,
}

fn text_style(size: u32, colour: RGBColor, pos: Pos) -> TextStyle<'static> {
    TextStyle {
        font: ("sans-serif", size).into_font(),
        color: colour.to_backend_color(),
        pos,
    }
}

/// Labels placed so that they do not overlap (each tries a few places round its point).
struct Labels {
    taken: Vec<[i32; 4]>,
    bounds: [i32; 4],
}

impl Labels {
    fn place(
        &mut self,
        area: &Area<'_>,
        at: (i32, i32),
        text: &str,
        size: u32,
    ) -> Option<[i32; 4]> {
        let style = text_style(size, BLACK, Pos::new(HPos::Left, VPos::Top));
        let (tw, th) = area.estimate_text_size(text, &style).ok()?;
        let (tw, th) = (tw as i32 + 6, th as i32 + 4);
        let offsets = [
            (8, -th - 4),
            (8, 4),
            (-tw - 8, -th - 4),
            (-tw - 8, 4),
            (-tw / 2, -th - 10),
            (-tw / 2, 10),
        ];
        let fits = |b: &[i32; 4], o: &[i32; 4]| {
            b[0] >= o[2] || b[2] <= o[0] || b[1] >= o[3] || b[3] <= o[1]
        };
        let inside = |b: &[i32; 4]| {
            b[0] >= self.bounds[0]
                && b[1] >= self.bounds[1]
                && b[2] <= self.bounds[2]
                && b[3] <= self.bounds[3]
        };
        let boxes: Vec<[i32; 4]> = offsets
            .iter()
            .map(|(dx, dy)| [at.0 + dx, at.1 + dy, at.0 + dx + tw, at.1 + dy + th])
            .collect();
        let chosen = boxes
            .iter()
            .find(|b| inside(b) && self.taken.iter().all(|o| fits(b, o)))
            .or_else(|| boxes.iter().find(|b| inside(b)))
            .unwrap_or(&boxes[0]);
        self.taken.push(*chosen);
        Some(*chosen)
    }
}

/// A label in a white box at `b` (from [`Labels::place`]).
fn boxed_text(area: &Area<'_>, b: [i32; 4], text: &str, size: u32, colour: RGBColor) -> Drawn {
    area.draw(&Rectangle::new(
        [(b[0], b[1]), (b[2], b[3])],
        WHITE.mix(0.85).filled(),
    ))?;
    area.draw(&Text::new(
        text.to_string(),
        (b[0] + 3, b[1] + 2),
        text_style(size, colour, Pos::new(HPos::Left, VPos::Top)),
    ))?;
    Ok(())
}

/// A scale bar of `len_m` metres at pixel `at` (its left end), `px` pixels long.
fn scale_bar(area: &Area<'_>, at: (i32, i32), len_m: f64, px: i32, size: u32) -> Drawn {
    let label = if len_m >= 1000.0 {
        format!("{} km", len_m / 1000.0)
    } else {
        format!("{len_m} m")
    };
    let (x, y) = at;
    area.draw(&Rectangle::new(
        [(x - 6, y - size as i32 - 8), (x + px + 6, y + 10)],
        WHITE.mix(0.8).filled(),
    ))?;
    let half = px / 2;
    area.draw(&Rectangle::new([(x, y), (x + half, y + 6)], BLACK.filled()))?;
    area.draw(&Rectangle::new(
        [(x + half, y), (x + px, y + 6)],
        WHITE.filled(),
    ))?;
    area.draw(&Rectangle::new(
        [(x, y), (x + px, y + 6)],
        BLACK.stroke_width(1),
    ))?;
    area.draw(&Text::new(
        label,
        (x + px / 2, y - 3),
        text_style(size, BLACK, Pos::new(HPos::Center, VPos::Bottom)),
    ))?;
    Ok(())
}

/// A north arrow with its tip at `tip`, `len` pixels long.
fn north_arrow(area: &Area<'_>, tip: (i32, i32), len: i32, size: u32) -> Drawn {
    let (x, y) = tip;
    let w = len / 3;
    area.draw(&Rectangle::new(
        [(x - w - 6, y - size as i32 - 8), (x + w + 6, y + len + 6)],
        WHITE.mix(0.8).filled(),
    ))?;
    area.draw(&Polygon::new(
        vec![(x, y), (x + w, y + len), (x, y + len - w), (x - w, y + len)],
        BLACK.filled(),
    ))?;
    area.draw(&Text::new(
        "N",
        (x, y - 2),
        text_style(size, BLACK, Pos::new(HPos::Center, VPos::Bottom)),
    ))?;
    Ok(())
}

/// A track's points in image pixels (`origin` is the map's top-left corner in the image).
fn track_pixels(t: &Track, f: &MapFrame, origin: (i32, i32)) -> Vec<(i32, i32)> {
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(t.points.len());
    for p in &t.points {
        let (u, v) = f.pixel(p.x, p.y);
        let q = (
            origin.0 + u.floor().clamp(-1e6, 1e6) as i32,
            origin.1 + v.floor().clamp(-1e6, 1e6) as i32,
        );
        out.push(q);
    }
    thin(out)
}

/// `path` without the points closer than 3 pixels to the one kept before them (the last is
/// kept): thick lines of many tiny segments draw ragged.
fn thin(path: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    let Some(&last) = path.last() else {
        return path;
    };
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(path.len());
    for q in path {
        let far = out.last().is_none_or(|p| {
            let (dx, dy) = (i64::from(q.0 - p.0), i64::from(q.1 - p.1));
            dx * dx + dy * dy >= 9
        });
        if far {
            out.push(q);
        }
    }
    if out.last() != Some(&last) {
        if out.len() > 1 {
            out.pop();
        }
        out.push(last);
    }
    out
}

/// `map.png`: the terrain, the tracks, a scale bar and north; None when the record has neither
/// poses nor terrain.
pub fn draw_map(a: &Analysis) -> Option<Result<(Vec<u8>, MapInfo), String>> {
    let d = &a.map;
    let f = frame(d)?;
    if !(f.m_per_px.is_finite() && f.m_per_px > 0.0) {
        return Some(Err(
            "the tracks and terrain span more ground than a map can show".into(),
        ));
    }
    let relief = d.terrain.as_ref().and_then(HeightKey::of);
    let ((pw, ph), origin) = plot_area();
    let (pixels, cut) = relief_pixels(d.terrain.as_ref(), &f, 0.0);
    let scale_m = round_down(0.25 * (f.x1() - f.x0));
    let info = MapInfo {
        relief,
        frame: f,
        scale_m,
    };
    let png = plots::render(MAP_SIZE.0, MAP_SIZE.1, |root| {
        let (title, body) = root.split_vertically(TITLE_H);
        title.draw(&Text::new(
            "Map: terrain and vehicle tracks (top-down, north up)",
            (MAP_SIZE.0 as i32 / 2, TITLE_H as i32 / 2),
            TextStyle::from(TITLE.into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        let (left, legend) = body.split_horizontally(MAP_SIZE.0 - LEGEND_W);
        let mut c = ChartBuilder::on(&left)
            .margin(MARGIN)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(f.x0..f.x1(), f.y0()..f.y1)?;
        root.draw(
            &BitMapElement::<(i32, i32)>::with_owned_buffer(origin, (pw, ph), pixels)
                .ok_or("map raster of the wrong size")?,
        )?;
        c.configure_mesh()
            .disable_mesh()
            .x_desc("east (m)")
            .y_desc("north (m)")
            .x_label_formatter(&|v: &f64| format!("{v:.0}"))
            .y_label_formatter(&|v: &f64| format!("{v:.0}"))
            .label_style(LABEL)
            .draw()?;
        let plot = root.clone();
        // Tracks: a white halo under each line, then the vehicles' start and end marks.
        let paths: Vec<Vec<(i32, i32)>> = d
            .tracks
            .iter()
            .map(|t| track_pixels(t, &f, origin))
            .collect();
        let clip = [
            origin.0,
            origin.1,
            origin.0 + pw as i32,
            origin.1 + ph as i32,
        ];
        let plot_area = plot
            .clone()
            .shrink((origin.0 as u32, origin.1 as u32), (pw, ph));
        let shift = |p: &(i32, i32)| (p.0 - origin.0, p.1 - origin.1);
        for p in &paths {
            plot_area.draw(&PathElement::new(
                p.iter().map(shift).collect::<Vec<_>>(),
                WHITE.mix(0.9).stroke_width(6),
            ))?;
        }
        for (i, p) in paths.iter().enumerate() {
            plot_area.draw(&PathElement::new(
                p.iter().map(shift).collect::<Vec<_>>(),
                vehicle_colour(i).stroke_width(3),
            ))?;
        }
        for (i, p) in paths.iter().enumerate() {
            let (Some(s), Some(e)) = (p.first(), p.last()) else {
                continue;
            };
            let col = vehicle_colour(i);
            plot_area.draw(&Circle::new(shift(s), 6, WHITE.filled()))?;
            plot_area.draw(&Circle::new(shift(s), 6, col.stroke_width(2)))?;
            plot_area.draw(&Circle::new(shift(e), 6, col.filled()))?;
            plot_area.draw(&Circle::new(shift(e), 6, WHITE.stroke_width(1)))?;
        }
        let mut labels = Labels {
            taken: Vec::new(),
            bounds: clip,
        };
        // Every mark is kept clear of the labels.
        for p in &paths {
            for q in [p.first(), p.last()].into_iter().flatten() {
                labels.taken.push([q.0 - 7, q.1 - 7, q.0 + 7, q.1 + 7]);
            }
        }
        let scale_px = (scale_m / f.m_per_px).round() as i32;
        let bar_at = (clip[0] + 20, clip[3] - 22);
        labels.taken.push([
            bar_at.0 - 6,
            bar_at.1 - 30,
            bar_at.0 + scale_px + 6,
            bar_at.1 + 10,
        ]);
        let tip = (clip[2] - 34, clip[1] + 30);
        labels
            .taken
            .push([tip.0 - 22, tip.1 - 28, tip.0 + 22, tip.1 + 52]);
        for (i, (t, p)) in d.tracks.iter().zip(&paths).enumerate() {
            let (Some(s), Some(e)) = (p.first(), p.last()) else {
                continue;
            };
            let col = vehicle_colour(i);
            let moved = (s.0 - e.0).abs() > 12 || (s.1 - e.1).abs() > 12;
            if moved {
                for (at, text) in [
                    (*s, format!("{} start", t.vehicle)),
                    (*e, t.vehicle.clone()),
                ] {
                    if let Some(b) = labels.place(root, at, &text, 15) {
                        boxed_text(root, b, &text, 15, col)?;
                    }
                }
            } else if let Some(b) = labels.place(root, *e, &t.vehicle, 15) {
                boxed_text(root, b, &t.vehicle, 15, col)?;
            }
        }
        scale_bar(root, bar_at, scale_m, scale_px, 14)?;
        north_arrow(root, tip, 42, 16)?;
        root.draw(&Rectangle::new(
            [(clip[0], clip[1]), (clip[2] - 1, clip[3] - 1)],
            BLACK.mix(0.6).stroke_width(1),
        ))?;
        map_legend(&legend, d, relief.as_ref(), cut)?;
        Ok(())
    });
    Some(png.map(|p| (p, info)))
}

/// The legend beside `map.png`'s map: vehicles, marks, heights.
fn map_legend(area: &Area<'_>, d: &MapData, relief: Option<&HeightKey>, cut: bool) -> Drawn {
    let (x, mut y) = (12, 14);
    let head = |area: &Area<'_>, y: i32, text: &str| {
        area.draw(&Text::new(
            text.to_string(),
            (x, y),
            text_style(16, BLACK, Pos::new(HPos::Left, VPos::Top)),
        ))
    };
    head(area, y, "Vehicles")?;
    y += 26;
    let small = |c: RGBColor| text_style(14, c, Pos::new(HPos::Left, VPos::Center));
    for (i, t) in d.tracks.iter().enumerate().take(20) {
        area.draw(&PathElement::new(
            vec![(x, y), (x + 28, y)],
            vehicle_colour(i).stroke_width(3),
        ))?;
        area.draw(&Text::new(t.vehicle.clone(), (x + 36, y), small(BLACK)))?;
        y += 20;
    }
    if d.tracks.len() > 20 {
        area.draw(&Text::new(
            format!("and {} more", d.tracks.len() - 20),
            (x, y),
            small(BLACK),
        ))?;
        y += 20;
    }
    if d.tracks.is_empty() {
        area.draw(&Text::new("no poses in the record", (x, y), small(BLACK)))?;
        y += 20;
    }
    y += 6;
    area.draw(&Circle::new((x + 14, y), 6, BLACK.stroke_width(2)))?;
    area.draw(&Text::new("start", (x + 36, y), small(BLACK)))?;
    y += 20;
    area.draw(&Circle::new((x + 14, y), 6, BLACK.filled()))?;
    area.draw(&Text::new("end", (x + 36, y), small(BLACK)))?;
    y += 34;
    let Some(r) = relief else {
        head(area, y, "Terrain")?;
        y += 26;
        for line in [
            "none in the record",
            "(no /scene/terrain):",
            "tracks on a plain",
            "background",
        ] {
            area.draw(&Text::new(line, (x, y), small(BLACK)))?;
            y += 20;
        }
        return Ok(());
    };
    head(area, y, "Height (m, z up)")?;
    y += 26;
    // A colour bar from the lowest (bottom) to the highest ground.
    let (bar_h, bar_w) = (240, 26);
    let (lo, hi) = (r.lo_m, r.hi_m.max(r.lo_m + 1e-6));
    let row = |z: f64| y + ((hi - z) / (hi - lo) * f64::from(bar_h)).round() as i32;
    for k in 0..bar_h {
        let z = hi - (f64::from(k) + 0.5) / f64::from(bar_h) * (hi - lo);
        let c = tint(z as f32, lo as f32, hi as f32);
        let col = RGBColor(c[0] as u8, c[1] as u8, c[2] as u8);
        area.draw(&Rectangle::new(
            [(x, y + k), (x + bar_w, y + k + 1)],
            col.filled(),
        ))?;
    }
    area.draw(&Rectangle::new(
        [(x, y), (x + bar_w, y + bar_h)],
        BLACK.mix(0.6).stroke_width(1),
    ))?;
    let mut marks = vec![(hi, format!("{hi:.1}")), (lo, format!("{lo:.1}"))];
    if lo < 0.0 && hi > 0.0 {
        marks.push((0.0, "0 waterline".to_string()));
    }
    let mut placed: Vec<i32> = Vec::new();
    for (z, text) in marks {
        let ty = row(z);
        if placed.iter().any(|&p| (p - ty).abs() < 16) {
            continue;
        }
        placed.push(ty);
        area.draw(&PathElement::new(
            vec![(x + bar_w, ty), (x + bar_w + 6, ty)],
            BLACK.stroke_width(1),
        ))?;
        area.draw(&Text::new(text, (x + bar_w + 10, ty), small(BLACK)))?;
    }
    y += bar_h + 22;
    let lines = [
        format!("contours every {} m", r.contour_m),
        "dark line: waterline (0 m)".to_string(),
        "shaded as lit from the".to_string(),
        "north-west; plain: beyond".to_string(),
        "the terrain".to_string(),
    ];
    for line in lines {
        area.draw(&Text::new(line, (x, y), small(BLACK)))?;
        y += 20;
    }
    if cut {
        area.draw(&Text::new(
            "terrain drawn in part",
            (x, y),
            small(RGBColor(198, 40, 40)),
        ))?;
    }
    Ok(())
}

/// The state of a pair at `t_s` from its intervals (None outside them).
pub fn state_at(intervals: &[Interval], t_s: f64) -> Option<ChannelState> {
    let k = intervals.partition_point(|i| i.start_s <= t_s);
    let i = intervals.get(k.checked_sub(1)?)?;
    (t_s < i.end_s || (k == intervals.len() && t_s <= i.end_s)).then_some(i.state)
}

/// The pairs `map_pairs.png` shows: with a state and both tracks; those with traffic and the
/// most changes first, at most [`MAX_MAP_PAIRS`]. Also how many were left out.
pub fn map_pairs(a: &Analysis) -> (Vec<&PairSeries>, usize) {
    let has = |v: &str| a.map.tracks.iter().any(|t| t.vehicle == v);
    let mut pairs: Vec<&PairSeries> = a
        .pairs
        .iter()
        .filter(|p| !p.intervals.is_empty() && has(&p.a) && has(&p.b))
        .collect();
    let busy = |p: &PairSeries| {
        a.traffic_links()
            .any(|l| (l.src == p.a && l.dst == p.b) || (l.src == p.b && l.dst == p.a))
    };
    let n = pairs.len();
    pairs.sort_by_key(|p| (!busy(p), std::cmp::Reverse(p.changes)));
    pairs.truncate(MAX_MAP_PAIRS);
    // In the run's order on the figure.
    let rank = |v: &str| a.map.tracks.iter().position(|t| t.vehicle == v);
    pairs.sort_by_key(|p| (rank(&p.a), rank(&p.b)));
    let left_out = n - pairs.len();
    (pairs, left_out)
}

/// Columns of `map_pairs.png` for `n` pairs.
fn columns(n: usize) -> usize {
    match n {
        0..=1 => 1,
        2..=4 => 2,
        _ => 3,
    }
}

const PAIRS_HEAD: u32 = 76;
const PANEL_PAD: u32 = 12;
const PANEL_CAPTION: u32 = 24;

/// Layout of `map_pairs.png` for `n` pairs: the image's size and every panel's frame (the
/// ground of the tracks, panels shaped like it within limits). None without anything to draw.
pub fn pairs_layout(d: &MapData, n: usize) -> Option<((u32, u32), MapFrame)> {
    let g = ground(d)?;
    let cols = columns(n) as u32;
    let rows = n.div_ceil(columns(n)).max(1) as u32;
    let pw = (PAIRS_WIDTH - PANEL_PAD * (cols + 1)) / cols;
    let aspect = ((g[1] - g[0]) / (g[3] - g[2]).max(1e-6)).clamp(0.8, 2.5);
    let ph = (f64::from(pw) / aspect).round() as u32;
    let h = PAIRS_HEAD + rows * (PANEL_CAPTION + ph + PANEL_PAD) + PANEL_PAD;
    let within = d.terrain.as_ref().and_then(Mesh::bounds);
    Some(((PAIRS_WIDTH, h), MapFrame::fit(g, within, pw, ph)))
}

/// `map_pairs.png`: per pair, a small map of the two tracks coloured by the pair's state;
/// None without a pair to show.
pub fn draw_pairs(a: &Analysis) -> Option<Result<Vec<u8>, String>> {
    let d = &a.map;
    let (pairs, _) = map_pairs(a);
    if pairs.is_empty() {
        return None;
    }
    let ((w, h), f) = pairs_layout(d, pairs.len())?;
    if !(f.m_per_px.is_finite() && f.m_per_px > 0.0) {
        return None;
    }
    let (pw, ph) = (f.w, f.h);
    let (pixels, _) = relief_pixels(d.terrain.as_ref(), &f, 0.5);
    let cols = columns(pairs.len());
    let index: HashMap<&str, usize> = d
        .tracks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.vehicle.as_str(), i))
        .collect();
    let scale_m = round_down(0.25 * (f.x1() - f.x0));
    Some(plots::render(w, h, |root| {
        root.draw(&Text::new(
            "Links on the map: each pair's two tracks coloured by the pair's state",
            (w as i32 / 2, 18),
            TextStyle::from(TITLE.into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        // The key.
        let mut x = PANEL_PAD as i32 + 4;
        let ky = 44;
        let key = text_style(14, BLACK, Pos::new(HPos::Left, VPos::Center));
        for (label, style) in [
            ("LOS", state_colour(ChannelState::Los).stroke_width(4)),
            ("NLOS", state_colour(ChannelState::Nlos).stroke_width(4)),
            (
                "out of range",
                state_colour(ChannelState::OutOfRange).stroke_width(4),
            ),
            ("no state yet", WHITE.stroke_width(1)),
        ] {
            root.draw(&PathElement::new(
                vec![(x, ky), (x + 28, ky)],
                BLACK.mix(0.55).stroke_width(style.stroke_width + 2),
            ))?;
            root.draw(&PathElement::new(vec![(x, ky), (x + 28, ky)], style))?;
            root.draw(&Text::new(label, (x + 34, ky), key.clone()))?;
            x += 34 + root.estimate_text_size(label, &key)?.0 as i32 + 24;
        }
        root.draw(&Text::new(
            "(shares of the time beside each pair's names)",
            (x, ky),
            text_style(13, RGBColor(60, 60, 60), Pos::new(HPos::Left, VPos::Center)),
        ))?;
        root.draw(&Text::new(
            format!(
                "thin lines: the line of sight between the two at {SIGHT_LINES} evenly spaced times; open circle: start, dot: end"
            ),
            (PANEL_PAD as i32 + 4, ky + 20),
            text_style(13, RGBColor(60, 60, 60), Pos::new(HPos::Left, VPos::Center)),
        ))?;
        for (n, p) in pairs.iter().enumerate() {
            let (col, row) = ((n % cols) as u32, (n / cols) as u32);
            let left = (PANEL_PAD + col * (pw + PANEL_PAD)) as i32;
            let top = (PAIRS_HEAD + row * (PANEL_CAPTION + ph + PANEL_PAD)) as i32;
            let origin = (left, top + PANEL_CAPTION as i32);
            let cy = top + PANEL_CAPTION as i32 / 2;
            root.draw(&Text::new(
                format!("{} – {}", p.a, p.b),
                (left, cy),
                text_style(15, BLACK, Pos::new(HPos::Left, VPos::Center)),
            ))?;
            // The shares, right-aligned, each in its state's colour.
            let mut right = left + pw as i32;
            for s in ChannelState::ALL.iter().rev() {
                let text = p
                    .share(*s)
                    .map(|v| format!("{:.0} %", 100.0 * v))
                    .unwrap_or_else(|| "–".into());
                let style = text_style(13, state_colour(*s), Pos::new(HPos::Right, VPos::Center));
                root.draw(&Text::new(text.clone(), (right, cy), style.clone()))?;
                right -= root.estimate_text_size(&text, &style)?.0 as i32 + 10;
            }
            root.draw(
                &BitMapElement::<(i32, i32)>::with_ref(origin, (pw, ph), &pixels)
                    .ok_or("panel raster of the wrong size")?,
            )?;
            let panel = root
                .clone()
                .shrink((origin.0 as u32, origin.1 as u32), (pw, ph));
            draw_pair(&panel, p, d, &f, &index)?;
            scale_bar(
                &panel,
                (10, ph as i32 - 14),
                scale_m,
                (scale_m / f.m_per_px).round() as i32,
                12,
            )?;
            root.draw(&Rectangle::new(
                [origin, (origin.0 + pw as i32 - 1, origin.1 + ph as i32 - 1)],
                BLACK.mix(0.6).stroke_width(1),
            ))?;
        }
        Ok(())
    }))
}

/// One pair's panel (pixels from the panel's top-left corner).
fn draw_pair(
    area: &Area<'_>,
    p: &PairSeries,
    d: &MapData,
    f: &MapFrame,
    index: &HashMap<&str, usize>,
) -> Drawn {
    let tracks: Vec<(usize, &Track)> = [&p.a, &p.b]
        .iter()
        .filter_map(|v| index.get(v.as_str()).map(|&i| (i, &d.tracks[i])))
        .collect();
    let px = |x: f64, y: f64| {
        let (u, v) = f.pixel(x, y);
        (
            u.floor().clamp(-1e6, 1e6) as i32,
            v.floor().clamp(-1e6, 1e6) as i32,
        )
    };
    // Sight lines, over the time both tracks cover.
    if let [(_, ta), (_, tb)] = tracks[..] {
        let start = ta.points[0].t_s.max(tb.points[0].t_s);
        let end = ta.points[ta.points.len() - 1]
            .t_s
            .min(tb.points[tb.points.len() - 1].t_s);
        if end >= start {
            for k in 0..SIGHT_LINES {
                let t = start + (k as f64 + 0.5) / SIGHT_LINES as f64 * (end - start);
                let (Some(s), Some(pa), Some(pb)) = (state_at(&p.intervals, t), ta.at(t), tb.at(t))
                else {
                    continue;
                };
                area.draw(&PathElement::new(
                    vec![px(pa.0, pa.1), px(pb.0, pb.1)],
                    state_colour(s).mix(0.75).stroke_width(1),
                ))?;
            }
        }
    }
    // Each track: a dark outline, then runs of one state.
    for (_, t) in &tracks {
        let pts: Vec<(i32, i32)> = t.points.iter().map(|q| px(q.x, q.y)).collect();
        area.draw(&PathElement::new(
            thin(pts),
            BLACK.mix(0.55).stroke_width(5),
        ))?;
    }
    for (_, t) in &tracks {
        let mut run: Vec<(i32, i32)> = Vec::new();
        let mut state = None;
        let flush = |run: &mut Vec<(i32, i32)>, state: Option<ChannelState>| -> Drawn {
            if run.len() >= 2 {
                let style = match state {
                    Some(s) => state_colour(s).stroke_width(3),
                    None => WHITE.mix(0.9).stroke_width(1),
                };
                area.draw(&PathElement::new(thin(std::mem::take(run)), style))?;
            }
            run.clear();
            Ok(())
        };
        for q in &t.points {
            let s = state_at(&p.intervals, q.t_s);
            let at = px(q.x, q.y);
            if s != state && !run.is_empty() {
                // The segment into a change belongs to the state before it.
                run.push(at);
                flush(&mut run, state)?;
            }
            state = s;
            run.push(at);
        }
        flush(&mut run, state)?;
    }
    // Marks and names in black: the colours here are the pair's states.
    for (_, t) in &tracks {
        let (s, e) = (t.points[0], t.points[t.points.len() - 1]);
        area.draw(&Circle::new(px(s.x, s.y), 4, WHITE.filled()))?;
        area.draw(&Circle::new(px(s.x, s.y), 4, BLACK.stroke_width(2)))?;
        area.draw(&Circle::new(px(e.x, e.y), 4, BLACK.filled()))?;
    }
    let (w, h) = area.dim_in_pixel();
    let mut labels = Labels {
        taken: Vec::new(),
        bounds: [0, 0, w as i32, h as i32],
    };
    for (_, t) in &tracks {
        let e = t.points[t.points.len() - 1];
        if let Some(b) = labels.place(area, px(e.x, e.y), &t.vehicle, 13) {
            boxed_text(area, b, &t.vehicle, 13, BLACK)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::mapdata::transform;
    use super::*;
    use crate::output::foxglove::{Pose, SceneEntity, SceneUpdate, TriangleListPrimitive, Vector3};
    use crate::output::record::Record;

    fn mesh_of(points: Vec<[f64; 3]>, indices: Vec<u32>) -> SceneUpdate {
        SceneUpdate {
            deletions: Vec::new(),
            entities: vec![SceneEntity {
                triangles: vec![TriangleListPrimitive {
                    pose: Pose::default(),
                    points: points.into_iter().map(Vector3::from).collect(),
                    color: Default::default(),
                    colors: Vec::new(),
                    indices,
                }],
                ..Default::default()
            }],
        }
    }

    #[test]
    fn a_frame_shows_its_ground_whole_at_one_scale_and_keeps_inside_the_terrain() {
        let f = MapFrame::fit([0.0, 100.0, 0.0, 10.0], None, 200, 100);
        assert_eq!(f.m_per_px, 0.5);
        assert_eq!((f.x0, f.x1()), (0.0, 100.0));
        assert_eq!((f.y0(), f.y1), (-20.0, 30.0));
        assert_eq!(f.pixel(0.0, 30.0), (0.0, 0.0));
        assert_eq!(f.pixel(50.0, 5.0), (100.0, 50.0));
        // The extra ground goes where the terrain is.
        let f = MapFrame::fit(
            [0.0, 100.0, 0.0, 10.0],
            Some([-50.0, 150.0, 0.0, 200.0]),
            200,
            100,
        );
        assert_eq!((f.y0(), f.y1), (0.0, 50.0));
        let g = f.scaled(100, 50);
        assert_eq!((g.x0, g.x1(), g.y0(), g.y1), (f.x0, f.x1(), f.y0(), f.y1));
    }

    #[test]
    fn the_map_plot_area_is_the_charts() {
        plots::font().unwrap();
        let ((w, h), origin) = plot_area();
        let mut rgb = vec![0u8; (MAP_SIZE.0 * MAP_SIZE.1 * 3) as usize];
        let root = BitMapBackend::with_buffer(&mut rgb, MAP_SIZE).into_drawing_area();
        let (_, body) = root.split_vertically(TITLE_H);
        let (left, _) = body.split_horizontally(MAP_SIZE.0 - LEGEND_W);
        let c = ChartBuilder::on(&left)
            .margin(MARGIN)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(0.0..1.0, 0.0..1.0)
            .unwrap();
        let (xr, yr) = c.plotting_area().get_pixel_range();
        assert_eq!((xr.start, yr.start), origin);
        assert_eq!(
            ((xr.end - xr.start) as u32, (yr.end - yr.start) as u32),
            (w, h)
        );
    }

    #[test]
    fn triangles_fill_the_pixels_they_cover_with_their_interpolated_height() {
        // Two triangles making the square [0, 10]², height x (a ramp rising east).
        let (mesh, notes) = Mesh::from_scene(&mesh_of(
            vec![
                [0.0, 10.0, 0.0],
                [10.0, 10.0, 10.0],
                [0.0, 0.0, 0.0],
                [10.0, 0.0, 10.0],
            ],
            vec![0, 2, 1, 3, 1, 2],
        ));
        assert!(notes.is_empty());
        let f = MapFrame::fit([-5.0, 15.0, -5.0, 15.0], None, 20, 20);
        let r = rasterize(&mesh, &f);
        let at = |x: f64, y: f64| {
            let (u, v) = f.pixel(x, y);
            r.height[v as usize * 20 + u as usize]
        };
        assert!(at(-2.0, 5.0).is_nan() && at(5.0, 12.0).is_nan());
        assert!((at(2.5, 5.5) - 2.5).abs() < 1e-4, "{}", at(2.5, 5.5));
        assert!((at(8.5, 1.5) - 8.5).abs() < 1e-4);
        let filled = r.height.iter().filter(|h| !h.is_nan()).count();
        assert_eq!(filled, 100);
        // Ground rising east faces west: lighter than flat ground lit from the north-west; ground
        // rising west, facing east, darker.
        assert!(r.shade[5 * 20 + 10] > LIGHT[2] as f32);
        let (west, _) = Mesh::from_scene(&mesh_of(
            vec![
                [0.0, 10.0, 10.0],
                [10.0, 10.0, 0.0],
                [0.0, 0.0, 10.0],
                [10.0, 0.0, 0.0],
            ],
            vec![0, 2, 1, 3, 1, 2],
        ));
        assert!(rasterize(&west, &f).shade[10 * 20 + 10] < LIGHT[2] as f32);
        assert_eq!(r.height.len(), 400);
    }

    #[test]
    fn a_damaged_mesh_draws_what_is_sound_and_says_what_is_not() {
        let (mesh, notes) = Mesh::from_scene(&mesh_of(
            vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, f64::NAN],
                [1.0, 1.0, 0.0],
            ],
            vec![0, 1, 3, 0, 1, 2, 0, 1, 99, 7],
        ));
        assert_eq!(mesh.triangles, vec![[0, 1, 3]]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("1 triangles name a point"), "{notes:?}");
        assert!(notes[1].contains("not a finite number"), "{notes:?}");
        // Points taken three by three without indices; a pose moves them.
        let mut u = mesh_of(
            vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [5.0; 3]],
            vec![],
        );
        u.entities[0].triangles[0].pose = Pose::at([100.0, 0.0, -3.0]);
        let (m, notes) = Mesh::from_scene(&u);
        assert!(notes.is_empty());
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(m.vertices[1], [101.0, 0.0, -3.0]);
        // A huge triangle is drawn, and the image stays its size.
        let (big, _) = Mesh::from_scene(&mesh_of(
            vec![[-1e12, -1e12, 0.0], [1e12, -1e12, 1.0], [0.0, 1e12, 2.0]],
            vec![],
        ));
        let f = MapFrame::fit([0.0, 10.0, 0.0, 10.0], None, 30, 30);
        let (px, cut) = relief_pixels(Some(&big), &f, 0.0);
        assert_eq!((px.len(), cut), (30 * 30 * 3, false));
    }

    #[test]
    fn tracks_beyond_any_scale_are_refused_not_drawn() {
        use crate::output::schema::{Poses, VehiclePose};
        plots::font().unwrap();
        let pose = |vehicle: &str, x: f64| VehiclePose {
            vehicle: vehicle.into(),
            x,
            y: 0.0,
            z: 0.0,
        };
        let record = Record {
            poses: vec![Poses {
                t_s: 0.0,
                poses: vec![pose("a", -1.7e308), pose("b", 1.7e308)],
            }],
            ..Default::default()
        };
        let a = Analysis::of(&record, None);
        assert_eq!(a.map.tracks.len(), 2);
        let e = draw_map(&a).unwrap().unwrap_err();
        assert!(e.contains("more ground than a map can show"), "{e}");
        assert!(draw_pairs(&a).is_none());
    }

    #[test]
    fn a_quarter_turn_about_z_turns_east_to_north() {
        let mut pose = Pose::default();
        let s = std::f64::consts::FRAC_1_SQRT_2;
        pose.orientation.z = s;
        pose.orientation.w = s;
        let p = transform(&pose, [1.0, 0.0, 2.0]);
        assert!((p[0]).abs() < 1e-12 && (p[1] - 1.0).abs() < 1e-12 && (p[2] - 2.0).abs() < 1e-12);
    }

    #[test]
    fn steps_and_states() {
        assert_eq!(nice_step(5.4), 10.0);
        assert_eq!(nice_step(5.0), 5.0);
        assert_eq!(nice_step(2.1), 2.5);
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(round_down(140.0), 100.0);
        assert_eq!(round_down(260.0), 200.0);
        assert_eq!(round_down(0.7), 0.5);
        let iv = |a, b, state| Interval {
            start_s: a,
            end_s: b,
            state,
        };
        let ivs = [
            iv(1.0, 5.0, ChannelState::Los),
            iv(5.0, 9.0, ChannelState::Nlos),
        ];
        assert_eq!(state_at(&ivs, 0.5), None);
        assert_eq!(state_at(&ivs, 1.0), Some(ChannelState::Los));
        assert_eq!(state_at(&ivs, 5.0), Some(ChannelState::Nlos));
        assert_eq!(state_at(&ivs, 9.0), Some(ChannelState::Nlos));
        assert_eq!(state_at(&ivs, 9.5), None);
        let t = Track {
            vehicle: "a".into(),
            points: vec![
                TrackPoint {
                    t_s: 0.0,
                    x: 0.0,
                    y: 0.0,
                },
                TrackPoint {
                    t_s: 2.0,
                    x: 10.0,
                    y: -4.0,
                },
            ],
        };
        assert_eq!(t.at(1.0), Some((5.0, -2.0)));
        assert_eq!(t.at(-1.0), Some((0.0, 0.0)));
        assert_eq!(t.at(3.0), Some((10.0, -4.0)));
    }

    #[test]
    fn water_and_land_take_their_tints_and_a_contour_skips_the_flat_floor() {
        let water = tint(-30.0, -40.0, 5.0);
        let land = tint(3.0, -40.0, 5.0);
        assert!(water[2] > water[0] && land[0] > land[2]);
        let r = HeightKey {
            lo_m: -40.5,
            hi_m: 2.5,
            contour_m: 5.0,
        };
        assert!(!r.contoured(-40.0) && r.contoured(-35.0) && !r.contoured(0.0));
    }
}
