//! The participants a scenario brings to its run (see [`super::participant`]): each adapts one
//! `io` or `output` type, which cannot name the coordinator's layer, to [`super::Participant`].
//! [`super::assemble::physics_coordinator`] adds them in this order: programs, nav source,
//! live copies, generated traffic, modem bridges, report parts (acoustic paths, 802.11 media), recorder (the
//! recorder writes what the ones before it produced),
//! live viewer (it counts what it served once the recorder has written the run's end).
//!
//! Adding a participant (a live viewer, a remote agent) is one file here (or in a layer above,
//! as the ROS 2 publishers and the progress bar are) and one
//! [`super::PhysicsCoordinator::with_participant`] call.

mod flows;
mod live;
mod modems;
mod nav;
mod programs;
mod progress;
mod record;
mod report_part;
mod viewer;

pub use flows::FlowParticipant;
pub use live::LiveParticipant;
pub use modems::ModemParticipant;
pub use nav::NavParticipant;
pub use programs::ProgramParticipant;
pub use progress::ProgressLog;
pub use record::RecordParticipant;
pub use report_part::ReportPart;
pub use viewer::ViewerParticipant;
