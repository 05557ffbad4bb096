//! The pure simulation: no I/O, time passed in.
pub mod geo;
pub mod motion;
pub mod netsim;
pub mod channel;
pub mod terrain;
