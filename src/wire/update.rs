//! A [`NetworkUpdate`] checked once, then read as records instead of parallel lists.
//!
//! The message carries its packets, releases and losses as parallel `repeated` fields (as
//! ROS-NetSim defined it, plus the extensions). [`NetworkView::check`] verifies, once, that
//! they line up; everything after reads [`Packet`], [`Release`] and [`Loss`] records and never
//! indexes a list. A valid message has:
//! - `pkt_id`, `src_ip`, `dst_ip`, `pkt_lengths` of one length (the BEGIN's packets), and the
//!   extensions `pkt_time_ns`, `src_node`, `dst_node` each empty or of that length;
//! - `clear_pkt_id`, `clear_src_ip`, `clear_dst_ip`, `rx_ip`, `ber` of one length (the END's
//!   releases), `rx_time_ns`, `rx_node` each empty or of that length, every `ber` in [0, 1];
//! - `drop_node`, `drop_reason` each empty or as long as `drop_pkt_id` (the END's losses).

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

/// An extension list is either absent (empty) or as long as its base list.
fn optional(name: &str, len: usize, base: &str, n: usize) -> Result<(), String> {
    if len == 0 || len == n {
        Ok(())
    } else {
        Err(format!("{name} has {len} entries, {base} {n}: an extension list must be empty or match"))
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
        if m.clear_src_ip.len() != c || m.clear_dst_ip.len() != c || m.rx_ip.len() != c || m.ber.len() != c {
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
        optional("rx_time_ns", m.rx_time_ns.len(), "clear_pkt_id", c)?;
        optional("rx_node", m.rx_node.len(), "clear_pkt_id", c)?;
        let d = m.drop_pkt_id.len();
        optional("drop_node", m.drop_node.len(), "drop_pkt_id", d)?;
        optional("drop_reason", m.drop_reason.len(), "drop_pkt_id", d)?;
        if let Some(b) = m.ber.iter().find(|b| !(0.0..=1.0).contains(*b)) {
            return Err(format!("bit error rate {b} outside [0, 1]"));
        }
        Ok(NetworkView { msg })
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

    /// An END's lost copies, in order.
    pub fn losses(&self) -> impl ExactSizeIterator<Item = Loss> + '_ {
        let m = &self.msg;
        (0..m.drop_pkt_id.len()).map(move |i| Loss { pkt_id: m.drop_pkt_id[i], node: at(&m.drop_node, i), reason: at(&m.drop_reason, i) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_checked_once_and_read_as_records() {
        let mut m = NetworkUpdate { time_val: 3, ..Default::default() };
        m.clear_pkt_id = vec![1, 2];
        m.clear_src_ip = vec![10, 11];
        m.clear_dst_ip = vec![20, 21];
        m.rx_ip = vec![30, 31];
        m.ber = vec![0.0, 0.5];
        m.rx_node = vec![4, 5];
        m.drop_pkt_id = vec![9];
        let v = NetworkView::check(m.clone()).unwrap();
        let r: Vec<Release> = v.releases().collect();
        assert_eq!(r[1], Release { pkt_id: 2, src_ip: 11, dst_ip: 21, rx_ip: 31, ber: 0.5, rx_time_ns: None, rx_node: Some(5) });
        assert_eq!(v.losses().collect::<Vec<_>>(), vec![Loss { pkt_id: 9, node: None, reason: None }]);
        assert_eq!(v.packets().len(), 0);

        m.ber = vec![0.0];
        assert!(NetworkView::check(m.clone()).unwrap_err().starts_with("delivery lists differ in length"));
        m.ber = vec![0.0, 1.5];
        assert_eq!(NetworkView::check(m.clone()).unwrap_err(), "bit error rate 1.5 outside [0, 1]");
        m.ber = vec![0.0, 1.0];
        m.pkt_id = vec![7];
        assert!(NetworkView::check(m.clone()).unwrap_err().starts_with("packet lists differ in length: pkt_id 1"));
    }
}
