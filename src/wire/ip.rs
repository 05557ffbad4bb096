//! A zero-copy view of an IPv4 or IPv6 packet's fixed header, in the smoltcp style: a checked
//! constructor validates every length before any accessor reads, so no accessor can panic on
//! any input, and [`IpRepr`] is the parsed, owned form that can be emitted again. [`TcpSpan`]
//! places a TCP segment in its flow's byte stream, [`UdpSpan`] a UDP datagram in its flow.
//!
//! What is checked: the version nibble; IPv4: buffer ≥ 20 bytes, IHL ≥ 5, header within the
//! buffer, `total_length` ≥ header and ≤ buffer; IPv6: buffer ≥ 40 bytes and
//! 40 + `payload_length` ≤ buffer. Bytes past the stated length are ignored (padding). The
//! IPv4 header checksum is not verified: the kernel fills it for every packet it hands a TUN
//! reader, and a corrupted one is the receiving stack's business.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub const IPV4_MIN_HEADER: usize = 20;
pub const IPV6_HEADER: usize = 40;

/// Why bytes are not an IP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IpError {
    #[error("empty packet")]
    Empty,
    #[error("IP version {0} (expected 4 or 6)")]
    Version(u8),
    #[error("truncated: {len} bytes, header needs {need}")]
    Truncated { len: usize, need: usize },
    #[error("bad IPv4 header length {0} words")]
    HeaderLength(u8),
    #[error("stated length {stated} does not fit: header {header}, buffer {len}")]
    Length {
        stated: usize,
        header: usize,
        len: usize,
    },
}

/// A checked view of an IP packet in `buffer`.
#[derive(Debug, Clone, Copy)]
pub struct IpPacket<T: AsRef<[u8]>> {
    buffer: T,
    v6: bool,
    header_len: usize,
    total_len: usize,
}

impl<T: AsRef<[u8]>> IpPacket<T> {
    /// Validates the header and lengths; every accessor is safe afterwards.
    pub fn new_checked(buffer: T) -> Result<Self, IpError> {
        let b = buffer.as_ref();
        let len = b.len();
        let first = *b.first().ok_or(IpError::Empty)?;
        match first >> 4 {
            4 => {
                if len < IPV4_MIN_HEADER {
                    return Err(IpError::Truncated {
                        len,
                        need: IPV4_MIN_HEADER,
                    });
                }
                let ihl = first & 0x0f;
                if ihl < 5 {
                    return Err(IpError::HeaderLength(ihl));
                }
                let header_len = usize::from(ihl) * 4;
                if header_len > len {
                    return Err(IpError::Truncated {
                        len,
                        need: header_len,
                    });
                }
                let stated = usize::from(u16::from_be_bytes([b[2], b[3]]));
                if stated < header_len || stated > len {
                    return Err(IpError::Length {
                        stated,
                        header: header_len,
                        len,
                    });
                }
                Ok(IpPacket {
                    buffer,
                    v6: false,
                    header_len,
                    total_len: stated,
                })
            }
            6 => {
                if len < IPV6_HEADER {
                    return Err(IpError::Truncated {
                        len,
                        need: IPV6_HEADER,
                    });
                }
                let stated = IPV6_HEADER + usize::from(u16::from_be_bytes([b[4], b[5]]));
                if stated > len {
                    return Err(IpError::Length {
                        stated,
                        header: IPV6_HEADER,
                        len,
                    });
                }
                Ok(IpPacket {
                    buffer,
                    v6: true,
                    header_len: IPV6_HEADER,
                    total_len: stated,
                })
            }
            v => Err(IpError::Version(v)),
        }
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        if self.v6 {
            6
        } else {
            4
        }
    }

    pub fn is_ipv6(&self) -> bool {
        self.v6
    }

    /// Length of the fixed header (IPv4 incl. options; IPv6 40).
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    /// Length the header states (header + payload); ≤ the buffer.
    pub fn total_len(&self) -> usize {
        self.total_len
    }

    pub fn src_addr(&self) -> IpAddr {
        let b = self.b();
        if self.v6 {
            IpAddr::V6(Ipv6Addr::from(take16(&b[8..24])))
        } else {
            IpAddr::V4(Ipv4Addr::new(b[12], b[13], b[14], b[15]))
        }
    }

    pub fn dst_addr(&self) -> IpAddr {
        let b = self.b();
        if self.v6 {
            IpAddr::V6(Ipv6Addr::from(take16(&b[24..40])))
        } else {
            IpAddr::V4(Ipv4Addr::new(b[16], b[17], b[18], b[19]))
        }
    }

    /// IPv4 protocol or IPv6 next header.
    pub fn protocol(&self) -> u8 {
        if self.v6 {
            self.b()[6]
        } else {
            self.b()[9]
        }
    }

    /// IPv4 TTL or IPv6 hop limit.
    pub fn hop_limit(&self) -> u8 {
        if self.v6 {
            self.b()[7]
        } else {
            self.b()[8]
        }
    }

    /// The payload after the fixed header (IPv4 options excluded), up to the stated length.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len..self.total_len]
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }
}

fn take16(s: &[u8]) -> [u8; 16] {
    let mut a = [0u8; 16];
    a.copy_from_slice(s);
    a
}

/// The owned, parsed form of a fixed header (IPv4 options are not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRepr {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub protocol: u8,
    pub hop_limit: u8,
    pub payload_len: usize,
}

impl IpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &IpPacket<T>) -> IpRepr {
        IpRepr {
            src: p.src_addr(),
            dst: p.dst_addr(),
            protocol: p.protocol(),
            hop_limit: p.hop_limit(),
            payload_len: p.total_len() - p.header_len(),
        }
    }

    /// Header length this repr emits.
    pub fn header_len(&self) -> usize {
        if self.src.is_ipv6() {
            IPV6_HEADER
        } else {
            IPV4_MIN_HEADER
        }
    }

    /// Writes the header into the front of `buf`. `None` if the buffer is too short, the two
    /// addresses are of different families, or the payload length does not fit the field.
    pub fn emit(&self, buf: &mut [u8]) -> Option<usize> {
        let h = self.header_len();
        let head = buf.get_mut(..h)?;
        match (self.src, self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let total = u16::try_from(h + self.payload_len).ok()?;
                head.fill(0);
                head[0] = 0x45;
                head[2..4].copy_from_slice(&total.to_be_bytes());
                head[6] = 0x40; // don't fragment
                head[8] = self.hop_limit;
                head[9] = self.protocol;
                head[12..16].copy_from_slice(&s.octets());
                head[16..20].copy_from_slice(&d.octets());
                let c = ipv4_checksum(head);
                head[10..12].copy_from_slice(&c.to_be_bytes());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let payload = u16::try_from(self.payload_len).ok()?;
                head.fill(0);
                head[0] = 0x60;
                head[4..6].copy_from_slice(&payload.to_be_bytes());
                head[6] = self.protocol;
                head[7] = self.hop_limit;
                head[8..24].copy_from_slice(&s.octets());
                head[24..40].copy_from_slice(&d.octets());
            }
            _ => return None,
        }
        Some(h)
    }

    /// A whole packet: the header followed by `payload` (its length overrides `payload_len`).
    pub fn packet(mut self, payload: &[u8]) -> Option<Vec<u8>> {
        self.payload_len = payload.len();
        let mut v = vec![0u8; self.header_len() + payload.len()];
        let h = self.emit(&mut v)?;
        v[h..].copy_from_slice(payload);
        Some(v)
    }
}

/// The stretch of its flow's byte stream a TCP segment carries: enough to tell which of several
/// segments, coalesced into one, carried a given one. `None` for anything but a TCP segment
/// with a whole header (IPv6 extension headers are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSpan {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub ack: u32,
    pub seq: u32,
    /// Payload bytes.
    pub len: u32,
}

/// IP protocol number of TCP.
pub const TCP: u8 = 6;

impl TcpSpan {
    pub fn of(ip: &[u8]) -> Option<TcpSpan> {
        let p = IpPacket::new_checked(ip).ok()?;
        if p.protocol() != TCP {
            return None;
        }
        let t = p.payload();
        let header = usize::from(*t.get(12)? >> 4) * 4;
        if header < 20 || header > t.len() {
            return None;
        }
        let be32 = |i: usize| u32::from_be_bytes([t[i], t[i + 1], t[i + 2], t[i + 3]]);
        Some(TcpSpan {
            src: p.src_addr(),
            dst: p.dst_addr(),
            src_port: u16::from_be_bytes([t[0], t[1]]),
            dst_port: u16::from_be_bytes([t[2], t[3]]),
            seq: be32(4),
            ack: be32(8),
            len: u32::try_from(t.len() - header).ok()?,
        })
    }

    /// Whether this segment's first payload byte lies in `outer` (same flow, same
    /// acknowledgement, sequence numbers modulo 2³²).
    pub fn within(&self, outer: &TcpSpan) -> bool {
        (self.src, self.dst, self.src_port, self.dst_port, self.ack)
            == (
                outer.src,
                outer.dst,
                outer.src_port,
                outer.dst_port,
                outer.ack,
            )
            && self.len > 0
            && self.seq.wrapping_sub(outer.seq) < outer.len
    }
}

/// A UDP datagram's flow and payload: enough to tell which of several datagrams of a flow,
/// coalesced into one, carried a given one. The payload is what the IP header says follows the
/// UDP header (the UDP length field is not trusted). `None` for anything but UDP with a whole
/// header (IPv6 extension headers are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpSpan {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    /// Where the payload starts in the IP packet, and its length.
    pub at: usize,
    pub len: usize,
}

/// IP protocol number of UDP.
pub const UDP: u8 = 17;

impl UdpSpan {
    pub fn of(ip: &[u8]) -> Option<UdpSpan> {
        let p = IpPacket::new_checked(ip).ok()?;
        let u = p.payload();
        if p.protocol() != UDP || u.len() < 8 {
            return None;
        }
        Some(UdpSpan {
            src: p.src_addr(),
            dst: p.dst_addr(),
            src_port: u16::from_be_bytes([u[0], u[1]]),
            dst_port: u16::from_be_bytes([u[2], u[3]]),
            at: p.header_len() + 8,
            len: u.len() - 8,
        })
    }

    /// Whether `other` is a datagram of the same flow (addresses and ports).
    pub fn same_flow(&self, other: &UdpSpan) -> bool {
        (self.src, self.dst, self.src_port, self.dst_port)
            == (other.src, other.dst, other.src_port, other.dst_port)
    }
}

/// The checksum a TCP segment or UDP datagram in `ip` must carry (computed over the
/// pseudo-header and the segment with its checksum field taken as zero; a UDP checksum that
/// comes out zero is sent as 0xffff); `None` for other protocols or a short header.
pub fn transport_checksum(ip: &[u8]) -> Option<u16> {
    let p = IpPacket::new_checked(ip).ok()?;
    let t = p.payload();
    let field = checksum_field(&p)?;
    let mut sum: u64 = 0;
    let mut add = |b: &[u8]| {
        for c in b.chunks(2) {
            sum += u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
        }
    };
    match (p.src_addr(), p.dst_addr()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            add(&s.octets());
            add(&d.octets());
        }
        (s, d) => {
            let v6 = |a: IpAddr| match a {
                IpAddr::V6(a) => a.octets(),
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            };
            add(&v6(s));
            add(&v6(d));
        }
    }
    add(&[0, p.protocol()]);
    add(&u32::try_from(t.len()).ok()?.to_be_bytes());
    add(&t[..field]);
    add(&t[field + 2..]);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    match !(sum as u16) {
        0 if p.protocol() == UDP => Some(0xffff),
        c => Some(c),
    }
}

/// Where a TCP segment's or UDP datagram's checksum field starts in its header.
fn checksum_field<T: AsRef<[u8]>>(p: &IpPacket<T>) -> Option<usize> {
    match p.protocol() {
        TCP if p.payload().len() >= 20 => Some(16),
        UDP if p.payload().len() >= 8 => Some(6),
        _ => None,
    }
}

/// Writes [`transport_checksum`] into the TCP segment or UDP datagram in `ip`; false (and
/// nothing written) for other packets.
pub fn set_transport_checksum(ip: &mut [u8]) -> bool {
    let field = IpPacket::new_checked(&*ip)
        .ok()
        .and_then(|p| Some(p.header_len() + checksum_field(&p)?));
    match (field, transport_checksum(ip)) {
        (Some(at), Some(c)) => {
            ip[at..at + 2].copy_from_slice(&c.to_be_bytes());
            true
        }
        _ => false,
    }
}

/// The internet checksum of an IPv4 header (with its checksum field zeroed).
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in header.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A TCP segment (ACK set) from 10.0.0.1:40000 to 10.0.0.2:`dst_port` with its checksum, for
/// tests.
#[cfg(test)]
pub(crate) fn tcp_segment(dst_port: u16, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    let mut tcp = vec![0u8; 20];
    tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
    tcp[2..4].copy_from_slice(&dst_port.to_be_bytes());
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    tcp[8..12].copy_from_slice(&ack.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[13] = 0x10;
    tcp[14..16].copy_from_slice(&65535u16.to_be_bytes());
    tcp.extend_from_slice(payload);
    test_packet(TCP, &tcp)
}

/// A UDP datagram from 10.0.0.1:`src_port` to 10.0.0.2:5201 with its checksum, for tests.
#[cfg(test)]
pub(crate) fn udp_datagram(src_port: u16, payload: &[u8]) -> Vec<u8> {
    let mut udp = vec![0u8; 8];
    udp[0..2].copy_from_slice(&src_port.to_be_bytes());
    udp[2..4].copy_from_slice(&5201u16.to_be_bytes());
    udp[4..6].copy_from_slice(&u16::try_from(8 + payload.len()).unwrap_or(0).to_be_bytes());
    udp.extend_from_slice(payload);
    test_packet(UDP, &udp)
}

/// `segment` of `protocol` from 10.0.0.1 to 10.0.0.2 in an IPv4 packet, its checksum set.
#[cfg(test)]
fn test_packet(protocol: u8, segment: &[u8]) -> Vec<u8> {
    let mut ip = IpRepr {
        src: Ipv4Addr::new(10, 0, 0, 1).into(),
        dst: Ipv4Addr::new(10, 0, 0, 2).into(),
        protocol,
        hop_limit: 64,
        payload_len: 0,
    }
    .packet(segment)
    .expect("an IPv4 packet");
    set_transport_checksum(&mut ip);
    ip
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_span_says_which_coalesced_segment_carried_a_segment() {
        let segment = |seq: u32, payload: usize| tcp_segment(5201, seq, 77, &vec![0; payload]);
        // Sequence numbers wrap: the coalesced segment starts 1000 bytes before 2³².
        let outer = TcpSpan::of(&segment(u32::MAX - 999, 3000)).unwrap();
        assert_eq!(outer.len, 3000);
        for (seq, inside) in [
            (u32::MAX - 999, true),
            (500, true),
            (1999, true),
            (2000, false),
        ] {
            let s = TcpSpan::of(&segment(seq, 1000)).unwrap();
            assert_eq!(s.within(&outer), inside, "seq {seq}");
        }
        let other_ack = {
            let mut p = segment(100, 1000);
            p[20 + 8..20 + 12].copy_from_slice(&78u32.to_be_bytes());
            TcpSpan::of(&p).unwrap()
        };
        assert!(!other_ack.within(&outer));
        assert!(
            !TcpSpan::of(&segment(100, 0)).unwrap().within(&outer),
            "no payload"
        );
        let mut udp = segment(100, 10);
        udp[9] = 17;
        assert_eq!(TcpSpan::of(&udp), None);
        let mut short = segment(100, 10);
        short[20 + 12] = 15 << 4; // a 60-byte TCP header in 30 bytes
        assert_eq!(TcpSpan::of(&short), None);
    }

    #[test]
    fn a_udp_span_is_the_flow_and_the_payload_the_ip_header_gives() {
        let d = udp_datagram(40000, &[7; 36]);
        assert_eq!(d.len(), 64);
        let s = UdpSpan::of(&d).unwrap();
        assert_eq!((s.src_port, s.dst_port, s.at, s.len), (40000, 5201, 28, 36));
        assert_eq!(&d[s.at..s.at + s.len], &[7; 36]);
        assert!(s.same_flow(&UdpSpan::of(&udp_datagram(40000, &[1; 3])).unwrap()));
        assert!(!s.same_flow(&UdpSpan::of(&udp_datagram(40001, &[7; 36])).unwrap()));
        // A UDP length field saying more than the packet holds does not move the payload.
        let mut lying = d.clone();
        lying[24..26].copy_from_slice(&1000u16.to_be_bytes());
        assert_eq!(UdpSpan::of(&lying).unwrap().len, 36);
        // The checksum over the pseudo-header and the datagram (worked out independently).
        assert_eq!(transport_checksum(&d), Some(0xbc83));
        let mut unset = d.clone();
        unset[26..28].fill(0);
        assert!(set_transport_checksum(&mut unset));
        assert_eq!(unset, d);
        let mut icmp = d.clone();
        icmp[9] = 1;
        assert!(!set_transport_checksum(&mut icmp));
        assert_eq!(&icmp[10..], &d[10..], "nothing written");
        let mut tcp = d.clone();
        tcp[9] = TCP;
        assert_eq!(UdpSpan::of(&tcp), None);
        assert_eq!(UdpSpan::of(&d[..27]), None);
    }

    #[test]
    fn parses_what_it_emits() {
        let r = IpRepr {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            protocol: 17,
            hop_limit: 64,
            payload_len: 0,
        };
        let p = r.packet(b"hello").unwrap();
        assert_eq!(ipv4_checksum(&p[..20]), 0, "checksum verifies");
        let v = IpPacket::new_checked(&p[..]).unwrap();
        assert_eq!(
            IpRepr::parse(&v),
            IpRepr {
                payload_len: 5,
                ..r
            }
        );
        assert_eq!(v.payload(), b"hello");
    }

    #[test]
    fn rejects_bad_input_with_a_reason() {
        assert_eq!(IpPacket::new_checked(&[][..]).unwrap_err(), IpError::Empty);
        assert_eq!(
            IpPacket::new_checked(&[0x50; 40][..]).unwrap_err(),
            IpError::Version(5)
        );
        assert!(matches!(
            IpPacket::new_checked(&[0x45; 10][..]).unwrap_err(),
            IpError::Truncated { .. }
        ));
        let mut p = vec![0u8; 20];
        p[0] = 0x44;
        assert_eq!(
            IpPacket::new_checked(&p[..]).unwrap_err(),
            IpError::HeaderLength(4)
        );
        p[0] = 0x45;
        p[3] = 21;
        assert!(matches!(
            IpPacket::new_checked(&p[..]).unwrap_err(),
            IpError::Length { stated: 21, .. }
        ));
    }
}
