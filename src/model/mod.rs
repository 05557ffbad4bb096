//! The pure simulation: no I/O, time passed in.
pub mod acoustic;
pub mod auv;
pub mod beam;
pub mod camera;
pub mod channel;
pub mod fate;
pub mod link;
pub mod medium;
pub mod modem;
pub mod motion;
pub mod netsim;
pub mod ns3;
pub mod pose;
pub mod sound_speed;
pub mod terrain;
pub mod wifi;
pub mod wifi_medium;
