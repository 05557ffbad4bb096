//! The pure simulation: no I/O, time passed in.
pub mod motion;
