//! Tokio adapters: the only layer that touches sockets and devices.
pub mod netsim_manager;
pub mod modem_bridge;
