//! Deliveries written into a TUN without offloads: which packets go in coalesced
//! (`io::tun::Writer::plan`, tun-rs's GRO underneath) for any packets a vehicle may send. The
//! input is a batch: per packet a flag byte (bit 0: may be coalesced; bit 1: give a TCP segment
//! its correct checksum, so that coalescing is reached) and a length byte, then the IP packet.
//! Every packet must have a carrier: its own bytes, a coalesced segment at its own index whose
//! stretch of the flow holds it, or an earlier such segment holding it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::io::tun::{Carrier, Outgoing, Writer, BATCH, VNET_HDR_LEN};
use netsim_cosim::wire::ip::{tcp_checksum, IpPacket, TcpSpan};

fuzz_target!(|data: &[u8]| {
    let mut packets: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut rest = data;
    while rest.len() >= 2 && packets.len() < BATCH {
        let (flags, len) = (rest[0], usize::from(rest[1]) * 8);
        rest = &rest[2..];
        let take = len.min(rest.len());
        let mut bytes = vec![0u8; VNET_HDR_LEN];
        bytes.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        if flags & 2 != 0 {
            if let (Some(c), Ok(p)) = (
                tcp_checksum(&bytes[VNET_HDR_LEN..]),
                IpPacket::new_checked(&bytes[VNET_HDR_LEN..]),
            ) {
                let at = VNET_HDR_LEN + p.header_len() + 16;
                bytes[at..at + 2].copy_from_slice(&c.to_be_bytes());
            }
        }
        packets.push((bytes, flags & 1 != 0));
    }
    let outgoing: Vec<Outgoing> = packets
        .iter()
        .map(|(b, c)| Outgoing {
            bytes: b,
            may_coalesce: *c,
        })
        .collect();
    let mut w = Writer::default();
    let carrier = w.plan(&outgoing).to_vec();
    assert_eq!(carrier.len(), outgoing.len());
    for (i, c) in carrier.iter().enumerate() {
        match *c {
            Carrier::Itself => {}
            Carrier::Head(_) => assert!(outgoing[i].may_coalesce),
            Carrier::In(h) => {
                assert!(h < i && outgoing[i].may_coalesce, "{i} in {h}");
                assert!(matches!(carrier[h], Carrier::Head(_)), "{i} in {h}: not a head");
                let mine = TcpSpan::of(&outgoing[i].bytes[VNET_HDR_LEN..]).expect("a TCP segment");
                assert!(mine.len > 0);
            }
        }
    }
});
