//! The classic pcap file format (libpcap 2.4, nanosecond timestamps), raw IP link type:
//! what `tshark -r` and Wireshark read. Pure encoding; the caller owns the writer.

use std::io::{self, Write};

/// Magic of a nanosecond-resolution pcap file (written little-endian).
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record is a bare IPv4 or IPv6 packet.
pub const LINKTYPE_RAW: u32 = 101;
/// Largest record kept whole by default; longer packets are truncated in the file (orig_len
/// says so).
pub const SNAPLEN: u32 = 262_144;

/// The 24-byte file header of a file whose records keep at most `snaplen` bytes.
pub fn file_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone, sigfigs: 0
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// The 16-byte header of a record at `t_ns` holding `captured` of `original` bytes.
pub fn record_header(t_ns: u64, captured: u32, original: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
    h[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
    h[8..12].copy_from_slice(&captured.to_le_bytes());
    h[12..16].copy_from_slice(&original.to_le_bytes());
    h
}

/// A pcap stream on any writer.
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Records keep whole packets up to [`SNAPLEN`] bytes.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_snaplen(out, SNAPLEN)
    }

    /// Records keep the first `snaplen` bytes of each packet (as `tcpdump -s`; at least 1).
    pub fn with_snaplen(mut out: W, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.max(1);
        out.write_all(&file_header(snaplen))?;
        Ok(PcapWriter { out, snaplen })
    }

    /// One packet at sim time `t_ns` (truncated to the snap length).
    pub fn write(&mut self, t_ns: u64, packet: &[u8]) -> io::Result<()> {
        let keep = packet.len().min(self.snaplen as usize);
        let orig = u32::try_from(packet.len()).unwrap_or(u32::MAX);
        self.out
            .write_all(&record_header(t_ns, keep as u32, orig))?;
        self.out.write_all(&packet[..keep])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_layout() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write(1_500_000_123, &[0x45, 0, 0, 20]).unwrap();
        let b = w.out;
        assert_eq!(&b[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(b[20], 101);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(b[28..32].try_into().unwrap()),
            500_000_123
        );
        assert_eq!(b.len(), 24 + 16 + 4);
    }

    #[test]
    fn a_snap_length_keeps_the_start_of_each_packet_and_its_original_length() {
        let mut w = PcapWriter::with_snaplen(Vec::new(), 3).unwrap();
        w.write(0, &[0x45, 0, 0, 20, 9]).unwrap();
        let b = w.out;
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(b[32..36].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(b[36..40].try_into().unwrap()), 5);
        assert_eq!(&b[40..], &[0x45, 0, 0]);
    }
}
