//! The NETSIM manager's rules: which navigation updates are accepted, in the reference
//! order, and what they do to the vehicles. Pure: the server feeds requests and the sender's
//! address; [`NavInbox`] keeps the accepted fixes until the physics coordinator puts them into
//! its next window's BEGIN ([`nav_to_pose`]), whatever the physics simulator is.
//!
//! For each nav entry, in order (the reference's order):
//! 1. an unknown `modem_tcp_port` → `UPDATE_FAILED_INVALID_MODEM_TCP_PORT`;
//! 2. a sender address other than the vehicle's `nav_source_address` →
//!    `UPDATE_FAILED_INVALID_SOURCE_ADDRESS`;
//! 3. latitude, longitude or depth outside the vehicle's environment (bounds inclusive; NaN
//!    is outside) → `UPDATE_FAILED_OUT_OF_DEFINED_REGION`.
//!
//! The first failing entry decides the response. Unlike the reference, a request is applied
//! **all or nothing**: if any entry fails, no entry of it moves a vehicle and its receive
//! statistics are not recorded, so a client never sees a half-applied request.

use crate::config::geo::LocalFrame;
use crate::config::{Environment, Scenario};
use crate::wire::proto::netsim::{
    net_sim_manager_response::Status, NavUpdate, NetSimManagerRequest, NetSimManagerResponse,
    ReceiveStats,
};
use crate::wire::proto::SetPose;
use std::{
    collections::{HashMap, VecDeque},
    net::IpAddr,
    sync::{Arc, Mutex},
};

/// Receive statistics kept for inspection (the newest first out when full).
pub const MAX_RECORDED_STATS: usize = 4096;

#[derive(Debug, Clone)]
struct Pair {
    vehicle: usize,
    source: IpAddr,
    environment: Environment,
}

/// The rules for one scenario.
#[derive(Debug, Clone)]
pub struct Rules {
    by_port: HashMap<i32, Pair>,
}

/// What a request leads to.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub response: NetSimManagerResponse,
    /// (vehicle index, update) for an accepted request; empty otherwise.
    pub accepted: Vec<(usize, NavUpdate)>,
    pub stats: Vec<ReceiveStats>,
}

impl Rules {
    /// `None` if the scenario has no NETSIM manager.
    pub fn new(s: &Scenario) -> Option<Rules> {
        let m = s.netsim_manager.as_ref()?;
        let mut by_port = HashMap::new();
        for (vehicle, v) in s.vehicles.iter().enumerate() {
            let Some(modem) = &v.modem else { continue };
            let env = match modem.environment_id {
                Some(id) => m.environments.iter().find(|e| e.id == id),
                None => m.environments.first(),
            };
            // Validation guarantees the environment exists.
            if let Some(environment) = env {
                by_port.insert(
                    modem.tcp_port as i32,
                    Pair {
                        vehicle,
                        source: modem.nav_source_address,
                        environment: *environment,
                    },
                );
            }
        }
        Some(Rules { by_port })
    }

    pub fn decide(&self, request: &NetSimManagerRequest, from: IpAddr) -> Decision {
        let mut accepted = Vec::with_capacity(request.nav.len());
        let mut status = Status::UpdateAccepted;
        for nav in &request.nav {
            let Some(pair) = self.by_port.get(&nav.modem_tcp_port) else {
                status = Status::UpdateFailedInvalidModemTcpPort;
                break;
            };
            if canonical(from) != canonical(pair.source) {
                status = Status::UpdateFailedInvalidSourceAddress;
                break;
            }
            let e = &pair.environment;
            let inside = |v: f64, lo: f64, hi: f64| v >= lo && v <= hi;
            if !(inside(nav.lat, e.lat_min, e.lat_max)
                && inside(nav.lon, e.lon_min, e.lon_max)
                && inside(nav.depth, e.depth_min, e.depth_max))
            {
                status = Status::UpdateFailedOutOfDefinedRegion;
                break;
            }
            accepted.push((pair.vehicle, *nav));
        }
        let ok = status == Status::UpdateAccepted;
        Decision {
            response: NetSimManagerResponse {
                request_id: request.id,
                status: status as i32,
            },
            accepted: if ok { accepted } else { Vec::new() },
            stats: if ok {
                request.stats.clone()
            } else {
                Vec::new()
            },
        }
    }
}

/// An IPv4-mapped IPv6 sender (`::ffff:127.0.0.1`, as a dual-stack listener reports it) is
/// the IPv4 address it maps.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// Where accepted fixes wait for the physics side: the newest fix per vehicle (so memory is
/// bounded by the number of vehicles), plus counters and the recorded receive statistics.
#[derive(Debug, Clone, Default)]
pub struct NavInbox {
    inner: Arc<Mutex<InboxState>>,
}

#[derive(Debug, Default)]
struct InboxState {
    latest: HashMap<usize, NavUpdate>,
    fixes: u64,
    superseded: u64,
    stats: VecDeque<ReceiveStats>,
    stats_total: u64,
}

/// Counters of an inbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct InboxCounts {
    /// Fixes accepted.
    pub fixes: u64,
    /// Fixes replaced by a newer one for the same vehicle before a window applied them.
    pub superseded: u64,
    /// Receive statistics recorded (the newest [`MAX_RECORDED_STATS`] are kept).
    pub stats: u64,
}

impl NavInbox {
    pub fn deliver(&self, d: &Decision) {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        for (vehicle, nav) in &d.accepted {
            s.fixes += 1;
            if s.latest.insert(*vehicle, *nav).is_some() {
                s.superseded += 1;
            }
        }
        for st in &d.stats {
            if s.stats.len() == MAX_RECORDED_STATS {
                s.stats.pop_front();
            }
            s.stats.push_back(st.clone());
            s.stats_total += 1;
        }
    }

    /// The pending fixes, one per vehicle, in vehicle order.
    pub fn take(&self) -> Vec<(usize, NavUpdate)> {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut fixes: Vec<_> = s.latest.drain().collect();
        fixes.sort_by_key(|(v, _)| *v);
        fixes
    }

    pub fn counts(&self) -> InboxCounts {
        let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        InboxCounts {
            fixes: s.fixes,
            superseded: s.superseded,
            stats: s.stats_total,
        }
    }

    pub fn recorded_stats(&self) -> Vec<ReceiveStats> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stats
            .iter()
            .cloned()
            .collect()
    }
}

/// A nav fix of vehicle `node` as the pose a physics BEGIN imposes, in the local frame
/// (heading: degrees true = compass).
pub fn nav_to_pose(frame: &LocalFrame, node: usize, nav: &NavUpdate) -> SetPose {
    let p = frame.from_lat_lon_depth(nav.lat, nav.lon, nav.depth);
    SetPose {
        node: node as u32,
        x: p.x,
        y: p.y,
        z: p.z,
        heading_deg: nav.heading,
        speed_mps: nav.speed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/patrol.yaml"))
                .unwrap();
        let mut s = crate::config::parse_str(&text, std::path::Path::new("config/patrol.yaml"))
            .unwrap()
            .scenario;
        s.netsim_manager = Some(crate::config::NetsimManager {
            bind: "127.0.0.1".parse().unwrap(),
            port: 61999,
            environments: vec![Environment {
                id: 1,
                lat_min: 41.0,
                lon_min: -71.0,
                lat_max: 42.0,
                lon_max: -70.0,
                depth_min: 0.0,
                depth_max: 100.0,
            }],
        });
        s
    }

    fn nav(port: i32, lat: f64, depth: f64) -> NavUpdate {
        NavUpdate {
            modem_tcp_port: port,
            time: 1.0,
            lat,
            lon: -70.6,
            depth,
            speed: 1.0,
            heading: 90.0,
        }
    }

    fn request(nav: Vec<NavUpdate>) -> NetSimManagerRequest {
        NetSimManagerRequest {
            id: 9,
            nav,
            stats: vec![],
        }
    }

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    #[test]
    fn statuses_in_the_reference_order_and_all_or_nothing() {
        let r = Rules::new(&scenario()).unwrap();
        let ok = r.decide(
            &request(vec![nav(62000, 41.5, 10.0), nav(62001, 41.5, 20.0)]),
            LOCAL,
        );
        assert_eq!(
            ok.response,
            NetSimManagerResponse {
                request_id: 9,
                status: Status::UpdateAccepted as i32
            }
        );
        assert_eq!(
            ok.accepted.iter().map(|a| a.0).collect::<Vec<_>>(),
            vec![0, 1]
        );

        let bad_port = r.decide(
            &request(vec![nav(62000, 41.5, 10.0), nav(62007, 41.5, 10.0)]),
            LOCAL,
        );
        assert_eq!(
            bad_port.response.status(),
            Status::UpdateFailedInvalidModemTcpPort
        );
        assert!(
            bad_port.accepted.is_empty(),
            "nothing applied from a failed request"
        );

        let other = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 9));
        assert_eq!(
            r.decide(&request(vec![nav(62000, 41.5, 10.0)]), other)
                .response
                .status(),
            Status::UpdateFailedInvalidSourceAddress
        );
        // Port is checked before the source, source before the region.
        assert_eq!(
            r.decide(&request(vec![nav(1, 99.0, 10.0)]), other)
                .response
                .status(),
            Status::UpdateFailedInvalidModemTcpPort
        );
        assert_eq!(
            r.decide(&request(vec![nav(62000, 99.0, 10.0)]), other)
                .response
                .status(),
            Status::UpdateFailedInvalidSourceAddress
        );
        assert_eq!(
            r.decide(&request(vec![nav(62000, 43.0, 10.0)]), LOCAL)
                .response
                .status(),
            Status::UpdateFailedOutOfDefinedRegion
        );
        assert_eq!(
            r.decide(&request(vec![nav(62000, 41.5, 101.0)]), LOCAL)
                .response
                .status(),
            Status::UpdateFailedOutOfDefinedRegion
        );
        assert_eq!(
            r.decide(&request(vec![nav(62000, f64::NAN, 1.0)]), LOCAL)
                .response
                .status(),
            Status::UpdateFailedOutOfDefinedRegion
        );
        // Bounds are inclusive; a v4-mapped v6 sender is its v4 address.
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(
            r.decide(&request(vec![nav(62000, 42.0, 100.0)]), mapped)
                .response
                .status(),
            Status::UpdateAccepted
        );
    }

    #[test]
    fn inbox_keeps_the_newest_fix_per_vehicle_and_counts() {
        let r = Rules::new(&scenario()).unwrap();
        let inbox = NavInbox::default();
        inbox.deliver(&r.decide(&request(vec![nav(62000, 41.5, 10.0)]), LOCAL));
        inbox.deliver(&r.decide(
            &request(vec![nav(62000, 41.6, 11.0), nav(62002, 41.5, 5.0)]),
            LOCAL,
        ));
        let fixes = inbox.take();
        assert_eq!(fixes.len(), 2);
        assert_eq!((fixes[0].0, fixes[0].1.lat), (0, 41.6));
        assert_eq!(
            inbox.counts(),
            InboxCounts {
                fixes: 3,
                superseded: 1,
                stats: 0
            }
        );
        assert!(inbox.take().is_empty());
    }
}
