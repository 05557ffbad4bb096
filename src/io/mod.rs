//! The operating-system side: tokio tasks on sockets and devices. Live traffic (Linux, root):
//! network namespaces ([`netns`]), TUN interfaces ([`tun`]) and the tasks that move packets
//! between them and the packet logic in [`crate::net`] ([`live`]); the NETSIM manager's TCP
//! server ([`netsim_manager`]).
pub mod live;
pub mod netns;
pub mod netsim_manager;
pub mod tun;
