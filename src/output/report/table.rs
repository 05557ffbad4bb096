//! The tables printed in a terminal, drawn with `comfy-table`: the summary a run prints at its
//! end (and `cosim report` prints), from the same [`Analysis`] as the report ([`terminal`]);
//! a soak's figures and checks ([`soak`]).

use super::series::{outcome_rank, Analysis, ChannelState, LinkLedger, Stats};
use crate::net::ledger::drops_text;
use crate::output::soak::{Soak, GROWTH_LIMIT_PERCENT};
use crate::sim::flows::FlowSummary;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use std::fmt::Write;

/// At most this many pairs are listed (the report has them all).
pub const MAX_PAIR_ROWS: usize = 20;
/// At most this many links are listed.
pub const MAX_LINK_ROWS: usize = 40;

/// A table whose columns after the first align right, but those in `text`.
fn table(header: &[&str], text: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    for i in (1..header.len()).filter(|i| !text.contains(i)) {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn percent(share: Option<f64>) -> String {
    share
        .map(|s| format!("{:.1} %", 100.0 * s))
        .unwrap_or_else(|| "–".into())
}

/// `n (reason a, reason b …)` for a ledger's drops.
fn drops(l: &LinkLedger) -> String {
    let n = l.dropped_copies();
    if n == 0 {
        return "0".into();
    }
    let mut reasons: Vec<(&String, u64)> = l.dropped.iter().map(|(r, c)| (r, c.copies)).collect();
    reasons.sort_by_key(|r| outcome_rank(r.0));
    let parts: Vec<String> = reasons.iter().map(|(r, c)| format!("{r} {c}")).collect();
    format!("{n} ({})", parts.join(", "))
}

/// Seconds as ms below 1 s.
pub fn duration(s: f64) -> String {
    if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

/// The run's first line: windows, sim and wall time.
pub fn headline(a: &Analysis) -> String {
    let s = a.summary.as_ref();
    let name = s
        .map(|s| s.scenario.clone())
        .or_else(|| a.run.as_ref().map(|r| r.scenario.clone()))
        .unwrap_or_default();
    let Some(s) = s else {
        return format!(
            "{name}: {:.2} s simulated (no run summary: the record was cut short)",
            a.end_s
        );
    };
    let mut line = format!(
        "{name}: {} windows of {} ms = {:.2} s simulated in {:.2} s wall ({:.0} windows/s)",
        s.windows, s.window_ms, s.sim_seconds, s.wall_seconds, s.windows_per_second
    );
    if s.interrupted {
        line.push_str(", interrupted");
    }
    line
}

/// Every table of the run's summary, as text: one section after the other.
pub fn terminal(a: &Analysis) -> String {
    let mut out = headline(a);
    out.push('\n');
    for section in [
        slipped,
        emulation,
        pairs,
        links,
        flows,
        packet_ledger,
        air,
        modems,
        programs,
        metrics,
        mismatches,
    ] {
        out.push_str(&section(a));
    }
    out
}

/// How far paced windows fell behind, if they did.
fn slipped(a: &Analysis) -> String {
    match a.summary.as_ref().map(|s| s.slipped_seconds) {
        Some(slipped) if slipped > 0.0 => format!("paced windows fell {slipped:.3} s behind the wall clock in all (sim time never ran ahead of it)\n"),
        _ => String::new(),
    }
}

/// What the emulator added to the live packets, and its warning.
fn emulation(a: &Analysis) -> String {
    let Some(e) = a.summary.as_ref().and_then(|s| s.emulation.as_ref()) else {
        return String::new();
    };
    let mut out = e.sentence();
    out.push('\n');
    if let Some(w) = &e.warning {
        out += &format!("warning: {w}\n");
    }
    out
}

/// Pairs: from the record's channel, else the summary's window counts.
fn pairs(a: &Analysis) -> String {
    let mut t = table(
        &["pair", "LOS", "NLOS", "out of range", "LOS↔NLOS changes"],
        &[],
    );
    let mut with_samples: Vec<_> = a.pairs.iter().filter(|p| !p.intervals.is_empty()).collect();
    // Pairs that carried traffic first, then those that changed most (many vehicles, many pairs).
    let busy = |a_: &str, b_: &str| {
        a.traffic_links()
            .any(|l| (l.src == a_ && l.dst == b_) || (l.src == b_ && l.dst == a_))
    };
    with_samples.sort_by_key(|p| (!busy(&p.a, &p.b), std::cmp::Reverse(p.changes)));
    let summary_pairs = a.summary.as_ref().map_or(&[][..], |s| &s.pairs[..]);
    let rows = if !with_samples.is_empty() {
        for p in with_samples.iter().take(MAX_PAIR_ROWS) {
            t.add_row(vec![
                format!("{} – {}", p.a, p.b),
                percent(p.share(ChannelState::Los)),
                percent(p.share(ChannelState::Nlos)),
                percent(p.share(ChannelState::OutOfRange)),
                p.changes.to_string(),
            ]);
        }
        with_samples.len()
    } else {
        for p in summary_pairs.iter().take(MAX_PAIR_ROWS) {
            let total = (p.los_windows + p.nlos_windows).max(1) as f64;
            t.add_row(vec![
                format!("{} – {}", p.a, p.b),
                percent(Some(p.los_windows as f64 / total)),
                percent(Some(p.nlos_windows as f64 / total)),
                "–".into(),
                p.transitions.to_string(),
            ]);
        }
        summary_pairs.len()
    };
    if rows == 0 {
        return String::new();
    }
    if rows > MAX_PAIR_ROWS {
        t.add_row(vec![format!(
            "… {} more pairs (report.html lists them all)",
            rows - MAX_PAIR_ROWS
        )]);
    }
    format!("{t}\n")
}

/// Directed links that carried traffic.
fn links(a: &Analysis) -> String {
    let links: Vec<_> = a.traffic_links().collect();
    if links.is_empty() {
        return String::new();
    }
    let mut t = table(
        &[
            "link",
            "copies",
            "delivered",
            "dropped",
            "delivered bytes",
            "mean Mbit/s",
            "mean delay",
        ],
        &[3],
    );
    for l in links.iter().take(MAX_LINK_ROWS) {
        t.add_row(vec![
            Cell::new(format!("{} → {}", l.src, l.dst)),
            Cell::new(l.ledger.total.copies),
            Cell::new(l.ledger.delivered.copies),
            Cell::new(drops(&l.ledger)),
            Cell::new(l.ledger.delivered.bytes),
            Cell::new(
                l.mean_mbit_s()
                    .map(|r| format!("{r:.3}"))
                    .unwrap_or_else(|| "–".into()),
            ),
            Cell::new(l.mean_delay_s().map(duration).unwrap_or_else(|| "–".into())),
        ]);
    }
    if links.len() > MAX_LINK_ROWS {
        t.add_row(vec![format!(
            "… {} more links (report.html lists them all)",
            links.len() - MAX_LINK_ROWS
        )]);
    }
    format!("{t}\n")
}

/// The run's IP ledger in one line.
fn packet_ledger(a: &Analysis) -> String {
    match a.summary.as_ref().and_then(|s| s.network.as_ref()) {
        Some(n) => format!("packets: {n}\n"),
        None => String::new(),
    }
}

/// The columns of the generated flows, as the terminal and the page show them.
pub const FLOW_HEADER: [&str; 8] = [
    "flow",
    "kind",
    "sent",
    "received",
    "lost",
    "throughput",
    "delay p50 / p95",
    "max",
];

/// One generated flow's row (the summary's `traffic`).
pub fn flow_row(f: &FlowSummary) -> Vec<String> {
    let to = f.to.as_deref().unwrap_or("(all)");
    let (sent, received) = if f.kind == "tcp" {
        (bytes(f.sent_bytes), bytes(f.received_bytes))
    } else {
        (f.sent_packets.to_string(), f.received_packets.to_string())
    };
    let ms = |v: f64| duration(v / 1e3);
    vec![
        format!("{} {} → {to}", f.name, f.from),
        f.kind.clone(),
        sent,
        received,
        percent(f.lost_share),
        format!("{:.1} kbit/s", f.throughput_kbps),
        f.delay.as_ref().map_or("–".into(), |d| {
            format!("{} / {}", ms(d.p50_ms), ms(d.p95_ms))
        }),
        f.delay.as_ref().map_or("–".into(), |d| ms(d.max_ms)),
    ]
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// The generated flows: what each sent and received, at what rate and delay.
fn flows(a: &Analysis) -> String {
    let Some(s) = a.summary.as_ref().filter(|s| !s.traffic.is_empty()) else {
        return String::new();
    };
    let mut t = table(&FLOW_HEADER, &[]);
    for f in &s.traffic {
        t.add_row(flow_row(f));
    }
    format!("{t}\n")
}

/// The columns of an 802.11 medium's links, as the terminal and the page show them.
pub const AIR_HEADER: [&str; 8] = [
    "802.11 link",
    "frames",
    "attempts",
    "retries",
    "collided",
    "retry limit",
    "air time",
    "service",
];

/// Each 802.11 medium's title and its links' rows (the summary's `air`).
pub fn air_media(a: &Analysis) -> Vec<(String, Vec<Vec<String>>)> {
    let media = a.summary.as_ref().map_or(&[][..], |s| &s.air[..]);
    media
        .iter()
        .map(|m| {
            let title = format!(
                "802.11 medium {} channel {}: busy {}",
                m.standard,
                m.channel,
                percent(Some(m.busy_share))
            );
            let rows = m
                .links
                .iter()
                .map(|l| {
                    vec![
                        format!("{} → {}", l.src, l.dst.as_deref().unwrap_or("(group)")),
                        l.frames.to_string(),
                        l.attempts.to_string(),
                        l.retries.to_string(),
                        l.collided.to_string(),
                        l.retry_limit.to_string(),
                        percent(Some(l.airtime_share)),
                        l.mean_service_ms
                            .map(|ms| duration(ms / 1e3))
                            .unwrap_or_else(|| "–".into()),
                    ]
                })
                .collect();
            (title, rows)
        })
        .collect()
}

/// The 802.11 media: per link the attempts its frames took and what contention cost them.
fn air(a: &Analysis) -> String {
    let mut out = String::new();
    for (title, rows) in air_media(a) {
        let mut t = table(&AIR_HEADER, &[]);
        let more = rows.len().saturating_sub(MAX_LINK_ROWS);
        for r in rows.into_iter().take(MAX_LINK_ROWS) {
            t.add_row(r);
        }
        if more > 0 {
            t.add_row(vec![format!(
                "… {more} more links (report.html lists them all)"
            )]);
        }
        let _ = writeln!(out, "{title}\n{t}");
    }
    out
}

/// Modem frames per link and outcome (from the record), else the summary's modem ledger.
fn modems(a: &Analysis) -> String {
    let m = &a.modem;
    if m.frames > 0 {
        let mut header = vec!["modem frames", "sent"];
        header.extend(m.outcomes.iter().map(String::as_str));
        let mut t = table(&header, &[]);
        for l in m.links.iter().take(MAX_LINK_ROWS) {
            let mut row = vec![
                format!("{} → {}", l.src, l.dst.as_deref().unwrap_or("(nobody)")),
                l.frames.to_string(),
            ];
            row.extend(
                m.outcomes
                    .iter()
                    .map(|o| l.by_outcome.get(o).copied().unwrap_or(0).to_string()),
            );
            t.add_row(row);
        }
        let mut row = vec!["all".to_string(), m.frames.to_string()];
        row.extend(
            m.outcomes
                .iter()
                .map(|o| m.totals.get(o).copied().unwrap_or(0).to_string()),
        );
        t.add_row(row);
        return format!("{t}\n");
    }
    match a.summary.as_ref().and_then(|s| s.modems.as_ref()) {
        Some(modems) => {
            let parts: Vec<String> = modems
                .ledger
                .fields()
                .iter()
                .map(|(k, v)| format!("{} {v}", k.replace('_', " ")))
                .collect();
            format!("modem frames: {}\n", parts.join(", "))
        }
        None => String::new(),
    }
}

/// The scenario's programs and how each ended.
fn programs(a: &Analysis) -> String {
    if a.programs.is_empty() {
        return String::new();
    }
    let mut t = table(
        &["program", "vehicle", "started (s)", "ended (s)", "exit"],
        &[1, 4],
    );
    for p in &a.programs {
        t.add_row(vec![
            p.name.clone(),
            p.vehicle.clone().unwrap_or_else(|| "(host)".into()),
            p.started_s
                .map(|s| format!("{s:.2}"))
                .unwrap_or_else(|| "–".into()),
            p.ended_s
                .map(|s| format!("{s:.2}"))
                .unwrap_or_else(|| "–".into()),
            p.exit_text(),
        ]);
    }
    format!("{t}\n")
}

/// A metric's value in words: names ending in `_s` are durations.
pub fn metric_value(name: &str, v: f64) -> String {
    if name.ends_with("_s") {
        duration(v)
    } else {
        format!("{v:.4}")
    }
}

/// The cells count, min, median, p95, max of `s`, each value as [`metric_value`] of `name`.
pub fn stats_cells(name: &str, s: &Stats) -> Vec<String> {
    let mut cells = vec![s.count.to_string()];
    cells.extend([s.min, s.median, s.p95, s.max].map(|v| metric_value(name, v)));
    cells
}

/// The programs' metrics, each followed by the one-way delay of the link its values came over.
fn metrics(a: &Analysis) -> String {
    if a.metrics.is_empty() {
        return String::new();
    }
    let mut t = table(
        &["program: metric", "count", "min", "median", "p95", "max"],
        &[],
    );
    for m in &a.metrics {
        let mut row = vec![format!("{}: {}", m.program, m.name)];
        row.extend(stats_cells(&m.name, &m.values));
        t.add_row(row);
        if let (Some(link), Some(d)) = (m.link(), &m.link_delay) {
            let mut row = vec![format!("  one-way delay {link}")];
            row.extend(stats_cells("delay_s", d));
            t.add_row(row);
        }
    }
    format!("{t}\n")
}

/// The figures where the record and the summary disagree.
fn mismatches(a: &Analysis) -> String {
    let mut out = String::new();
    for c in a.checks.iter().filter(|c| !c.ok()) {
        let _ = writeln!(
            out,
            "MISMATCH {}: record {} vs summary {}",
            c.what, c.record, c.summary
        );
    }
    out
}

/// A soak's figures and checks.
pub fn soak(s: &Soak) -> String {
    let mut figures = Table::new();
    figures.load_preset(UTF8_FULL_CONDENSED);
    figures.set_header(vec!["soak", "value"]);
    for (k, v) in soak_memory_rows(s).into_iter().chain(soak_run_rows(s)) {
        figures.add_row(vec![k.to_string(), v]);
    }
    let mut checks = Table::new();
    checks.load_preset(UTF8_FULL_CONDENSED);
    checks.set_header(vec!["check", "", "detail"]);
    for c in &s.checks {
        checks.add_row(vec![
            c.name.to_string(),
            if c.ok { "ok" } else { "FAILED" }.to_string(),
            shortened(&c.detail),
        ]);
    }
    format!("{figures}\n{checks}\n")
}

/// The soak's run and its memory.
fn soak_memory_rows(s: &Soak) -> Vec<(&'static str, String)> {
    let m = &s.memory;
    vec![
        (
            "run",
            format!(
                "{} for {:.0} min: {:.0} s wall ({:.0} s of windows), slipped {}",
                s.scenario.display(),
                s.minutes,
                s.wall_s,
                m.run_s,
                s.slipped_seconds
                    .map_or("?".into(), |s| format!("{s:.2} s"))
            ),
        ),
        (
            "RSS at warm-up end",
            format!(
                "{:.1} MiB (median of {:.0}–{:.0} s, {} samples)",
                m.rss_warm_up_end_mib,
                m.warm_up_s,
                m.warm_up_s + m.window_s,
                m.samples_at_warm_up_end
            ),
        ),
        (
            "RSS at end",
            format!(
                "{:.1} MiB (median of {:.0}–{:.0} s, {} samples)",
                m.rss_end_mib,
                m.run_s - m.window_s,
                m.run_s,
                m.samples_at_end
            ),
        ),
        (
            "growth",
            format!(
                "{:+.2} % (limit {GROWTH_LIMIT_PERCENT} %); slope {:+.2} MiB/h",
                m.growth_percent, m.slope_mib_per_hour
            ),
        ),
        (
            "peak RSS",
            format!(
                "{:.1} MiB while running, {:.1} MiB with the report",
                m.peak_run_mib, m.peak_mib
            ),
        ),
        (
            "fds / threads",
            format!(
                "fds {} → {} (max {}), threads max {}",
                m.fds_warm_up_end, m.fds_end, m.fds_max, m.threads_max
            ),
        ),
    ]
}

/// What the soak's run accounted for and left.
fn soak_run_rows(s: &Soak) -> Vec<(&'static str, String)> {
    const MIB: f64 = 1024.0 * 1024.0;
    vec![
        (
            "network ledger",
            s.network.as_ref().map_or("none".into(), |n| {
                format!(
                    "{}; {} links; drops: {}",
                    n.balance(),
                    n.links,
                    drops_text(&n.drops).unwrap_or_else(|| "none".into())
                )
            }),
        ),
        (
            "modem ledger",
            s.modems.as_ref().map_or("none".into(), |l| {
                format!(
                    "sent {} = delivered {} + out of range {} + packet error {} + collision {} + half-duplex {} + no receiver {} + shutdown {} + other {}",
                    l.sent,
                    l.delivered,
                    l.out_of_range,
                    l.packet_error,
                    l.collision,
                    l.half_duplex,
                    l.no_receiver,
                    l.shutdown,
                    l.other
                )
            }),
        ),
        (
            "traffic",
            s.traffic_bins_percent
                .map_or("?".into(), |p| format!("delivered in {p:.1} % of the report's bins")),
        ),
        (
            "leftovers",
            if s.leftovers.is_empty() {
                "none".into()
            } else {
                let l = &s.leftovers;
                format!(
                    "namespaces {:?}, owner files {:?}, TUN devices {:?}, processes {:?}",
                    l.namespaces, l.owner_files, l.tun_devices, l.processes
                )
            },
        ),
        (
            "output",
            format!("{} ({:.1} MiB)", s.out.display(), s.output_bytes as f64 / MIB),
        ),
    ]
}

/// A check's detail for the terminal: at most its first 400 characters (a check that lists
/// every one of many programs or links would fill the screen); `soak.json` has it whole.
fn shortened(detail: &str) -> String {
    const MAX: usize = 400;
    match detail.char_indices().nth(MAX) {
        None => detail.to_string(),
        Some((cut, _)) => format!("{} … (soak.json has it all)", &detail[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::super::series::PacketFold;
    use super::*;
    use crate::output::record::Record;
    use crate::output::schema::{MetricSample, Outcome, PacketRecord};

    #[test]
    fn metrics_are_grouped_per_program_name_and_source_and_shown_beside_their_links_delay() {
        let metric = |t_s: f64, name: &str, value: f64, from: Option<&str>| MetricSample {
            t_s,
            program: "listener".into(),
            vehicle: Some("b".into()),
            name: name.into(),
            value,
            from: from.map(str::to_owned),
        };
        let record = Record {
            metrics: vec![
                metric(2.0, "latency_s", 0.030, Some("a")),
                metric(2.5, "queue", 7.0, None),
                metric(3.0, "latency_s", 0.010, Some("a")),
                metric(4.0, "latency_s", 0.020, Some("a")),
            ],
            ..Default::default()
        };
        let mut fold = PacketFold::default();
        // Delivered at 1.5 (before the first value), 2.5, 3.5 and 4.5 (after the last).
        for (t_s, delay) in [(1.49, 0.01), (2.495, 0.005), (3.49, 0.01), (4.4, 0.1)] {
            fold.add(&PacketRecord {
                t_s,
                src: "a".into(),
                dst: Some("b".into()),
                bytes: 100,
                outcome: Outcome::Delivered,
                reason: None,
                end_s: t_s + delay,
                corrupted: false,
                emulation_ms: None,
            });
        }
        let a = Analysis::with_packets(&record, fold, None);
        assert_eq!(a.metrics.len(), 2);
        let l = &a.metrics[0];
        assert_eq!(
            (l.name.as_str(), l.link().as_deref(), l.first_s, l.last_s),
            ("latency_s", Some("a → b"), 2.0, 4.0)
        );
        assert_eq!(
            l.values,
            Stats {
                count: 3,
                min: 0.010,
                median: 0.020,
                p95: 0.030,
                max: 0.030
            }
        );
        let d = l.link_delay.unwrap();
        assert_eq!(
            d.count, 2,
            "only the copies delivered between the first and last value"
        );
        assert!(
            (d.min - 0.005).abs() < 1e-9 && (d.max - 0.01).abs() < 1e-9,
            "{d:?}"
        );
        let q = &a.metrics[1];
        assert_eq!(
            (q.name.as_str(), q.link(), q.link_delay),
            ("queue", None, None)
        );
        let text = terminal(&a);
        assert!(text.contains("listener: latency_s"), "{text}");
        assert!(text.contains("one-way delay a → b"), "{text}");
        assert!(text.contains("20.00 ms"), "{text}");
    }
}
