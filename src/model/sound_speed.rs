//! The sea's sound speed in three dimensions, as the beam tracer needs it: one profile
//! everywhere (`world.water.profile`, or the water's own settings), or CTD casts at places
//! (`world.water.casts`), and the range-dependent profile it gives along a pair's bearing.
//!
//! Between casts, a point of the sea takes at each depth the casts' speeds weighted by the
//! inverse square of its horizontal distance to each (Shepard's interpolation: exact at a cast,
//! smooth between, the nearest cast's beyond them all). Along a bearing the tracer gets the
//! profiles so found at [`COLUMNS`] ranges evenly from the source to the section's end, linear
//! in range between them (BELLHOP's `Q` option). All casts are put on one set of depths: the
//! union of theirs (thinned to [`MAX_DEPTHS`] evenly spaced when larger), each cast linear
//! between its rows and holding its first and last speeds above and below them, down to the
//! terrain's deepest point.

use crate::config::LoadedScenario;
use crate::model::beam::Profile;

/// Profiles along a bearing, from the source to the section's end.
pub const COLUMNS: usize = 17;
/// Most depths the casts are put on (the tracer lands a step on each).
pub const MAX_DEPTHS: usize = 200;
/// Horizontal distance (m) under which a point takes a cast's profile as it is.
const AT_CAST_M: f64 = 1.0;

/// The sound speed of the sea (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct SoundSpeed {
    depths: Vec<f64>,
    /// Each cast's place (m east, north) and speeds at `depths`.
    casts: Vec<([f64; 2], Vec<f64>)>,
}

impl SoundSpeed {
    /// The scenario's: its casts, else its profile (or the water's own settings), down to the
    /// terrain's deepest point.
    pub fn from_scenario(loaded: &LoadedScenario) -> SoundSpeed {
        let deepest = loaded.deepest_m();
        let casts: Vec<_> = loaded
            .scenario
            .world
            .water
            .casts
            .iter()
            .flatten()
            .filter_map(|c| {
                let read = c.read.as_ref()?;
                Some((c.at?, read.depth_m.as_slice(), read.speed_mps.as_slice()))
            })
            .collect();
        if !casts.is_empty() {
            return SoundSpeed::from_casts(&casts, deepest);
        }
        let (depths, speeds) = loaded.sound_speed_profile();
        SoundSpeed {
            depths,
            casts: vec![([0.0, 0.0], speeds)],
        }
    }

    /// One profile everywhere: rows of depth (from 0, increasing) and speed.
    pub fn uniform(depths: Vec<f64>, speeds: Vec<f64>) -> SoundSpeed {
        SoundSpeed {
            depths,
            casts: vec![([0.0, 0.0], speeds)],
        }
    }

    /// Casts at places: `(place, depths, speeds)`, each with depths increasing (at least one),
    /// put on common depths from 0 to at least `deepest_m`.
    pub fn from_casts(casts: &[([f64; 2], &[f64], &[f64])], deepest_m: f64) -> SoundSpeed {
        let mut depths: Vec<f64> = casts
            .iter()
            .flat_map(|c| c.1.iter().copied())
            .filter(|d| d.is_finite() && *d > 0.0)
            .chain([0.0])
            .collect();
        let bottom = depths
            .iter()
            .copied()
            .fold(deepest_m.max(0.0), f64::max)
            .max(1.0);
        depths.push(bottom);
        depths.sort_by(f64::total_cmp);
        depths.dedup_by(|a, b| (*a - *b).abs() < 1e-3);
        if depths.len() > MAX_DEPTHS {
            depths = (0..MAX_DEPTHS)
                .map(|i| bottom * i as f64 / (MAX_DEPTHS - 1) as f64)
                .collect();
        }
        let casts = casts
            .iter()
            .map(|&(at, d, c)| (at, depths.iter().map(|&z| linear(d, c, z)).collect()))
            .collect();
        SoundSpeed { depths, casts }
    }

    /// The depths every profile is given at.
    pub fn depths(&self) -> &[f64] {
        &self.depths
    }

    /// How many casts (1 for a profile the same everywhere).
    pub fn casts(&self) -> usize {
        self.casts.len()
    }

    /// The speeds at [`SoundSpeed::depths`] at `at` (m east, north).
    pub fn profile_at(&self, at: [f64; 2]) -> Vec<f64> {
        if self.casts.len() == 1 {
            return self.casts[0].1.clone();
        }
        let mut weights = Vec::with_capacity(self.casts.len());
        for (place, speeds) in &self.casts {
            let d = (place[0] - at[0]).hypot(place[1] - at[1]);
            if d < AT_CAST_M {
                return speeds.clone();
            }
            weights.push(1.0 / (d * d));
        }
        let total: f64 = weights.iter().sum();
        (0..self.depths.len())
            .map(|i| {
                self.casts
                    .iter()
                    .zip(&weights)
                    .map(|((_, s), w)| s[i] * w)
                    .sum::<f64>()
                    / total
            })
            .collect()
    }

    /// The profile along the bearing from `from` to `to` (m east, north), over `length_m` from
    /// `from`: the same at every range for one cast, else [`COLUMNS`] columns evenly to
    /// `length_m`.
    pub fn along(&self, from: [f64; 2], to: [f64; 2], length_m: f64) -> Profile {
        let fallback = || Profile::constant(1500.0);
        if self.casts.len() == 1 || length_m <= 0.0 {
            return Profile::new(self.depths.clone(), self.profile_at(from))
                .unwrap_or_else(|_| fallback());
        }
        let (dx, dy) = (to[0] - from[0], to[1] - from[1]);
        let d = dx.hypot(dy);
        let (ux, uy) = if d > 0.0 {
            (dx / d, dy / d)
        } else {
            (1.0, 0.0)
        };
        let ranges: Vec<f64> = (0..COLUMNS)
            .map(|k| length_m * k as f64 / (COLUMNS - 1) as f64)
            .collect();
        let columns = ranges
            .iter()
            .map(|r| self.profile_at([from[0] + ux * r, from[1] + uy * r]))
            .collect();
        Profile::range_dependent(self.depths.clone(), ranges, columns)
            .unwrap_or_else(|_| fallback())
    }
}

/// `speeds` at depth `z`, linear between the rows of `depths` and holding the ends beyond.
fn linear(depths: &[f64], speeds: &[f64], z: f64) -> f64 {
    let i = depths.partition_point(|&d| d <= z);
    match i {
        0 => speeds[0],
        i if i >= depths.len() => speeds[depths.len() - 1],
        i => {
            let (d0, d1) = (depths[i - 1], depths[i]);
            speeds[i - 1] + (speeds[i] - speeds[i - 1]) * (z - d0) / (d1 - d0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_go_on_common_depths_and_hold_their_ends() {
        let a: ([f64; 2], &[f64], &[f64]) = ([0.0, 0.0], &[2.0, 10.0], &[1500.0, 1490.0]);
        let b: ([f64; 2], &[f64], &[f64]) = ([1000.0, 0.0], &[0.0, 5.0], &[1520.0, 1510.0]);
        let s = SoundSpeed::from_casts(&[a, b], 20.0);
        assert_eq!(s.depths(), [0.0, 2.0, 5.0, 10.0, 20.0]);
        assert_eq!(
            s.profile_at([0.0, 0.0]),
            [1500.0, 1500.0, 1496.25, 1490.0, 1490.0]
        );
        assert_eq!(
            s.profile_at([1000.0, 0.5]),
            [1520.0, 1516.0, 1510.0, 1510.0, 1510.0]
        );
        // Half-way: the mean of the two.
        let mid = s.profile_at([500.0, 0.0]);
        assert!((mid[0] - 1510.0).abs() < 1e-9, "{mid:?}");
        // A quarter of the way: weights 1/250² and 1/750², nine parts to one.
        let q = s.profile_at([250.0, 0.0]);
        assert!(
            (q[0] - (9.0 * 1500.0 + 1520.0) / 10.0).abs() < 1e-9,
            "{q:?}"
        );
    }

    #[test]
    fn a_bearing_between_casts_is_range_dependent_and_one_cast_is_not() {
        let a: ([f64; 2], &[f64], &[f64]) = ([0.0, 0.0], &[0.0, 50.0], &[1500.0, 1490.0]);
        let b: ([f64; 2], &[f64], &[f64]) = ([0.0, 1600.0], &[0.0, 50.0], &[1530.0, 1520.0]);
        let s = SoundSpeed::from_casts(&[a, b], 40.0);
        let p = s.along([0.0, 0.0], [0.0, 1000.0], 1600.0);
        assert_eq!(p.ranges().len(), COLUMNS);
        assert_eq!(p.speed(0.0, 0.0), 1500.0);
        assert_eq!(p.speed(1600.0, 0.0), 1530.0);
        // Across, at the same distance from both, the speeds are their mean at every range.
        let p = s.along([-400.0, 800.0], [400.0, 800.0], 800.0);
        assert!((p.speed(0.0, 0.0) - 1515.0).abs() < 1e-9);
        assert!((p.speed(800.0, 10.0) - 1513.0).abs() < 1e-9);
        let one = SoundSpeed::from_casts(&[a], 40.0);
        assert_eq!(one.along([0.0, 0.0], [0.0, 1.0], 900.0).ranges().len(), 1);
    }
}
