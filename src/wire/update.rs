//! A [`NetworkUpdate`] checked once, then read as records instead of parallel lists.
//!
//! The message carries its packets, releases and losses as parallel `repeated` fields (as
//! ROS-NetSim defined it, plus the extensions). [`NetworkView::check`] verifies, once, that
//! they line up; everything after reads [`Packet`], [`Release`] and [`Loss`] records and never
//! indexes a list. A valid message has:
//! - `pkt_id`, `src_ip`, `dst_ip`, `pkt_lengths` of one length (the BEGIN's packets), and the
//!   extensions `pkt_time_ns`, `src_node`, `dst_node`, `multicast` each empty or of that length;
//! - `clear_pkt_id`, `clear_src_ip`, `clear_dst_ip`, `rx_ip`, `ber` of one length (the END's
//!   releases), `rx_time_ns`, `rx_node` each empty or of that length, every `ber` in [0, 1];
//! - `drop_node`, `drop_reason` each empty or as long as `drop_pkt_id` (the END's losses);
//! - per `link_state` entry finite numbers: `rate_bps` ≥ 0, `per` in [0, 1], `snr_db` finite
//!   or absent (NaN counts as absent). Its node indices are checked against the vehicles by
//!   [`NetworkView::check_nodes`], where the number of vehicles is known.

use crate::wire::proto::NetworkUpdate;

/// A checked NetworkUpdate (see the module docs). It derefs to the message for its scalar
/// fields; its lists are read through [`packets`](Self::packets),
/// [`releases`](Self::releases) and [`losses`](Self::losses).
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkView {
    msg: NetworkUpdate,
}

impl std::ops::Deref for NetworkView {
    type Target = NetworkUpdate;
    fn deref(&self) -> &NetworkUpdate {
        &self.msg
    }
}

/// One entry of a BEGIN: a packet copy for one receiver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Packet {
    pub pkt_id: u32,
    pub src_ip: u32,
    pub dst_ip: u32,
    pub length: u32,
    /// Capture sim time, if the coordinator gave it.
    pub time_ns: Option<u64>,
    pub src_node: Option<u32>,
    pub dst_node: Option<u32>,
    /// Sent to a multicast or broadcast address, if the coordinator said.
    pub multicast: Option<bool>,
}

/// One released copy in an END.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Release {
    pub pkt_id: u32,
    pub src_ip: u32,
    pub dst_ip: u32,
    pub rx_ip: u32,
    pub ber: f64,
    /// Delivery sim time, if the simulator gave it.
    pub rx_time_ns: Option<u64>,
    pub rx_node: Option<u32>,
}

/// One copy an END reports lost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loss {
    pub pkt_id: u32,
    pub node: Option<u32>,
    /// The wire value of the drop reason, if given.
    pub reason: Option<i32>,
}

/// One directed pair's link state in an END, held from its window on until reported again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkStateEntry {
    pub src_node: u32,
    pub dst_node: u32,
    pub usable: bool,
    /// In-band SNR (dB), finite; `None` where the model has none.
    pub snr_db: Option<f64>,
    pub rate_bps: f64,
    /// Packet error probability of a 1000-byte packet.
    pub per: f64,
    pub delay_ns: u64,
}

/// An extension list is either absent (empty) or as long as its base list.
fn optional(name: &str, len: usize, base: &str, n: usize) -> Result<(), String> {
    if len == 0 || len == n {
        Ok(())
    } else {
        Err(format!(
            "{name} has {len} entries, {base} {n}: an extension list must be empty or match"
        ))
    }
}

/// Entry `i` of an extension list that is either absent or parallel.
fn at<T: Copy>(list: &[T], i: usize) -> Option<T> {
    list.get(i).copied()
}

impl NetworkView {
    /// Checks the lists of `msg` (see the module docs); the error names the lists.
    pub fn check(msg: NetworkUpdate) -> Result<NetworkView, String> {
        let m = &msg;
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
        if m.clear_src_ip.len() != c
            || m.clear_dst_ip.len() != c
            || m.rx_ip.len() != c
            || m.ber.len() != c
        {
            return Err(format!(
                "delivery lists differ in length: clear_pkt_id {c}, clear_src_ip {}, clear_dst_ip {}, rx_ip {}, ber {}",
                m.clear_src_ip.len(),
                m.clear_dst_ip.len(),
                m.rx_ip.len(),
                m.ber.len()
            ));
        }
        optional("pkt_time_ns", m.pkt_time_ns.len(), "pkt_id", n)?;
        optional("src_node", m.src_node.len(), "pkt_id", n)?;
        optional("dst_node", m.dst_node.len(), "pkt_id", n)?;
        optional("multicast", m.multicast.len(), "pkt_id", n)?;
        optional("rx_time_ns", m.rx_time_ns.len(), "clear_pkt_id", c)?;
        optional("rx_node", m.rx_node.len(), "clear_pkt_id", c)?;
        let d = m.drop_pkt_id.len();
        optional("drop_node", m.drop_node.len(), "drop_pkt_id", d)?;
        optional("drop_reason", m.drop_reason.len(), "drop_pkt_id", d)?;
        if let Some(b) = m.ber.iter().find(|b| !(0.0..=1.0).contains(*b)) {
            return Err(format!("bit error rate {b} outside [0, 1]"));
        }
        for (i, l) in m.link_state.iter().enumerate() {
            let at = || format!("link_state[{i}] ({} -> {})", l.src_node, l.dst_node);
            if let Some(s) = l.snr_db.filter(|s| !s.is_nan() && !s.is_finite()) {
                return Err(format!("{}: snr_db {s} is not finite", at()));
            }
            if !(l.rate_bps.is_finite() && l.rate_bps >= 0.0) {
                return Err(format!(
                    "{}: rate_bps {} is not a finite rate ≥ 0",
                    at(),
                    l.rate_bps
                ));
            }
            if !(0.0..=1.0).contains(&l.per) {
                return Err(format!("{}: per {} outside [0, 1]", at(), l.per));
            }
        }
        Ok(NetworkView { msg })
    }

    /// Checks the node indices of the link states against `vehicles` vehicles: each names two
    /// different vehicles. The error names the entry and the index.
    pub fn check_nodes(&self, vehicles: usize) -> Result<(), String> {
        for (i, l) in self.msg.link_state.iter().enumerate() {
            for (field, node) in [("src_node", l.src_node), ("dst_node", l.dst_node)] {
                if node as usize >= vehicles {
                    return Err(format!(
                        "link_state[{i}]: {field} {node} is not a vehicle (there are {vehicles})"
                    ));
                }
            }
            if l.src_node == l.dst_node {
                return Err(format!(
                    "link_state[{i}]: src_node and dst_node are both {}",
                    l.src_node
                ));
            }
        }
        Ok(())
    }

    /// The message itself.
    pub fn into_inner(self) -> NetworkUpdate {
        self.msg
    }

    /// A BEGIN's packet entries, in order.
    pub fn packets(&self) -> impl ExactSizeIterator<Item = Packet> + '_ {
        let m = &self.msg;
        (0..m.pkt_id.len()).map(move |i| Packet {
            pkt_id: m.pkt_id[i],
            src_ip: m.src_ip[i],
            dst_ip: m.dst_ip[i],
            length: m.pkt_lengths[i],
            time_ns: at(&m.pkt_time_ns, i),
            src_node: at(&m.src_node, i),
            dst_node: at(&m.dst_node, i),
            multicast: at(&m.multicast, i),
        })
    }

    /// An END's released copies, in order.
    pub fn releases(&self) -> impl ExactSizeIterator<Item = Release> + '_ {
        let m = &self.msg;
        (0..m.clear_pkt_id.len()).map(move |i| Release {
            pkt_id: m.clear_pkt_id[i],
            src_ip: m.clear_src_ip[i],
            dst_ip: m.clear_dst_ip[i],
            rx_ip: m.rx_ip[i],
            ber: m.ber[i],
            rx_time_ns: at(&m.rx_time_ns, i),
            rx_node: at(&m.rx_node, i),
        })
    }

    /// An END's link states, in order (checked: finite numbers; see [`Self::check_nodes`]).
    pub fn link_states(&self) -> impl ExactSizeIterator<Item = LinkStateEntry> + '_ {
        self.msg.link_state.iter().map(|l| LinkStateEntry {
            src_node: l.src_node,
            dst_node: l.dst_node,
            usable: l.usable,
            snr_db: l.snr_db.filter(|s| s.is_finite()),
            rate_bps: l.rate_bps,
            per: l.per,
            delay_ns: l.delay_ns,
        })
    }

    /// An END's lost copies, in order.
    pub fn losses(&self) -> impl ExactSizeIterator<Item = Loss> + '_ {
        let m = &self.msg;
        (0..m.drop_pkt_id.len()).map(move |i| Loss {
            pkt_id: m.drop_pkt_id[i],
            node: at(&m.drop_node, i),
            reason: at(&m.drop_reason, i),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_checked_once_and_read_as_records() {
        let mut m = NetworkUpdate {
            time_val: 3,
            ..Default::default()
        };
        m.clear_pkt_id = vec![1, 2];
        m.clear_src_ip = vec![10, 11];
        m.clear_dst_ip = vec![20, 21];
        m.rx_ip = vec![30, 31];
        m.ber = vec![0.0, 0.5];
        m.rx_node = vec![4, 5];
        m.drop_pkt_id = vec![9];
        let v = NetworkView::check(m.clone()).unwrap();
        let r: Vec<Release> = v.releases().collect();
        assert_eq!(
            r[1],
            Release {
                pkt_id: 2,
                src_ip: 11,
                dst_ip: 21,
                rx_ip: 31,
                ber: 0.5,
                rx_time_ns: None,
                rx_node: Some(5)
            }
        );
        assert_eq!(
            v.losses().collect::<Vec<_>>(),
            vec![Loss {
                pkt_id: 9,
                node: None,
                reason: None
            }]
        );
        assert_eq!(v.packets().len(), 0);

        m.ber = vec![0.0];
        assert!(NetworkView::check(m.clone())
            .unwrap_err()
            .starts_with("delivery lists differ in length"));
        m.ber = vec![0.0, 1.5];
        assert_eq!(
            NetworkView::check(m.clone()).unwrap_err(),
            "bit error rate 1.5 outside [0, 1]"
        );
        m.ber = vec![0.0, 1.0];
        m.pkt_id = vec![7];
        assert!(NetworkView::check(m.clone())
            .unwrap_err()
            .starts_with("packet lists differ in length: pkt_id 1"));
    }

    #[test]
    fn the_multicast_flags_are_absent_or_one_per_packet_entry() {
        let mut m = NetworkUpdate {
            pkt_id: vec![4, 4, 5],
            src_ip: vec![1; 3],
            dst_ip: vec![2; 3],
            pkt_lengths: vec![60; 3],
            ..Default::default()
        };
        let v = NetworkView::check(m.clone()).unwrap();
        assert!(
            v.packets().all(|p| p.multicast.is_none()),
            "a coordinator that sends none is fine"
        );
        m.multicast = vec![true, true, false];
        let v = NetworkView::check(m.clone()).unwrap();
        assert_eq!(
            v.packets().map(|p| p.multicast).collect::<Vec<_>>(),
            vec![Some(true), Some(true), Some(false)]
        );
        m.multicast = vec![true, true];
        assert_eq!(
            NetworkView::check(m.clone()).unwrap_err(),
            "multicast has 2 entries, pkt_id 3: an extension list must be empty or match"
        );
        m.multicast = vec![false; 4];
        assert!(NetworkView::check(m)
            .unwrap_err()
            .starts_with("multicast has 4 entries, pkt_id 3"));
    }

    #[test]
    fn link_states_are_checked_for_finite_numbers_and_vehicle_indices() {
        use crate::wire::proto::LinkState;
        let state = |src, dst| LinkState {
            src_node: src,
            dst_node: dst,
            usable: true,
            snr_db: Some(12.5),
            rate_bps: 6e6,
            per: 0.01,
            delay_ns: 334,
        };
        let mut m = NetworkUpdate {
            link_state: vec![
                state(0, 1),
                LinkState {
                    snr_db: Some(f64::NAN),
                    ..state(1, 0)
                },
            ],
            ..Default::default()
        };
        let v = NetworkView::check(m.clone()).unwrap();
        v.check_nodes(2).unwrap();
        let l: Vec<LinkStateEntry> = v.link_states().collect();
        assert_eq!(
            l[0],
            LinkStateEntry {
                src_node: 0,
                dst_node: 1,
                usable: true,
                snr_db: Some(12.5),
                rate_bps: 6e6,
                per: 0.01,
                delay_ns: 334
            }
        );
        assert_eq!(l[1].snr_db, None, "NaN reads as no SNR");
        assert_eq!(
            v.check_nodes(1).unwrap_err(),
            "link_state[0]: dst_node 1 is not a vehicle (there are 1)"
        );
        m.link_state.push(state(2, 2));
        assert_eq!(
            NetworkView::check(m.clone())
                .unwrap()
                .check_nodes(3)
                .unwrap_err(),
            "link_state[2]: src_node and dst_node are both 2"
        );
        m.link_state[2] = state(7, 0);
        assert_eq!(
            NetworkView::check(m.clone())
                .unwrap()
                .check_nodes(3)
                .unwrap_err(),
            "link_state[2]: src_node 7 is not a vehicle (there are 3)"
        );
        m.link_state[2] = LinkState {
            snr_db: Some(f64::INFINITY),
            ..state(0, 2)
        };
        assert_eq!(
            NetworkView::check(m.clone()).unwrap_err(),
            "link_state[2] (0 -> 2): snr_db inf is not finite"
        );
        m.link_state[2] = LinkState {
            rate_bps: f64::NAN,
            ..state(0, 2)
        };
        assert_eq!(
            NetworkView::check(m.clone()).unwrap_err(),
            "link_state[2] (0 -> 2): rate_bps NaN is not a finite rate ≥ 0"
        );
        m.link_state[2] = LinkState {
            per: 1.5,
            ..state(0, 2)
        };
        assert_eq!(
            NetworkView::check(m).unwrap_err(),
            "link_state[2] (0 -> 2): per 1.5 outside [0, 1]"
        );
    }
}
