//! The operating-system side: tokio tasks on sockets, devices and processes, in four rooms:
//! - [`os`]: the operating system's parts — network namespaces, TUN interfaces, `/proc`, timers
//!   precise to well under a millisecond, children that die with this process, a run without
//!   root in a user namespace of its own;
//! - [`simulators`]: the simulators that are not in-process state machines — the ns-3 adapter
//!   as a child process, the ZeroMQ AUV simulator interface served from the embedded physics and
//!   followed as an external physics simulator, Gazebo through ros_gz_bridge (feature `gazebo`);
//! - [`servers`]: what the run serves to programs and people — the NETSIM manager and the modem
//!   bridges of the acoustic front, the live viewer;
//! - [`traffic`]: the vehicles' live traffic — their TUN interfaces feeding the packet logic of
//!   [`crate::net`], on this machine and through capture agents on others;
//! - [`programs`]: the programs a scenario starts, and the metrics files they report values in.
pub mod os;
pub mod programs;
pub mod servers;
pub mod simulators;
pub mod traffic;
