//! A campaign's report: for each plotted metric and each axis, the metric's mean per point
//! with its 95 % interval against the axis's values (one line per combination of the other
//! axes' values), as `plots/NN-<metric>--<axis>.png`, and `report.html` showing them beside a
//! table of every point's means and intervals. Text axes (terrain files, models) are spaced
//! evenly in the order the sweep lists their values.

use super::{Aggregate, Interval};
use crate::config::sweep::{scalar_text, Campaign};
use crate::output::report::html::escape;
use crate::output::report::plots::{font, render, slug, ticks, LABEL, TITLE};
use anyhow::Context;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What the report plots when the sweep names nothing.
pub const DEFAULT_PLOT: [&str; 3] = [
    "traffic[*].throughput_kbps",
    "traffic[*].lost_share",
    "links[*].phases[*].throughput_mbps",
];

/// At most this many plots (metrics × axes); the rest are named in a note.
pub const MAX_PLOTS: usize = 48;

/// Whether `name` matches `pattern`, where `*` stands for any text.
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|i| name.is_char_boundary(i) && matches(tail, &name[i..]))
        }
    }
}

/// The metrics to plot: the sweep's `plot` patterns (or [`DEFAULT_PLOT`]) matched against
/// the metrics the runs have, in pattern order; a pattern of the sweep that matches none is a
/// note.
pub fn chosen(campaign: &Campaign, metrics: &[String]) -> (Vec<String>, Vec<String>) {
    let given = !campaign.sweep.plot.is_empty();
    let patterns: Vec<&str> = if given {
        campaign.sweep.plot.iter().map(String::as_str).collect()
    } else {
        DEFAULT_PLOT.to_vec()
    };
    let mut chosen = Vec::new();
    let mut notes = Vec::new();
    for pattern in patterns {
        let found: Vec<&String> = metrics.iter().filter(|m| matches(pattern, m)).collect();
        if found.is_empty() && given {
            notes.push(format!(
                "plot: `{pattern}` matches no metric of the runs (runs.csv's header names them)"
            ));
        }
        for m in found {
            if !chosen.contains(m) {
                chosen.push(m.clone());
            }
        }
    }
    (chosen, notes)
}

/// Writes `plots/*.png` and `report.html` into `out`; returns the page and the notes.
pub fn report(
    campaign: &Campaign,
    a: &Aggregate,
    out: &Path,
) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let (metrics, mut notes) = chosen(campaign, &a.metrics);
    let dir = out.join("plots");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut images: Vec<(String, String)> = Vec::new();
    let drawable = match font() {
        Ok(()) => true,
        Err(e) => {
            notes.push(e);
            false
        }
    };
    let mut skipped = 0;
    for m in &metrics {
        for (axis_index, axis) in campaign.axes.iter().enumerate() {
            if !drawable {
                continue;
            }
            if images.len() >= MAX_PLOTS {
                skipped += 1;
                continue;
            }
            // Numbered: a long metric's name cut short could name two files alike.
            let file = format!(
                "{:02}-{}--{}.png",
                images.len() + 1,
                slug(m),
                slug(&axis.to_string())
            );
            match plot(campaign, &a.points, m, axis_index) {
                Ok(png) => {
                    let path = dir.join(&file);
                    std::fs::write(&path, png)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    images.push((format!("{m} against {axis}"), format!("plots/{file}")));
                }
                Err(e) => notes.push(format!("{m} against {axis}: not drawn: {e}")),
            }
        }
    }
    if skipped > 0 {
        notes.push(format!("{skipped} plots not drawn: at most {MAX_PLOTS} per report (name fewer metrics in `plot`)"));
    }
    let html = out.join("report.html");
    std::fs::write(&html, page(campaign, a, &metrics, &images, &notes))
        .with_context(|| format!("cannot write {}", html.display()))?;
    Ok((html, notes))
}

/// Where a value sits on a plot's x axis: numbers where every value is one, else its rank.
struct XAxis {
    labels: Vec<String>,
    positions: Vec<f64>,
    numeric: bool,
}

impl XAxis {
    fn of(values: &[serde_yaml::Value]) -> XAxis {
        let numbers: Option<Vec<f64>> = values.iter().map(serde_yaml::Value::as_f64).collect();
        let labels: Vec<String> = values.iter().map(scalar_text).collect();
        match numbers {
            Some(positions) => XAxis {
                labels,
                positions,
                numeric: true,
            },
            None => XAxis {
                positions: (0..values.len()).map(|i| i as f64).collect(),
                labels,
                numeric: false,
            },
        }
    }
}

/// One metric's means and intervals against one axis, as PNG.
fn plot(
    campaign: &Campaign,
    points: &[BTreeMap<String, Interval>],
    metric: &str,
    axis_index: usize,
) -> Result<Vec<u8>, String> {
    let axis = &campaign.axes[axis_index];
    // The axis's values in the order the points first take them.
    let mut values: Vec<serde_yaml::Value> = Vec::new();
    for p in &campaign.points {
        if let Some(v) = p.value(axis) {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
    }
    let x_axis = XAxis::of(&values);
    // One line per combination of the other axes' values.
    let mut lines: BTreeMap<String, Vec<(f64, Interval)>> = BTreeMap::new();
    for (p, point) in campaign.points.iter().enumerate() {
        let Some(v) = point.value(axis) else {
            continue;
        };
        let Some(i) = points[p].get(metric) else {
            continue;
        };
        let x = x_axis.positions[values.iter().position(|x| x == v).expect("listed above")];
        let others: Vec<String> = (point.values.iter())
            .filter(|s| &s.key != axis)
            .map(|s| format!("{}={}", s.key, scalar_text(&s.value)))
            .collect();
        lines.entry(others.join(", ")).or_default().push((x, *i));
    }
    if lines.is_empty() {
        return Err("no point has it".to_owned());
    }
    let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
    for (_, i) in lines.values().flatten() {
        let h = i.half_width.unwrap_or(0.0);
        y0 = y0.min(i.mean - h);
        y1 = y1.max(i.mean + h);
    }
    let pad = ((y1 - y0) * 0.08).max(y1.abs().max(1e-9) * 0.02);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let (x0, x1) = x_axis
        .positions
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let xpad = ((x1 - x0) * 0.06).max(0.5);
    let (x0, x1) = (x0 - xpad, x1 + xpad);
    let labels = x_axis.labels.clone();
    let positions = x_axis.positions.clone();
    let numeric = x_axis.numeric;
    let x_ticks = ticks(x1 - x0);
    let y_ticks = ticks(y1 - y0);
    let seeds = campaign.seeds.len();
    render(900, 520, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{metric} (mean, 95 % interval over {seeds} seeds)"),
                TITLE,
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let x_label = move |x: &f64| {
            if numeric {
                x_ticks(x)
            } else {
                (positions.iter().position(|p| (p - x).abs() < 1e-9))
                    .map_or(String::new(), |i| labels[i].clone())
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(axis.to_string())
            .y_desc(metric)
            .label_style(LABEL)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_ticks);
        if !numeric {
            mesh.x_labels(values.len() * 2 + 3);
        }
        mesh.draw()?;
        for (n, (name, pts)) in lines.iter().enumerate() {
            let colour = Palette99::pick(n).to_rgba();
            let mut pts = pts.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let series = chart.draw_series(LineSeries::new(
                pts.iter().map(|(x, i)| (*x, i.mean)),
                colour.stroke_width(2),
            ))?;
            if lines.len() > 1 {
                series
                    .label(if name.is_empty() {
                        "—".to_owned()
                    } else {
                        name.clone()
                    })
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                    });
            }
            chart.draw_series(pts.iter().map(|(x, i)| {
                let h = i.half_width.unwrap_or(0.0);
                ErrorBar::new_vertical(*x, i.mean - h, i.mean, i.mean + h, colour.filled(), 8)
            }))?;
        }
        if lines.len() > 1 {
            chart
                .configure_series_labels()
                .label_font(LABEL)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
        Ok(())
    })
}

/// A mean and its interval as text: `12.3 ± 0.4` (three significant digits).
pub fn cell(i: Option<&Interval>) -> String {
    let Some(i) = i else {
        return "–".to_owned();
    };
    let f = |x: f64| {
        if x == 0.0 || !x.is_finite() {
            format!("{x}")
        } else {
            let digits = (2 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
            format!("{x:.digits$}")
        }
    };
    match i.half_width {
        Some(h) => format!("{} ± {}", f(i.mean), f(h)),
        None => f(i.mean),
    }
}

fn page(
    campaign: &Campaign,
    a: &Aggregate,
    metrics: &[String],
    images: &[(String, String)],
    notes: &[String],
) -> String {
    let mut h = String::new();
    let name = escape(&campaign.sweep.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Campaign {name}</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #bbb;padding:3px 8px;text-align:right}}th{{background:#eee}}\
         img{{max-width:100%;margin:1em 0}}.note{{color:#a40}}</style></head><body>\n\
         <h1>Campaign {name}</h1>\n<p>Sweep file <code>{}</code>, base scenario <code>{}</code>: \
         {} points × {} seeds = {} runs, {} finished{}. Tables: <a href=\"runs.csv\">runs.csv</a> \
         (one row per run), <a href=\"points.csv\">points.csv</a> (per point, mean and 95 % \
         interval half-width, Student t over the seeds).</p>\n",
        escape(&campaign.file.display().to_string()),
        escape(&campaign.base_file.display().to_string()),
        campaign.points.len(),
        campaign.seeds.len(),
        campaign.runs(),
        a.runs.len(),
        if a.missing.is_empty() {
            String::new()
        } else {
            format!(" ({} not finished: run the sweep again to run them)", a.missing.len())
        }
    );
    for n in notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(n));
    }
    let _ = writeln!(h, "<h2>Points</h2>\n<table><tr><th>point</th>");
    for axis in &campaign.axes {
        let _ = write!(h, "<th>{}</th>", escape(&axis.to_string()));
    }
    for m in metrics {
        let _ = write!(h, "<th>{}</th>", escape(m));
    }
    h.push_str("</tr>\n");
    for (p, point) in campaign.points.iter().enumerate() {
        let _ = write!(h, "<tr><td>{p}</td>");
        for axis in &campaign.axes {
            let _ = write!(h, "<td>{}</td>", escape(&point.value_text(axis)));
        }
        for m in metrics {
            let _ = write!(h, "<td>{}</td>", escape(&cell(a.points[p].get(m))));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n<h2>Plots</h2>\n");
    for (title, src) in images {
        let _ = writeln!(
            h,
            "<h3>{}</h3>\n<img src=\"{}\" alt=\"{}\">",
            escape(title),
            escape(src),
            escape(title)
        );
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_matches_any_text() {
        assert!(matches(
            "traffic[*].throughput_kbps",
            "traffic[bulk].throughput_kbps"
        ));
        assert!(matches("*", ""));
        assert!(matches(
            "links[*].phases[*].loss",
            "links[a:b].phases[LOS].loss"
        ));
        assert!(!matches(
            "traffic[*].throughput_kbps",
            "traffic[bulk].lost_share"
        ));
        assert!(!matches("a", "ab"));
        assert!(matches("a*", "ab"));
    }
}
