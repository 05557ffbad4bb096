//! `report.html`: one self-contained page (plots embedded as `data:` URIs, inline CSS, no
//! script, nothing loaded from elsewhere) with the run's summary, every plot, the ledgers and
//! the programs.

use super::figures::Figures;
use super::plots::Plot;
use super::series::{outcome_rank, Analysis, ChannelState, LinkSeries};
use super::table::{duration, headline, stats_cells};
use base64::Engine;
use std::fmt::Write;

/// `s` with HTML's special characters escaped (text and attribute values).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; margin: 1.5em auto; max-width: 1520px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.8em; } h3 { margin-bottom: .3em; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; }
th { background: #f2f2f2; } td.n { text-align: right; }
img { display: block; max-width: 100%; height: auto; margin: .6em 0; border: 1px solid #ddd; }
figure { margin: .6em 0 1.4em 0; } figcaption { color: #555; font-size: .92em; max-width: 1200px; }
.ok { color: #1a7f37; } .bad { color: #c62828; font-weight: bold; } .note { color: #555; }
.key td { text-align: left; } .key td:first-child { font-weight: bold; }
";

/// Builds an HTML table: `header`, then `rows` of cells (already escaped).
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table>");
    if header.iter().any(|h| !h.is_empty()) {
        out.push_str("<tr>");
        for h in header {
            let _ = write!(out, "<th>{}</th>", escape(h));
        }
        out.push_str("</tr>\n");
    }
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            // Figures align right.
            let numeric = c.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-' || ch == '–');
            let _ = write!(
                out,
                "{}{c}</td>",
                if numeric { "<td class=\"n\">" } else { "<td>" }
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn image(out: &mut String, plot: &Plot) {
    let data = base64::engine::general_purpose::STANDARD.encode(&plot.png);
    let _ = writeln!(
        out,
        "<img src=\"data:image/png;base64,{data}\" alt=\"{}\" title=\"plots/{}\">",
        escape(&plot.title),
        escape(&plot.file)
    );
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".into())
}

fn pct(share: Option<f64>) -> String {
    opt(share, |s| format!("{:.1} %", 100.0 * s))
}

/// The whole page: its head, then one section after the other.
pub fn page(a: &Analysis, f: &Figures, series: &[String], notes: &[String]) -> String {
    let mut o = String::with_capacity(1 << 20);
    head(&mut o, a);
    run(&mut o, a);
    map(&mut o, f);
    channel(&mut o, a, f);
    acoustic(&mut o, f);
    links(&mut o, a, f);
    snr(&mut o, f);
    emulation(&mut o, a, f);
    modems(&mut o, a, f);
    ledger(&mut o, a, f);
    flows(&mut o, a);
    air(&mut o, a);
    programs(&mut o, a);
    metrics(&mut o, a);
    checks(&mut o, a);
    files(&mut o, series, notes);
    o.push_str("</body>\n</html>\n");
    o
}

/// The programs' metrics (`COSIM_METRICS`), each followed by the one-way delay of the link
/// its values came over.
fn metrics(o: &mut String, a: &Analysis) {
    o.push_str("<h2 id=\"metrics\">Metrics</h2>\n");
    if a.metrics.is_empty() {
        o.push_str("<p class=\"note\">No program reported a metric.</p>\n");
        return;
    }
    let mut rows = Vec::new();
    for m in &a.metrics {
        let mut row = vec![
            escape(&m.program),
            escape(m.vehicle.as_deref().unwrap_or("(host)")),
            escape(&m.name),
        ];
        row.extend(stats_cells(&m.name, &m.values));
        rows.push(row);
        if let (Some(link), Some(d)) = (m.link(), &m.link_delay) {
            let mut row = vec![
                String::new(),
                String::new(),
                escape(&format!("one-way delay {link}")),
            ];
            row.extend(stats_cells("delay_s", d));
            rows.push(row);
        }
    }
    table(
        o,
        &[
            "program", "vehicle", "metric", "count", "min", "median", "p95", "max",
        ],
        &rows,
    );
}

/// The document's head, the title and the navigation.
fn head(o: &mut String, a: &Analysis) {
    let name = a
        .run
        .as_ref()
        .map(|r| r.scenario.clone())
        .or_else(|| a.summary.as_ref().map(|s| s.scenario.clone()))
        .unwrap_or_else(|| "run".into());
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" href=\"data:,\">\n<title>{} – netsim_cosim report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&name)
    );
    let _ = writeln!(
        o,
        "<h1>Run report: {}</h1>\n<p>{}</p>",
        escape(&name),
        escape(&headline(a))
    );
    o.push_str(
        "<nav><a href=\"#run\">run</a><a href=\"#map\">map</a><a href=\"#channel\">channel</a><a href=\"#links\">links</a><a href=\"#snr\">SNR</a><a href=\"#emulation\">emulation</a>\
         <a href=\"#modems\">modems</a><a href=\"#ledger\">ledger</a><a href=\"#air\">802.11</a><a href=\"#programs\">programs</a><a href=\"#metrics\">metrics</a><a href=\"#checks\">checks</a>\
         <a href=\"#files\">files</a></nav>\n",
    );
}

/// The run: its constants and the summary's figures.
fn run(o: &mut String, a: &Analysis) {
    o.push_str("<h2 id=\"run\">Run</h2>\n");
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut kv = |k: &str, v: String| rows.push(vec![escape(k), escape(&v)]);
    if let Some(r) = &a.run {
        kv("scenario", r.scenario.clone());
        kv("seed", r.seed.to_string());
        kv("window W", format!("{} ms", r.window_ms));
        kv("planned duration", format!("{} s", r.duration_s));
        kv(
            "real-time factor",
            if r.real_time_factor > 0.0 {
                r.real_time_factor.to_string()
            } else {
                "0 (as fast as possible)".into()
            },
        );
        kv("vehicles", r.vehicles.join(", "));
    }
    kv("simulated", format!("{:.3} s", a.end_s));
    match &a.summary {
        Some(s) => {
            kv("windows", format!("{:.0}", f64::from(s.windows)));
            kv("wall time (s)", format!("{:.3}", s.wall_seconds));
            kv("windows/s", format!("{:.3}", s.windows_per_second));
            kv(
                "paced windows behind the wall clock (s)",
                format!("{:.3}", s.slipped_seconds),
            );
            kv(
                "interrupted",
                if s.interrupted {
                    "yes (Ctrl-C or SIGTERM)".into()
                } else {
                    "no".into()
                },
            );
        }
        None => kv("run summary", "none: the record was cut short".into()),
    }
    kv("time bins of the plots", format!("{} s", a.bin_s));
    o.push_str("<div class=\"key\">");
    table(o, &[], &rows);
    o.push_str("</div>");
}

/// `plot` with its caption (already escaped).
fn figure(o: &mut String, plot: &Plot, caption: &str) {
    o.push_str("<figure>\n");
    image(o, plot);
    let _ = writeln!(o, "<figcaption>{caption}</figcaption>\n</figure>");
}

/// The maps: terrain and tracks, and the pairs' states along the tracks.
fn map(o: &mut String, f: &Figures) {
    o.push_str("<h2 id=\"map\">Map</h2>\n");
    let Some((plot, info)) = &f.map else {
        o.push_str("<p class=\"note\">No map: the record has neither poses nor a terrain.</p>\n");
        return;
    };
    let fr = &info.frame;
    let mut caption = format!(
        "Top-down, north up: x east {:.0} … {:.0} m, y north {:.0} … {:.0} m in the scenario's frame; scale bar {} m. ",
        fr.x0,
        fr.x1(),
        fr.y0(),
        fr.y1,
        info.scale_m
    );
    match &info.relief {
        Some(r) => {
            let _ = write!(
                caption,
                "The terrain of <code>/scene/terrain</code> as shaded relief lit from the north-west, tinted by height \
                 ({:.1} m to {:.1} m: blues below the waterline at 0 m, greens to browns above), contour lines every {} m, \
                 the waterline dark. ",
                r.lo_m, r.hi_m, r.contour_m
            );
        }
        None => caption.push_str(
            "The record has no terrain (<code>/scene/terrain</code>): the tracks are drawn on a plain background. ",
        ),
    }
    caption.push_str(
        "Every vehicle's track from <code>/poses</code> in its colour, an open circle at its start and a dot at its end.",
    );
    figure(o, plot, &caption);
    if let Some(p) = &f.map_pairs {
        let mut caption = format!(
            "Per pair, the two vehicles' tracks on the same ground, each stretch coloured by the pair's state when they were there: \
             green LOS, orange NLOS (terrain in between), grey out of range (no direction of the pair usable, per <code>/link_state</code>); \
             thin lines: the line of sight between the two at {} evenly spaced times, in the same colours. \
             Percentages: shares of the time as in the channel table below.",
            super::map::SIGHT_LINES
        );
        if f.map_pairs_left_out > 0 {
            let _ = write!(
                caption,
                " The pairs with traffic and the most LOS↔NLOS changes are shown; {} more are in the channel table.",
                f.map_pairs_left_out
            );
        }
        figure(o, p, &caption);
    }
}

/// Channel per pair: the shares of LOS, NLOS and out of range, distances, the plot.
fn channel(o: &mut String, a: &Analysis, f: &Figures) {
    o.push_str("<h2 id=\"channel\">Channel per pair</h2>\n");
    if a.pairs.is_empty() {
        o.push_str("<p class=\"note\">No channel samples in the record.</p>\n");
        return;
    }
    o.push_str(
        "<p class=\"note\">Shares of the time from each pair's first sample on: LOS / NLOS as the physics side sampled it, \
         out of range while the network simulator said no direction of the pair was usable.</p>\n",
    );
    let rows: Vec<Vec<String>> = a
        .pairs
        .iter()
        .map(|p| {
            let d = p.samples.iter().map(|s| s.distance_m);
            let (lo, hi) = d.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            vec![
                escape(&format!("{} – {}", p.a, p.b)),
                pct(p.share(ChannelState::Los)),
                pct(p.share(ChannelState::Nlos)),
                pct(p.share(ChannelState::OutOfRange)),
                p.changes.to_string(),
                if lo <= hi {
                    format!("{lo:.1} – {hi:.1}")
                } else {
                    "–".into()
                },
            ]
        })
        .collect();
    table(
        o,
        &[
            "pair",
            "LOS",
            "NLOS",
            "out of range",
            "LOS↔NLOS changes",
            "distance (m)",
        ],
        &rows,
    );
    if let Some(p) = &f.channel {
        image(o, p);
    }
    if f.channel_pairs_left_out > 0 {
        let _ = writeln!(
            o,
            "<p class=\"note\">The plot shows {} pairs; {} more are in series/channel_*.csv.</p>",
            super::plots::MAX_PAIRS,
            f.channel_pairs_left_out
        );
    }
}

/// Acoustic paths: the traced pairs' arrival patterns (only when the record holds arrivals).
fn acoustic(o: &mut String, f: &Figures) {
    if f.acoustic.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"acoustic\">Acoustic paths</h2>\n");
    o.push_str(
        "<p class=\"note\">Pairs traced by the beam tracer (<code>propagation: beam</code>): \
         each arrival at the record's channel samples, by its delay after the first arrival and \
         its level (20·log10 of its amplitude, re the source at 1 m, without volume absorption); \
         grey columns are shadow zones, where nothing arrives. Then the arrivals of the moment \
         with the most of them, by delay and level re the strongest, coloured by what each \
         bounced off.</p>\n",
    );
    for p in &f.acoustic {
        figure(o, p, &escape(&p.title));
    }
    if f.acoustic_pairs_left_out > 0 {
        let _ = writeln!(
            o,
            "<p class=\"note\">{} more traced pairs are in series/channel_arrivals.csv.</p>",
            f.acoustic_pairs_left_out
        );
    }
}

/// Directed links: throughput and delay, in a table and each link's plots.
fn links(o: &mut String, a: &Analysis, f: &Figures) {
    o.push_str("<h2 id=\"links\">Directed links: throughput and delay</h2>\n");
    let traffic: Vec<_> = a.traffic_links().collect();
    if traffic.is_empty() {
        o.push_str("<p class=\"note\">No packet crossed a simulated link in this run.</p>\n");
        return;
    }
    let rows: Vec<Vec<String>> = traffic
        .iter()
        .map(|l| {
            vec![
                escape(&format!("{} → {}", l.src, l.dst)),
                l.ledger.total.copies.to_string(),
                l.ledger.delivered.copies.to_string(),
                l.ledger.dropped_copies().to_string(),
                l.ledger.delivered.bytes.to_string(),
                l.ledger.corrupted.to_string(),
                opt(l.mean_mbit_s(), |r| format!("{r:.3}")),
                opt(l.mean_delay_s(), duration),
                opt(l.delay_quantile_s(0.5), duration),
                opt(l.delay_quantile_s(0.95), duration),
            ]
        })
        .collect();
    table(
        o,
        &[
            "link",
            "copies",
            "delivered",
            "dropped",
            "delivered bytes",
            "corrupted",
            "mean Mbit/s",
            "mean delay",
            "median delay",
            "95 % delay",
        ],
        &rows,
    );
    o.push_str(
        "<p class=\"note\">Throughput counts the bytes of the copies delivered in each bin, by delivery time; the delay of a copy is \
         its delivery time less its capture time. Mean Mbit/s is over the link's active span (first capture to last end).</p>\n",
    );
    for lf in &f.links {
        let l = &a.links[lf.link];
        let _ = writeln!(o, "<h3>{}</h3>", escape(&format!("{} → {}", l.src, l.dst)));
        for p in [&lf.over_time, &lf.stats].into_iter().flatten() {
            image(o, p);
        }
    }
    if f.links_left_out > 0 {
        let _ = writeln!(o, "<p class=\"note\">{} more links with traffic are in the tables and series/, not plotted.</p>", f.links_left_out);
    }
}

/// The SNR plot.
fn snr(o: &mut String, f: &Figures) {
    o.push_str("<h2 id=\"snr\">SNR</h2>\n");
    match &f.snr {
        Some(p) => image(o, p),
        None => o.push_str("<p class=\"note\">No link state with an SNR in the record (the link model has none, or none was reported).</p>\n"),
    }
}

/// What the emulator added to the live packets: the sentence, the warning, the spans over the
/// bound and the plot (runs with live traffic).
fn emulation(o: &mut String, a: &Analysis, f: &Figures) {
    let Some(e) = a.summary.as_ref().and_then(|s| s.emulation.as_ref()) else {
        return;
    };
    o.push_str("<h2 id=\"emulation\">Emulation error</h2>\n");
    let _ = writeln!(o, "<p>{}</p>", escape(&e.sentence()));
    if let Some(w) = &e.warning {
        let _ = writeln!(o, "<p class=\"bad\">Warning: {}.</p>", escape(w));
    }
    let q = |name: &str, q: &crate::output::emulation::Quantiles| {
        vec![
            escape(name),
            q.copies.to_string(),
            format!("{:.3}", q.p50_ms),
            format!("{:.3}", q.p99_ms),
            format!("{:.3}", q.max_ms),
            format!("{:.2} %", q.over_bound * 100.0),
        ]
    };
    table(
        o,
        &[
            "per copy",
            "copies",
            "p50 ms",
            "p99 ms",
            "max ms",
            "over the bound",
        ],
        &[
            q("error (read to write, less its sim delay)", &e.error),
            q("late write", &e.release),
            q("capture lag", &e.capture),
        ],
    );
    if !e.spans.is_empty() {
        let rows: Vec<Vec<String>> = e
            .spans
            .iter()
            .map(|s| {
                vec![
                    format!("{:.3} – {:.3}", s.from_s, s.to_s),
                    s.copies_over_bound.to_string(),
                    s.windows_late.to_string(),
                    format!("{:.3}", s.worst_ms),
                    match &s.stage {
                        Some(st) => format!(
                            "{} ({:.3} ms per window, {:.3} over the run)",
                            escape(st),
                            s.stage_ms_per_window,
                            s.usual_ms_per_window
                        ),
                        None => "none: the process was not scheduled".into(),
                    },
                ]
            })
            .collect();
        o.push_str("<p>Spans of sim time over the bound (shaded in the plot):</p>\n");
        table(
            o,
            &[
                "sim time (s)",
                "copies over",
                "windows late",
                "worst ms",
                "stage that ran long",
            ],
            &rows,
        );
        if e.spans_left_out > 0 {
            let _ = writeln!(
                o,
                "<p class=\"note\">{} more spans left out.</p>",
                e.spans_left_out
            );
        }
    }
    if let Some(p) = &f.emulation {
        image(o, p);
    }
}

/// Modem frames per (sender, addressed receiver) and outcome, and their plot.
fn modems(o: &mut String, a: &Analysis, f: &Figures) {
    o.push_str("<h2 id=\"modems\">Modem frames</h2>\n");
    let m = &a.modem;
    if m.frames == 0 {
        o.push_str("<p class=\"note\">No modem frame in the record.</p>\n");
        return;
    }
    let mut header = vec!["sender → addressed", "frames", "bytes"];
    header.extend(m.outcomes.iter().map(String::as_str));
    let mut rows: Vec<Vec<String>> = m
        .links
        .iter()
        .map(|l| {
            let mut r = vec![
                escape(&format!(
                    "{} → {}",
                    l.src,
                    l.dst.as_deref().unwrap_or("(nobody)")
                )),
                l.frames.to_string(),
                l.bytes.to_string(),
            ];
            r.extend(
                m.outcomes
                    .iter()
                    .map(|o| l.by_outcome.get(o).copied().unwrap_or(0).to_string()),
            );
            r
        })
        .collect();
    let mut total = vec![
        "<b>all</b>".to_string(),
        m.frames.to_string(),
        m.links.iter().map(|l| l.bytes).sum::<u64>().to_string(),
    ];
    total.extend(
        m.outcomes
            .iter()
            .map(|o| m.totals.get(o).copied().unwrap_or(0).to_string()),
    );
    rows.push(total);
    table(o, &header, &rows);
    if let Some(p) = &f.modem {
        image(o, p);
    }
}

/// The ledgers: the run's IP ledger line, packets per link and outcome, the ledger plots.
fn ledger(o: &mut String, a: &Analysis, f: &Figures) {
    o.push_str("<h2 id=\"ledger\">Ledger</h2>\n");
    if let Some(n) = a.summary.as_ref().and_then(|s| s.network.as_ref()) {
        let _ = writeln!(
            o,
            "<p>Packets (the run's IP ledger): {} <span class=\"{}\">{}</span></p>",
            n.balance(),
            if n.balanced { "ok" } else { "bad" },
            if n.balanced {
                "balanced"
            } else {
                "NOT BALANCED"
            }
        );
    }
    let traffic: Vec<_> = a.traffic_links().collect();
    if !traffic.is_empty() {
        packet_ledger(o, &traffic);
    }
    for p in [&f.ledger_packets, &f.ledger_modem].into_iter().flatten() {
        image(o, p);
    }
    if traffic.is_empty() && a.modem.frames == 0 {
        o.push_str("<p class=\"note\">Nothing to account for: no packet and no modem frame in the record.</p>\n");
    }
}

/// Packets per link: copies, delivered and each drop reason, with a row of totals.
fn packet_ledger(o: &mut String, traffic: &[&LinkSeries]) {
    let mut reasons: Vec<String> = traffic
        .iter()
        .flat_map(|l| l.ledger.dropped.keys().cloned())
        .collect();
    reasons.sort_by_key(|r| outcome_rank(r));
    reasons.dedup();
    let mut header = vec!["packets: link", "copies", "delivered"];
    header.extend(reasons.iter().map(String::as_str));
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut totals = vec![0u64; 2 + reasons.len()];
    for l in traffic {
        let mut r = vec![
            escape(&format!("{} → {}", l.src, l.dst)),
            l.ledger.total.copies.to_string(),
            l.ledger.delivered.copies.to_string(),
        ];
        totals[0] += l.ledger.total.copies;
        totals[1] += l.ledger.delivered.copies;
        for (i, reason) in reasons.iter().enumerate() {
            let n = l.ledger.dropped.get(reason).map(|c| c.copies).unwrap_or(0);
            totals[2 + i] += n;
            r.push(n.to_string());
        }
        rows.push(r);
    }
    let mut r = vec!["<b>all</b>".to_string()];
    r.extend(totals.iter().map(u64::to_string));
    rows.push(r);
    table(o, &header, &rows);
}

/// The generated flows (`traffic.flows`): what each sent and received, its throughput and delays.
fn flows(o: &mut String, a: &Analysis) {
    let Some(s) = a.summary.as_ref().filter(|s| !s.traffic.is_empty()) else {
        return;
    };
    o.push_str("<h2 id=\"flows\">Generated flows</h2>\n");
    o.push_str("<p class=\"note\">The scenario's <code>traffic.flows</code>, sent and received in sim time: packets (TCP: bytes) sent and received intact, the share lost, the payload throughput over the flow's time, and the one-way delay (ping: round trip).</p>\n");
    let rows: Vec<Vec<String>> = (s.traffic.iter())
        .map(|f| {
            super::table::flow_row(f)
                .into_iter()
                .map(|c| escape(&c))
                .collect()
        })
        .collect();
    table(o, &super::table::FLOW_HEADER, &rows);
}

/// The 802.11 media (links with `mac`): per link the attempts, retries, collisions, air time
/// and MAC service time.
fn air(o: &mut String, a: &Analysis) {
    o.push_str("<h2 id=\"air\">802.11 media</h2>\n");
    let media = super::table::air_media(a);
    if media.is_empty() {
        o.push_str("<p class=\"note\">No 802.11 medium in this process's network simulator (no link with <code>mac</code>, or another network simulator).</p>\n");
        return;
    }
    o.push_str("<p class=\"note\">Per link: frames done with, attempts (first and retries), attempts lost to an overlapping transmission, frames dropped after their last attempt, the share of the run its frames were on the air, and the mean MAC service time (head of the queue to the end of the exchange).</p>\n");
    for (title, rows) in media {
        let _ = writeln!(o, "<h3>{}</h3>", escape(&title));
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|r| r.into_iter().map(|c| escape(&c)).collect())
            .collect();
        table(o, &super::table::AIR_HEADER, &rows);
    }
}

/// The scenario's programs: when each ran and how it ended.
fn programs(o: &mut String, a: &Analysis) {
    o.push_str("<h2 id=\"programs\">Programs</h2>\n");
    if a.programs.is_empty() {
        o.push_str("<p class=\"note\">The scenario started no program.</p>\n");
        return;
    }
    let rows: Vec<Vec<String>> = a
        .programs
        .iter()
        .map(|p| {
            let exit = p.exit_text();
            // A program stopped by a signal at the end of the run is no failure.
            let class = match (p.exit_code, p.signal) {
                (Some(0), _) => "ok",
                (None, Some(_)) => "",
                _ => "bad",
            };
            vec![
                escape(&p.name),
                escape(p.vehicle.as_deref().unwrap_or("(host)")),
                opt(p.started_s, |s| format!("{s:.3}")),
                opt(p.ended_s, |s| format!("{s:.3}")),
                format!("<span class=\"{class}\">{}</span>", escape(&exit)),
                escape(&p.note().unwrap_or_default()),
            ]
        })
        .collect();
    table(
        o,
        &[
            "program",
            "vehicle",
            "started (s)",
            "ended (s)",
            "exit",
            "note",
        ],
        &rows,
    );
}

/// The record against the run summary, figure by figure.
fn checks(o: &mut String, a: &Analysis) {
    o.push_str("<h2 id=\"checks\">Record against the run summary</h2>\n");
    if a.checks.is_empty() {
        o.push_str("<p class=\"note\">The run summary has no per-link or modem ledger figures to compare with.</p>\n");
        return;
    }
    let rows: Vec<Vec<String>> = a
        .checks
        .iter()
        .map(|c| {
            let verdict = if c.ok() {
                "<span class=\"ok\">equal</span>"
            } else {
                "<span class=\"bad\">DIFFERENT</span>"
            };
            vec![
                escape(&c.what),
                c.record.to_string(),
                c.summary.to_string(),
                verdict.to_string(),
            ]
        })
        .collect();
    table(o, &["figure", "record", "summary", ""], &rows);
}

/// The files beside the page, and the report's notes.
fn files(o: &mut String, series: &[String], notes: &[String]) {
    o.push_str("<h2 id=\"files\">Files</h2>\n<p>The series behind the plots, beside this page:</p>\n<ul>\n");
    for file in series {
        let _ = writeln!(o, "<li><a href=\"{0}\">{0}</a></li>", escape(file));
    }
    o.push_str("<li><a href=\"report.json\">report.json</a> (the tables above)</li>\n</ul>\n");
    if !notes.is_empty() {
        o.push_str("<h2 id=\"notes\">Notes</h2>\n<ul>\n");
        for n in notes {
            let _ = writeln!(o, "<li class=\"note\">{}</li>", escape(n));
        }
        o.push_str("</ul>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
