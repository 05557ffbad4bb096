//! The report's plots by the section of the page they belong to, drawn from an [`Analysis`]
//! ([`draw`]); `report.html` lays them out and [`super::write`] saves them as PNG files.

use super::acoustics::{self, Moment};
use super::map::{self, MapInfo};
use super::plots::{self, Bar, Plot};
use super::series::Analysis;

/// At most this many links get their own plots (the ones with the most copies).
pub const MAX_LINK_PLOTS: usize = 16;

/// The plots of one directed link.
#[derive(Debug, Default)]
pub struct LinkFigures {
    /// Index into [`Analysis::links`].
    pub link: usize,
    pub over_time: Option<Plot>,
    pub stats: Option<Plot>,
}

/// Every plot, by the section of the page it belongs to.
#[derive(Debug, Default)]
pub struct Figures {
    /// `map.png`, and what it shows (for its caption).
    pub map: Option<(Plot, MapInfo)>,
    /// `map_pairs.png`: the pairs' states along the tracks.
    pub map_pairs: Option<Plot>,
    pub map_pairs_left_out: usize,
    pub channel: Option<Plot>,
    pub channel_pairs_left_out: usize,
    pub links: Vec<LinkFigures>,
    pub links_left_out: usize,
    pub snr: Option<Plot>,
    /// `emulation.png`: what the emulator added over time (runs with live traffic).
    pub emulation: Option<Plot>,
    pub modem: Option<Plot>,
    pub ledger_packets: Option<Plot>,
    pub ledger_modem: Option<Plot>,
    /// The beam-traced pairs' arrival patterns over the run, then the arrivals of the moment
    /// with the most of them.
    pub acoustic: Vec<Plot>,
    pub acoustic_pairs_left_out: usize,
}

impl Figures {
    pub(super) fn all(&self) -> impl Iterator<Item = &Plot> {
        let links = self
            .links
            .iter()
            .flat_map(|l| [l.over_time.as_ref(), l.stats.as_ref()]);
        [
            self.map.as_ref().map(|m| &m.0),
            self.map_pairs.as_ref(),
            self.channel.as_ref(),
        ]
        .into_iter()
        .chain(links)
        .chain([
            self.snr.as_ref(),
            self.emulation.as_ref(),
            self.modem.as_ref(),
            self.ledger_packets.as_ref(),
            self.ledger_modem.as_ref(),
        ])
        .flatten()
        .chain(self.acoustic.iter())
    }
}

/// Draws every plot that has data; a plot that fails is left out with a note.
pub fn draw(a: &Analysis, notes: &mut Vec<String>) -> Figures {
    let mut f = Figures::default();
    let keep = |file: String,
                title: String,
                r: Result<Vec<u8>, String>,
                notes: &mut Vec<String>| match r {
        Ok(png) => Some(Plot { file, title, png }),
        Err(e) => {
            notes.push(format!("plot {file} not drawn: {e}"));
            None
        }
    };
    notes.extend(a.map.notes.iter().cloned());
    match map::draw_map(a) {
        Some(Ok((png, info))) => {
            f.map = Some((
                Plot {
                    file: "map.png".into(),
                    title: "Map of the run".into(),
                    png,
                },
                info,
            ))
        }
        Some(Err(e)) => notes.push(format!("plot map.png not drawn: {e}")),
        None => {}
    }
    if let Some(r) = map::draw_pairs(a) {
        f.map_pairs = keep("map_pairs.png".into(), "Links on the map".into(), r, notes);
        f.map_pairs_left_out = map::map_pairs(a).1;
    }
    if let Some(r) = plots::channel(a) {
        f.channel = keep("channel.png".into(), "Channel per pair".into(), r, notes);
        f.channel_pairs_left_out = a
            .pairs
            .iter()
            .filter(|p| !p.samples.is_empty())
            .count()
            .saturating_sub(plots::MAX_PAIRS);
    }
    // Throughput and delay over time for links that delivered something; a link whose every copy
    // was dropped shows in the ledger tables and charts.
    let mut busy: Vec<usize> = (0..a.links.len())
        .filter(|&i| a.links[i].ledger.delivered.copies > 0)
        .collect();
    f.links_left_out = busy.len().saturating_sub(MAX_LINK_PLOTS);
    if busy.len() > MAX_LINK_PLOTS {
        busy.sort_by_key(|&i| std::cmp::Reverse(a.links[i].ledger.total.copies));
        busy.truncate(MAX_LINK_PLOTS);
        busy.sort_unstable();
    }
    for i in busy {
        let l = &a.links[i];
        let pair = a
            .pairs
            .iter()
            .find(|p| (p.a == l.src && p.b == l.dst) || (p.a == l.dst && p.b == l.src));
        let stem = format!(
            "link_{:02}_{}_{}",
            i,
            plots::slug(&l.src),
            plots::slug(&l.dst)
        );
        let over_time = keep(
            format!("{stem}.png"),
            format!("{} → {}: throughput and delay", l.src, l.dst),
            plots::link_over_time(a, l, pair),
            notes,
        );
        let stats = keep(
            format!("{stem}_stats.png"),
            format!("{} → {}: rate and delay", l.src, l.dst),
            plots::link_statistics(a, l),
            notes,
        );
        f.links.push(LinkFigures {
            link: i,
            over_time,
            stats,
        });
    }
    acoustic(a, &mut f, notes);
    if let Some(r) = plots::snr(a) {
        f.snr = keep("snr.png".into(), "SNR over time".into(), r, notes);
    }
    if let Some(r) = plots::emulation(a) {
        f.emulation = keep(
            "emulation.png".into(),
            "Emulation error over time".into(),
            r,
            notes,
        );
    }
    if let Some(r) = plots::modem_frames(a) {
        f.modem = keep(
            "modem_frames.png".into(),
            "Modem frames over time by outcome".into(),
            r,
            notes,
        );
    }
    let packet_bars: Vec<Bar> = a
        .traffic_links()
        .map(|l| {
            let mut outcomes = vec![("delivered".to_string(), l.ledger.delivered.copies)];
            outcomes.extend(l.ledger.dropped.iter().map(|(r, c)| (r.clone(), c.copies)));
            Bar {
                name: format!("{} → {}", l.src, l.dst),
                outcomes,
            }
        })
        .collect();
    if let Some(r) = plots::ledger("Packet ledger: copies by outcome", "copies", &packet_bars) {
        f.ledger_packets = keep(
            "ledger_packets.png".into(),
            "Packet ledger".into(),
            r,
            notes,
        );
    }
    let modem_bars: Vec<Bar> = a
        .modem
        .links
        .iter()
        .map(|l| Bar {
            name: format!("{} → {}", l.src, l.dst.as_deref().unwrap_or("(nobody)")),
            outcomes: l.by_outcome.iter().map(|(o, n)| (o.clone(), *n)).collect(),
        })
        .collect();
    if let Some(r) = plots::ledger(
        "Modem frame ledger: frames by outcome",
        "frames",
        &modem_bars,
    ) {
        f.ledger_modem = keep(
            "ledger_modem.png".into(),
            "Modem frame ledger".into(),
            r,
            notes,
        );
    }
    f
}

/// The arrival pattern of each pair the record holds arrivals of (the first
/// [`plots::MAX_PAIRS`]), and the stems of the moment with the most arrivals.
fn acoustic(a: &Analysis, f: &mut Figures, notes: &mut Vec<String>) {
    let traced: Vec<_> = a
        .pairs
        .iter()
        .filter(|p| p.samples.iter().any(|s| s.arrivals.is_some()))
        .collect();
    f.acoustic_pairs_left_out = traced.len().saturating_sub(plots::MAX_PAIRS);
    // The moment with the most arrivals: its pair, time and arrivals.
    let mut richest: Option<(&str, &str, Moment)> = None;
    for p in traced.into_iter().take(plots::MAX_PAIRS) {
        let moments: Vec<Moment> = p
            .samples
            .iter()
            .filter_map(|s| {
                s.arrivals.as_ref().map(|v| Moment {
                    t_s: s.t_s,
                    arrivals: v.clone(),
                })
            })
            .collect();
        if let Some(m) = moments.iter().max_by_key(|m| {
            (
                m.arrivals.len(),
                std::cmp::Reverse((m.t_s * 1e3).round() as i64),
            )
        }) {
            if richest
                .as_ref()
                .is_none_or(|r| m.arrivals.len() > r.2.arrivals.len())
            {
                richest = Some((&p.a, &p.b, m.clone()));
            }
        }
        let file = format!("arrivals_{}_{}.png", plots::slug(&p.a), plots::slug(&p.b));
        let title = format!("{} → {}: arrival pattern", p.a, p.b);
        match acoustics::arrival_pattern(&moments, &title) {
            Ok(png) => f.acoustic.push(Plot { file, title, png }),
            Err(e) => notes.push(format!("plot {file} not drawn: {e}")),
        }
    }
    if let Some((pa, pb, m)) = richest.filter(|r| !r.2.arrivals.is_empty()) {
        let file = format!(
            "arrivals_{}_{}_at_{}s.png",
            plots::slug(pa),
            plots::slug(pb),
            m.t_s
        );
        let title = format!(
            "{pa} → {pb} at {} s: {} arrivals, the most of the run",
            m.t_s,
            m.arrivals.len()
        );
        match acoustics::arrival_stems(&m.arrivals, &title) {
            Ok(png) => f.acoustic.push(Plot { file, title, png }),
            Err(e) => notes.push(format!("plot {file} not drawn: {e}")),
        }
    }
}
