//! The summary a run prints at its end (and `cosim report` prints): tables drawn with
//! `comfy-table` from the same [`Analysis`] as the report.

use super::series::{outcome_rank, Analysis, ChannelState, LinkLedger};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use serde_json::Value;
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
    let get = |k: &str| s.and_then(|s| s.get(k));
    let name = get("scenario")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| a.run.as_ref().map(|r| r.scenario.clone()))
        .unwrap_or_default();
    let mut line = match (
        get("windows").and_then(Value::as_u64),
        get("window_ms").and_then(Value::as_f64),
    ) {
        (Some(w), Some(ms)) => format!(
            "{name}: {w} windows of {ms} ms = {:.2} s simulated",
            a.end_s
        ),
        _ => format!("{name}: {:.2} s simulated", a.end_s),
    };
    if let Some(wall) = get("wall_seconds").and_then(Value::as_f64) {
        let _ = write!(line, " in {wall:.2} s wall");
        if let Some(wps) = get("windows_per_second").and_then(Value::as_f64) {
            let _ = write!(line, " ({wps:.0} windows/s)");
        }
    }
    if get("interrupted").and_then(Value::as_bool) == Some(true) {
        line.push_str(", interrupted");
    } else if s.is_none() {
        line.push_str(" (no run summary: the record was cut short)");
    }
    line
}

/// Every table of the run's summary, as text.
pub fn terminal(a: &Analysis) -> String {
    let mut out = headline(a);
    out.push('\n');
    if let Some(slipped) = a
        .summary
        .as_ref()
        .and_then(|s| s.get("slipped_seconds"))
        .and_then(Value::as_f64)
        .filter(|s| *s > 0.0)
    {
        let _ = writeln!(out, "paced windows fell {slipped:.3} s behind the wall clock in all (sim time never ran ahead of it)");
    }

    // Pairs: from the record's channel, else the summary's window counts.
    let mut t = table(
        &["pair", "LOS", "NLOS", "out of range", "LOS↔NLOS changes"],
        &[],
    );
    let mut rows = 0;
    let mut with_samples: Vec<_> = a.pairs.iter().filter(|p| !p.intervals.is_empty()).collect();
    // Pairs that carried traffic first, then those that changed most (many vehicles, many pairs).
    let busy = |a_: &str, b_: &str| {
        a.traffic_links()
            .any(|l| (l.src == a_ && l.dst == b_) || (l.src == b_ && l.dst == a_))
    };
    with_samples.sort_by_key(|p| (!busy(&p.a, &p.b), std::cmp::Reverse(p.changes)));
    if !with_samples.is_empty() {
        for p in with_samples.iter().take(MAX_PAIR_ROWS) {
            t.add_row(vec![
                format!("{} – {}", p.a, p.b),
                percent(p.share(ChannelState::Los)),
                percent(p.share(ChannelState::Nlos)),
                percent(p.share(ChannelState::OutOfRange)),
                p.changes.to_string(),
            ]);
        }
        rows = with_samples.len();
    } else if let Some(pairs) = a
        .summary
        .as_ref()
        .and_then(|s| s.get("pairs"))
        .and_then(Value::as_array)
    {
        for p in pairs.iter().take(MAX_PAIR_ROWS) {
            let n = |k: &str| p.get(k).and_then(Value::as_u64).unwrap_or(0);
            let total = (n("los_windows") + n("nlos_windows")).max(1) as f64;
            let name = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
            t.add_row(vec![
                format!("{} – {}", name("a"), name("b")),
                percent(Some(n("los_windows") as f64 / total)),
                percent(Some(n("nlos_windows") as f64 / total)),
                "–".into(),
                n("transitions").to_string(),
            ]);
        }
        rows = pairs.len();
    }
    if rows > 0 {
        if rows > MAX_PAIR_ROWS {
            t.add_row(vec![format!(
                "… {} more pairs (report.html lists them all)",
                rows - MAX_PAIR_ROWS
            )]);
        }
        let _ = writeln!(out, "{t}");
    }

    // Directed links that carried traffic.
    let links: Vec<_> = a.traffic_links().collect();
    if !links.is_empty() {
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
        let _ = writeln!(out, "{t}");
    }
    if let Some(n) = a.summary.as_ref().and_then(|s| s.get("network")) {
        let g = |k: &str| n.get(k).and_then(Value::as_u64).unwrap_or(0);
        let balanced = n.get("balanced").and_then(Value::as_bool).unwrap_or(false);
        let mut line = format!(
            "packets: captured {} = delivered {} + dropped {} + in flight {} ({})",
            g("captured"),
            g("delivered"),
            g("dropped"),
            g("in_flight"),
            if balanced { "balanced" } else { "NOT BALANCED" }
        );
        if let Some(d) = n
            .get("drops")
            .and_then(Value::as_object)
            .filter(|d| !d.is_empty())
        {
            let parts: Vec<String> = d.iter().map(|(r, c)| format!("{r} {c}")).collect();
            let _ = write!(line, "; drops: {}", parts.join(", "));
        }
        let _ = writeln!(out, "{line}");
    }

    // Modem frames per link and outcome.
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
        let _ = writeln!(out, "{t}");
    } else if let Some(l) = a
        .summary
        .as_ref()
        .and_then(|s| s.pointer("/modems/ledger"))
        .and_then(Value::as_object)
    {
        let parts: Vec<String> = l
            .iter()
            .map(|(k, v)| format!("{} {v}", k.replace('_', " ")))
            .collect();
        let _ = writeln!(out, "modem frames: {}", parts.join(", "));
    }

    if !a.programs.is_empty() {
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
                super::exit_text(p),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    let failed: Vec<_> = a.checks.iter().filter(|c| !c.ok()).collect();
    if !failed.is_empty() {
        for c in failed {
            let _ = writeln!(
                out,
                "MISMATCH {}: record {} vs summary {}",
                c.what, c.record, c.summary
            );
        }
    }
    out
}
