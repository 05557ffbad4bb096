//! The report of a run, made from its record alone ([`generate`]), into `<run>/report/`:
//! - `series/*.csv`: the numbers behind every plot ([`series`] computes them);
//! - `plots/*.png`: the plots ([`plots`]) and the maps of the terrain and tracks ([`map`], from
//!   [`mapdata`]);
//! - `report.json`: the tables; `report.html`: one self-contained page with all of it ([`html`]);
//! - [`table`]: the same summary as terminal tables;
//! - [`acoustics`]: the pictures of traced acoustic paths (arrival patterns over the run, a
//!   transmission-loss field), also drawn by `cosim acoustics`;
//! - [`compare`]: one link in several runs side by side, per phase (`cosim compare`).

pub mod acoustics;
pub mod compare;
pub mod figures;
pub mod html;
pub mod map;
pub mod mapdata;
pub mod plots;
pub mod series;
pub mod table;

use crate::output::record::{Record, RecordError, RECORD_FILE};
use crate::output::schema::ProgramRecord;
use crate::output::summary::RunReport;
use figures::{draw, Figures};
use serde::Serialize;
use series::{outcome_rank, Analysis, ChannelState, PacketFold, ThroughputRow};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The report's folder inside a run folder.
pub const REPORT_DIR: &str = "report";

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Csv { path: PathBuf, source: csv::Error },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What [`generate`] wrote, and the numbers it wrote them from.
#[derive(Debug)]
pub struct ReportFiles {
    pub dir: PathBuf,
    pub html: PathBuf,
    pub json: PathBuf,
    pub series: Vec<PathBuf>,
    pub plots: Vec<PathBuf>,
    /// What the report could not show, in words (e.g. plots left out for want of a font).
    pub notes: Vec<String>,
    pub analysis: Analysis,
}

impl ReportFiles {
    /// The summary as terminal tables.
    pub fn table(&self) -> String {
        table::terminal(&self.analysis)
    }
}

/// Reads the record of the run folder `run_dir` (or the record file it names) and writes the
/// report into `<run folder>/report/`, replacing the files of an earlier report there.
pub fn generate(run_dir: &Path) -> Result<ReportFiles, ReportError> {
    let (dir, record_path) = if run_dir.is_file() {
        (
            run_dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
            run_dir.to_path_buf(),
        )
    } else {
        (run_dir.to_path_buf(), run_dir.join(RECORD_FILE))
    };
    // The packets are folded as they are read: an hour of live traffic is millions of them.
    let mut packets = PacketFold::default();
    let record = Record::read_with(&record_path, &mut |p| packets.add(&p))?;
    let mut notes = Vec::new();
    let summary = match &record.summary {
        Some(v) => match RunReport::from_value(v.clone()) {
            Ok(s) => Some(s),
            Err(e) => {
                notes.push(format!(
                    "{}: /summary: {e} (summary left out)",
                    record_path.display()
                ));
                None
            }
        },
        // A record cut short has no summary; the run may still have written summary.json.
        None => read_summary(&dir, &mut notes),
    };
    let analysis = Analysis::with_packets(&record, packets, summary);
    if record.unknown_messages > 0 {
        notes.push(format!(
            "{} messages on topics this version does not know were skipped",
            record.unknown_messages
        ));
    }
    drop(record);
    write(&dir.join(REPORT_DIR), analysis, notes)
}

/// `summary.json` of a run folder, if there is one that reads as a [`RunReport`].
fn read_summary(dir: &Path, notes: &mut Vec<String>) -> Option<RunReport> {
    let path = dir.join("summary.json");
    let bytes = std::fs::read(&path).ok()?;
    match RunReport::parse(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            notes.push(format!("{}: {e} (summary left out)", path.display()));
            None
        }
    }
}

/// Removes the files an earlier report left in `dir` (only the kinds the report writes).
fn clear(dir: &Path, ext: &str) -> Result<(), ReportError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_file() && p.extension().is_some_and(|x| x == ext) {
            std::fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    Ok(())
}

/// Writes the report of `a` into `dir` (created if needed).
pub fn write(dir: &Path, a: Analysis, mut notes: Vec<String>) -> Result<ReportFiles, ReportError> {
    let series_dir = dir.join("series");
    let plots_dir = dir.join("plots");
    for d in [&series_dir, &plots_dir] {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    clear(&series_dir, "csv")?;
    clear(&plots_dir, "png")?;

    let series = write_series(&series_dir, &a)?;
    let figures = match plots::font() {
        Ok(()) => draw(&a, &mut notes),
        Err(e) => {
            notes.push(e);
            Figures::default()
        }
    };
    let mut plots = Vec::new();
    for p in figures.all() {
        let path = plots_dir.join(&p.file);
        std::fs::write(&path, &p.png).map_err(io(&path))?;
        plots.push(path);
    }

    let json = dir.join("report.json");
    let body = serde_json::to_vec_pretty(&JsonReport::of(&a, &notes))
        .expect("the report's tables serialize");
    std::fs::write(&json, body).map_err(io(&json))?;

    let relative: Vec<String> = series
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| format!("series/{}", n.to_string_lossy()))
        .collect();
    let html = dir.join("report.html");
    std::fs::write(&html, html::page(&a, &figures, &relative, &notes)).map_err(io(&html))?;
    Ok(ReportFiles {
        dir: dir.to_path_buf(),
        html,
        json,
        series,
        plots,
        notes,
        analysis: a,
    })
}

/// Writes one CSV of `rows` (serde rows, whose field names are `header`).
fn csv_file<R: Serialize>(
    path: &Path,
    header: &[&str],
    rows: impl IntoIterator<Item = R>,
) -> Result<PathBuf, ReportError> {
    let err = |source| ReportError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_path(path)
        .map_err(err)?;
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.serialize(r).map_err(err)?;
    }
    w.flush().map_err(io(path))?;
    Ok(path.to_path_buf())
}

#[derive(Serialize)]
struct DelayRow<'a> {
    src: &'a str,
    dst: &'a str,
    sent_s: f64,
    delivered_s: f64,
    delay_s: f64,
    bytes: u32,
    corrupted: bool,
}

const STATE_HEADER: &[&str] = &["a", "b", "start_s", "end_s", "state"];

#[derive(Serialize)]
struct StateRow<'a> {
    a: &'a str,
    b: &'a str,
    start_s: f64,
    end_s: f64,
    state: ChannelState,
}

/// One channel sample, its arrivals aside (`channel_arrivals.csv`).
#[derive(Serialize)]
struct SampleRow<'a> {
    t_s: f64,
    a: &'a str,
    b: &'a str,
    los: bool,
    distance_m: f64,
    loss_db: f64,
    hops: u32,
    change: bool,
}

/// One arrival of a traced pair's channel sample.
#[derive(Serialize)]
struct ArrivalRow<'a> {
    t_s: f64,
    a: &'a str,
    b: &'a str,
    delay_s: f64,
    amplitude: f64,
    phase_rad: f64,
    launch_deg: f64,
    arrival_deg: f64,
    path_m: f64,
    surface_bounces: u32,
    bottom_bounces: u32,
}

#[derive(Serialize)]
struct LedgerRow<'a> {
    kind: &'a str,
    src: &'a str,
    dst: &'a str,
    outcome: &'a str,
    copies: u64,
    bytes: Option<u64>,
}

/// Every series file; returns their paths.
fn write_series(dir: &Path, a: &Analysis) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = traffic_series(dir, a)?;
    files.extend(channel_series(dir, a)?);
    files.push(modem_frames_series(dir, a)?);
    files.push(ledger_series(dir, a)?);
    Ok(files)
}

/// `throughput.csv` and `delay.csv`: the links that carried packets.
fn traffic_series(dir: &Path, a: &Analysis) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    let traffic: Vec<_> = a.traffic_links().collect();
    files.push(csv_file(
        &dir.join("throughput.csv"),
        &ThroughputRow::HEADER,
        traffic.iter().flat_map(|l| {
            l.bins.iter().enumerate().map(move |(i, b)| ThroughputRow {
                src: Cow::Borrowed(&l.src),
                dst: Cow::Borrowed(&l.dst),
                bin_start_s: i as f64 * a.bin_s,
                bin_end_s: (i + 1) as f64 * a.bin_s,
                delivered_packets: b.packets,
                delivered_bytes: b.bytes,
                mbit_per_s: series::mbit_s(b.bytes, a.bin_s),
                mean_delay_s: (b.packets > 0).then(|| b.delay_sum_s / b.packets as f64),
            })
        }),
    )?);
    files.push(csv_file(
        &dir.join("delay.csv"),
        &[
            "src",
            "dst",
            "sent_s",
            "delivered_s",
            "delay_s",
            "bytes",
            "corrupted",
        ],
        traffic.iter().flat_map(|l| {
            l.delays.iter().map(move |d| DelayRow {
                src: &l.src,
                dst: &l.dst,
                sent_s: d.sent_s,
                delivered_s: d.delivered_s,
                delay_s: d.delay_s(),
                bytes: d.bytes,
                corrupted: d.corrupted,
            })
        }),
    )?);
    Ok(files)
}

/// `channel_states.csv`, `link_shading.csv`, `channel_samples.csv`, `channel_arrivals.csv`
/// (only when the record holds arrivals), `link_states.csv`.
fn channel_series(dir: &Path, a: &Analysis) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    files.push(csv_file(
        &dir.join("channel_states.csv"),
        STATE_HEADER,
        a.pairs.iter().flat_map(|p| {
            p.intervals.iter().map(move |i| StateRow {
                a: &p.a,
                b: &p.b,
                start_s: i.start_s,
                end_s: i.end_s,
                state: i.state,
            })
        }),
    )?);
    files.push(csv_file(
        &dir.join("link_shading.csv"),
        STATE_HEADER,
        a.links.iter().flat_map(|l| {
            l.shading.iter().map(move |i| StateRow {
                a: &l.src,
                b: &l.dst,
                start_s: i.start_s,
                end_s: i.end_s,
                state: i.state,
            })
        }),
    )?);
    files.push(csv_file(
        &dir.join("channel_samples.csv"),
        &[
            "t_s",
            "a",
            "b",
            "los",
            "distance_m",
            "loss_db",
            "hops",
            "change",
        ],
        a.pairs.iter().flat_map(|p| {
            p.samples.iter().map(|c| SampleRow {
                t_s: c.t_s,
                a: &c.a,
                b: &c.b,
                los: c.los,
                distance_m: c.distance_m,
                loss_db: c.loss_db,
                hops: c.hops,
                change: c.change,
            })
        }),
    )?);
    if a.pairs
        .iter()
        .any(|p| p.samples.iter().any(|s| s.arrivals.is_some()))
    {
        files.push(csv_file(
            &dir.join("channel_arrivals.csv"),
            &[
                "t_s",
                "a",
                "b",
                "delay_s",
                "amplitude",
                "phase_rad",
                "launch_deg",
                "arrival_deg",
                "path_m",
                "surface_bounces",
                "bottom_bounces",
            ],
            a.pairs.iter().flat_map(|p| {
                p.samples.iter().flat_map(|s| {
                    s.arrivals.iter().flatten().map(move |r| ArrivalRow {
                        t_s: s.t_s,
                        a: &s.a,
                        b: &s.b,
                        delay_s: r.delay_s,
                        amplitude: r.amplitude,
                        phase_rad: r.phase_rad,
                        launch_deg: r.launch_deg,
                        arrival_deg: r.arrival_deg,
                        path_m: r.path_m,
                        surface_bounces: r.surface_bounces,
                        bottom_bounces: r.bottom_bounces,
                    })
                })
            }),
        )?);
    }
    files.push(csv_file(
        &dir.join("link_states.csv"),
        &[
            "t_s", "src", "dst", "usable", "snr_db", "rate_bps", "per", "delay_s",
        ],
        a.links.iter().flat_map(|l| l.states.iter()),
    )?);
    Ok(files)
}

/// `modem_frames.csv`: modem frames per bin, one column per outcome.
fn modem_frames_series(dir: &Path, a: &Analysis) -> Result<PathBuf, ReportError> {
    let path = dir.join("modem_frames.csv");
    let err = |source| ReportError::Csv {
        path: path.clone(),
        source,
    };
    let mut w = csv::Writer::from_path(&path).map_err(err)?;
    let mut header = vec![
        "bin_start_s".to_string(),
        "bin_end_s".to_string(),
        "sent".to_string(),
    ];
    header.extend(a.modem.outcomes.iter().cloned());
    w.write_record(&header).map_err(err)?;
    if a.modem.frames > 0 {
        for (i, b) in a.modem.bins.iter().enumerate() {
            let mut row = vec![
                (i as f64 * a.bin_s).to_string(),
                ((i + 1) as f64 * a.bin_s).to_string(),
                b.iter().sum::<u64>().to_string(),
            ];
            row.extend(b.iter().map(u64::to_string));
            w.write_record(&row).map_err(err)?;
        }
    }
    w.flush().map_err(io(&path))?;
    Ok(path)
}

/// `ledger.csv`: per link and outcome, packets and modem frames.
fn ledger_series(dir: &Path, a: &Analysis) -> Result<PathBuf, ReportError> {
    let mut rows = Vec::new();
    for l in a.traffic_links() {
        rows.push(LedgerRow {
            kind: "packets",
            src: &l.src,
            dst: &l.dst,
            outcome: "delivered",
            copies: l.ledger.delivered.copies,
            bytes: Some(l.ledger.delivered.bytes),
        });
        for (reason, c) in &l.ledger.dropped {
            rows.push(LedgerRow {
                kind: "packets",
                src: &l.src,
                dst: &l.dst,
                outcome: reason,
                copies: c.copies,
                bytes: Some(c.bytes),
            });
        }
    }
    for l in &a.modem.links {
        let mut outcomes: Vec<_> = l.by_outcome.iter().collect();
        outcomes.sort_by_key(|o| outcome_rank(o.0));
        for (o, n) in outcomes {
            rows.push(LedgerRow {
                kind: "modem_frames",
                src: &l.src,
                dst: l.dst.as_deref().unwrap_or(""),
                outcome: o,
                copies: *n,
                bytes: None,
            });
        }
    }
    csv_file(
        &dir.join("ledger.csv"),
        &["kind", "src", "dst", "outcome", "copies", "bytes"],
        rows,
    )
}

/// `report.json`: the page's tables.
#[derive(Serialize)]
struct JsonReport<'a> {
    run: Option<&'a crate::output::schema::RunInfo>,
    end_s: f64,
    bin_s: f64,
    pairs: Vec<JsonPair<'a>>,
    links: Vec<JsonLink<'a>>,
    modem_frames: JsonModem<'a>,
    programs: &'a [ProgramRecord],
    metrics: &'a [series::MetricSeries],
    checks: &'a [series::Check],
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonPair<'a> {
    a: &'a str,
    b: &'a str,
    los_share: Option<f64>,
    nlos_share: Option<f64>,
    out_of_range_share: Option<f64>,
    changes: u64,
}

#[derive(Serialize)]
struct JsonLink<'a> {
    src: &'a str,
    dst: &'a str,
    ledger: &'a series::LinkLedger,
    mean_mbit_per_s: Option<f64>,
    mean_delay_s: Option<f64>,
    median_delay_s: Option<f64>,
    p95_delay_s: Option<f64>,
    link_state_reports: usize,
}

#[derive(Serialize)]
struct JsonModem<'a> {
    frames: u64,
    totals: &'a std::collections::BTreeMap<String, u64>,
    links: &'a [series::ModemLink],
}

impl<'a> JsonReport<'a> {
    fn of(a: &'a Analysis, notes: &'a [String]) -> JsonReport<'a> {
        JsonReport {
            run: a.run.as_ref(),
            end_s: a.end_s,
            bin_s: a.bin_s,
            pairs: a
                .pairs
                .iter()
                .map(|p| JsonPair {
                    a: &p.a,
                    b: &p.b,
                    los_share: p.share(ChannelState::Los),
                    nlos_share: p.share(ChannelState::Nlos),
                    out_of_range_share: p.share(ChannelState::OutOfRange),
                    changes: p.changes,
                })
                .collect(),
            links: a
                .links
                .iter()
                .map(|l| JsonLink {
                    src: &l.src,
                    dst: &l.dst,
                    ledger: &l.ledger,
                    mean_mbit_per_s: l.mean_mbit_s(),
                    mean_delay_s: l.mean_delay_s(),
                    median_delay_s: l.delay_quantile_s(0.5),
                    p95_delay_s: l.delay_quantile_s(0.95),
                    link_state_reports: l.states.len(),
                })
                .collect(),
            modem_frames: JsonModem {
                frames: a.modem.frames,
                totals: &a.modem.totals,
                links: &a.modem.links,
            },
            programs: &a.programs,
            metrics: &a.metrics,
            checks: &a.checks,
            notes,
        }
    }
}
