//! Vehicles on other machines: the network coordinator's side ([`hub`]) and the capture agent
//! that owns a machine's vehicles ([`agent`]), over one authenticated TCP connection each
//! ([`conn`]; the messages and their sealing are [`crate::wire::agent`]), authenticated by the
//! run's secret ([`key`]).

pub mod agent;
pub mod conn;
pub mod hub;
pub mod key;
