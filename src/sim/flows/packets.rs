//! The packets of the generated flows, built and read back: UDP datagrams and ICMP echoes
//! whose payload starts with a stamp (the flow's index, a sequence number and the sim time it
//! was sent), so that a receiver tells the flow, the order and the delay of each without state
//! shared with the sender. Every read is checked (a packet from a live program, or one whose
//! bits a link flipped, is refused, never misread).

use crate::clock::SimNanos;
use crate::wire::ip::{
    ipv4_checksum, set_transport_checksum, transport_checksum, IpPacket, IpRepr, UDP,
};
use std::net::{IpAddr, Ipv4Addr};

/// IP protocol number of ICMP.
pub const ICMP: u8 = 1;
const ECHO_REQUEST: u8 = 8;
const ECHO_REPLY: u8 = 0;
const HOP_LIMIT: u8 = 64;

/// What starts every generated payload: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The flow's index in `traffic.flows`.
    pub flow: u32,
    pub seq: u32,
    pub sent_ns: SimNanos,
}

pub const STAMP_BYTES: usize = 16;

impl Stamp {
    fn write(&self, into: &mut [u8]) {
        into[0..4].copy_from_slice(&self.flow.to_be_bytes());
        into[4..8].copy_from_slice(&self.seq.to_be_bytes());
        into[8..16].copy_from_slice(&self.sent_ns.to_be_bytes());
    }

    fn read(from: &[u8]) -> Option<Stamp> {
        let b = from.get(..STAMP_BYTES)?;
        Some(Stamp {
            flow: u32::from_be_bytes(b[0..4].try_into().ok()?),
            seq: u32::from_be_bytes(b[4..8].try_into().ok()?),
            sent_ns: u64::from_be_bytes(b[8..16].try_into().ok()?),
        })
    }

    /// A payload of `bytes` (at least the stamp's) beginning with it, zeros after.
    fn payload(&self, bytes: usize) -> Vec<u8> {
        let mut p = vec![0u8; bytes.max(STAMP_BYTES)];
        self.write(&mut p);
        p
    }
}

/// A UDP datagram from `src:sport` to `dst:dport` with `bytes` of payload beginning with `stamp`.
pub fn udp(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ports: (u16, u16),
    stamp: Stamp,
    bytes: usize,
) -> Option<Vec<u8>> {
    let payload = stamp.payload(bytes);
    let mut seg = Vec::with_capacity(8 + payload.len());
    seg.extend_from_slice(&ports.0.to_be_bytes());
    seg.extend_from_slice(&ports.1.to_be_bytes());
    seg.extend_from_slice(&u16::try_from(8 + payload.len()).ok()?.to_be_bytes());
    seg.extend_from_slice(&[0, 0]);
    seg.extend_from_slice(&payload);
    let mut ip = repr(src, dst, UDP).packet(&seg)?;
    set_transport_checksum(&mut ip);
    Some(ip)
}

/// An ICMP echo request (`reply` false) or reply with identifier `id`, sequence `seq` and
/// `bytes` of payload beginning with `stamp`.
pub fn echo(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    reply: bool,
    id: u16,
    seq: u16,
    stamp: Stamp,
    bytes: usize,
) -> Option<Vec<u8>> {
    let payload = stamp.payload(bytes);
    let mut msg = Vec::with_capacity(8 + payload.len());
    msg.push(if reply { ECHO_REPLY } else { ECHO_REQUEST });
    msg.push(0);
    msg.extend_from_slice(&[0, 0]);
    msg.extend_from_slice(&id.to_be_bytes());
    msg.extend_from_slice(&seq.to_be_bytes());
    msg.extend_from_slice(&payload);
    let c = ipv4_checksum(&msg);
    msg[2..4].copy_from_slice(&c.to_be_bytes());
    repr(src, dst, ICMP).packet(&msg)
}

fn repr(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8) -> IpRepr {
    IpRepr {
        src: IpAddr::V4(src),
        dst: IpAddr::V4(dst),
        protocol,
        hop_limit: HOP_LIMIT,
        payload_len: 0,
    }
}

/// A datagram read back: where it went and its stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dst_port: u16,
    pub stamp: Stamp,
    /// UDP payload bytes.
    pub len: usize,
}

/// Why a packet addressed to a flow's receiving end was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a generated datagram or echo (another protocol, no stamp).
    NotOurs,
    /// Its checksum is wrong (bits flipped on a link without CRC): a stack drops it.
    Checksum,
}

/// A UDP datagram with a stamp; its checksum checked.
pub fn read_udp(ip: &[u8]) -> Result<Datagram, Refused> {
    let p = IpPacket::new_checked(ip).map_err(|_| Refused::NotOurs)?;
    let u = p.payload();
    if p.protocol() != UDP || u.len() < 8 + STAMP_BYTES || p.is_ipv6() {
        return Err(Refused::NotOurs);
    }
    let stated = u16::from_be_bytes([u[6], u[7]]);
    if stated != 0 && Some(stated) != transport_checksum(ip) {
        return Err(Refused::Checksum);
    }
    let stamp = Stamp::read(&u[8..]).ok_or(Refused::NotOurs)?;
    Ok(Datagram {
        src: p.src_addr(),
        dst: p.dst_addr(),
        dst_port: u16::from_be_bytes([u[2], u[3]]),
        stamp,
        len: u.len() - 8,
    })
}

/// An ICMP echo read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Echo {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub reply: bool,
    pub id: u16,
    pub seq: u16,
    pub stamp: Stamp,
    /// ICMP payload bytes.
    pub len: usize,
}

/// An ICMP echo request or reply with a stamp; its checksum checked.
pub fn read_echo(ip: &[u8]) -> Result<Echo, Refused> {
    let p = IpPacket::new_checked(ip).map_err(|_| Refused::NotOurs)?;
    let (IpAddr::V4(src), IpAddr::V4(dst)) = (p.src_addr(), p.dst_addr()) else {
        return Err(Refused::NotOurs);
    };
    let m = p.payload();
    if p.protocol() != ICMP
        || m.len() < 8 + STAMP_BYTES
        || !matches!(m[0], ECHO_REQUEST | ECHO_REPLY)
    {
        return Err(Refused::NotOurs);
    }
    // The checksum of a message with its checksum in place is zero.
    if ipv4_checksum(m) != 0 {
        return Err(Refused::Checksum);
    }
    let stamp = Stamp::read(&m[8..]).ok_or(Refused::NotOurs)?;
    Ok(Echo {
        src,
        dst,
        reply: m[0] == ECHO_REPLY,
        id: u16::from_be_bytes([m[4], m[5]]),
        seq: u16::from_be_bytes([m[6], m[7]]),
        stamp,
        len: m.len() - 8,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

    #[test]
    fn a_datagram_and_an_echo_read_back_as_written_and_a_flipped_bit_is_refused() {
        let stamp = Stamp {
            flow: 3,
            seq: 7,
            sent_ns: 123_456_789,
        };
        let ip = udp(A, B, (40003, 5000), stamp, 1000).unwrap();
        assert_eq!(ip.len(), 20 + 8 + 1000);
        let d = read_udp(&ip).unwrap();
        assert_eq!((d.dst_port, d.stamp, d.len), (5000, stamp, 1000));
        let e = echo(A, B, false, 3, 7, stamp, 56).unwrap();
        let r = read_echo(&e).unwrap();
        assert_eq!(
            (r.reply, r.id, r.seq, r.stamp, r.len),
            (false, 3, 7, stamp, 56)
        );
        for (packet, at) in [(ip, 40), (e, 40)] {
            let mut bad = packet.clone();
            bad[at] ^= 0x10;
            let refused = if packet[9] == UDP {
                read_udp(&bad).err()
            } else {
                read_echo(&bad).err()
            };
            assert_eq!(refused, Some(Refused::Checksum));
        }
        assert_eq!(read_udp(&[0x45, 0, 0]), Err(Refused::NotOurs));
        assert_eq!(
            read_echo(&udp(A, B, (1, 2), stamp, 16).unwrap()),
            Err(Refused::NotOurs)
        );
    }
}
