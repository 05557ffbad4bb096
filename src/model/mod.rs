//! The pure simulation: no I/O, time passed in.
pub mod acoustic;
pub mod channel;
pub mod link;
pub mod motion;
pub mod terrain;
