//! A [`ChannelData`] checked once against the scenario's vehicles, then read without checks.
//!
//! The physics coordinator checks every window's ChannelData as it arrives
//! ([`ChannelView::check`]) and hands the view to everything that reads it on its side: the
//! timeline, the ROS 2 layer, the vehicle bridges, the emulated modems. A ChannelData that does
//! not describe the scenario's vehicles ends the run with a protocol error naming the physics
//! simulator, the window and what is wrong. The embedded network simulator, which may run in
//! another process, checks the ChannelData of each BEGIN the same way. The model reads
//! distances, LOS flags and hop losses from a view only, through
//! `model::link::ChannelGeometry`.
//!
//! A valid ChannelData for `n` vehicles has:
//! - `node_list`: exactly `7 n` values, `x, y, z, qw, qx, qy, qz` per vehicle;
//! - per `PathDetails`: `ids` = `[a, b]` with `a < b < n`, `num_hops` = one value `h`, and
//!   `hop_points` = exactly `4 h` values (`x, y, z, loss_db` per point).

use crate::wire::proto::{ChannelData, PathDetails};

/// Why a ChannelData does not describe the vehicles.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChannelError {
    #[error("node_list has {values} values; expected 7 per vehicle for {vehicles} vehicles")]
    NodeList { values: usize, vehicles: usize },
    #[error("path_details[{index}]: ids {ids:?}: expected two vehicle indices a < b < {vehicles}")]
    Ids {
        index: usize,
        ids: Vec<u32>,
        vehicles: usize,
    },
    #[error("path_details[{index}] ([{a}, {b}]): num_hops {num_hops:?}: expected one value")]
    NumHops {
        index: usize,
        a: u32,
        b: u32,
        num_hops: Vec<u32>,
    },
    #[error(
        "path_details[{index}] ([{a}, {b}]): {values} hop_points values for {hops} hops; \
         expected 4 per hop"
    )]
    HopPoints {
        index: usize,
        a: u32,
        b: u32,
        hops: u32,
        values: usize,
    },
}

/// A checked ChannelData (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct ChannelView<'a> {
    data: &'a ChannelData,
}

/// One checked path: the pair `a < b`, LOS, and its hop points.
#[derive(Debug, Clone, Copy)]
pub struct PathView<'a> {
    pub a: usize,
    pub b: usize,
    pub los: bool,
    hop_points: &'a [f64],
}

impl<'a> ChannelView<'a> {
    /// Checks `data` against `vehicles` vehicles.
    pub fn check(data: &'a ChannelData, vehicles: usize) -> Result<ChannelView<'a>, ChannelError> {
        if data.node_list.len() != 7 * vehicles {
            return Err(ChannelError::NodeList {
                values: data.node_list.len(),
                vehicles,
            });
        }
        for (index, p) in data.path_details.iter().enumerate() {
            let &[a, b] = p.ids.as_slice() else {
                return Err(ChannelError::Ids {
                    index,
                    ids: p.ids.clone(),
                    vehicles,
                });
            };
            if a >= b || b as usize >= vehicles {
                return Err(ChannelError::Ids {
                    index,
                    ids: p.ids.clone(),
                    vehicles,
                });
            }
            let &[hops] = p.num_hops.as_slice() else {
                return Err(ChannelError::NumHops {
                    index,
                    a,
                    b,
                    num_hops: p.num_hops.clone(),
                });
            };
            if p.hop_points.len() as u64 != 4 * u64::from(hops) {
                return Err(ChannelError::HopPoints {
                    index,
                    a,
                    b,
                    hops,
                    values: p.hop_points.len(),
                });
            }
        }
        Ok(ChannelView { data })
    }

    /// The message itself.
    pub fn data(&self) -> &'a ChannelData {
        self.data
    }

    /// Number of vehicles.
    pub fn vehicles(&self) -> usize {
        self.data.node_list.len() / 7
    }

    /// Vehicle `i`'s `x, y, z, qw, qx, qy, qz` (`None` past the last vehicle).
    pub fn pose(&self, i: usize) -> Option<[f64; 7]> {
        self.data
            .node_list
            .get(7 * i..7 * i + 7)
            .map(|c| c.try_into().expect("a slice of 7"))
    }

    /// Vehicle `i`'s position (`i` must be a vehicle index).
    pub fn position(&self, i: usize) -> [f64; 3] {
        let c = &self.data.node_list[7 * i..7 * i + 3];
        [c[0], c[1], c[2]]
    }

    /// Straight-line distance between vehicles `a` and `b` (metres).
    pub fn distance_m(&self, a: usize, b: usize) -> f64 {
        let (p, q) = (self.position(a), self.position(b));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    }

    /// The paths, in message order.
    pub fn paths(&self) -> impl Iterator<Item = PathView<'a>> + 'a {
        self.data
            .path_details
            .iter()
            .map(|p: &'a PathDetails| PathView {
                a: p.ids[0] as usize,
                b: p.ids[1] as usize,
                los: p.los,
                hop_points: &p.hop_points,
            })
    }
}

impl PathView<'_> {
    /// Number of hop points (A, entries and exits, B).
    pub fn hops(&self) -> u32 {
        (self.hop_points.len() / 4) as u32
    }

    /// The hop points, `[x, y, z, loss_db]` each.
    pub fn points(&self) -> Vec<[f64; 4]> {
        self.hop_points
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect()
    }

    /// Each hop's loss (dB), in order.
    pub fn losses_db(&self) -> impl Iterator<Item = f64> + '_ {
        self.hop_points.chunks_exact(4).map(|c| c[3])
    }

    /// Sum of the hops' losses (dB).
    pub fn loss_db(&self) -> f64 {
        self.hop_points.chunks_exact(4).map(|c| c[3]).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(ids: &[u32], num_hops: &[u32], points: usize) -> PathDetails {
        PathDetails {
            ids: ids.to_vec(),
            los: false,
            num_hops: num_hops.to_vec(),
            hop_points: vec![1.0; points],
        }
    }

    fn channel(paths: Vec<PathDetails>) -> ChannelData {
        let mut node_list = vec![0.0; 21];
        node_list[7..10].copy_from_slice(&[3.0, 4.0, 0.0]);
        ChannelData {
            node_list,
            path_details: paths,
        }
    }

    #[test]
    fn a_valid_channel_reads_back() {
        let mut p = path(&[0, 1], &[4], 16);
        p.hop_points[7] = 2.5;
        p.hop_points[15] = 0.5;
        let c = channel(vec![p, path(&[1, 2], &[2], 8)]);
        let v = ChannelView::check(&c, 3).unwrap();
        assert_eq!(v.vehicles(), 3);
        assert_eq!(v.distance_m(0, 1), 5.0);
        assert_eq!(v.pose(1).unwrap()[..3], [3.0, 4.0, 0.0]);
        assert_eq!(v.pose(3), None);
        let paths: Vec<_> = v.paths().collect();
        assert_eq!(
            (paths[0].a, paths[0].b, paths[0].hops(), paths[0].loss_db()),
            (0, 1, 4, 2.5 + 0.5 + 2.0)
        );
        assert_eq!(paths[1].points(), vec![[1.0; 4]; 2]);
    }

    #[test]
    fn every_inconsistency_is_named() {
        let bad = |paths: Vec<PathDetails>, vehicles: usize| {
            ChannelView::check(&channel(paths), vehicles).unwrap_err()
        };
        assert_eq!(
            bad(vec![], 2),
            ChannelError::NodeList {
                values: 21,
                vehicles: 2
            }
        );
        assert!(matches!(
            bad(vec![path(&[0], &[2], 8)], 3),
            ChannelError::Ids { index: 0, .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 1], &[2], 8), path(&[1, 1], &[2], 8)], 3),
            ChannelError::Ids { index: 1, .. }
        ));
        assert!(matches!(
            bad(vec![path(&[2, 1], &[2], 8)], 3),
            ChannelError::Ids { .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 3], &[2], 8)], 3),
            ChannelError::Ids { .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 1], &[], 8)], 3),
            ChannelError::NumHops { .. }
        ));
        assert!(matches!(
            bad(vec![path(&[0, 1], &[2, 2], 8)], 3),
            ChannelError::NumHops { .. }
        ));
        assert_eq!(
            bad(vec![path(&[0, 2], &[2], 7)], 3),
            ChannelError::HopPoints {
                index: 0,
                a: 0,
                b: 2,
                hops: 2,
                values: 7
            }
        );
        assert_eq!(
            bad(vec![path(&[0, 2], &[2], 7)], 3).to_string(),
            "path_details[0] ([0, 2]): 7 hop_points values for 2 hops; expected 4 per hop"
        );
        assert!(matches!(
            bad(vec![path(&[0, 1], &[u32::MAX], 8)], 3),
            ChannelError::HopPoints { .. }
        ));
    }
}
