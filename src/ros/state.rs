//! What one window says about each vehicle and each pair, in the form the ROS messages need.
//! Pure: built from the (checked) ChannelData and the network END the coordinator already
//! holds.

use crate::config::Scenario;
use crate::wire::channel::ChannelView;
use crate::wire::update::NetworkView;
use std::net::{IpAddr, Ipv4Addr};

/// A vehicle's pose: position (m, ENU) and orientation (w, x, y, z).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub position: [f64; 3],
    pub orientation: [f64; 4],
}

/// Traffic between the two vehicles of a pair during the window, per direction.
/// Deliveries come from the END's released copies (`clear_src_ip` → sender, `rx_node` or
/// `rx_ip` → receiver). Drops (`drop_pkt_id`, `drop_node`) count towards a pair only when
/// the same END also delivered that packet to someone, which names its sender; the rest are
/// in [`WindowState::unattributed_drops`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairTraffic {
    pub delivered_ab: u64,
    pub delivered_ba: u64,
    pub dropped_ab: u64,
    pub dropped_ba: u64,
}

/// Link figures only the network simulator knows: the link state its ENDs last reported for
/// the pair's a → b direction (b → a if only that one was), held until reported again; `None`
/// where it reported none (a simulator without link state, a model without SNR).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkModelFigures {
    pub snr_db: Option<f64>,
    pub per: Option<f64>,
    pub delay_s: Option<f64>,
    pub rate_bps: Option<f64>,
}

/// The link states the network simulator reported, held per directed pair.
#[derive(Debug, Clone, Default)]
pub struct HeldLinks {
    n: usize,
    /// `a * n + b` → the figures of a → b.
    held: Vec<Option<LinkModelFigures>>,
}

impl HeldLinks {
    pub fn new(vehicles: usize) -> HeldLinks {
        HeldLinks {
            n: vehicles,
            held: vec![None; vehicles * vehicles],
        }
    }

    /// Takes in an END's link states (entries naming no vehicle are skipped).
    pub fn update(&mut self, end: &NetworkView) {
        for l in end.link_states() {
            let (a, b) = (l.src_node as usize, l.dst_node as usize);
            if a < self.n && b < self.n {
                self.held[a * self.n + b] = Some(LinkModelFigures {
                    snr_db: l.snr_db,
                    per: Some(l.per),
                    delay_s: Some(l.delay_ns as f64 / 1e9),
                    rate_bps: Some(l.rate_bps),
                });
            }
        }
    }

    /// The pair's figures: a → b's, else b → a's, else none.
    pub fn figures(&self, a: usize, b: usize) -> LinkModelFigures {
        let at = |x: usize, y: usize| {
            if x < self.n && y < self.n {
                self.held[x * self.n + y]
            } else {
                None
            }
        };
        at(a, b).or_else(|| at(b, a)).unwrap_or_default()
    }
}

/// One pair i < j: geometry from the ChannelData, traffic from the END.
#[derive(Debug, Clone, PartialEq)]
pub struct PairState {
    pub a: usize,
    pub b: usize,
    pub los: bool,
    pub distance_m: f64,
    pub loss_db: f64,
    /// A, entry₁, exit₁, …, B as [x, y, z, loss_db].
    pub path: Vec<[f64; 4]>,
    pub traffic: PairTraffic,
    pub model: LinkModelFigures,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowState {
    pub window: u32,
    pub start_ns: u64,
    pub poses: Vec<Pose>,
    pub pairs: Vec<PairState>,
    /// Dropped copies whose sender the END does not name, per receiving vehicle.
    pub unattributed_drops: Vec<u64>,
}

/// Maps the addresses in NetworkUpdate (`*_ip`: each vehicle's first IPv4 address as a
/// big-endian u32, 10.0.0.1 = 0x0a000001) back to vehicle indices.
#[derive(Debug, Clone, Default)]
pub struct Vehicles {
    pub names: Vec<String>,
    ipv4: Vec<Option<u32>>,
}

impl Vehicles {
    pub fn from_scenario(s: &Scenario) -> Vehicles {
        let names = s.vehicles.iter().map(|v| v.name.clone()).collect();
        let ipv4 = s
            .vehicles
            .iter()
            .map(|v| {
                v.addresses.iter().find_map(|a| match a.addr() {
                    IpAddr::V4(ip) => Some(u32::from(ip)),
                    IpAddr::V6(_) => None,
                })
            })
            .collect();
        Vehicles { names, ipv4 }
    }

    pub fn new(names: Vec<String>, ipv4: Vec<Option<Ipv4Addr>>) -> Vehicles {
        Vehicles {
            names,
            ipv4: ipv4.into_iter().map(|a| a.map(u32::from)).collect(),
        }
    }

    fn by_ip(&self, ip: u32) -> Option<usize> {
        self.ipv4.iter().position(|a| *a == Some(ip))
    }

    /// The window's state; `channel` was checked against these vehicles.
    pub fn window(
        &self,
        window: u32,
        start_ns: u64,
        channel: &ChannelView,
        end: &NetworkView,
    ) -> WindowState {
        let n = self.names.len();
        let poses: Vec<Pose> = (0..n)
            .map(|i| {
                let c = channel.pose(i).unwrap_or_default();
                Pose {
                    position: [c[0], c[1], c[2]],
                    orientation: [c[3], c[4], c[5], c[6]],
                }
            })
            .collect();
        let mut pairs: Vec<PairState> = channel
            .paths()
            .map(|p| PairState {
                a: p.a,
                b: p.b,
                los: p.los,
                distance_m: channel.distance_m(p.a, p.b),
                loss_db: p.loss_db(),
                path: p.points(),
                traffic: PairTraffic::default(),
                model: LinkModelFigures::default(),
            })
            .collect();
        let mut unattributed_drops = vec![0; n];
        let pair_of = |pairs: &mut Vec<PairState>, s: usize, r: usize| {
            pairs
                .iter_mut()
                .position(|p| (p.a, p.b) == (s.min(r), s.max(r)))
        };
        // Deliveries, and the sender of every delivered packet id (to attribute drops).
        let mut sender_of: Vec<(u32, usize)> = Vec::new();
        for d in end.releases() {
            let Some(s) = self.by_ip(d.src_ip) else {
                continue;
            };
            sender_of.push((d.pkt_id, s));
            let receiver = d
                .rx_node
                .map(|r| r as usize)
                .filter(|&r| r < n)
                .or_else(|| self.by_ip(d.rx_ip));
            let Some(r) = receiver else { continue };
            if r == s {
                continue;
            }
            if let Some(k) = pair_of(&mut pairs, s, r) {
                let t = &mut pairs[k].traffic;
                if s < r {
                    t.delivered_ab += 1
                } else {
                    t.delivered_ba += 1
                }
            }
        }
        for loss in end.losses() {
            let (pkt, Some(r)) = (loss.pkt_id, loss.node) else {
                continue;
            };
            let r = r as usize;
            if r >= n {
                continue;
            }
            match sender_of
                .iter()
                .find(|(p, _)| *p == pkt)
                .map(|&(_, s)| s)
                .filter(|&s| s != r)
            {
                Some(s) => {
                    if let Some(k) = pair_of(&mut pairs, s, r) {
                        let t = &mut pairs[k].traffic;
                        if s < r {
                            t.dropped_ab += 1
                        } else {
                            t.dropped_ba += 1
                        }
                    }
                }
                None => unattributed_drops[r] += 1,
            }
        }
        WindowState {
            window,
            start_ns,
            poses,
            pairs,
            unattributed_drops,
        }
    }
}

/// Sim time in ns as ROS `builtin_interfaces/Time` (sec, nanosec).
pub fn ros_time(ns: u64) -> (i32, u32) {
    ((ns / 1_000_000_000) as i32, (ns % 1_000_000_000) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::proto::{ChannelData, PathDetails};

    fn vehicles() -> Vehicles {
        Vehicles::new(
            vec!["a".into(), "b".into(), "c".into()],
            vec![
                Some(Ipv4Addr::new(10, 0, 0, 1)),
                Some(Ipv4Addr::new(10, 0, 0, 2)),
                None,
            ],
        )
    }

    fn channel() -> ChannelData {
        // a at (0, 0, 0), b at (3, 0, 0), c at (0, 4, 0), all with the identity orientation.
        let node_list = [[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]
            .iter()
            .flat_map(|[x, y]| [*x, *y, 0.0, 1.0, 0.0, 0.0, 0.0])
            .collect();
        let path = |ids: [u32; 2], los: bool, pts: Vec<f64>| PathDetails {
            ids: ids.to_vec(),
            los,
            num_hops: vec![(pts.len() / 4) as u32],
            hop_points: pts,
            ..Default::default()
        };
        ChannelData {
            node_list,
            path_details: vec![
                path([0, 1], true, vec![0., 0., 0., 0., 3., 0., 0., 0.]),
                path(
                    [0, 2],
                    false,
                    vec![
                        0., 0., 0., 0., 0., 1., 0., 0., 0., 2., 0., 5., 0., 4., 0., 0.,
                    ],
                ),
                path([1, 2], true, vec![3., 0., 0., 0., 0., 4., 0., 0.]),
            ],
        }
    }

    #[test]
    fn geometry_per_pair() {
        let c = channel();
        let s = vehicles().window(
            3,
            30,
            &ChannelView::check(&crate::wire::channel::Channel::from(&c), 3).unwrap(),
            &NetworkView::check(Default::default()).unwrap(),
        );
        assert_eq!(s.poses[1].position, [3.0, 0.0, 0.0]);
        assert_eq!((s.pairs[0].los, s.pairs[0].distance_m), (true, 3.0));
        assert_eq!(
            (
                s.pairs[1].los,
                s.pairs[1].distance_m,
                s.pairs[1].loss_db,
                s.pairs[1].path.len()
            ),
            (false, 4.0, 5.0, 4)
        );
        assert_eq!(s.pairs[2].distance_m, 5.0);
    }

    #[test]
    fn deliveries_and_drops_per_direction() {
        let ip = |d| u32::from(Ipv4Addr::new(10, 0, 0, d));
        let end = crate::wire::proto::NetworkUpdate {
            clear_pkt_id: vec![1, 2, 2, 3],
            clear_src_ip: vec![ip(1), ip(2), ip(2), ip(1)],
            clear_dst_ip: vec![ip(2), ip(1), ip(1), ip(2)],
            rx_ip: vec![ip(2), ip(1), ip(1), ip(2)],
            ber: vec![0.0; 4],
            // packet 3 was also dropped at c (sender known: a); packet 9 at b (sender unknown)
            drop_pkt_id: vec![3, 9],
            drop_node: vec![2, 1],
            drop_reason: vec![2, 1],
            ..Default::default()
        };
        let c = channel();
        let s = vehicles().window(
            0,
            0,
            &ChannelView::check(&crate::wire::channel::Channel::from(&c), 3).unwrap(),
            &NetworkView::check(end).unwrap(),
        );
        assert_eq!(
            s.pairs[0].traffic,
            PairTraffic {
                delivered_ab: 2,
                delivered_ba: 2,
                dropped_ab: 0,
                dropped_ba: 0
            }
        );
        assert_eq!(
            s.pairs[1].traffic,
            PairTraffic {
                dropped_ab: 1,
                ..Default::default()
            }
        );
        assert_eq!(s.unattributed_drops, vec![0, 1, 0]);
    }

    #[test]
    fn link_states_are_held_until_reported_again() {
        use crate::wire::proto::{LinkState, NetworkUpdate};
        let end = |states: Vec<LinkState>| {
            NetworkView::check(NetworkUpdate {
                link_state: states,
                ..Default::default()
            })
            .unwrap()
        };
        let state = LinkState {
            src_node: 1,
            dst_node: 0,
            usable: true,
            snr_db: Some(14.0),
            rate_bps: 12e6,
            per: 0.02,
            delay_ns: 2_000_000,
        };
        let mut h = HeldLinks::new(3);
        assert_eq!(h.figures(0, 1), LinkModelFigures::default());
        h.update(&end(vec![state]));
        let f = LinkModelFigures {
            snr_db: Some(14.0),
            per: Some(0.02),
            delay_s: Some(0.002),
            rate_bps: Some(12e6),
        };
        assert_eq!(h.figures(0, 1), f, "b → a stands in for a → b");
        h.update(&end(vec![]));
        assert_eq!(h.figures(1, 0), f, "held while not reported");
        h.update(&end(vec![
            LinkState {
                src_node: 0,
                dst_node: 1,
                snr_db: None,
                ..state
            },
            LinkState {
                src_node: 9,
                ..state
            },
        ]));
        assert_eq!(h.figures(0, 1).snr_db, None);
        assert_eq!(h.figures(1, 0), f);
    }

    #[test]
    fn time_split() {
        assert_eq!(ros_time(12_345_000_000), (12, 345_000_000));
    }
}
