//! The messages of one window exchange: building BEGINs and checking ENDs (coordinator side),
//! checking BEGINs and building ENDs (simulator side). A message that is not the expected
//! one for the window is a protocol error that says what was expected and what came.

use crate::wire::proto::{
    decode_checked_into,
    rosnetsim::{network_update, physics_update},
    Named, NetworkUpdate, PhysicsUpdate, SetPose,
};
use crate::wire::update::NetworkView;
use prost::bytes::Bytes;
use prost::Message;

/// A physics BEGIN, with the poses imposed from outside for this window.
pub fn physics_begin(window: u32, set_pose: Vec<SetPose>) -> Vec<u8> {
    PhysicsUpdate {
        msg_type: physics_update::MsgType::Begin as i32,
        time_val: window,
        channel_data: Bytes::new(),
        set_pose,
    }
    .encode_to_vec()
}

pub fn physics_end(window: u32, channel_data: impl Into<Bytes>) -> Vec<u8> {
    PhysicsUpdate {
        msg_type: physics_update::MsgType::End as i32,
        time_val: window,
        channel_data: channel_data.into(),
        set_pose: Vec::new(),
    }
    .encode_to_vec()
}

/// A network BEGIN carrying the window's channel; the network coordinator adds packets.
pub fn network_begin(window: u32, channel_data: impl Into<Bytes>) -> NetworkUpdate {
    NetworkUpdate {
        msg_type: network_update::MsgType::Begin as i32,
        time_val: window,
        channel_data: channel_data.into(),
        ..Default::default()
    }
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
        return Err(format!(
            "expected {}, got {}",
            describe(kind, window),
            describe(got_kind, got_window)
        ));
    }
    Ok(())
}

/// A message as it came: borrowed (decoding copies its ChannelData out) or owned (the decoded
/// message's ChannelData shares its memory).
pub trait Received: Sized {
    /// Decodes it into `msg` (cleared first, its lists' memory kept); a message that does not
    /// decode is named in the error.
    fn decode_into<M: Named>(self, msg: &mut M) -> Result<(), String>;

    /// Decodes it; a message that does not decode is named in the error.
    fn decode<M: Named>(self) -> Result<M, String> {
        let mut msg = M::default();
        self.decode_into(&mut msg)?;
        Ok(msg)
    }
}

impl Received for &[u8] {
    fn decode_into<M: Named>(self, msg: &mut M) -> Result<(), String> {
        decode_checked_into(self, msg).map_err(|e| e.to_string())
    }
}

impl Received for &Vec<u8> {
    fn decode_into<M: Named>(self, msg: &mut M) -> Result<(), String> {
        self.as_slice().decode_into(msg)
    }
}

impl Received for Vec<u8> {
    fn decode_into<M: Named>(self, msg: &mut M) -> Result<(), String> {
        decode_checked_into(Bytes::from(self), msg).map_err(|e| e.to_string())
    }
}

pub fn expect_physics(
    bytes: impl Received,
    kind: physics_update::MsgType,
    window: u32,
) -> Result<PhysicsUpdate, String> {
    let m: PhysicsUpdate = bytes.decode()?;
    check(kind as i32, m.msg_type, m.time_val, window)?;
    Ok(m)
}

/// The next physics BEGIN for a simulator that moves its vehicles itself (`mover`, for the
/// error): decoded, in turn, and imposing no pose. Its window.
pub fn expect_begin_unplaced(
    bytes: &[u8],
    windows: &mut WindowCounter,
    mover: &str,
) -> Result<u32, String> {
    let begin = expect_physics(bytes, physics_update::MsgType::Begin, windows.next)?;
    windows.begin(begin.time_val)?;
    match begin.set_pose.first() {
        Some(fix) => Err(format!(
            "{mover} moves its vehicles itself: cannot place vehicle {} (a NETSIM nav update or set_pose)",
            fix.node
        )),
        None => Ok(begin.time_val),
    }
}

/// Decodes a NetworkUpdate, checks it is `kind` for `window` and checks its lists.
pub fn expect_network(
    bytes: impl Received,
    kind: network_update::MsgType,
    window: u32,
) -> Result<NetworkView, String> {
    expect_network_into(bytes, kind, window, NetworkUpdate::default())
}

/// [`expect_network`] decoding into `msg`, whose lists' memory it reuses (a simulator hands
/// back each window's message, [`NetworkView::into_inner`], for the next).
pub fn expect_network_into(
    bytes: impl Received,
    kind: network_update::MsgType,
    window: u32,
    mut msg: NetworkUpdate,
) -> Result<NetworkView, String> {
    bytes.decode_into(&mut msg)?;
    check(kind as i32, msg.msg_type, msg.time_val, window)?;
    NetworkView::check(msg)
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
            return Err(format!(
                "expected BEGIN for window {}, got BEGIN for window {k}",
                self.next
            ));
        }
        if k >= self.windows {
            return Err(format!(
                "window {k} is past the end of the run ({} windows)",
                self.windows
            ));
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

    #[test]
    fn a_simulator_that_moves_its_vehicles_refuses_a_begin_that_places_one() {
        let mut w = WindowCounter::new(3);
        assert_eq!(
            expect_begin_unplaced(&physics_begin(0, vec![]), &mut w, "Gazebo"),
            Ok(0)
        );
        let fix = SetPose {
            node: 2,
            x: 1.0,
            y: 2.0,
            z: -3.0,
            heading_deg: 0.0,
            speed_mps: 0.0,
        };
        assert_eq!(
            expect_begin_unplaced(&physics_begin(1, vec![fix]), &mut w, "Gazebo"),
            Err("Gazebo moves its vehicles itself: cannot place vehicle 2 (a NETSIM nav update or set_pose)".to_owned())
        );
        assert_eq!(
            expect_begin_unplaced(&physics_begin(1, vec![]), &mut w, "Gazebo"),
            Err("expected BEGIN for window 2, got BEGIN for window 1".to_owned()),
            "the refused window was still taken: the run ends there"
        );
    }

    fn end() -> NetworkUpdate {
        NetworkUpdate {
            msg_type: network_update::MsgType::End as i32,
            time_val: 3,
            ..Default::default()
        }
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
        assert_eq!(
            e,
            "rx_time_ns has 1 entries, clear_pkt_id 2: an extension list must be empty or match"
        );
        m.rx_time_ns = vec![5, 6];
        m.rx_node = vec![1, 1];
        m.drop_pkt_id = vec![9];
        m.drop_reason = vec![1, 2];
        let e = expect_network(&m.encode_to_vec(), network_update::MsgType::End, 3).unwrap_err();
        assert!(
            e.starts_with("drop_reason has 2 entries, drop_pkt_id 1"),
            "{e}"
        );
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
