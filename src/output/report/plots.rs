//! The report's PNG plots, drawn with `plotters` into an RGB buffer and encoded with `png`.
//!
//! Text needs a TrueType font: DejaVu Sans, read at run time from the first of
//! [`FONT_PATHS`] that exists (Debian's `fonts-dejavu-core`, which `scripts/setup` installs),
//! or from the file `NETSIM_REPORT_FONT` names. Without one no plot is drawn and the report
//! says why; the series, tables and page are written all the same.

use super::series::{outcome_rank, Analysis, ChannelState, Interval, LinkSeries, PairSeries};
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::sync::OnceLock;

/// Where DejaVu Sans is looked for (Debian and Ubuntu, Fedora, Arch), after `NETSIM_REPORT_FONT`.
pub const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// The environment variable naming another TrueType font file.
pub const FONT_ENV: &str = "NETSIM_REPORT_FONT";

/// Registers the font as plotters' "sans-serif" (once per process); the error says what to
/// install.
pub fn font() -> Result<(), String> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let candidates: Vec<String> = std::env::var(FONT_ENV).ok().into_iter().chain(FONT_PATHS.iter().map(|p| p.to_string())).collect();
        let Some(path) = candidates.iter().find(|p| std::path::Path::new(p).is_file()) else {
            return Err(format!(
                "no font for the plots: none of {} exists (install Debian's fonts-dejavu-core, or set {FONT_ENV} to a .ttf file)",
                candidates.join(", ")
            ));
        };
        let bytes = std::fs::read(path).map_err(|e| format!("font {path}: {e}"))?;
        // plotters keeps fonts for the life of the process: this one is read once.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).map_err(|_| format!("font {path}: not a TrueType/OpenType font"))
    })
    .clone()
}

/// One drawn plot.
#[derive(Debug, Clone)]
pub struct Plot {
    /// File name inside `report/plots/`.
    pub file: String,
    pub title: String,
    pub png: Vec<u8>,
}

type Drawn = Result<(), Box<dyn Error>>;

/// Draws `w`×`h` pixels with `draw` and encodes them as PNG.
pub(crate) fn render(
    w: u32,
    h: u32,
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Drawn,
) -> Result<Vec<u8>, String> {
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let backend =
            BitMapBackend::with_buffer_and_format(&mut rgb, (w, h)).map_err(|e| e.to_string())?;
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(png)
}

pub(crate) const TITLE: (&str, u32) = ("sans-serif", 20);
pub(crate) const LABEL: (&str, u32) = ("sans-serif", 14);

/// At most this many points per scatter (every n-th point beyond it).
const MAX_POINTS: usize = 20_000;
/// At most this many pairs in the channel plot, links in the SNR plot, bars in a ledger plot.
pub const MAX_PAIRS: usize = 8;
pub const MAX_SNR_LINKS: usize = 10;
pub const MAX_BARS: usize = 24;

fn shade(state: ChannelState) -> RGBColor {
    match state {
        ChannelState::Los => RGBColor(205, 235, 205),
        ChannelState::Nlos => RGBColor(250, 222, 170),
        ChannelState::OutOfRange => RGBColor(225, 225, 225),
    }
}

/// The colour of an outcome (`delivered` or a drop reason's label).
pub fn outcome_colour(label: &str) -> RGBColor {
    match label {
        "delivered" => RGBColor(44, 160, 44),
        "out of range" => RGBColor(127, 127, 127),
        "packet error" => RGBColor(214, 39, 40),
        "collision" => RGBColor(255, 127, 14),
        "half-duplex" => RGBColor(148, 103, 189),
        "queue full" => RGBColor(140, 86, 75),
        "retry limit" => RGBColor(255, 187, 120),
        "bit errors" => RGBColor(227, 119, 194),
        "held too long" => RGBColor(188, 189, 34),
        "no route" => RGBColor(23, 190, 207),
        "no receiver" => RGBColor(31, 119, 180),
        "malformed" => RGBColor(100, 100, 0),
        "shutdown" => RGBColor(60, 60, 60),
        "after end" => RGBColor(170, 170, 170),
        _ => {
            let h = label
                .bytes()
                .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
            let (r, g, b) = Palette99::pick(h as usize % 99).rgb();
            RGBColor(r, g, b)
        }
    }
}

pub(super) fn line_colour(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    C[i % C.len()]
}

/// An upper axis bound: `max` with some headroom, 1 when there is nothing.
fn upper(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.08
    } else {
        1.0
    }
}

/// Tick labels with as many decimals as an axis spanning `span` needs (none for 0..700, one
/// for 0..1.2).
pub(crate) fn ticks(span: f64) -> impl Fn(&f64) -> String {
    let step = span.abs() / 10.0;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        0
    };
    move |v: &f64| format!("{v:.decimals$}")
}

/// Tick labels of a count axis.
fn whole(v: &f64) -> String {
    format!("{v:.0}")
}

/// How many labels a count axis up to `max` gets (whole numbers only).
fn count_labels(max: f64) -> usize {
    (max.floor() as usize + 1).clamp(2, 10)
}

/// A file-name-safe form of a vehicle name.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".to_string()
    } else {
        s
    }
}

/// Draws the shading intervals (one series per state, labelled for the legend).
fn draw_shading<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<
        'a,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    shading: &[Interval],
    y: (f64, f64),
    legend: bool,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    for state in ChannelState::ALL {
        let rects: Vec<_> = shading
            .iter()
            .filter(|i| i.state == state)
            .map(|i| Rectangle::new([(i.start_s, y.0), (i.end_s, y.1)], shade(state).filled()))
            .collect();
        if rects.is_empty() {
            continue;
        }
        let series = chart.draw_series(rects)?;
        if legend {
            let c = shade(state);
            series
                .label(state.label())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        }
    }
    Ok(())
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Drawn
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.5))
        .label_font(LABEL)
        .draw()?;
    Ok(())
}

/// The pair's distance samples (t, m).
fn distances(pair: Option<&PairSeries>) -> Vec<(f64, f64)> {
    pair.map(|p| p.samples.iter().map(|s| (s.t_s, s.distance_m)).collect())
        .unwrap_or_default()
}

/// Delay axis unit: ms below 1 s, else s.
fn delay_unit(max_s: f64) -> (&'static str, f64) {
    if max_s < 1.0 {
        ("ms", 1e3)
    } else {
        ("s", 1.0)
    }
}

/// Throughput (with distance) and one-way delay over time of one directed link, shaded by the
/// pair's LOS / NLOS and the link's out-of-range intervals.
pub fn link_over_time(
    a: &Analysis,
    l: &LinkSeries,
    pair: Option<&PairSeries>,
) -> Result<Vec<u8>, String> {
    let end = a.end_s.max(a.bin_s);
    let steps: Vec<(f64, f64)> = l
        .bins
        .iter()
        .enumerate()
        .flat_map(|(i, b)| {
            let v = super::series::mbit_s(b.bytes, a.bin_s);
            [(i as f64 * a.bin_s, v), ((i + 1) as f64 * a.bin_s, v)]
        })
        .collect();
    let rate_max = upper(steps.iter().map(|p| p.1).fold(0.0, f64::max));
    let dist = distances(pair);
    let dist_max = upper(dist.iter().map(|p| p.1).fold(0.0, f64::max));
    let delay_max_s = l.delays.iter().map(|d| d.delay_s()).fold(0.0, f64::max);
    let (unit, scale) = delay_unit(delay_max_s);
    let stride = l.delays.len().div_ceil(MAX_POINTS).max(1);
    let delays: Vec<(f64, f64)> = l
        .delays
        .iter()
        .step_by(stride)
        .map(|d| (d.delivered_s, d.delay_s() * scale))
        .collect();
    let delay_top = upper(delay_max_s * scale);
    render(1200, 720, |root| {
        let root = root.titled(
            &format!("{} → {}: throughput and one-way delay", l.src, l.dst),
            TITLE,
        )?;
        let (top, bottom) = root.split_vertically(380);
        let mut c = ChartBuilder::on(&top)
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .right_y_label_area_size(64)
            .build_cartesian_2d(0.0..end, 0.0..rate_max)?
            .set_secondary_coord(0.0..end, 0.0..dist_max);
        draw_shading(&mut c, &l.shading, (0.0, rate_max), true)?;
        c.configure_mesh()
            .x_desc("sim time (s)")
            .y_desc(format!("throughput (Mbit/s, {} s bins)", a.bin_s))
            .x_label_formatter(&ticks(end))
            .y_label_formatter(&ticks(rate_max))
            .label_style(LABEL)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        if !dist.is_empty() {
            c.configure_secondary_axes()
                .y_desc("distance (m)")
                .y_label_formatter(&ticks(dist_max))
                .label_style(LABEL)
                .draw()?;
        }
        let blue = RGBColor(31, 119, 180);
        c.draw_series(LineSeries::new(steps, blue.stroke_width(2)))?
            .label("throughput")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], blue.stroke_width(2))
            });
        if !dist.is_empty() {
            c.draw_secondary_series(LineSeries::new(dist, BLACK.mix(0.7)))?
                .label("distance")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.mix(0.7)));
        }
        legend(&mut c)?;

        // The same plotting width as above (an empty right label area), so the time axes align.
        let mut d = ChartBuilder::on(&bottom)
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .right_y_label_area_size(64)
            .build_cartesian_2d(0.0..end, 0.0..delay_top)?;
        draw_shading(&mut d, &l.shading, (0.0, delay_top), false)?;
        d.configure_mesh()
            .x_desc("sim time (s), at delivery")
            .y_desc(format!("one-way delay ({unit})"))
            .x_label_formatter(&ticks(end))
            .y_label_formatter(&ticks(delay_top))
            .label_style(LABEL)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        if delays.is_empty() {
            d.draw_series(std::iter::once(Text::new(
                "no packet delivered",
                (end * 0.4, delay_top * 0.5),
                LABEL,
            )))?;
        } else {
            d.draw_series(delays.iter().map(|&p| Circle::new(p, 2, blue.filled())))?;
        }
        Ok(())
    })
}

/// Rectangles of a histogram of `values` over [0, max] in `buckets` buckets: (x0, x1, count).
fn histogram(values: &[f64], buckets: usize) -> Vec<(f64, f64, u64)> {
    let max = values.iter().copied().fold(0.0, f64::max);
    let width = if max > 0.0 { max / buckets as f64 } else { 1.0 };
    let mut counts = vec![0u64; buckets];
    for v in values {
        let i = ((v / width).floor().max(0.0) as usize).min(buckets - 1);
        counts[i] += 1;
    }
    counts
        .iter()
        .enumerate()
        .map(|(i, &n)| (i as f64 * width, (i + 1) as f64 * width, n))
        .collect()
}

fn draw_histogram(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    title: &str,
    x_desc: &str,
    values: &[f64],
    colour: RGBColor,
) -> Drawn {
    let mut builder = ChartBuilder::on(area);
    let c = builder
        .caption(title, LABEL)
        .margin(8)
        .margin_right(20)
        .x_label_area_size(40)
        .y_label_area_size(64);
    if values.is_empty() {
        let mut c = c.build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
        c.configure_mesh()
            .x_desc(x_desc)
            .label_style(LABEL)
            .draw()?;
        c.draw_series(std::iter::once(Text::new("no data", (0.4, 0.5), LABEL)))?;
        return Ok(());
    }
    let h = histogram(values, 30);
    let x_max = h.last().map(|b| b.1).unwrap_or(1.0);
    let y_max = upper(h.iter().map(|b| b.2 as f64).fold(0.0, f64::max));
    let mut c = c.build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    c.configure_mesh()
        .x_desc(x_desc)
        .y_desc("count")
        .x_label_formatter(&ticks(x_max))
        .y_labels(count_labels(y_max))
        .y_label_formatter(&whole)
        .label_style(LABEL)
        .draw()?;
    c.draw_series(h.iter().filter(|b| b.2 > 0).map(|&(x0, x1, n)| {
        let mut r = Rectangle::new([(x0, 0.0), (x1, n as f64)], colour.filled());
        r.set_margin(0, 0, 1, 1);
        r
    }))?;
    Ok(())
}

/// Histograms of the link's rate (per bin, over its active span) and one-way delay, and the
/// rate vs the bin's mean delay.
pub fn link_statistics(a: &Analysis, l: &LinkSeries) -> Result<Vec<u8>, String> {
    let bins = l.active_bins(a.bin_s);
    let rates: Vec<f64> = bins.iter().map(|b| b.1).collect();
    let delay_max_s = l.delays.iter().map(|d| d.delay_s()).fold(0.0, f64::max);
    let (unit, scale) = delay_unit(delay_max_s);
    let delays: Vec<f64> = l.delays.iter().map(|d| d.delay_s() * scale).collect();
    let scatter: Vec<(f64, f64)> = bins
        .iter()
        .filter_map(|b| Some((b.1, b.2? * scale)))
        .collect();
    render(1500, 460, |root| {
        let root = root.titled(&format!("{} → {}: rate and delay", l.src, l.dst), TITLE)?;
        let panels = root.split_evenly((1, 3));
        draw_histogram(
            &panels[0],
            &format!("rate per {} s bin", a.bin_s),
            "Mbit/s",
            &rates,
            RGBColor(31, 119, 180),
        )?;
        draw_histogram(
            &panels[1],
            "one-way delay per packet",
            unit,
            &delays,
            RGBColor(255, 127, 14),
        )?;
        let x_max = upper(scatter.iter().map(|p| p.0).fold(0.0, f64::max));
        let y_max = upper(scatter.iter().map(|p| p.1).fold(0.0, f64::max));
        let mut c = ChartBuilder::on(&panels[2])
            .caption("rate vs mean delay, per bin", LABEL)
            .margin(8)
            .margin_right(20)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
        c.configure_mesh()
            .x_desc("Mbit/s")
            .y_desc(format!("mean delay ({unit})"))
            .x_label_formatter(&ticks(x_max))
            .y_label_formatter(&ticks(y_max))
            .label_style(LABEL)
            .draw()?;
        if scatter.is_empty() {
            c.draw_series(std::iter::once(Text::new(
                "no data",
                (x_max * 0.4, y_max * 0.5),
                LABEL,
            )))?;
        } else {
            c.draw_series(
                scatter
                    .iter()
                    .map(|&p| Circle::new(p, 3, RGBColor(214, 39, 40).filled())),
            )?;
        }
        Ok(())
    })
}

/// SNR over time of the links with SNR reports (each report held until the next); the links
/// with traffic first, at most [`MAX_SNR_LINKS`]. None when no link reports an SNR.
pub fn snr(a: &Analysis) -> Option<Result<Vec<u8>, String>> {
    let mut links: Vec<&LinkSeries> = a.links.iter().filter(|l| l.has_snr()).collect();
    if links.is_empty() {
        return None;
    }
    links.sort_by_key(|l| !l.has_traffic());
    links.truncate(MAX_SNR_LINKS);
    let end = a.end_s.max(a.bin_s);
    // Per link its polylines: each report holds until the next; one without SNR breaks the line.
    type Polyline = Vec<(f64, f64)>;
    let lines: Vec<(String, Vec<Polyline>)> = links
        .iter()
        .map(|l| {
            let mut polylines = Vec::new();
            let mut current: Vec<(f64, f64)> = Vec::new();
            for (i, s) in l.states.iter().enumerate() {
                let next = l.states.get(i + 1).map_or(end, |n| n.t_s);
                match s.snr_db {
                    Some(v) => {
                        current.push((s.t_s, v));
                        current.push((next, v));
                    }
                    None => polylines
                        .extend((!current.is_empty()).then(|| std::mem::take(&mut current))),
                }
            }
            polylines.extend((!current.is_empty()).then_some(current));
            (format!("{} → {}", l.src, l.dst), polylines)
        })
        .collect();
    let all = lines.iter().flat_map(|l| l.1.iter().flatten().map(|p| p.1));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo < hi {
        (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    } else {
        (lo - 1.0, hi + 1.0)
    };
    Some(render(1200, 420, |root| {
        let mut c = ChartBuilder::on(root)
            .caption("SNR over time (as the link model reports it)", TITLE)
            .margin(8)
            .margin_right(24)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..end, lo..hi)?;
        c.configure_mesh()
            .x_desc("sim time (s)")
            .y_desc("SNR (dB)")
            .x_label_formatter(&ticks(end))
            .y_label_formatter(&ticks(hi - lo))
            .label_style(LABEL)
            .draw()?;
        for (i, (name, polylines)) in lines.into_iter().enumerate() {
            let colour = line_colour(i);
            for (j, pts) in polylines.into_iter().enumerate() {
                let series = c.draw_series(LineSeries::new(pts, colour.stroke_width(2)))?;
                if j == 0 {
                    series.label(name.clone()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                    });
                }
            }
        }
        legend(&mut c)?;
        Ok(())
    }))
}

/// Distance over time per pair, shaded LOS / NLOS / out of range; the pairs with traffic and
/// the most changes first, at most [`MAX_PAIRS`]. None without channel samples.
pub fn channel(a: &Analysis) -> Option<Result<Vec<u8>, String>> {
    let mut pairs: Vec<&PairSeries> = a.pairs.iter().filter(|p| !p.samples.is_empty()).collect();
    if pairs.is_empty() {
        return None;
    }
    let busy = |p: &PairSeries| {
        a.traffic_links()
            .any(|l| (l.src == p.a && l.dst == p.b) || (l.src == p.b && l.dst == p.a))
    };
    pairs.sort_by_key(|p| (!busy(p), std::cmp::Reverse(p.changes)));
    pairs.truncate(MAX_PAIRS);
    let end = a.end_s.max(a.bin_s);
    let h = 60 + 200 * pairs.len() as u32;
    Some(render(1200, h, |root| {
        let root = root.titled(
            "Channel per pair: distance, LOS / NLOS / out of range",
            TITLE,
        )?;
        let panels = root.split_evenly((pairs.len(), 1));
        for (i, (p, area)) in pairs.iter().zip(&panels).enumerate() {
            let dist = distances(Some(p));
            let top = upper(dist.iter().map(|d| d.1).fold(0.0, f64::max));
            let mut c = ChartBuilder::on(area)
                .caption(format!("{} – {}", p.a, p.b), LABEL)
                .margin(6)
                .margin_right(24)
                .x_label_area_size(40)
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..end, 0.0..top)?;
            draw_shading(&mut c, &p.intervals, (0.0, top), i == 0)?;
            c.configure_mesh()
                .x_desc("sim time (s)")
                .y_desc("distance (m)")
                .x_label_formatter(&ticks(end))
                .y_label_formatter(&ticks(top))
                .y_labels(5)
                .label_style(LABEL)
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            let s = c.draw_series(LineSeries::new(dist, BLACK.stroke_width(2)))?;
            if i == 0 {
                s.label("distance").legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2))
                });
                legend(&mut c)?;
            }
        }
        Ok(())
    }))
}

/// Modem frames per time bin (by send time), stacked by outcome. None without frames.
pub fn modem_frames(a: &Analysis) -> Option<Result<Vec<u8>, String>> {
    let m = &a.modem;
    if m.frames == 0 {
        return None;
    }
    let end = a.end_s.max(a.bin_s);
    let y_max = upper(
        m.bins
            .iter()
            .map(|b| b.iter().sum::<u64>() as f64)
            .fold(0.0, f64::max),
    );
    Some(render(1200, 420, |root| {
        let mut c = ChartBuilder::on(root)
            .caption(
                format!("Modem frames per {} s (by send time), by outcome", a.bin_s),
                TITLE,
            )
            .margin(8)
            .margin_right(24)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..end, 0.0..y_max)?;
        c.configure_mesh()
            .x_desc("sim time (s)")
            .y_desc("frames")
            .x_label_formatter(&ticks(end))
            .y_labels(count_labels(y_max))
            .y_label_formatter(&whole)
            .label_style(LABEL)
            .draw()?;
        for (j, outcome) in m.outcomes.iter().enumerate() {
            let colour = outcome_colour(outcome);
            let rects: Vec<_> = m
                .bins
                .iter()
                .enumerate()
                .filter(|(_, b)| b[j] > 0)
                .map(|(i, b)| {
                    let below: u64 = b[..j].iter().sum();
                    let x0 = i as f64 * a.bin_s;
                    let mut r = Rectangle::new(
                        [(x0, below as f64), (x0 + a.bin_s, (below + b[j]) as f64)],
                        colour.filled(),
                    );
                    r.set_margin(0, 0, 1, 1);
                    r
                })
                .collect();
            c.draw_series(rects)?
                .label(format!(
                    "{outcome} ({})",
                    m.totals.get(outcome).copied().unwrap_or(0)
                ))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 16, y + 6)], colour.filled())
                });
        }
        legend(&mut c)?;
        Ok(())
    }))
}

/// One bar of a ledger plot: a name and its copies per outcome.
pub struct Bar {
    pub name: String,
    pub outcomes: Vec<(String, u64)>,
}

/// Horizontal stacked bars: per link (left) and per outcome over all links (right).
pub fn ledger(title: &str, unit: &str, bars: &[Bar]) -> Option<Result<Vec<u8>, String>> {
    if bars.is_empty() {
        return None;
    }
    let bars = &bars[..bars.len().min(MAX_BARS)];
    let mut totals: Vec<(String, u64)> = Vec::new();
    for b in bars {
        for (o, n) in &b.outcomes {
            match totals.iter_mut().find(|t| &t.0 == o) {
                Some(t) => t.1 += n,
                None => totals.push((o.clone(), *n)),
            }
        }
    }
    totals.sort_by_key(|t| outcome_rank(&t.0));
    totals.truncate(MAX_BARS);
    let h = (120 + 34 * bars.len().max(totals.len())) as u32;
    Some(render(1400, h.max(300), |root| {
        let root = root.titled(title, TITLE)?;
        let (left, right) = root.split_horizontally(820);
        let x_max = upper(
            bars.iter()
                .map(|b| b.outcomes.iter().map(|o| o.1).sum::<u64>() as f64)
                .fold(0.0, f64::max),
        );
        let names: Vec<String> = bars.iter().map(|b| b.name.clone()).collect();
        let n = bars.len();
        let mut c = bar_rows(
            &left,
            "per link (colours as on the right)",
            24,
            170,
            x_max,
            &names,
            6,
            unit,
        )?;
        for (row, b) in bars.iter().enumerate() {
            // The first bar at the top.
            let y = n - 1 - row;
            let mut x = 0u64;
            let mut outcomes = b.outcomes.clone();
            outcomes.sort_by_key(|o| outcome_rank(&o.0));
            for (o, count) in outcomes {
                if count == 0 {
                    continue;
                }
                let colour = outcome_colour(&o);
                let mut r = Rectangle::new(
                    [
                        (x as f64, SegmentValue::Exact(y)),
                        ((x + count) as f64, SegmentValue::Exact(y + 1)),
                    ],
                    colour.filled(),
                );
                r.set_margin(4, 4, 0, 0);
                c.draw_series(std::iter::once(r))?;
                x += count;
            }
        }

        let t_max = upper(totals.iter().map(|t| t.1 as f64).fold(0.0, f64::max));
        let names: Vec<String> = totals.iter().map(|t| t.0.clone()).collect();
        let n = totals.len();
        let mut c = bar_rows(
            &right,
            "per outcome, all links",
            60,
            110,
            t_max,
            &names,
            4,
            unit,
        )?;
        c.draw_series(totals.iter().enumerate().map(|(row, (o, count))| {
            let y = n - 1 - row;
            let mut r = Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(y)),
                    (*count as f64, SegmentValue::Exact(y + 1)),
                ],
                outcome_colour(o).filled(),
            );
            r.set_margin(4, 4, 0, 0);
            r
        }))?;
        c.draw_series(totals.iter().enumerate().map(|(row, (_, count))| {
            Text::new(
                format!(" {count}"),
                (*count as f64, SegmentValue::CenterOf(n - 1 - row)),
                LABEL,
            )
        }))?;
        Ok(())
    }))
}

/// A horizontal bar chart: values across, one segment per row.
type BarChart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<RangedCoordf64, plotters::coord::ranged1d::SegmentedCoord<RangedCoordusize>>,
>;

/// The axes of a horizontal bar chart on `area`: one row per name (the first at the top),
/// 0..`x_max` across with `x_labels` ticks in `unit`; `name_width` pixels for the names.
#[allow(clippy::too_many_arguments)]
fn bar_rows<'a, 'b>(
    area: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    caption: &str,
    margin_right: u32,
    name_width: u32,
    x_max: f64,
    names: &[String],
    x_labels: usize,
    unit: &str,
) -> Result<BarChart<'a, 'b>, Box<dyn Error>> {
    let n = names.len();
    let mut c = ChartBuilder::on(area)
        .caption(caption, LABEL)
        .margin(8)
        .margin_right(margin_right)
        .x_label_area_size(40)
        .y_label_area_size(name_width)
        .build_cartesian_2d(0.0..x_max, (0..n.max(1) - 1).into_segmented())?;
    let label = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) if *i < n => names[n - 1 - i].clone(),
        _ => String::new(),
    };
    c.configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&label)
        .x_labels(x_labels)
        .x_label_formatter(&whole)
        .x_desc(unit)
        .label_style(LABEL)
        .draw()?;
    Ok(c)
}

/// What the emulator added over time, per bin: the largest error of a delivered copy and the
/// latest opening of a window, beside the busiest link's mean one-way delay (what the network
/// simulator chose, with the error in it) and the bound, the summary's spans over the bound
/// shaded. None without `/emulation` in the record.
pub fn emulation(a: &Analysis) -> Option<Result<Vec<u8>, String>> {
    if a.emulation.is_empty() {
        return None;
    }
    let end = a.end_s.max(a.bin_s);
    let steps = |f: &dyn Fn(&super::series::EmulationBin) -> f64| -> Vec<(f64, f64)> {
        a.emulation
            .iter()
            .enumerate()
            .flat_map(|(i, b)| {
                let v = f(b);
                [(i as f64 * a.bin_s, v), ((i + 1) as f64 * a.bin_s, v)]
            })
            .collect()
    };
    let error = steps(&|b| b.error_max_ms);
    let late = steps(&|b| b.late_max_ms);
    let busiest = a.traffic_links().max_by_key(|l| l.ledger.delivered.copies);
    let delay: Vec<(f64, f64)> = busiest
        .map(|l| {
            l.active_bins(a.bin_s)
                .into_iter()
                .filter_map(|(t, _, d)| d.map(|d| (t, d * 1e3)))
                .collect()
        })
        .unwrap_or_default();
    let emulation = a.summary.as_ref().and_then(|s| s.emulation.as_ref());
    let bound = emulation.map(|e| e.bound_ms);
    let spans: Vec<(f64, f64)> = emulation
        .map(|e| e.spans.iter().map(|s| (s.from_s, s.to_s)).collect())
        .unwrap_or_default();
    let top = upper(
        error
            .iter()
            .chain(&late)
            .chain(&delay)
            .map(|p| p.1)
            .chain(bound.map(|b| b * 2.0))
            .fold(0.0, f64::max),
    );
    Some(render(1200, 420, |root| {
        let mut c = ChartBuilder::on(root)
            .caption(
                "Emulation error over time, beside the busiest link's delay",
                TITLE,
            )
            .margin(8)
            .margin_right(24)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..end, 0.0..top)?;
        c.configure_mesh()
            .x_desc("sim time (s)")
            .y_desc("ms")
            .x_label_formatter(&ticks(end))
            .y_label_formatter(&ticks(top))
            .label_style(LABEL)
            .draw()?;
        let shade = RGBColor(255, 205, 205);
        // A span is at least a bin wide, so a short one shows.
        let min_width = a.bin_s.min(end / 200.0);
        c.draw_series(spans.iter().map(|&(from, to)| {
            Rectangle::new(
                [(from, 0.0), (to.max(from + min_width), top)],
                shade.filled(),
            )
        }))?
        .label("span over the bound")
        .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], shade.filled()));
        if let (Some(l), false) = (busiest, delay.is_empty()) {
            let colour = line_colour(0);
            c.draw_series(LineSeries::new(delay, colour.stroke_width(2)))?
                .label(format!("{} → {}: mean one-way delay", l.src, l.dst))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                });
        }
        for (i, (name, pts)) in [
            ("largest emulation error of a copy", error),
            ("latest opening of a window", late),
        ]
        .into_iter()
        .enumerate()
        {
            let colour = line_colour(1 + 3 * i);
            c.draw_series(LineSeries::new(pts, colour.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                });
        }
        if let Some(b) = bound {
            let grey = RGBColor(90, 90, 90);
            c.draw_series(DashedLineSeries::new(
                [(0.0, b), (end, b)],
                6,
                4,
                grey.stroke_width(1),
            ))?
            .label(format!("bound {b} ms"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], grey.stroke_width(1))
            });
        }
        legend(&mut c)?;
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_keeps_every_value() {
        let v = [0.0, 0.5, 1.0, 1.0, 3.0];
        let h = histogram(&v, 30);
        assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 5);
        assert_eq!(h.last().unwrap().2, 1);
        assert_eq!(histogram(&[0.0, 0.0], 30)[0].2, 2);
    }

    #[test]
    fn a_ledger_of_one_bar_draws() {
        font().unwrap();
        let bars = [Bar {
            name: "a → b".into(),
            outcomes: vec![("delivered".into(), 1)],
        }];
        let png = ledger("one", "copies", &bars).unwrap().unwrap();
        assert!(png.len() > 1000);
        assert!(ledger("none", "copies", &[]).is_none());
    }

    #[test]
    fn tick_labels_suit_the_span() {
        assert_eq!(ticks(700.0)(&200.0), "200");
        assert_eq!(ticks(1.2)(&0.2), "0.2");
        assert_eq!(ticks(0.012)(&0.002), "0.002");
        assert_eq!(ticks(0.0)(&0.0), "0");
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("auv-1"), "auv-1");
        assert_eq!(slug("a/../b c"), "a____b_c");
        assert_eq!(slug(""), "_");
    }
}
