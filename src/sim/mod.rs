//! The embedded simulators: request → response state machines behind the window protocol.
//! Each runs inside a coordinator's process ([`crate::lockstep::Link::local`]) or as its own
//! process behind a ZeroMQ REP socket or a ROS-NetSim socket (`cosim physics-sim`,
//! `cosim network-sim`).
pub mod acoustic_paths;
pub mod air;
pub mod flows;
pub mod followed;
pub mod network;
pub mod passthrough;
pub mod physics;
pub mod streams;
