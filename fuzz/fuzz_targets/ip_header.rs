//! IPv4/IPv6 header views of a packet read from a TUN: the checked constructor, every
//! accessor of what it accepts, the round trip through `IpRepr`, the TCP and UDP span views
//! (and the transport checksum), and the capture path.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::model::fate::DropReason;
use netsim_cosim::net::traffic::{CaptureOutcome, Frame};
use netsim_cosim::wire::ip::{transport_checksum, IpPacket, IpRepr, TcpSpan, UdpSpan};

fuzz_target!(|data: &[u8]| {
    let valid = match IpPacket::new_checked(data) {
        Err(_) => false,
        Ok(p) => {
            assert!(p.header_len() <= p.total_len() && p.total_len() <= data.len());
            let _ = (
                p.version(),
                p.is_ipv6(),
                p.src_addr(),
                p.dst_addr(),
                p.protocol(),
                p.hop_limit(),
            );
            let repr = IpRepr::parse(&p);
            let rebuilt = repr.packet(p.payload()).expect("an accepted header emits");
            let again = IpPacket::new_checked(&rebuilt[..]).expect("an emitted header parses");
            assert_eq!(IpRepr::parse(&again), repr);
            assert_eq!(again.payload(), p.payload());
            if let Some(u) = UdpSpan::of(data) {
                assert!(u.at + u.len == p.total_len() && u.same_flow(&u));
            }
            if let Some(t) = TcpSpan::of(data) {
                assert!(t.len as usize <= p.payload().len());
            }
            true
        }
    };
    if !valid {
        assert!(TcpSpan::of(data).is_none() && UdpSpan::of(data).is_none());
        assert!(transport_checksum(data).is_none());
    }
    // The network coordinator's capture of the same bytes from the first vehicle.
    let mut engine = netsim_cosim_fuzz::engine(netsim_cosim_fuzz::default_scenario());
    match engine.capture(0, Frame::plain(data.to_vec()), 0) {
        CaptureOutcome::Dropped {
            reason: DropReason::Malformed,
            ..
        } => assert!(!valid),
        _ => assert!(valid),
    }
});
