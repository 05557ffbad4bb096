//! The per-window ChannelData timeline (on request):
//! - `timeline.jsonl`: one line per pair per window, the ChannelData the network side used:
//!   `{"window","t_s","a","b","los","distance_m","hops","loss_db","path":[[x,y,z,loss_db],..]}`.
//!   Written from the physics END messages only, so the same scenario and seed give the same
//!   bytes whatever transport carried them.
//! - `summary.json`: counts per pair (LOS/NLOS windows, transitions) and run figures.

use crate::wire::channel::ChannelView;
use serde::Serialize;
use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};

#[derive(Serialize)]
struct Line<'a> {
    window: u32,
    t_s: f64,
    a: &'a str,
    b: &'a str,
    los: bool,
    distance_m: f64,
    hops: u32,
    loss_db: f64,
    path: Vec<[f64; 4]>,
}

/// Per-pair totals over a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairSummary {
    pub a: String,
    pub b: String,
    pub los_windows: u64,
    pub nlos_windows: u64,
    pub transitions: u64,
    #[serde(skip)]
    last_los: Option<bool>,
}

pub struct Timeline {
    names: Vec<String>,
    writer: BufWriter<File>,
    path: PathBuf,
    pub pairs: Vec<PairSummary>,
}

impl Timeline {
    pub fn create(dir: &Path, names: Vec<String>) -> std::io::Result<Timeline> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("timeline.jsonl");
        let writer = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        let mut pairs = Vec::new();
        for i in 0..names.len() {
            for j in i + 1..names.len() {
                pairs.push(PairSummary {
                    a: names[i].clone(),
                    b: names[j].clone(),
                    los_windows: 0,
                    nlos_windows: 0,
                    transitions: 0,
                    last_los: None,
                });
            }
        }
        Ok(Timeline { names, writer, path, pairs })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records window `window` (starting at `t_s`); `channel` was checked against the same
    /// vehicles this timeline names.
    pub fn record(&mut self, window: u32, t_s: f64, channel: &ChannelView) -> std::io::Result<()> {
        let n = self.names.len();
        for p in channel.paths() {
            let line = Line {
                window,
                t_s,
                a: &self.names[p.a],
                b: &self.names[p.b],
                los: p.los,
                distance_m: channel.distance_m(p.a, p.b),
                hops: p.hops(),
                loss_db: p.loss_db(),
                path: p.points(),
            };
            serde_json::to_writer(&mut self.writer, &line)?;
            self.writer.write_all(b"\n")?;
            // Pair index of (a, b) with a < b in (0,1),(0,2).. order.
            let s = &mut self.pairs[p.a * n - p.a * (p.a + 1) / 2 + (p.b - p.a - 1)];
            if p.los { s.los_windows += 1 } else { s.nlos_windows += 1 }
            if s.last_los.is_some_and(|l| l != p.los) {
                s.transitions += 1;
            }
            s.last_los = Some(p.los);
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<Vec<PairSummary>> {
        self.writer.flush()?;
        Ok(self.pairs)
    }
}
