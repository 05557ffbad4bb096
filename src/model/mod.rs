//! The pure simulation: no I/O, time passed in.
<<<<<<< HEAD
pub mod geo;
pub mod motion;
pub mod netsim;
=======
pub mod acoustic;
>>>>>>> links
pub mod channel;
pub mod link;
pub mod motion;
pub mod terrain;
