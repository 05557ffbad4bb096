//! netsim_cosim: robots and the networks between them, co-simulated in lockstep.
//!
//! Layers, each in one place, data flowing one way:
//! - [`wire`]: every external format as pure code (protobuf messages, IP headers, pcap, NMEA
//!   sentences, NETSIM lines).
//! - [`config`]: the scenario file, typed and validated.
//! - [`model`]: the pure simulation (terrain, vehicles, channel extraction, link and acoustic
//!   models, NETSIM manager rules); time is an argument.
//! - [`net`]: live vehicle traffic as pure logic (capture, release, ledger).
//! - [`sim`]: the embedded simulators, as request/response state machines.
//! - [`sync`]: the lockstep window protocol and its transports (in-process, ZeroMQ, ROS-NetSim).
//! - [`coord`]: the physics and network coordinators; [`output`]: timeline and summary.
//! - [`io`]: the tokio side (namespaces, TUN interfaces, TCP servers).
//! - [`cli`]: what the thin binaries share.
pub mod cli;
pub mod config;
pub mod coord;
pub mod io;
pub mod model;
pub mod net;
pub mod output;
pub mod ros;
pub mod sim;
pub mod sync;
pub mod wire;
