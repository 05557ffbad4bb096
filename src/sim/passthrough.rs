//! The pass-through network simulator: every packet described in window k's BEGIN is
//! released in window k's END, to its destination, without bit errors. The reference for the
//! message plumbing (a third party's simulator answers the same way) and a baseline in tests;
//! the scenario default is [`crate::sim::network::NetworkSim`] with its `ideal` model.

use crate::lockstep::{
    protocol::{expect_network, WindowCounter},
    Reply, Service,
};
use crate::wire::proto::{rosnetsim::network_update::MsgType, NetworkUpdate};
use prost::Message;

pub struct PassthroughNetwork {
    windows: WindowCounter,
}

impl PassthroughNetwork {
    pub fn new(windows: u32) -> Self {
        PassthroughNetwork {
            windows: WindowCounter::new(windows),
        }
    }

    pub fn handle(&mut self, request: &[u8]) -> Result<Vec<u8>, String> {
        let begin = expect_network(request, MsgType::Begin, self.windows.next)?;
        self.windows.begin(begin.time_val)?;
        Ok(release_all(begin.into_inner()).encode_to_vec())
    }
}

/// The END for `begin` that releases every entry at the window start, error-free, to its
/// destination.
pub fn release_all(begin: NetworkUpdate) -> NetworkUpdate {
    NetworkUpdate {
        msg_type: MsgType::End as i32,
        time_val: begin.time_val,
        clear_pkt_id: begin.pkt_id.clone(),
        clear_src_ip: begin.src_ip.clone(),
        clear_dst_ip: begin.dst_ip.clone(),
        ber: vec![0.0; begin.pkt_id.len()],
        rx_ip: begin.dst_ip,
        ..Default::default()
    }
}

impl Service for PassthroughNetwork {
    fn call(&mut self, request: Vec<u8>) -> Reply<'_> {
        crate::lockstep::ready(self.handle(&request))
    }

    fn finished(&self) -> bool {
        self.windows.finished()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockstep::protocol::network_begin;

    #[test]
    fn releases_every_packet_of_the_window_and_checks_the_order() {
        let mut sim = PassthroughNetwork::new(3);
        let mut begin = network_begin(0, vec![]);
        begin.pkt_id = vec![7, 8];
        begin.src_ip = vec![1, 2];
        begin.dst_ip = vec![2, 1];
        begin.pkt_lengths = vec![100, 200];
        let end = expect_network(
            &sim.handle(&begin.encode_to_vec()).unwrap(),
            MsgType::End,
            0,
        )
        .unwrap()
        .into_inner();
        assert_eq!(
            (end.clear_pkt_id, end.rx_ip, end.ber),
            (vec![7, 8], vec![2, 1], vec![0.0, 0.0])
        );
        let err = sim
            .handle(&network_begin(2, vec![]).encode_to_vec())
            .unwrap_err();
        assert_eq!(err, "expected BEGIN for window 1, got BEGIN for window 2");
        assert!(sim
            .handle(&network_begin(1, vec![]).encode_to_vec())
            .is_ok());
        assert!(!sim.finished());
        assert!(sim
            .handle(&network_begin(2, vec![]).encode_to_vec())
            .is_ok());
        assert!(sim.finished());
    }
}
