//! A live viewer client's text message (Foxglove WebSocket protocol): never a panic; what it
//! accepts is within its bounds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::wire::foxglove_ws::{ClientOp, MAX_SUBSCRIPTIONS};

fuzz_target!(|data: &[u8]| {
    match ClientOp::parse(data) {
        Ok(ClientOp::Subscribe(s)) => assert!(s.len() <= MAX_SUBSCRIPTIONS),
        Ok(ClientOp::Unsubscribe(s)) => assert!(s.len() <= MAX_SUBSCRIPTIONS),
        Err(e) => assert!(!e.is_empty()),
    }
});
