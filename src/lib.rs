//! netsim_cosim: robots and the networks between them, co-simulated in lockstep.
//!
//! Layers, each in one place, bottom first; a module uses only its own layer and those before
//! it (`tests/offline/architecture.rs` enforces the order):
//! - [`clock`]: sim time, the windows of a run, pacing (pure).
//! - [`wire`]: every external format as pure code (protobuf messages and their checked views,
//!   IP headers, pcap, NMEA sentences, NETSIM lines).
//! - [`config`]: the scenario file, typed and validated.
//! - [`model`]: the pure simulation (terrain, vehicles, channel extraction, link and acoustic
//!   models, NETSIM manager rules, the modem emulator); time is an argument.
//! - [`net`]: live vehicle traffic as pure logic (capture, release, ledger).
//! - [`lockstep`]: the lockstep window protocol and the transports that carry it.
//! - [`sim`]: the embedded simulators, as request/response state machines.
//! - [`output`]: the run record, the per-window timeline on request, and the report.
//! - [`io`]: the tokio side (namespaces, TUN interfaces, TCP servers).
//! - [`coord`]: the physics and network coordinators.
//! - [`ros`]: the ROS 2 layer (feature `ros`).
//! - [`cli`]: what the thin binaries share.
pub mod cli;
pub mod clock;
pub mod config;
pub mod coord;
pub mod io;
pub mod lockstep;
pub mod model;
pub mod net;
pub mod output;
pub mod ros;
pub mod sim;
pub mod wire;
