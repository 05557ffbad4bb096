//! The operating system side of live traffic (Linux, root): network namespaces
//! ([`netns`]), TUN interfaces ([`tun`]) and the tokio tasks that move packets between them
//! and the packet logic in [`crate::net`] ([`live`]).
pub mod live;
pub mod netns;
pub mod tun;
