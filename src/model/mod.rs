//! The pure simulation: no I/O, time passed in.
pub mod motion;
pub mod channel;
pub mod terrain;
