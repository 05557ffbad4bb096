//! The run record as a participant: every window with the packet copies and modem frames the
//! participants before it produced, handed to the record's writer thread; at the end, the
//! recorder back, the programs, the last copies and frames, the pair counts, the programs' last
//! metrics and, once the report is complete, `/summary`.

use crate::clock::stages::Stage;
use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowView};
use crate::output::record_queue::{QueuedWindow, RecordQueue};
use crate::output::summary::RunReport;
use crate::output::Recorder;
use anyhow::Context;
use std::path::PathBuf;

/// Writes the run record ([`Recorder`]) on its writer thread ([`RecordQueue`]): the window's
/// part on the lockstep path is handing it over.
pub struct RecordParticipant {
    writing: Writing,
    path: PathBuf,
    vehicles: usize,
    window_ns: u64,
    /// The emulated modems' vehicle names, in modem order (what a frame's `from`/`to` index).
    modem_names: Vec<String>,
}

/// Where the recorder is: here before the first window and after the last, on its writer
/// thread in between.
enum Writing {
    Here(Recorder),
    Queued(RecordQueue),
    Gone,
}

impl RecordParticipant {
    pub fn new(
        recorder: Recorder,
        vehicles: usize,
        window_ns: u64,
        modem_names: Vec<String>,
    ) -> Self {
        RecordParticipant {
            path: recorder.path().to_path_buf(),
            writing: Writing::Here(recorder),
            vehicles,
            window_ns,
            modem_names,
        }
    }

    fn writing(&self) -> String {
        format!("writing {}", self.path.display())
    }

    /// The queue, its writer started if it was not yet.
    fn queue(&mut self) -> anyhow::Result<Option<&mut RecordQueue>> {
        self.writing = match std::mem::replace(&mut self.writing, Writing::Gone) {
            // The writer's thread behind the run's own: waking it never takes a window's turn.
            Writing::Here(r) => Writing::Queued(
                RecordQueue::spawn(
                    r,
                    self.vehicles,
                    self.modem_names.clone(),
                    self.window_ns,
                    crate::io::os::timer::background,
                )
                .context("starting the record's writer thread")?,
            ),
            other => other,
        };
        Ok(match &mut self.writing {
            Writing::Queued(q) => Some(q),
            _ => None,
        })
    }

    /// The recorder back from its writer, everything queued written; what the queue saw goes
    /// into the report.
    fn here(&mut self, report: &mut RunReport) -> anyhow::Result<Option<&mut Recorder>> {
        self.writing = match std::mem::replace(&mut self.writing, Writing::Gone) {
            Writing::Queued(q) => {
                let (r, seen) = q.drain().with_context(|| self.writing())?;
                if seen.waits > 0 {
                    tracing::warn!(
                        "the run waited {:.3} s in all for the record's writer ({} hand-overs found its queue of {} windows full)",
                        seen.waited_s,
                        seen.waits,
                        seen.capacity_windows
                    );
                }
                report.record_queue = Some(seen);
                Writing::Here(r)
            }
            other => other,
        };
        Ok(match &mut self.writing {
            Writing::Here(r) => Some(r),
            _ => None,
        })
    }
}

impl Participant for RecordParticipant {
    fn stage(&self) -> Stage {
        Stage::Record
    }

    fn prepare(&mut self) -> anyhow::Result<()> {
        self.queue().map(|_| ())
    }

    fn window(&mut self, view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        let context = self.writing();
        let Some(q) = self.queue()? else {
            return Ok(());
        };
        q.push(QueuedWindow {
            window: view.open.window,
            start_ns: view.open.start_ns,
            channel: view.open.decoded.clone(),
            network_end: view.network_end.clone(),
            copy_ends: ended.copy_ends.clone(),
            frames: ended.frames.clone(),
            metrics: ended.metrics.clone(),
            emulation: ended.emulation.clone(),
        })
        .context(context)
    }

    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        let result = (|| {
            let context = self.writing();
            let modems = self.modem_names.clone();
            let Some(r) = self.here(end.report)? else {
                return Ok(());
            };
            r.programs(&end.report.programs)
                .with_context(|| context.clone())?;
            r.packets(&end.ended.copy_ends)
                .with_context(|| context.clone())?;
            r.metrics(&end.ended.metrics)
                .with_context(|| context.clone())?;
            if let Some(m) = &end.report.modems {
                r.modem_frames(&m.entries[m.drained..], &modems)
                    .with_context(|| context.clone())?;
            }
            end.report.pairs = r.pairs();
            Ok(())
        })();
        Box::pin(std::future::ready(result))
    }

    fn report(&mut self, report: &mut RunReport) -> anyhow::Result<()> {
        let Writing::Here(r) = std::mem::replace(&mut self.writing, Writing::Gone) else {
            return Ok(());
        };
        let path = r.path().to_path_buf();
        report.record = Some(path.clone());
        report.timeline = r.timeline_path();
        let files = r
            .finish(&serde_json::to_value(&*report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        report.record = Some(files.record);
        Ok(())
    }
}
