//! The run record as a participant: every window with the packet copies and modem frames the
//! participants before it produced, at the end the programs, the last copies and frames, the
//! pair counts, the programs' last metrics and, once the report is complete, `/summary`.

use crate::clock::stages::Stage;
use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowView};
use crate::output::summary::RunReport;
use crate::output::Recorder;
use anyhow::Context;

/// Writes the run record ([`Recorder`]).
pub struct RecordParticipant {
    recorder: Option<Recorder>,
    /// The emulated modems' vehicle names, in modem order (what a frame's `from`/`to` index).
    modem_names: Vec<String>,
}

impl RecordParticipant {
    pub fn new(recorder: Recorder, modem_names: Vec<String>) -> Self {
        RecordParticipant {
            recorder: Some(recorder),
            modem_names,
        }
    }
}

fn writing(r: &Recorder) -> String {
    format!("writing {}", r.path().display())
}

impl Participant for RecordParticipant {
    fn stage(&self) -> Stage {
        Stage::Record
    }

    fn window(&mut self, view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        let Some(r) = &mut self.recorder else {
            return Ok(());
        };
        r.window(
            view.open.window,
            view.open.start_ns,
            &view.open.channel,
            view.network_end,
        )
        .with_context(|| writing(r))?;
        r.packets(&ended.copy_ends).with_context(|| writing(r))?;
        if !ended.frames.is_empty() {
            r.modem_frames(&ended.frames, &self.modem_names)
                .with_context(|| writing(r))?;
        }
        if !ended.metrics.is_empty() {
            r.metrics(&ended.metrics).with_context(|| writing(r))?;
        }
        if let Some(w) = &ended.emulation {
            r.emulation(w).with_context(|| writing(r))?;
        }
        Ok(())
    }

    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        let Some(r) = &mut self.recorder else {
            return Box::pin(std::future::ready(Ok(())));
        };
        let result = (|| {
            r.programs(&end.report.programs)
                .with_context(|| writing(r))?;
            r.packets(&end.ended.copy_ends)
                .with_context(|| writing(r))?;
            r.metrics(&end.ended.metrics).with_context(|| writing(r))?;
            if let Some(m) = &end.report.modems {
                r.modem_frames(&m.entries[m.drained..], &self.modem_names)
                    .with_context(|| writing(r))?;
            }
            end.report.pairs = r.pairs();
            Ok(())
        })();
        Box::pin(std::future::ready(result))
    }

    fn report(&mut self, report: &mut RunReport) -> anyhow::Result<()> {
        let Some(r) = self.recorder.take() else {
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
