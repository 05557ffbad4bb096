//! ROS-NetSim's dialect of the window messages, as its own components write them, and its
//! translation to and from ours (`msg/rosnetsim.proto`). The `rosnetsim` transport
//! (`crate::lockstep::rosnetsim`) applies it to every message it carries; other transports carry
//! our dialect unchanged.
//!
//! Where the dialects differ:
//! - **`channel_data`** (PhysicsUpdate END, NetworkUpdate BEGIN) holds the *gzip* of the
//!   serialized ChannelData (ROS-NetSim's Gazebo physics coordinator and example simulators
//!   compress it, its network simulators decompress it). We send it compressed and accept it
//!   compressed or bare, told apart by the gzip magic `1f 8b`; it may inflate to at most
//!   [`MAX_CHANNEL_BYTES`].
//! - **`PathDetails.ids`** number the vehicles from 1 (ROS-NetSim's channel simulator pairs
//!   `1..=n`, its example physics simulator draws from `1..=n`); ours are `node_list` indices
//!   from 0. An id 0, or past the last vehicle, is refused.
//! - **Paths**: an entry may name its pair in either order, list the pair again, and hold
//!   several paths (`num_hops` one count per path, `hop_points` their points one after the
//!   other) or none. Ours holds each pair `a < b` once with exactly one path. Read from
//!   ROS-NetSim: the pair is unordered (`[b, a]` becomes `[a, b]`, its points reversed); the
//!   first path stands for the pair (no paths: one path of no points); an entry for a pair
//!   listed before replaces the earlier one in its place, as ROS-NetSim's network simulator,
//!   which keys the paths by their ids, keeps the last. `hop_points` must hold exactly 4 values
//!   per hop of every path. A traced path's `arrivals` (fields 5 and 6, our extension) pass
//!   unchanged in both directions, whatever the order of the pair (sound travels the same
//!   paths both ways), and must pass the check of `crate::wire::channel::check_arrivals`.
//! - **Deliveries** (NetworkUpdate END): ROS-NetSim's network simulator lists the copies to
//!   deliver in `pkt_id`, `src_ip`, `dst_ip` with `rx_ip` and `ber` (one each), and the packets
//!   its coordinator may forget in `clear_*`; ours lists the delivered copies in `clear_*` with
//!   `rx_ip` and `ber`. Read from ROS-NetSim: a non-empty `pkt_id` list is the deliveries
//!   (a `clear_*` list beside it has no use here); `clear_*` without `rx_ip` and `ber` delivers
//!   nothing. Written to ROS-NetSim: the deliveries in both forms, so its coordinator delivers
//!   each copy and then frees it.
//!
//! A message that does not decode passes unchanged: the window protocol names what is wrong.

use crate::wire::channel::{check_arrivals, Channel};
use crate::wire::proto::{
    rosnetsim::{network_update, physics_update},
    ChannelData, NetworkUpdate, PathDetails, PhysicsUpdate,
};
use flate2::{read::MultiGzDecoder, write::GzEncoder, Compression};
use prost::Message;
use std::collections::HashMap;
use std::io::{Read, Write};

/// Largest ChannelData a compressed `channel_data` field may inflate to.
pub const MAX_CHANNEL_BYTES: usize = 64 << 20;

/// The first two bytes of every gzip stream.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The serialized ChannelData a `channel_data` field holds: inflated if it is gzip (at most
/// [`MAX_CHANNEL_BYTES`]), else the bytes themselves.
pub fn inflate_channel(field: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    if !field.starts_with(&GZIP_MAGIC) {
        return Ok(field.into());
    }
    let mut out = Vec::new();
    MultiGzDecoder::new(field)
        .take(MAX_CHANNEL_BYTES as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("channel_data: not valid gzip: {e}"))?;
    if out.len() > MAX_CHANNEL_BYTES {
        return Err(format!(
            "channel_data: inflates beyond the {MAX_CHANNEL_BYTES}-byte limit"
        ));
    }
    Ok(out.into())
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(
        Vec::with_capacity(bytes.len() / 2 + 32),
        Compression::fast(),
    );
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(bytes);
    gz.finish().unwrap_or_default()
}

/// A `channel_data` field from a ROS-NetSim peer (gzip or bare, ids from 1, see the module
/// docs) as our serialized ChannelData. Empty stays empty (no channel). The error names the
/// field, the entry and the pair.
pub fn channel_from_rosnetsim(field: &[u8]) -> Result<Vec<u8>, String> {
    if field.is_empty() {
        return Ok(Vec::new());
    }
    let bare = inflate_channel(field)?;
    let theirs = Channel::decode(&bare)
        .map_err(|e| format!("channel_data: {e}"))?
        .to_message();
    let vehicles = (theirs.node_list.len() % 7 == 0).then_some(theirs.node_list.len() / 7);
    let mut paths: Vec<PathDetails> = Vec::with_capacity(theirs.path_details.len());
    let mut at: HashMap<(u32, u32), usize> = HashMap::new();
    for (i, p) in theirs.path_details.into_iter().enumerate() {
        let field = format!("channel_data: path_details[{i}]");
        let &[a, b] = p.ids.as_slice() else {
            return Err(format!(
                "{field}.ids {:?}: expected two vehicle numbers (ROS-NetSim numbers vehicles from 1)",
                p.ids
            ));
        };
        if a == 0 || b == 0 {
            return Err(format!(
                "{field}.ids [{a}, {b}]: vehicle number 0; ROS-NetSim numbers vehicles from 1"
            ));
        }
        if a == b {
            return Err(format!(
                "{field}.ids [{a}, {b}]: a path joins two different vehicles"
            ));
        }
        if let Some(n) = vehicles {
            if let Some(&v) = [a, b].iter().find(|&&v| v as usize > n) {
                return Err(format!(
                    "{field}.ids [{a}, {b}]: there is no vehicle {v} (node_list holds {n}, numbered from 1)"
                ));
            }
        }
        let need: u64 = p.num_hops.iter().map(|&h| 4 * u64::from(h)).sum();
        if need != p.hop_points.len() as u64 {
            return Err(format!(
                "{field} ([{a}, {b}]): num_hops {:?} need {need} hop_points values, got {}",
                p.num_hops,
                p.hop_points.len()
            ));
        }
        check_arrivals(p.traced, &p.arrivals).map_err(|e| format!("{field} ([{a}, {b}]): {e}"))?;
        let hops = p.num_hops.first().copied().unwrap_or(0);
        let mut points = p.hop_points;
        points.truncate(4 * hops as usize);
        let (lo, hi) = if a < b {
            (a, b)
        } else {
            // The same path walked from the other end: its points in reverse order.
            let reversed: Vec<f64> = points.chunks_exact(4).rev().flatten().copied().collect();
            points = reversed;
            (b, a)
        };
        let path = PathDetails {
            ids: vec![lo - 1, hi - 1],
            los: p.los,
            num_hops: vec![hops],
            hop_points: points,
            traced: p.traced,
            arrivals: p.arrivals,
        };
        match at.get(&(lo, hi)) {
            Some(&j) => paths[j] = path,
            None => {
                at.insert((lo, hi), paths.len());
                paths.push(path);
            }
        }
    }
    Ok(ChannelData {
        node_list: theirs.node_list,
        path_details: paths,
    }
    .encode_to_vec())
}

/// Our serialized ChannelData as a ROS-NetSim peer expects its `channel_data` field: ids
/// from 1, gzip. Empty stays empty.
pub fn channel_to_rosnetsim(ours: &[u8]) -> Result<Vec<u8>, String> {
    if ours.is_empty() {
        return Ok(Vec::new());
    }
    let mut m = Channel::decode(ours)
        .map_err(|e| format!("channel_data: {e}"))?
        .to_message();
    for p in &mut m.path_details {
        for id in &mut p.ids {
            *id = id
                .checked_add(1)
                .ok_or("channel_data: vehicle index too large")?;
        }
    }
    Ok(gzip(&m.encode_to_vec()))
}

/// A PhysicsUpdate from a ROS-NetSim peer, in our dialect.
pub fn physics_from_rosnetsim(msg: Vec<u8>) -> Result<Vec<u8>, String> {
    let Ok(mut m) = PhysicsUpdate::decode(msg.as_slice()) else {
        return Ok(msg);
    };
    if m.channel_data.is_empty() {
        return Ok(msg);
    }
    m.channel_data = channel_from_rosnetsim(&m.channel_data)?.into();
    Ok(m.encode_to_vec())
}

/// A PhysicsUpdate of ours, in ROS-NetSim's dialect.
pub fn physics_to_rosnetsim(msg: Vec<u8>) -> Result<Vec<u8>, String> {
    let Ok(mut m) = PhysicsUpdate::decode(msg.as_slice()) else {
        return Ok(msg);
    };
    if m.channel_data.is_empty() || m.msg_type != physics_update::MsgType::End as i32 {
        return Ok(msg);
    }
    m.channel_data = channel_to_rosnetsim(&m.channel_data)?.into();
    Ok(m.encode_to_vec())
}

/// A NetworkUpdate from a ROS-NetSim peer, in our dialect: a BEGIN's channel, an END's
/// deliveries (see the module docs).
pub fn network_from_rosnetsim(msg: Vec<u8>) -> Result<Vec<u8>, String> {
    let Ok(mut m) = NetworkUpdate::decode(msg.as_slice()) else {
        return Ok(msg);
    };
    if m.msg_type == network_update::MsgType::End as i32 {
        if !m.pkt_id.is_empty() {
            let n = m.pkt_id.len();
            if [m.src_ip.len(), m.dst_ip.len(), m.rx_ip.len(), m.ber.len()] != [n; 4] {
                return Err(format!(
                    "END delivers in pkt_id ({n} entries), src_ip ({}), dst_ip ({}), rx_ip ({}) and ber ({}): \
                     one entry each per delivered copy",
                    m.src_ip.len(),
                    m.dst_ip.len(),
                    m.rx_ip.len(),
                    m.ber.len()
                ));
            }
            let sent_both = m.clear_pkt_id == m.pkt_id
                && m.clear_src_ip == m.src_ip
                && m.clear_dst_ip == m.dst_ip;
            if !sent_both {
                // The delivery times and nodes are ours, parallel to clear_pkt_id.
                m.rx_time_ns.clear();
                m.rx_node.clear();
            }
            m.clear_pkt_id = std::mem::take(&mut m.pkt_id);
            m.clear_src_ip = std::mem::take(&mut m.src_ip);
            m.clear_dst_ip = std::mem::take(&mut m.dst_ip);
            // What a network simulator echoes of the BEGIN's packet entries.
            m.pkt_lengths.clear();
            m.pkt_time_ns.clear();
            m.src_node.clear();
            m.dst_node.clear();
            m.multicast.clear();
        } else if !m.clear_pkt_id.is_empty()
            && m.rx_ip.is_empty()
            && m.ber.is_empty()
            && m.rx_node.is_empty()
        {
            // Packets its coordinator may forget, none delivered.
            m.clear_pkt_id.clear();
            m.clear_src_ip.clear();
            m.clear_dst_ip.clear();
            m.rx_time_ns.clear();
        } else {
            return Ok(msg);
        }
        m.channel_data = Default::default();
        return Ok(m.encode_to_vec());
    }
    if m.channel_data.is_empty() {
        return Ok(msg);
    }
    m.channel_data = channel_from_rosnetsim(&m.channel_data)?.into();
    Ok(m.encode_to_vec())
}

/// A NetworkUpdate of ours, in ROS-NetSim's dialect: a BEGIN's channel gzip with ids from 1,
/// an END's deliveries also in `pkt_id`, `src_ip`, `dst_ip`.
pub fn network_to_rosnetsim(msg: Vec<u8>) -> Result<Vec<u8>, String> {
    let Ok(mut m) = NetworkUpdate::decode(msg.as_slice()) else {
        return Ok(msg);
    };
    if m.msg_type == network_update::MsgType::End as i32 {
        if m.clear_pkt_id.is_empty() {
            return Ok(msg);
        }
        m.pkt_id.clone_from(&m.clear_pkt_id);
        m.src_ip.clone_from(&m.clear_src_ip);
        m.dst_ip.clone_from(&m.clear_dst_ip);
        return Ok(m.encode_to_vec());
    }
    if m.channel_data.is_empty() {
        return Ok(msg);
    }
    m.channel_data = channel_to_rosnetsim(&m.channel_data)?.into();
    Ok(m.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(ids: &[u32], los: bool, num_hops: &[u32], hop_points: Vec<f64>) -> PathDetails {
        PathDetails {
            ids: ids.to_vec(),
            los,
            num_hops: num_hops.to_vec(),
            hop_points,
            ..PathDetails::default()
        }
    }

    fn channel(vehicles: usize, paths: Vec<PathDetails>) -> ChannelData {
        ChannelData {
            node_list: (0..7 * vehicles).map(|v| v as f64).collect(),
            path_details: paths,
        }
    }

    fn read(field: &[u8]) -> Result<ChannelData, String> {
        channel_from_rosnetsim(field).map(|b| ChannelData::decode(b.as_slice()).unwrap())
    }

    #[test]
    fn a_gzip_channel_with_ids_from_1_reads_as_ours() {
        let theirs = channel(3, vec![path(&[1, 3], true, &[1], vec![1.0, 2.0, 3.0, 0.5])]);
        let ours = channel(3, vec![path(&[0, 2], true, &[1], vec![1.0, 2.0, 3.0, 0.5])]);
        let field = gzip(&theirs.encode_to_vec());
        assert_eq!(field[..2], GZIP_MAGIC);
        assert_eq!(read(&field).unwrap(), ours);
        // Bare bytes are read the same way.
        assert_eq!(read(&theirs.encode_to_vec()).unwrap(), ours);
        assert_eq!(channel_from_rosnetsim(&[]).unwrap(), Vec::<u8>::new());
        // And written back: gzip, ids from 1.
        let sent = channel_to_rosnetsim(&ours.encode_to_vec()).unwrap();
        assert_eq!(sent[..2], GZIP_MAGIC);
        let mut inflated = Vec::new();
        MultiGzDecoder::new(sent.as_slice())
            .read_to_end(&mut inflated)
            .unwrap();
        assert_eq!(ChannelData::decode(inflated.as_slice()).unwrap(), theirs);
    }

    #[test]
    fn pairs_in_either_order_repeated_or_with_several_paths_read_as_one_path_per_pair() {
        let p = |x: f64| [x, x, x, x / 10.0];
        let theirs = channel(
            3,
            vec![
                // Two paths of 1 and 2 hops: the first stands.
                path(&[2, 1], true, &[1, 2], [p(1.0), p(2.0), p(3.0)].concat()),
                // No path at all.
                path(&[2, 3], false, &[], vec![]),
                // [1, 2] again, the other way round, with 2 hops: replaces the first entry.
                path(&[1, 2], false, &[2], [p(4.0), p(5.0)].concat()),
                // [3, 2] again: reversed points, replaces [2, 3].
                path(&[3, 2], true, &[2], [p(6.0), p(7.0)].concat()),
            ],
        );
        let got = read(&gzip(&theirs.encode_to_vec())).unwrap();
        assert_eq!(
            got.path_details,
            vec![
                path(&[0, 1], false, &[2], [p(4.0), p(5.0)].concat()),
                path(&[1, 2], true, &[2], [p(7.0), p(6.0)].concat()),
            ]
        );
        let only_first = channel(
            2,
            vec![path(
                &[2, 1],
                true,
                &[2, 1],
                [p(1.0), p(2.0), p(3.0)].concat(),
            )],
        );
        assert_eq!(
            read(&only_first.encode_to_vec()).unwrap().path_details,
            vec![path(&[0, 1], true, &[2], [p(2.0), p(1.0)].concat())],
            "the first path, walked from vehicle 1"
        );
    }

    #[test]
    fn what_cannot_be_read_is_named() {
        let err = |paths| read(&gzip(&channel(3, paths).encode_to_vec())).unwrap_err();
        assert_eq!(
            err(vec![path(&[1, 2], true, &[], vec![]), path(&[0, 2], true, &[], vec![])]),
            "channel_data: path_details[1].ids [0, 2]: vehicle number 0; ROS-NetSim numbers vehicles from 1"
        );
        assert_eq!(
            err(vec![path(&[1, 4], true, &[], vec![])]),
            "channel_data: path_details[0].ids [1, 4]: there is no vehicle 4 (node_list holds 3, numbered from 1)"
        );
        assert_eq!(
            err(vec![path(&[2, 2], true, &[], vec![])]),
            "channel_data: path_details[0].ids [2, 2]: a path joins two different vehicles"
        );
        assert_eq!(
            err(vec![path(&[1], true, &[], vec![])]),
            "channel_data: path_details[0].ids [1]: expected two vehicle numbers (ROS-NetSim numbers vehicles from 1)"
        );
        assert_eq!(
            err(vec![path(&[1, 2], true, &[1, 2], vec![0.0; 8])]),
            "channel_data: path_details[0] ([1, 2]): num_hops [1, 2] need 12 hop_points values, got 8"
        );
        assert!(
            err(vec![path(&[1, 2], true, &[u32::MAX, u32::MAX], vec![])])
                .contains("need 34359738360 hop_points values, got 0")
        );
        let e = read(&[0x1f, 0x8b, 1, 2, 3]).unwrap_err();
        assert!(e.starts_with("channel_data: not valid gzip"), "{e}");
        let e = read(&[0x08, 0x01]).unwrap_err();
        assert!(
            e.starts_with("channel_data: byte 1 of 2 (node_list)"),
            "{e}"
        );
    }

    #[test]
    fn arrivals_pass_both_ways_with_their_pair_and_bad_ones_are_named() {
        let arrivals = vec![0.5, 0.01, 0.0, 5.0, -5.0, 760.0, 1.0, 0.0];
        let traced = |ids: &[u32], arrivals: Vec<f64>| PathDetails {
            traced: true,
            arrivals,
            ..path(ids, true, &[1], vec![1.0, 2.0, 3.0, 0.0])
        };
        let theirs = channel(
            3,
            vec![traced(&[3, 1], arrivals.clone()), traced(&[2, 3], vec![])],
        );
        let ours = channel(
            3,
            vec![traced(&[0, 2], arrivals.clone()), traced(&[1, 2], vec![])],
        );
        assert_eq!(read(&gzip(&theirs.encode_to_vec())).unwrap(), ours);
        let sent = channel_to_rosnetsim(&ours.encode_to_vec()).unwrap();
        let back = read(&sent).unwrap();
        assert_eq!(back, ours);
        let mut bad = arrivals.clone();
        bad[5] = -1.0;
        assert_eq!(
            read(&channel(3, vec![traced(&[1, 2], bad)]).encode_to_vec()).unwrap_err(),
            "channel_data: path_details[0] ([1, 2]): arrivals[0].path_m = -1: expected a value ≥ 0"
        );
        assert_eq!(
            read(&channel(3, vec![traced(&[1, 2], arrivals[..5].to_vec())]).encode_to_vec())
                .unwrap_err(),
            "channel_data: path_details[0] ([1, 2]): 5 arrivals values; expected 8 per arrival"
        );
    }

    #[test]
    fn a_gzip_bomb_in_channel_data_is_refused() {
        let bomb = gzip(&vec![0u8; MAX_CHANNEL_BYTES + 1]);
        assert!(bomb.len() < 1 << 20);
        assert_eq!(
            channel_from_rosnetsim(&bomb).unwrap_err(),
            format!("channel_data: inflates beyond the {MAX_CHANNEL_BYTES}-byte limit")
        );
    }

    #[test]
    fn whatever_translates_passes_our_check_and_nothing_panics() {
        use crate::wire::channel::ChannelView;
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(30);
        let p = |x: f64| [x, x, x, x];
        let theirs = channel(
            3,
            vec![
                path(&[2, 1], true, &[1, 2], [p(1.0), p(2.0), p(3.0)].concat()),
                path(&[2, 3], false, &[], vec![]),
                path(&[1, 2], false, &[2], [p(4.0), p(5.0)].concat()),
            ],
        )
        .encode_to_vec();
        let mut translated = 0;
        for i in 0..3000 {
            let mut bytes = theirs.clone();
            crate::wire::mutate(
                &mut rng,
                &mut bytes,
                &[0, 1, 2, 3, 4, 0x0a, 0x12, 0x1a, 0x22, 0x28, 0x32],
            );
            let field = if rng.random_bool(0.5) {
                gzip(&bytes)
            } else {
                bytes
            };
            let Ok(ours) = channel_from_rosnetsim(&field) else {
                continue;
            };
            translated += 1;
            let c = Channel::decode(&ours).unwrap();
            let nodes = ChannelData::decode(ours.as_slice())
                .unwrap()
                .node_list
                .len();
            if nodes % 7 == 0 {
                ChannelView::check(&c, nodes / 7).unwrap_or_else(|e| panic!("case {i}: {e}"));
            }
        }
        assert!(translated > 300, "{translated}");
    }

    fn end() -> NetworkUpdate {
        NetworkUpdate {
            msg_type: network_update::MsgType::End as i32,
            time_val: 4,
            ..Default::default()
        }
    }

    #[test]
    fn deliveries_in_rosnetsims_form_read_as_ours_and_ours_are_written_in_both() {
        // What ROS-NetSim's example network simulator answers: the BEGIN's packet lists
        // without pkt_lengths, one rx_ip and ber each.
        let theirs = NetworkUpdate {
            pkt_id: vec![7, 8],
            src_ip: vec![1, 1],
            dst_ip: vec![2, 3],
            rx_ip: vec![2, 3],
            ber: vec![1e-9; 2],
            src_node: vec![0, 0],
            ..end()
        };
        let ours = NetworkUpdate::decode(
            network_from_rosnetsim(theirs.encode_to_vec())
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        let expected = NetworkUpdate {
            clear_pkt_id: vec![7, 8],
            clear_src_ip: vec![1, 1],
            clear_dst_ip: vec![2, 3],
            rx_ip: vec![2, 3],
            ber: vec![1e-9; 2],
            ..end()
        };
        assert_eq!(ours, expected);
        let written = NetworkUpdate::decode(
            network_to_rosnetsim(expected.encode_to_vec())
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        assert_eq!(
            (&written.pkt_id, &written.src_ip, &written.dst_ip),
            (
                &expected.clear_pkt_id,
                &expected.clear_src_ip,
                &expected.clear_dst_ip
            )
        );
        assert_eq!(written.clear_pkt_id, expected.clear_pkt_id);
        // Both forms read back as ours, our delivery nodes kept.
        let both = NetworkUpdate {
            rx_node: vec![1, 2],
            ..written
        };
        let back = network_from_rosnetsim(both.encode_to_vec()).unwrap();
        assert_eq!(
            NetworkUpdate::decode(back.as_slice()).unwrap(),
            NetworkUpdate {
                rx_node: vec![1, 2],
                ..expected.clone()
            }
        );
        // Ours (clear_* with rx_ip and ber) passes unchanged.
        assert_eq!(
            network_from_rosnetsim(expected.encode_to_vec()).unwrap(),
            expected.encode_to_vec()
        );
        // Packets to forget, none delivered: nothing released.
        let forget = NetworkUpdate {
            clear_pkt_id: vec![7],
            clear_src_ip: vec![1],
            clear_dst_ip: vec![2],
            ..end()
        };
        let back = network_from_rosnetsim(forget.encode_to_vec()).unwrap();
        assert_eq!(NetworkUpdate::decode(back.as_slice()).unwrap(), end());
        // Deliveries that do not line up.
        let short = NetworkUpdate {
            ber: vec![0.0],
            ..theirs
        };
        assert_eq!(
            network_from_rosnetsim(short.encode_to_vec()).unwrap_err(),
            "END delivers in pkt_id (2 entries), src_ip (2), dst_ip (2), rx_ip (2) and ber (1): \
             one entry each per delivered copy"
        );
    }

    #[test]
    fn begins_carry_the_channel_in_rosnetsims_dialect_and_undecodable_messages_pass() {
        let ours = channel(2, vec![path(&[0, 1], true, &[0], vec![])]).encode_to_vec();
        let begin = NetworkUpdate {
            channel_data: ours.clone().into(),
            ..Default::default()
        };
        let sent = NetworkUpdate::decode(
            network_to_rosnetsim(begin.encode_to_vec())
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        assert_eq!(sent.channel_data[..2], GZIP_MAGIC);
        let back = NetworkUpdate::decode(
            network_from_rosnetsim(sent.encode_to_vec())
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        assert_eq!(back.channel_data, ours);
        let end = PhysicsUpdate {
            msg_type: physics_update::MsgType::End as i32,
            time_val: 2,
            channel_data: ours.clone().into(),
            set_pose: vec![],
        };
        let sent = physics_to_rosnetsim(end.encode_to_vec()).unwrap();
        let back = PhysicsUpdate::decode(physics_from_rosnetsim(sent).unwrap().as_slice()).unwrap();
        assert_eq!(back, end);
        for junk in [vec![0xff; 5], vec![0x08]] {
            assert_eq!(physics_from_rosnetsim(junk.clone()).unwrap(), junk);
            assert_eq!(network_from_rosnetsim(junk.clone()).unwrap(), junk);
        }
    }
}
