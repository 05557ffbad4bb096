//! Runs side by side (`cosim compare`): the same link in several runs' records — e.g. one
//! scenario with the embedded `rf` model and with ns-3 Wi-Fi — measured over named phases of
//! sim time: throughput, one-way delay (median and 95th percentile) and loss, as a Markdown
//! table.
//!
//! A phase counts the copies of `src → dst` *captured* in it: delivered bytes over the phase's
//! length give the throughput, their capture-to-delivery times the delay, and the share of
//! them dropped the loss (with each drop reason's count). [`PhaseFold`] gathers them copy by
//! copy, as a record is read.

use super::series::nearest_rank;
use crate::config::Phase;
use crate::output::schema::{Outcome, PacketRecord};
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::collections::BTreeMap;

/// What one run shows on one link in one phase.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PhaseFigures {
    /// Copies captured in the phase.
    pub copies: u64,
    pub delivered: u64,
    pub throughput_mbps: f64,
    /// Capture to delivery, of the delivered copies (ms); `None` with none delivered.
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    /// Dropped share of the copies captured (`None` with none captured).
    pub loss: Option<f64>,
    /// Drops by reason.
    pub drops: BTreeMap<String, u64>,
}

/// One link's copies in one phase, gathered as a record is read: the counts, the drops by
/// reason and one delay per delivered copy (8 bytes), for [`PhaseFigures`] at the end.
#[derive(Debug, Clone)]
pub struct PhaseFold {
    from_s: f64,
    to_s: f64,
    figures: PhaseFigures,
    bytes: u64,
    delays_ms: Vec<f64>,
}

impl PhaseFold {
    /// Gathers the copies captured in `[phase.from_s, phase.to_s)`.
    pub fn new(phase: &Phase) -> PhaseFold {
        PhaseFold {
            from_s: phase.from_s,
            to_s: phase.to_s,
            figures: PhaseFigures::default(),
            bytes: 0,
            delays_ms: Vec::new(),
        }
    }

    /// Gathers every copy: the whole run, whose end is known only once its record is read.
    pub fn whole_run() -> PhaseFold {
        PhaseFold::new(&Phase {
            name: String::new(),
            from_s: f64::NEG_INFINITY,
            to_s: f64::INFINITY,
        })
    }

    /// Adds a copy of the link, if it was captured in the phase.
    pub fn add(&mut self, p: &PacketRecord) {
        if !(p.t_s >= self.from_s && p.t_s < self.to_s) {
            return;
        }
        let f = &mut self.figures;
        f.copies += 1;
        match p.outcome {
            Outcome::Delivered => {
                f.delivered += 1;
                self.bytes += u64::from(p.bytes);
                self.delays_ms.push((p.end_s - p.t_s) * 1e3);
            }
            Outcome::Dropped => {
                let reason = p.reason.as_deref().unwrap_or("unspecified");
                match f.drops.get_mut(reason) {
                    Some(n) => *n += 1,
                    None => {
                        f.drops.insert(reason.to_owned(), 1);
                    }
                }
            }
        }
    }

    /// The figures, with throughput over `length_s` seconds (the phase's length).
    pub fn finish(mut self, length_s: f64) -> PhaseFigures {
        let mut f = self.figures;
        f.throughput_mbps = self.bytes as f64 * 8.0 / length_s / 1e6;
        self.delays_ms.sort_by(f64::total_cmp);
        f.delay_p50_ms = nearest_rank(&self.delays_ms, 0.50);
        f.delay_p95_ms = nearest_rank(&self.delays_ms, 0.95);
        f.loss = (f.copies > 0).then(|| (f.copies - f.delivered) as f64 / f.copies as f64);
        f
    }
}

/// The figures of the copies `src → dst` captured in `phase`.
pub fn figures(packets: &[PacketRecord], src: &str, dst: &str, phase: &Phase) -> PhaseFigures {
    let mut fold = PhaseFold::new(phase);
    for p in packets
        .iter()
        .filter(|p| p.src == src && p.dst.as_deref() == Some(dst))
    {
        fold.add(p);
    }
    fold.finish(phase.to_s - phase.from_s)
}

/// The Markdown table: one column per run (`runs[i].0` its label), per phase the rows
/// throughput, delay p50, delay p95, loss and drops.
pub fn table(runs: &[(String, Vec<PhaseFigures>)], phases: &[Phase]) -> String {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let mut header = vec!["phase".to_owned(), "".to_owned()];
    header.extend(runs.iter().map(|(label, _)| label.clone()));
    t.set_header(header);
    type Row = (&'static str, fn(&PhaseFigures) -> String);
    let rows: [Row; 5] = [
        ("throughput", |f| format!("{:.2} Mbit/s", f.throughput_mbps)),
        ("delay p50", |f| ms_of(f.delay_p50_ms)),
        ("delay p95", |f| ms_of(f.delay_p95_ms)),
        ("loss", |f| {
            f.loss.map_or("–".to_owned(), |l| {
                format!("{:.1} % of {}", l * 100.0, f.copies)
            })
        }),
        ("drops", |f| {
            if f.drops.is_empty() {
                "–".to_owned()
            } else {
                f.drops
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        }),
    ];
    for (i, phase) in phases.iter().enumerate() {
        for (j, (metric, show)) in rows.iter().enumerate() {
            let mut row = vec![
                if j == 0 {
                    phase.to_string()
                } else {
                    String::new()
                },
                (*metric).to_owned(),
            ];
            row.extend(
                runs.iter()
                    .map(|(_, figs)| figs.get(i).map_or("–".to_owned(), show)),
            );
            t.add_row(row);
        }
    }
    t.to_string()
}

fn ms_of(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), |v| format!("{v:.2} ms"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(t_s: f64, end_s: f64, delivered: bool) -> PacketRecord {
        PacketRecord {
            t_s,
            src: "a".into(),
            dst: Some("b".into()),
            bytes: 1250,
            outcome: if delivered {
                Outcome::Delivered
            } else {
                Outcome::Dropped
            },
            reason: (!delivered).then(|| "out of range".into()),
            end_s,
            corrupted: false,
            emulation_ms: None,
        }
    }

    #[test]
    fn phases_parse_and_bad_ones_are_named() {
        assert_eq!(
            "LOS=2-20".parse::<Phase>().unwrap(),
            Phase {
                name: "LOS".into(),
                from_s: 2.0,
                to_s: 20.0
            }
        );
        for bad in ["LOS", "=1-2", "x=2-1", "x=a-2", "x=-1-2"] {
            let e = bad.parse::<Phase>().unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn the_whole_run_holds_every_copy_the_last_instants_too() {
        // Delivered over 2 s, and one copy dropped at the very end (shut down).
        let p = [
            copy(0.0, 1.0, true),
            copy(1.0, 2.0, true),
            copy(2.0, 2.0, false),
        ];
        let mut fold = PhaseFold::whole_run();
        p.iter().for_each(|p| fold.add(p));
        let f = fold.finish(2.0);
        assert_eq!((f.copies, f.delivered, f.drops["out of range"]), (3, 2, 1));
        assert!((f.throughput_mbps - 0.01).abs() < 1e-12, "{f:?}");
        assert_eq!(
            (f.delay_p50_ms, f.delay_p95_ms),
            (Some(1000.0), Some(1000.0))
        );
        // A phase of the same span leaves out what was captured at its end.
        let phase = Phase {
            name: "run".into(),
            from_s: 0.0,
            to_s: 2.0,
        };
        assert_eq!(figures(&p, "a", "b", &phase).copies, 2);
    }

    #[test]
    fn figures_count_the_copies_captured_in_the_phase() {
        // 1 s phase: 10 delivered (delays 1..10 ms), 5 dropped; one copy before, one of another link.
        let mut p: Vec<PacketRecord> = (1..=10)
            .map(|i| copy(0.5, 0.5 + i as f64 * 1e-3, true))
            .collect();
        p.extend((0..5).map(|_| copy(0.6, 0.6, false)));
        p.push(copy(-0.1, 0.0, true));
        p.push(PacketRecord {
            src: "b".into(),
            dst: Some("a".into()),
            ..copy(0.5, 0.6, true)
        });
        let f = figures(
            &p,
            "a",
            "b",
            &Phase {
                name: "x".into(),
                from_s: 0.0,
                to_s: 1.0,
            },
        );
        assert_eq!((f.copies, f.delivered), (15, 10));
        assert!(
            (f.throughput_mbps - 0.1).abs() < 1e-9,
            "{}",
            f.throughput_mbps
        );
        assert!(
            (f.delay_p50_ms.unwrap() - 5.0).abs() < 1e-6
                && (f.delay_p95_ms.unwrap() - 10.0).abs() < 1e-6,
            "{f:?}"
        );
        assert!((f.loss.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(f.drops["out of range"], 5);
        let t = table(
            &[
                ("one".into(), vec![f.clone()]),
                ("two".into(), vec![PhaseFigures::default()]),
            ],
            &[Phase {
                name: "x".into(),
                from_s: 0.0,
                to_s: 1.0,
            }],
        );
        assert!(
            t.contains("| x (0–1 s)")
                && t.contains("0.10 Mbit/s")
                && t.contains("33.3 % of 15")
                && t.contains("out of range 5"),
            "{t}"
        );
    }
}
