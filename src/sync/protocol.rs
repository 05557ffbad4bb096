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
