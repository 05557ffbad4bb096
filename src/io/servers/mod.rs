//! What a run serves: the NETSIM manager ([`netsim_manager`]) and the modem bridges
//! ([`modem_bridge`]) of the acoustic front, and the live viewer over the Foxglove WebSocket
//! protocol ([`viewer`]). Each binds loopback unless the scenario says otherwise.
pub mod modem_bridge;
pub mod netsim_manager;
pub mod viewer;
