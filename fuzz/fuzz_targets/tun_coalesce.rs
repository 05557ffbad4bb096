//! Deliveries written into a TUN: which packets go in coalesced (`io::os::tun::Writer::plan`,
//! tun-rs's GRO underneath) for any packets a vehicle may send, into a TUN that takes coalesced
//! UDP datagrams or not. The input: a byte choosing the TUN (bit 0: UDP too), then per packet a
//! flag byte (bit 0: may be coalesced; bit 1: give a TCP segment or UDP datagram its correct
//! checksum, so that coalescing is reached; bit 2: a header asking for the checksum to be
//! finished, as a TUN with offloads hands over a lone packet; bit 3: a burst's header, GSO type
//! from bits 4–5) and a length byte, then the IP packet. Every packet must have a carrier: its
//! own bytes, or a coalesced one — at its own index or an earlier one — that only packets
//! allowed to be coalesced, single packets (no GSO type), TCP segments or UDP datagrams with
//! data, are in.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::io::os::tun::{Carrier, Outgoing, Writer, BATCH, VNET_HDR_LEN};
use netsim_cosim::wire::ip::{set_transport_checksum, TcpSpan, UdpSpan};

fuzz_target!(|data: &[u8]| {
    let Some((&tun, mut rest)) = data.split_first() else {
        return;
    };
    let udp = tun & 1 != 0;
    let mut packets: Vec<(Vec<u8>, bool)> = Vec::new();
    while rest.len() >= 2 && packets.len() < BATCH {
        let (flags, len) = (rest[0], usize::from(rest[1]) * 8);
        rest = &rest[2..];
        let take = len.min(rest.len());
        let mut bytes = vec![0u8; VNET_HDR_LEN];
        bytes.extend_from_slice(&rest[..take]);
        rest = &rest[take..];
        if flags & 2 != 0 {
            set_transport_checksum(&mut bytes[VNET_HDR_LEN..]);
        }
        if flags & 4 != 0 {
            bytes[..VNET_HDR_LEN].copy_from_slice(&[1, 0, 0, 0, 0, 0, 20, 0, 6, 0]);
        }
        if flags & 8 != 0 {
            bytes[1] = [1, 3, 4, 5][usize::from(flags >> 4 & 3)];
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
    let mut w = Writer::new(udp);
    let carrier = w.plan(&outgoing).to_vec();
    assert_eq!(carrier.len(), outgoing.len());
    for (i, c) in carrier.iter().enumerate() {
        match *c {
            Carrier::Itself => {}
            Carrier::Head(_) => assert!(outgoing[i].may_coalesce && outgoing[i].bytes[1] == 0),
            Carrier::In(h) => {
                assert!(h < i && outgoing[i].may_coalesce, "{i} in {h}");
                assert_eq!(outgoing[i].bytes[1], 0, "{i}: a burst in {h}");
                assert!(
                    matches!(carrier[h], Carrier::Head(_)),
                    "{i} in {h}: not a head"
                );
                let ip = &outgoing[i].bytes[VNET_HDR_LEN..];
                match (TcpSpan::of(ip), UdpSpan::of(ip)) {
                    (Some(tcp), _) => assert!(tcp.len > 0),
                    (None, Some(d)) => assert!(udp && d.len > 0, "{i}: a UDP datagram"),
                    _ => panic!("{i}: neither TCP nor UDP"),
                }
            }
        }
    }
});
