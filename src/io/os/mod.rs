//! The operating system's parts the run uses: network namespaces ([`netns`]), TUN interfaces
//! ([`tun`]), what `/proc` says of a process ([`procfs`]), sleeping until an instant with
//! sub-millisecond precision ([`timer`]), children that die with this process ([`child`]), and
//! a run without root in a user namespace of its own ([`userns`]).
pub mod child;
pub mod netns;
pub mod procfs;
pub mod timer;
pub mod tun;
pub mod userns;
