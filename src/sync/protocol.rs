//! The messages of one window exchange: building BEGINs and checking ENDs (coordinator side),
//! checking BEGINs and building ENDs (simulator side). A message that is not the expected
//! one for the window is a protocol error that says what was expected and what came.

use crate::wire::proto::{
    decode_checked,
    rosnetsim::{network_update, physics_update},
    NetworkUpdate, PhysicsUpdate,
};
use prost::Message;

pub fn physics_begin(window: u32) -> Vec<u8> {
    PhysicsUpdate { msg_type: physics_update::MsgType::Begin as i32, time_val: window, channel_data: Vec::new() }.encode_to_vec()
}

pub fn physics_end(window: u32, channel_data: Vec<u8>) -> Vec<u8> {
    PhysicsUpdate { msg_type: physics_update::MsgType::End as i32, time_val: window, channel_data }.encode_to_vec()
}

/// A network BEGIN carrying the window's channel; the network coordinator adds packets.
pub fn network_begin(window: u32, channel_data: Vec<u8>) -> NetworkUpdate {
    NetworkUpdate { msg_type: network_update::MsgType::Begin as i32, time_val: window, channel_data, ..Default::default() }
}

fn describe(kind: i32, window: u32) -> String {
    match kind {
        0 => format!("BEGIN for window {window}"),
        1 => format!("END for window {window}"),
        k => format!("unknown msg_type {k} for window {window}"),
    }
}

fn check(kind: i32, got_kind: i32, got_window: u32, window: u32) -> Result<(), String> {
    if got_kind != kind || got_window != window {
        return Err(format!("expected {}, got {}", describe(kind, window), describe(got_kind, got_window)));
    }
    Ok(())
}

/// A message that does not decode, named for the error.
fn decode<M: crate::wire::proto::Named>(bytes: &[u8]) -> Result<M, String> {
    decode_checked::<M>(bytes).map_err(|e| e.to_string())
}

pub fn expect_physics(bytes: &[u8], kind: physics_update::MsgType, window: u32) -> Result<PhysicsUpdate, String> {
    let m: PhysicsUpdate = decode(bytes)?;
    check(kind as i32, m.msg_type, m.time_val, window)?;
    Ok(m)
}

pub fn expect_network(bytes: &[u8], kind: network_update::MsgType, window: u32) -> Result<NetworkUpdate, String> {
    let m: NetworkUpdate = decode(bytes)?;
    check(kind as i32, m.msg_type, m.time_val, window)?;
    let n = m.pkt_id.len();
    if m.src_ip.len() != n || m.dst_ip.len() != n || m.pkt_lengths.len() != n {
        return Err(format!(
            "packet lists differ in length: pkt_id {n}, src_ip {}, dst_ip {}, pkt_lengths {}",
            m.src_ip.len(),
            m.dst_ip.len(),
            m.pkt_lengths.len()
        ));
    }
    let c = m.clear_pkt_id.len();
    if m.clear_src_ip.len() != c || m.clear_dst_ip.len() != c || m.rx_ip.len() != c || m.ber.len() != c {
        return Err(format!(
            "delivery lists differ in length: clear_pkt_id {c}, clear_src_ip {}, clear_dst_ip {}, rx_ip {}, ber {}",
            m.clear_src_ip.len(),
            m.clear_dst_ip.len(),
            m.rx_ip.len(),
            m.ber.len()
        ));
    }
    // Extensions: each parallel list is either absent (empty) or as long as its base list.
    let optional = |name: &str, len: usize, base: &str, n: usize| {
        if len == 0 || len == n {
            Ok(())
        } else {
            Err(format!("{name} has {len} entries, {base} {n}: an extension list must be empty or match"))
        }
    };
    optional("pkt_time_ns", m.pkt_time_ns.len(), "pkt_id", n)?;
    optional("src_node", m.src_node.len(), "pkt_id", n)?;
    optional("dst_node", m.dst_node.len(), "pkt_id", n)?;
    optional("rx_time_ns", m.rx_time_ns.len(), "clear_pkt_id", c)?;
    optional("rx_node", m.rx_node.len(), "clear_pkt_id", c)?;
    let d = m.drop_pkt_id.len();
    optional("drop_node", m.drop_node.len(), "drop_pkt_id", d)?;
    optional("drop_reason", m.drop_reason.len(), "drop_pkt_id", d)?;
    if let Some(b) = m.ber.iter().find(|b| !(0.0..=1.0).contains(*b)) {
        return Err(format!("bit error rate {b} outside [0, 1]"));
    }
    Ok(m)
}

/// The simulator side's bookkeeping: which window comes next, and when the run is over.
#[derive(Debug, Clone)]
pub struct WindowCounter {
    pub next: u32,
    pub windows: u32,
}

impl WindowCounter {
    pub fn new(windows: u32) -> Self {
        WindowCounter { next: 0, windows }
    }

    /// Accepts window `k` only if it is the next one.
    pub fn begin(&mut self, k: u32) -> Result<(), String> {
        if k != self.next {
            return Err(format!("expected BEGIN for window {}, got BEGIN for window {k}", self.next));
        }
        if k >= self.windows {
            return Err(format!("window {k} is past the end of the run ({} windows)", self.windows));
        }
        self.next += 1;
        Ok(())
    }

    pub fn finished(&self) -> bool {
        self.next >= self.windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end() -> NetworkUpdate {
        NetworkUpdate { msg_type: network_update::MsgType::End as i32, time_val: 3, ..Default::default() }
    }

    #[test]
    fn extension_lists_are_absent_or_parallel() {
        let mut m = end();
        m.clear_pkt_id = vec![1, 2];
        m.clear_src_ip = vec![0, 0];
        m.clear_dst_ip = vec![0, 0];
        m.rx_ip = vec![0, 0];
        m.ber = vec![0.0, 0.0];
        assert!(expect_network(&m.encode_to_vec(), network_update::MsgType::End, 3).is_ok());
        m.rx_time_ns = vec![5];
        let e = expect_network(&m.encode_to_vec(), network_update::MsgType::End, 3).unwrap_err();
        assert_eq!(e, "rx_time_ns has 1 entries, clear_pkt_id 2: an extension list must be empty or match");
        m.rx_time_ns = vec![5, 6];
        m.rx_node = vec![1, 1];
        m.drop_pkt_id = vec![9];
        m.drop_reason = vec![1, 2];
        let e = expect_network(&m.encode_to_vec(), network_update::MsgType::End, 3).unwrap_err();
        assert!(e.starts_with("drop_reason has 2 entries, drop_pkt_id 1"), "{e}");
        m.drop_reason = vec![1];
        assert!(expect_network(&m.encode_to_vec(), network_update::MsgType::End, 3).is_ok());

        let mut b = network_begin(3, vec![]);
        b.pkt_id = vec![1];
        b.src_ip = vec![0];
        b.dst_ip = vec![0];
        b.pkt_lengths = vec![10];
        b.dst_node = vec![1, 2];
        let e = expect_network(&b.encode_to_vec(), network_update::MsgType::Begin, 3).unwrap_err();
        assert!(e.starts_with("dst_node has 2 entries, pkt_id 1"), "{e}");
    }
}
