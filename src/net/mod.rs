//! Live vehicle traffic as pure logic (no I/O; time is an argument): the address book
//! ([`addr`]), the packet path through the windows ([`traffic`]) and the ledger of every copy
//! ([`ledger`]). The TUN side is [`crate::io`]; sim ↔ wall time is [`crate::clock`].
pub mod addr;
pub mod ledger;
pub mod traffic;
