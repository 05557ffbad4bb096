//! NETSIM manager lines: framing a byte stream into bounded lines (whole and in chunks, with
//! the same result), each line's preamble, name and base64, the request inside it decoded with
//! its `required` fields checked, and the manager's rules deciding on it
//! (`config/netsim_manager.yaml`), accepted fixes turned into the poses set on the vehicles.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::geo::LocalFrame;
use netsim_cosim::model::netsim::{nav_to_pose, Rules};
use netsim_cosim::wire::netsim_line::{self, LineError, LineReader};
use netsim_cosim::wire::proto::{decode_checked, netsim::NetSimManagerRequest, Named};
use std::net::{IpAddr, Ipv4Addr};

fuzz_target!(|data: &[u8]| {
    let mut whole: Vec<Result<Vec<u8>, LineError>> = Vec::new();
    LineReader::new().feed(data, |l| whole.push(l.map(|x| x.to_vec())));
    let mut chunked = Vec::new();
    let mut reader = LineReader::new();
    for chunk in data.chunks(7) {
        reader.feed(chunk, |l| chunked.push(l.map(|x| x.to_vec())));
    }
    assert_eq!(whole, chunked);

    let s = &netsim_cosim_fuzz::netsim_manager().scenario;
    let rules = Rules::new(s).expect("the scenario has a manager");
    let frame = LocalFrame::new(&s.world.origin);
    for line in whole.iter().flatten() {
        let Ok(parsed) = netsim_line::parse(line) else {
            continue;
        };
        let again = netsim_line::emit(&parsed.name, &parsed.payload);
        assert_eq!(
            netsim_line::parse(again.trim_end_matches('\n').as_bytes()).as_ref(),
            Ok(&parsed)
        );
        if parsed.name != NetSimManagerRequest::FULL_NAME {
            continue;
        }
        let Ok(request) = decode_checked::<NetSimManagerRequest>(&parsed.payload) else {
            continue;
        };
        let decision = rules.decide(&request, IpAddr::V4(Ipv4Addr::LOCALHOST));
        for (node, nav) in &decision.accepted {
            assert!(*node < s.vehicles.len());
            let pose = nav_to_pose(&frame, *node, nav);
            assert_eq!(pose.node as usize, *node);
        }
    }
});
