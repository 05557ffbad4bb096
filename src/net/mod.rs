//! Live vehicle traffic as pure logic (no I/O; time is an argument): the address book
//! ([`addr`]), the packet path through the windows ([`engine`]), the ledger of every copy
//! ([`ledger`]) and the sim ↔ wall clock mapping ([`pacing`]). The TUN side is [`crate::io`].
pub mod addr;
pub mod engine;
pub mod ledger;
pub mod pacing;
