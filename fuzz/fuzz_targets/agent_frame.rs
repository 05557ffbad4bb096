//! A capture agent's connection from either end: the input's first byte is the scenario's
//! vehicle count, the rest one frame. It goes to every decoder (Hello, Challenge, Proof, and a
//! sealed frame's body both ways) and to `Session::open` of one known session, which must refuse
//! it (no input forges the MAC); sealed by the peer, it opens to itself. Whatever decodes
//! re-encodes to bytes that decode to the same message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::wire::agent::{
    decode_challenge, decode_from_agent, decode_hello, decode_proof, decode_to_agent,
    encode_from_agent, encode_to_agent, Role, Secret, Session,
};
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Some((&vehicles, frame)) = data.split_first() else {
        return;
    };
    let vehicles = usize::from(vehicles);
    if let Ok(m) = decode_hello(frame) {
        assert_eq!(decode_hello(&m.encode_to_vec()), Ok(m));
    }
    if let Ok(m) = decode_challenge(frame) {
        assert_eq!(decode_challenge(&m.encode_to_vec()), Ok(m));
    }
    if let Ok(m) = decode_proof(frame) {
        assert_eq!(decode_proof(&m.encode_to_vec()), Ok(m));
    }
    if let Ok(b) = decode_to_agent(frame, vehicles) {
        assert_eq!(
            decode_to_agent(&encode_to_agent(b.clone()), vehicles),
            Ok(b)
        );
    }
    if let Ok(b) = decode_from_agent(frame, vehicles) {
        assert_eq!(
            decode_from_agent(&encode_from_agent(b.clone()), vehicles),
            Ok(b)
        );
    }
    let secret = Secret::from_bytes([7; 32]);
    let session = |me| Session::new(&secret, me, "hostb", &[1; 32], &[2; 32]);
    let (mut coordinator, mut agent) = (session(Role::Coordinator), session(Role::Agent));
    assert!(coordinator.open(frame).is_err());
    assert!(agent.open(frame).is_err());
    let sealed = agent.seal(frame);
    assert_eq!(coordinator.open(&sealed), Ok(frame));
    assert!(coordinator.open(&sealed).is_err());
});
