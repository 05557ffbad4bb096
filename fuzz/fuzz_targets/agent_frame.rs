//! A capture agent's message from either end: the input's first byte is the scenario's
//! vehicle count, the rest one frame of the secure channel. It goes to every decoder (Hello,
//! and the messages both ways); whatever decodes re-encodes to bytes that decode to the same
//! message. The messages are decoded from `Bytes`, as a connection does, so that their packets
//! are views into the frame. (The channel's own handshake and records: the `secure_channel`
//! target.)
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::wire::agent::{
    decode_from_agent, decode_hello, decode_to_agent, encode_from_agent, encode_to_agent,
};
use prost::bytes::Bytes;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Some((&vehicles, frame)) = data.split_first() else {
        return;
    };
    let vehicles = usize::from(vehicles);
    if let Ok(m) = decode_hello(frame) {
        assert_eq!(decode_hello(&m.encode_to_vec()), Ok(m));
    }
    let frame = Bytes::copy_from_slice(frame);
    if let Ok(b) = decode_to_agent(frame.clone(), vehicles) {
        assert_eq!(
            decode_to_agent(Bytes::from(encode_to_agent(b.clone())), vehicles),
            Ok(b)
        );
    }
    if let Ok(b) = decode_from_agent(frame, vehicles) {
        assert_eq!(
            decode_from_agent(Bytes::from(encode_from_agent(b.clone())), vehicles),
            Ok(b)
        );
    }
});
