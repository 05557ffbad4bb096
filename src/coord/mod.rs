//! The two coordinators.
//!
//! - The **physics coordinator** owns the clock. For each window k it sends the physics
//!   simulator BEGIN(k), takes the ChannelData of its END(k) (the world at t = k·W) and hands it
//!   to the network coordinator in a NetworkUpdate BEGIN(k); once the network side's END(k)
//!   is in, the window goes to the run's [`Participant`]s in order: the live side and the modem
//!   bridges hand on the packet copies and modem frames that ended meanwhile, the run record
//!   ([`crate::output::Recorder`]) writes them, the ROS 2 layer publishes. The coordinator
//!   itself keeps only the window protocol and the pacing ([`participant`] says what a
//!   participant sees and returns; [`participants`] holds those a scenario brings).
//!   Physics window k+1 runs while the network side works on window k; the physics side is
//!   therefore at most one window ahead and the network side never a window behind.
//! - The **network coordinator** answers the physics coordinator's BEGIN(k) after running
//!   window k with its network simulator: it forwards the BEGIN (adding the packets it
//!   captured) and returns the simulator's END. It is a [`Service`], so it runs in the physics
//!   coordinator's process or as its own process behind ZeroMQ.
//!
//! Both are built for a scenario in one place, [`assemble`].
//!
//! Every exchange is bounded by the scenario's `simulators.timeout_ms` (window 0 and the
//! connection itself by `startup_timeout_ms`, so a peer may take time to start); a peer that
//! misses it, disconnects or answers out of turn ends the run with an error naming it.

pub mod assemble;
mod network;
pub mod participant;
pub mod participants;
mod physics;
mod simulators;

pub use crate::output::summary::RunReport;
pub use assemble::{network_coordinator, physics_coordinator, NetworkSide};
pub use network::{NetworkCoordinator, SharedAgents};
pub use participant::{Ended, Finishing, Participant, RunEnd, WindowOpen, WindowView};
pub use physics::PhysicsCoordinator;
pub use simulators::{
    embedded_physics, network_simulator, physics_simulator, startup_timeout,
    THREADED_PHYSICS_VEHICLES,
};
