//! The tests of the default build whose runs pace windows to the wall clock with live traffic
//! and hold it to the clock: vehicles in network namespaces behind TUN devices (root), capture
//! agents across a simulated LAN, containers, runs without root, programs, ns-3 live, the
//! emulated modems and the AUV interface against clients on real sockets, the soak, a campaign
//! through a one-node Slurm, the cosim container image, and the book's tutorials run as a reader runs them. A paced run measured
//! beside another would measure the other, so they run one at a time:
//! `cargo test --test live -- --test-threads=1` (as `scripts/test` runs them); one module with
//! e.g. `cargo test --test live agents:: -- --test-threads=1`.

#[path = "../book_commands/mod.rs"]
mod book_commands;
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
#[path = "../ros_common/mod.rs"]
mod ros_common;

mod agents;
mod auv;
mod containers;
mod emulation;
mod image;
mod live;
mod modem;
mod ns3;
mod programs;
mod rootless;
mod slurm;
mod soak;
mod tutorials;
