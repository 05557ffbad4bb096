//! What the emulator itself adds to a live run's packets, measured in every run: per delivered
//! copy its wall time from read to write less the sim delay it was given, with the capture lag
//! and the write's lateness as parts ([`Emulation`](crate::net::ledger::Emulation)), in quantiles overall and
//! per link, per window for the record (`/emulation`), and the spans of sim time where copies
//! got more than the scenario's bound, each with the stage that ran long in it. Pure: the
//! windows, their lateness, the stage counters and the copies that ended are arguments.
//!
//! Quantiles come from log-linear histograms (8 buckets per octave from 1 µs, so a quantile is
//! within 9 % above the true value; the maximum is exact): a 64-vehicle run has 4,032 links, and
//! a histogram crate's per-link footprint (tens of KiB) would cost more than the run's record.

use crate::clock::stages::{Stages, STAGE_COUNT};
use crate::model::fate::Fate;
use crate::net::ledger::CopyEnd;
use crate::output::schema::EmulationWindow;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// A quantity's distribution over the copies, ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Quantiles {
    /// Copies measured.
    pub copies: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The share of the copies over the bound (0–1).
    pub over_bound: f64,
}

/// One directed link's emulation error (copies delivered on it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LinkEmulation {
    pub src: String,
    pub dst: String,
    pub error: Quantiles,
}

/// Windows back from a span's first that its stage counts may reach (to the capture of its
/// earliest late copy).
pub const LOOKBACK_WINDOWS: usize = 1024;

/// A span of sim time in which copies got more than the bound, or windows opened later than it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulationSpan {
    /// Sim time of the span's first and last window's start, s.
    pub from_s: f64,
    pub to_s: f64,
    /// Delivered copies whose error exceeded the bound in it.
    pub copies_over_bound: u64,
    /// Windows that opened more than the bound after their due time.
    pub windows_late: u64,
    /// The largest error of a copy in it, or lateness of a window, ms.
    pub worst_ms: f64,
    /// The stage whose time per window rose most above its run-wide mean in the span, counted
    /// from the window its earliest late copy was captured in (its window work ran long);
    /// none when no stage did (the process was not scheduled).
    pub stage: Option<String>,
    /// That stage's time per window in the span and over the whole run, ms.
    pub stage_ms_per_window: f64,
    pub usual_ms_per_window: f64,
}

/// `summary.json`'s `emulation`: what the emulator added to the live packets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulationSummary {
    /// `network.emulation_bound_ms` (default W/2).
    pub bound_ms: f64,
    /// Per delivered copy: its wall time from read to write less the sim delay the network
    /// simulator gave it.
    pub error: Quantiles,
    /// Per delivered copy: how long after the wall instant of its sim-time release it was
    /// written into its receiver's TUN (on its agent's clock for a vehicle on an agent).
    pub release: Quantiles,
    /// Per copy that ended (delivered or not): from the sim time its packet was stamped with to
    /// the sim time the packet engine had it.
    pub capture: Quantiles,
    /// Per directed link with delivered copies, in (sender, receiver) order.
    pub links: Vec<LinkEmulation>,
    /// The spans over the bound, in sim-time order (at most [`MAX_SPANS`]).
    pub spans: Vec<EmulationSpan>,
    /// Spans beyond [`MAX_SPANS`], counted.
    pub spans_left_out: u64,
    /// Set when the p99 error exceeds the bound: what, where and why.
    pub warning: Option<String>,
}

impl EmulationSummary {
    /// The report's sentence: "Emulation added at most X ms to 99 % of the packets …".
    pub fn sentence(&self) -> String {
        if self.error.copies == 0 {
            return "No packet was delivered, so no emulation error was measured.".to_owned();
        }
        format!(
            "Emulation added at most {} ms to 99 % of the packets ({} delivered copies; at most {} ms; {:.2} % over the bound of {} ms).",
            ms(self.error.p99_ms),
            self.error.copies,
            ms(self.error.max_ms),
            self.error.over_bound * 100.0,
            ms(self.bound_ms),
        )
    }
}

/// Milliseconds in three significant figures.
fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Most spans kept in the summary.
pub const MAX_SPANS: usize = 20;

/// Sim time without anything over the bound that ends a span.
const SPAN_GAP_NS: u64 = 1_000_000_000;

const SUB: u32 = 8;
const OCTAVES: u32 = 30;
const BUCKETS: usize = (1 + SUB * OCTAVES) as usize;

/// Counts of values in log-linear buckets from 1 µs (index 0: below it), and the exact max.
#[derive(Debug, Clone)]
struct Histogram {
    counts: Box<[u32; BUCKETS]>,
    total: u64,
    over: u64,
    max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            over: 0,
            max_ns: 0,
        }
    }
}

/// The bucket of `ns`: octave `o = ⌊log2(ns / 1 µs)⌋`, and in it the eighth
/// `⌊8 · ns / (2^o µs)⌋ − 8`, in integers (every copy of a live run is counted here on the
/// window's path, four times).
fn bucket(ns: u64) -> usize {
    if ns < 1000 {
        return 0;
    }
    let octave = (ns / 1000).ilog2();
    if octave >= OCTAVES {
        return BUCKETS - 1;
    }
    // ns < 1000 · 2^30 here: 8 · ns does not overflow.
    let sub = (u64::from(SUB) * ns / (1000 << octave)).saturating_sub(u64::from(SUB));
    1 + (octave * SUB) as usize + (sub as usize).min(SUB as usize - 1)
}

/// The upper end of bucket `i`, ns.
fn upper(i: usize) -> f64 {
    if i == 0 {
        return 1000.0;
    }
    let (octave, sub) = ((i - 1) / SUB as usize, (i - 1) % SUB as usize);
    1000.0 * (octave as f64).exp2() * (1.0 + (sub + 1) as f64 / SUB as f64)
}

impl Histogram {
    fn add(&mut self, ns: u64, bound_ns: u64) {
        let c = &mut self.counts[bucket(ns)];
        *c = c.saturating_add(1);
        self.total += 1;
        self.over += u64::from(ns > bound_ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// The value under which a share `q` of the values lie (a bucket's upper end, at most the
    /// max), ns.
    fn quantile(&self, q: f64) -> f64 {
        let want = (q * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= want {
                return upper(i).min(self.max_ns as f64);
            }
        }
        self.max_ns as f64
    }

    fn quantiles(&self) -> Quantiles {
        if self.total == 0 {
            return Quantiles::default();
        }
        Quantiles {
            copies: self.total,
            p50_ms: self.quantile(0.5) / 1e6,
            p99_ms: self.quantile(0.99) / 1e6,
            max_ms: self.max_ns as f64 / 1e6,
            over_bound: self.over as f64 / self.total as f64,
        }
    }
}

/// A span still growing.
#[derive(Debug, Clone)]
struct OpenSpan {
    first: u32,
    last: u32,
    copies_over: u64,
    windows_late: u64,
    worst_ns: u64,
    /// Stage time in it, ns, from the window its earliest late copy was captured in (at most
    /// [`LOOKBACK_WINDOWS`] before its first; the window before its first at least) to its
    /// last, and the windows that covers.
    stages: [u64; STAGE_COUNT],
    windows: u32,
    /// Stage time and windows since its last window (its if it goes on, else not).
    tail: [u64; STAGE_COUNT],
    tail_windows: u32,
}

/// Follows a live run window by window: see the module's documentation.
#[derive(Debug)]
pub struct EmulationMonitor {
    bound_ns: u64,
    window_ns: u64,
    names: Vec<String>,
    error: Histogram,
    release: Histogram,
    capture: Histogram,
    links: BTreeMap<(usize, usize), Histogram>,
    /// The stage counters at the last window, and the share of each of the last
    /// [`LOOKBACK_WINDOWS`] windows, newest last.
    last_stages: [u64; STAGE_COUNT],
    recent: VecDeque<(u32, [u64; STAGE_COUNT])>,
    windows: u32,
    span: Option<OpenSpan>,
    spans: Vec<EmulationSpan>,
    spans_left_out: u64,
}

impl EmulationMonitor {
    /// For a run of windows of `window_ns` with vehicles `names`, a copy over `bound_ms` counting
    /// as over the bound; `stages` is the counters as the first window opens.
    pub fn new(
        window_ns: u64,
        bound_ms: f64,
        names: Vec<String>,
        stages: [u64; STAGE_COUNT],
    ) -> Self {
        EmulationMonitor {
            bound_ns: (bound_ms * 1e6).round() as u64,
            window_ns,
            names,
            error: Histogram::default(),
            release: Histogram::default(),
            capture: Histogram::default(),
            links: BTreeMap::new(),
            last_stages: stages,
            recent: VecDeque::with_capacity(LOOKBACK_WINDOWS),
            windows: 0,
            span: None,
            spans: Vec::new(),
            spans_left_out: 0,
        }
    }

    /// Window `k` completed: it opened `late` after its due time, the stage counters read
    /// `stages`, and `copies` ended in it. Returns its `/emulation` message when copies ended
    /// in it or it opened later than the bound.
    pub fn window(
        &mut self,
        k: u32,
        late: Duration,
        stages: [u64; STAGE_COUNT],
        copies: &[CopyEnd],
    ) -> Option<EmulationWindow> {
        let delta: [u64; STAGE_COUNT] =
            std::array::from_fn(|i| stages[i].saturating_sub(self.last_stages[i]));
        self.last_stages = stages;
        self.windows += 1;
        let late_ns = late.as_nanos() as u64;
        let mut w = EmulationWindow {
            t_s: k as f64 * self.window_ns as f64 / 1e9,
            window: k,
            opened_late_ms: late_ns as f64 / 1e6,
            ..EmulationWindow::default()
        };
        let (worst, over, captured) = self.count(copies, &mut w);
        w.error_max_ms = worst as f64 / 1e6;
        w.over_bound = over as u32;
        let window_late = late_ns > self.bound_ns;
        if over > 0 || window_late {
            // A new span counts the stages from where its late copies were captured: what held
            // them may have run windows before they were written.
            let since =
                (captured / self.window_ns.max(1)).min(u64::from(k.saturating_sub(1))) as u32;
            let (mut before, mut windows) = ([0u64; STAGE_COUNT], 0);
            if self.span.is_none() {
                for (_, d) in self.recent.iter().filter(|(j, _)| *j >= since) {
                    for (b, x) in before.iter_mut().zip(d) {
                        *b += x;
                    }
                    windows += 1;
                }
            }
            let span = self.span.get_or_insert(OpenSpan {
                first: k,
                last: k,
                copies_over: 0,
                windows_late: 0,
                worst_ns: 0,
                stages: before,
                windows,
                tail: [0; STAGE_COUNT],
                tail_windows: 0,
            });
            for ((s, t), d) in span.stages.iter_mut().zip(&mut span.tail).zip(&delta) {
                *s += std::mem::take(t) + d;
            }
            span.windows += std::mem::take(&mut span.tail_windows) + 1;
            span.copies_over += over;
            span.windows_late += u64::from(window_late);
            span.worst_ns = span.worst_ns.max(worst).max(late_ns);
            span.last = k;
        } else if let Some(span) = &mut self.span {
            for (t, d) in span.tail.iter_mut().zip(&delta) {
                *t += d;
            }
            span.tail_windows += 1;
            let gap = u64::from(k.saturating_sub(span.last)) * self.window_ns;
            if gap >= SPAN_GAP_NS {
                self.close_span();
            }
        }
        if self.recent.len() == LOOKBACK_WINDOWS {
            self.recent.pop_front();
        }
        self.recent.push_back((k, delta));
        (w.copies > 0 || window_late).then_some(w)
    }

    /// Copies that ended after the last window (the run's shutdown), counted with the rest.
    pub fn ended(&mut self, copies: &[CopyEnd]) {
        self.count(copies, &mut EmulationWindow::default());
    }

    /// Adds `copies` to the histograms and `w`; returns the largest error of a delivered copy,
    /// how many were over the bound and the earliest capture time (ns) of those.
    fn count(&mut self, copies: &[CopyEnd], w: &mut EmulationWindow) -> (u64, u64, u64) {
        let (mut worst, mut over, mut captured) = (0u64, 0u64, u64::MAX);
        let bound_ns = self.bound_ns;
        // Copies come in runs of one link: its histogram is looked up when the link changes.
        let mut link: Option<((usize, usize), &mut Histogram)> = None;
        // A copy of generated traffic had no emulator in its path.
        for c in copies {
            let Some(e) = c.emulation else {
                continue;
            };
            self.capture.add(e.capture_lag_ns, bound_ns);
            w.capture_max_ms = w.capture_max_ms.max(e.capture_lag_ns as f64 / 1e6);
            let (Fate::Delivered, Some(dst)) = (c.fate, c.dst) else {
                continue;
            };
            let total = e.total_ns;
            self.error.add(total, bound_ns);
            self.release.add(e.release_late_ns, bound_ns);
            let key = (c.src, dst);
            let h = match link.take() {
                Some((k, h)) if k == key => h,
                _ => self.links.entry(key).or_default(),
            };
            h.add(total, bound_ns);
            link = Some((key, h));
            w.copies += 1;
            w.release_max_ms = w.release_max_ms.max(e.release_late_ns as f64 / 1e6);
            worst = worst.max(total);
            if total > self.bound_ns {
                over += 1;
                captured = captured.min(c.captured_ns);
            }
        }
        (worst, over, captured)
    }

    fn close_span(&mut self) {
        let Some(s) = self.span.take() else {
            return;
        };
        if self.spans.len() >= MAX_SPANS {
            self.spans_left_out += 1;
            return;
        }
        // The stage that rose most above its run-wide mean per window (pacing aside: waiting
        // is what a window does when it has time left).
        let names = Stages::names();
        let windows = f64::from(self.windows.max(1));
        let best = (0..STAGE_COUNT)
            .filter(|&i| names[i] != "pacing_wait")
            .map(|i| {
                let here = s.stages[i] as f64 / f64::from(s.windows.max(1));
                let usual = self.last_stages[i] as f64 / windows;
                (i, here, usual)
            })
            .max_by(|a, b| (a.1 - a.2).total_cmp(&(b.1 - b.2)))
            .filter(|(_, here, usual)| here - usual > 0.0);
        let to_s = |k: u32| k as f64 * self.window_ns as f64 / 1e9;
        self.spans.push(EmulationSpan {
            from_s: to_s(s.first),
            to_s: to_s(s.last),
            copies_over_bound: s.copies_over,
            windows_late: s.windows_late,
            worst_ms: s.worst_ns as f64 / 1e6,
            stage: best.map(|(i, _, _)| names[i].to_owned()),
            stage_ms_per_window: best.map_or(0.0, |b| b.1 / 1e6),
            usual_ms_per_window: best.map_or(0.0, |b| b.2 / 1e6),
        });
    }

    /// The run ended: the summary, with its warning when the p99 error exceeds the bound.
    pub fn finish(mut self) -> EmulationSummary {
        self.close_span();
        let name = |i: usize| self.names.get(i).cloned().unwrap_or_else(|| i.to_string());
        let bound_ms = self.bound_ns as f64 / 1e6;
        let error = self.error.quantiles();
        let warning = (error.p99_ms > bound_ms).then(|| {
            let mut text = format!(
                "emulation added more than the bound of {} ms (network.emulation_bound_ms) to {:.2} % of the packets (p99 {} ms, max {} ms)",
                ms(bound_ms),
                error.over_bound * 100.0,
                ms(error.p99_ms),
                ms(error.max_ms),
            );
            let worst = self.spans.iter().max_by_key(|s| s.copies_over_bound);
            if let Some(s) = worst {
                text += &format!(
                    "; most from {:.3} s to {:.3} s of sim time ({} copies over it",
                    s.from_s, s.to_s, s.copies_over_bound
                );
                match &s.stage {
                    Some(stage) => {
                        text += &format!(
                            "), where the {stage} stage took {} ms per window against {} ms over the run",
                            ms(s.stage_ms_per_window),
                            ms(s.usual_ms_per_window)
                        )
                    }
                    None => text += "; no stage ran long: the process was not scheduled)",
                }
            }
            text
        });
        EmulationSummary {
            bound_ms,
            release: self.release.quantiles(),
            capture: self.capture.quantiles(),
            links: self
                .links
                .iter()
                .map(|(&(src, dst), h)| LinkEmulation {
                    src: name(src),
                    dst: name(dst),
                    error: h.quantiles(),
                })
                .collect(),
            error,
            spans: self.spans,
            spans_left_out: self.spans_left_out,
            warning,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::ledger::Emulation;

    fn copy(src: usize, dst: usize, capture_us: u64, release_us: u64) -> CopyEnd {
        CopyEnd {
            captured_ns: 0,
            src,
            dst: Some(dst),
            bytes: 100,
            fate: Fate::Delivered,
            end_ns: 0,
            corrupted: false,
            emulation: Some(Emulation {
                capture_lag_ns: capture_us * 1000,
                release_late_ns: release_us * 1000,
                total_ns: (capture_us + release_us) * 1000,
            }),
        }
    }

    #[test]
    fn buckets_bound_a_value_within_an_eighth_of_an_octave() {
        for ns in [
            1000u64,
            1500,
            2047,
            2048,
            999_999,
            1_000_000,
            37_123_456,
            10u64.pow(12),
        ] {
            let i = bucket(ns);
            assert!(upper(i) >= ns as f64, "{ns} in {i}");
            assert!(upper(i) <= ns as f64 * 1.126, "{ns}: {}", upper(i));
        }
        assert_eq!(bucket(999), 0);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn every_value_falls_in_the_bucket_whose_ends_enclose_it() {
        let mut values: Vec<u64> = (0..2000).chain([u64::MAX, u64::MAX / 8 + 1]).collect();
        for octave in 0..=OCTAVES {
            for sub in 0..=SUB as u64 {
                let edge = (1000u64 << octave) * (SUB as u64 + sub) / SUB as u64;
                values.extend([edge - 1, edge, edge + 1]);
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 40));
        }
        for ns in values {
            let i = bucket(ns);
            let below = if i == 0 { 0.0 } else { upper(i - 1) };
            assert!(below <= ns as f64, "{ns} in {i}, which starts at {below}");
            assert!(
                i == BUCKETS - 1 || (ns as f64) < upper(i),
                "{ns} in {i}: {}",
                upper(i)
            );
        }
    }

    #[test]
    fn quantiles_per_link_and_overall_and_the_share_over_the_bound() {
        let names = vec!["a".to_owned(), "b".to_owned()];
        let mut m = EmulationMonitor::new(1_000_000, 0.5, names, [0; STAGE_COUNT]);
        let mut copies: Vec<CopyEnd> = (0..98).map(|_| copy(0, 1, 10, 90)).collect();
        copies.push(copy(1, 0, 0, 2000));
        copies.push(copy(1, 0, 0, 3000));
        let w = m
            .window(0, Duration::ZERO, [0; STAGE_COUNT], &copies)
            .unwrap();
        assert_eq!((w.copies, w.over_bound), (100, 2));
        assert_eq!(w.error_max_ms, 3.0);
        let s = m.finish();
        assert_eq!(s.error.copies, 100);
        assert!(
            (0.1..=0.113).contains(&s.error.p50_ms),
            "{}",
            s.error.p50_ms
        );
        assert!((2.0..=2.26).contains(&s.error.p99_ms), "{}", s.error.p99_ms);
        assert_eq!((s.error.max_ms, s.error.over_bound), (3.0, 0.02));
        assert_eq!(s.links.len(), 2);
        assert_eq!((s.links[1].src.as_str(), s.links[1].error.copies), ("b", 2));
        assert!(s.warning.is_some(), "p99 over the bound");
        assert!(s.sentence().contains("99 % of the packets"));
    }

    #[test]
    fn a_late_stretch_is_one_span_naming_the_stage_that_ran_long() {
        let mut m = EmulationMonitor::new(10_000_000, 5.0, vec![], [0; STAGE_COUNT]);
        let physics = Stages::names()
            .iter()
            .position(|n| *n == "physics")
            .unwrap();
        let mut stages = [0u64; STAGE_COUNT];
        for k in 0..3000u32 {
            // Physics takes 1 ms a window, and 400 ms in window 1000.
            stages[physics] += if k == 1000 { 400_000_000 } else { 1_000_000 };
            let (late, mut copies) = match k {
                1001 => (Duration::from_millis(390), vec![copy(0, 1, 0, 380_000)]),
                1002..=1005 => (Duration::from_millis(50), vec![copy(0, 1, 0, 40_000)]),
                _ => (Duration::ZERO, vec![copy(0, 1, 0, 100)]),
            };
            // Each captured in the window before.
            copies[0].captured_ns = u64::from(k.saturating_sub(1)) * 10_000_000;
            m.window(k, late, stages, &copies);
        }
        let s = m.finish();
        assert_eq!(s.spans.len(), 1, "{:?}", s.spans);
        let span = &s.spans[0];
        assert_eq!((span.from_s, span.to_s), (10.01, 10.05));
        assert_eq!((span.copies_over_bound, span.windows_late), (5, 5));
        assert_eq!(span.worst_ms, 390.0);
        assert_eq!(span.stage.as_deref(), Some("physics"));
        assert!(span.stage_ms_per_window > 50.0, "{span:?}");
        // 5 of 3000 copies over: the p99 keeps within the bound, so no warning.
        assert!(s.warning.is_none());
        assert_eq!(s.error.over_bound, 5.0 / 3000.0);
    }

    /// The network simulator stalls 600 ms in window 250; the copies it held are written
    /// windows later (the machine was busy), the first late one in window 253, captured in
    /// 249: the span still names the network simulator, counted from that capture.
    #[test]
    fn a_stall_windows_before_its_late_copies_is_still_the_spans_stage() {
        let mut m = EmulationMonitor::new(10_000_000, 5.0, vec![], [0; STAGE_COUNT]);
        let names = Stages::names();
        let at = |name: &str| names.iter().position(|n| *n == name).unwrap();
        let (net, live) = (at("network_simulator"), at("live_window"));
        let mut stages = [0u64; STAGE_COUNT];
        for k in 0..600u32 {
            stages[net] += if k == 250 { 600_000_000 } else { 50_000 };
            // The live window's work runs a little long after the stall.
            stages[live] += if (251..320).contains(&k) {
                170_000
            } else {
                110_000
            };
            let mut c = copy(0, 1, 0, 100);
            if (253..260).contains(&k) {
                c = copy(0, 1, 0, 600_000);
                c.captured_ns = 249 * 10_000_000;
            }
            m.window(k, Duration::ZERO, stages, &[c]);
        }
        let s = m.finish();
        assert_eq!(s.spans.len(), 1, "{:?}", s.spans);
        assert_eq!(s.spans[0].from_s, 2.53);
        assert_eq!(
            s.spans[0].stage.as_deref(),
            Some("network_simulator"),
            "{:?}",
            s.spans
        );
    }

    #[test]
    fn nothing_late_gives_no_span_and_no_message_for_a_quiet_window() {
        let mut m = EmulationMonitor::new(1_000_000, 0.5, vec![], [0; STAGE_COUNT]);
        assert!(m.window(0, Duration::ZERO, [0; STAGE_COUNT], &[]).is_none());
        assert!(m
            .window(
                1,
                Duration::from_micros(20),
                [0; STAGE_COUNT],
                &[copy(0, 1, 5, 30)]
            )
            .is_some());
        let s = m.finish();
        assert!(s.spans.is_empty() && s.warning.is_none());
        assert_eq!(s.capture.copies, 1);
    }
}
