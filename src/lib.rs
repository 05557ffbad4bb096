//! netsim_cosim: robots and the networks between them, co-simulated in lockstep.
//!
//! Layers, each in one place, data flowing one way:
//! - [`wire`]: every external format as pure code (protobuf messages, later NMEA, NETSIM lines, IP).
//! - [`config`]: the scenario file, typed and validated.
//! - [`model`]: the pure simulation (terrain, vehicles, channel extraction); time is an argument.
//! - [`sim`]: the embedded simulators, as request/response state machines.
//! - [`sync`]: the lockstep window protocol and its transports (in-process, ZeroMQ).
pub mod config;
pub mod model;
pub mod wire;
pub mod sync;
pub mod sim;
pub mod output;
pub mod coord;
pub mod cli;
pub mod ros;
