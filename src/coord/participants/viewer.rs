//! The live viewer server as a participant: it is fed by the run record's writer (a
//! [`RecordTap`](crate::output::record::RecordTap)), so its part here is the end: what it served
//! goes into the report (`viewer`), and once `/summary` is written the server sends each client
//! what is queued for it (up to a second) and closes.

use crate::coord::participant::{Finishing, Participant, RunEnd};
use crate::io::servers::viewer::Viewer;
use crate::output::summary::RunReport;
use std::sync::Arc;

/// Reports and stops the live viewer server ([`Viewer`]); added after the recorder.
pub struct ViewerParticipant {
    viewer: Arc<Viewer>,
}

impl ViewerParticipant {
    pub fn new(viewer: Arc<Viewer>) -> Self {
        ViewerParticipant { viewer }
    }
}

impl Participant for ViewerParticipant {
    fn finish<'a>(&'a mut self, end: RunEnd<'a>) -> Finishing<'a> {
        end.report.viewer = Some(self.viewer.summary());
        Box::pin(std::future::ready(Ok(())))
    }

    fn report(&mut self, _report: &mut RunReport) -> anyhow::Result<()> {
        let viewer = self.viewer.clone();
        tokio::spawn(async move { viewer.stop(std::time::Duration::from_secs(1)).await });
        Ok(())
    }
}
