//! What a run leaves in its output folder:
//! - `timeline.jsonl`: one line per pair per window, the ChannelData the network side used:
//!   `{"window","t_s","a","b","los","distance_m","hops","loss_db","path":[[x,y,z,loss_db],..]}`.
//!   Written from the physics END messages only, so the same scenario and seed give the same
//!   bytes whatever transport carried them.
//! - `summary.json`: counts per pair (LOS/NLOS windows, transitions) and run figures.

use crate::wire::proto::ChannelData;
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

    /// Records window `window` (starting at `t_s`); the ChannelData must name known nodes.
    pub fn record(&mut self, window: u32, t_s: f64, channel: &ChannelData) -> Result<(), String> {
        let nodes = channel.node_list.len() / 7;
        if channel.node_list.len() % 7 != 0 || nodes != self.names.len() {
            return Err(format!(
                "ChannelData has {} node_list values; expected 7 per vehicle for {} vehicles",
                channel.node_list.len(),
                self.names.len()
            ));
        }
        for p in &channel.path_details {
            let (&[a, b], &[hops]) = (p.ids.as_slice(), p.num_hops.as_slice()) else {
                return Err(format!("PathDetails with ids {:?} and num_hops {:?}: expected a pair and one path", p.ids, p.num_hops));
            };
            let (a, b) = (a as usize, b as usize);
            if a >= b || b >= nodes || p.hop_points.len() != 4 * hops as usize {
                return Err(format!("PathDetails ids [{a}, {b}] with {hops} hops and {} hop values is inconsistent", p.hop_points.len()));
            }
            let pos = |i: usize| [channel.node_list[7 * i], channel.node_list[7 * i + 1], channel.node_list[7 * i + 2]];
            let (pa, pb) = (pos(a), pos(b));
            let distance_m = ((pa[0] - pb[0]).powi(2) + (pa[1] - pb[1]).powi(2) + (pa[2] - pb[2]).powi(2)).sqrt();
            let path: Vec<[f64; 4]> = p.hop_points.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
            let line = Line {
                window,
                t_s,
                a: &self.names[a],
                b: &self.names[b],
                los: p.los,
                distance_m,
                hops,
                loss_db: path.iter().map(|h| h[3]).sum(),
                path,
            };
            serde_json::to_writer(&mut self.writer, &line).map_err(|e| e.to_string())?;
            self.writer.write_all(b"\n").map_err(|e| e.to_string())?;
            // Pair index of (a, b) with a < b in (0,1),(0,2).. order.
            let n = nodes;
            let idx = a * n - a * (a + 1) / 2 + (b - a - 1);
            let s = &mut self.pairs[idx];
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
