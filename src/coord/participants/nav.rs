//! The NETSIM manager as a participant: the fixes it accepted go into the next physics BEGIN.

use crate::coord::participant::Participant;
use crate::io::servers::netsim_manager::NavSource;
use crate::wire::proto::SetPose;

/// Imposes the [`NavSource`]'s fixes on the physics simulator.
pub struct NavParticipant(NavSource);

impl NavParticipant {
    pub fn new(nav: NavSource) -> Self {
        NavParticipant(nav)
    }
}

impl Participant for NavParticipant {
    fn poses(&mut self, into: &mut Vec<SetPose>) {
        let fixes = self.0.take();
        if into.is_empty() {
            *into = fixes;
        } else {
            into.extend(fixes);
        }
    }
}
