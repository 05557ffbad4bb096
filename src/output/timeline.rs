//! The per-window ChannelData timeline (on request: `record.timeline_jsonl` or `--timeline`):
//! `timeline.jsonl`, one line per pair per window, the ChannelData the network side used:
//! `{"window","t_s","a","b","los","distance_m","hops","loss_db","path":[[x,y,z,loss_db],..]}`.
//! Written from the physics END messages only, so the same scenario and seed give the same
//! bytes whatever transport carried them. Large (one line per pair per window); the run record
//! ([`super::recorder`]) is what every run writes.

use crate::wire::channel::ChannelView;
use serde::Serialize;
use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};

/// File name of the timeline in a run folder.
pub const TIMELINE_FILE: &str = "timeline.jsonl";

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

pub struct Timeline {
    names: Vec<String>,
    writer: BufWriter<File>,
    path: PathBuf,
}

impl Timeline {
    pub fn create(dir: &Path, names: Vec<String>) -> std::io::Result<Timeline> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(TIMELINE_FILE);
        let writer = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        Ok(Timeline {
            names,
            writer,
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes window `window` (starting at `t_s`); `channel` was checked against the same
    /// vehicles this timeline names (paths naming others are skipped).
    pub fn record(&mut self, window: u32, t_s: f64, channel: &ChannelView) -> std::io::Result<()> {
        for p in channel.paths() {
            let (Some(a), Some(b)) = (self.names.get(p.a), self.names.get(p.b)) else {
                continue;
            };
            let line = Line {
                window,
                t_s,
                a,
                b,
                los: p.los,
                distance_m: channel.distance_m(p.a, p.b),
                hops: p.hops(),
                loss_db: p.loss_db(),
                path: p.points(),
            };
            serde_json::to_writer(&mut self.writer, &line)?;
            self.writer.write_all(b"\n")?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<PathBuf> {
        self.writer.flush()?;
        Ok(self.path)
    }
}
