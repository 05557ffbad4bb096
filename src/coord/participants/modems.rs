//! The modem bridges (`acoustic_modems`) as a participant: each window's ChannelData as it
//! opens, the frames decided meanwhile once it completed, and the frame ledger at the end.

use crate::clock::stages::Stage;
use crate::coord::participant::{Ended, Finishing, Participant, RunEnd, WindowOpen, WindowView};
use crate::io::servers::modem_bridge::ModemBridges;

/// Feeds the [`ModemBridges`] and hands on the frames they decided.
pub struct ModemParticipant {
    bridges: Option<ModemBridges>,
    /// Whether the decided frames are handed on every window (to the recorder).
    collect: bool,
}

impl ModemParticipant {
    /// `collect`: hand on the frames decided in each window (in [`Ended::frames`]).
    pub fn new(bridges: ModemBridges, collect: bool) -> Self {
        ModemParticipant {
            bridges: Some(bridges),
            collect,
        }
    }
}

impl Participant for ModemParticipant {
    fn stage(&self) -> Stage {
        Stage::Record
    }

    fn open(&mut self, w: &WindowOpen<'_>) -> anyhow::Result<()> {
        if let Some(b) = &mut self.bridges {
            b.on_window(w.window, w.start_ns, w.opened, &w.channel);
        }
        Ok(())
    }

    fn window(&mut self, _view: &WindowView<'_>, ended: &mut Ended) -> anyhow::Result<()> {
        if let (true, Some(b)) = (self.collect, &mut self.bridges) {
            b.drain_frames(&mut ended.frames);
        }
        Ok(())
    }

    /// The report's `modems`; the frames not handed on yet are its `entries[drained..]`.
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        end.report.modems = self.bridges.take().map(|b| b.finish(end.end_ns));
        Box::pin(std::future::ready(Ok(())))
    }
}
