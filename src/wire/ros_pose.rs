//! The ROS 2 messages a logged track is read from, as CDR (how ROS 2 serializes them, and how
//! its MCAP bags store them): `geometry_msgs/msg/PoseStamped`, `nav_msgs/msg/Odometry` and
//! `sensor_msgs/msg/NavSatFix`, read as far as the pose, in either byte order, with CDR's
//! alignment. Read here rather than through the `cdr` crate, which allocates the length a
//! string claims before it checks it against the message (4 GB from an 8-byte field, found by
//! the `track_mcap` fuzz target): nothing here allocates, and a string's frame id is skipped.

/// The message types a track takes, by their ROS 2 names.
pub const TYPES: [&str; 3] = [
    "geometry_msgs/msg/PoseStamped",
    "nav_msgs/msg/Odometry",
    "sensor_msgs/msg/NavSatFix",
];

/// What a track needs of one message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseSample {
    /// The header's stamp, seconds since the epoch (0 when the stamp is zero).
    pub stamp_s: f64,
    pub position: PosePosition,
    /// Compass heading from the orientation (PoseStamped, Odometry), degrees in [0, 360).
    pub heading_deg: Option<f64>,
}

/// A message's position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PosePosition {
    /// x, y, z in the message's frame, metres.
    Xyz([f64; 3]),
    /// NavSatFix: degrees, and metres above the WGS84 ellipsoid; `fix` false for a message
    /// whose status says it has none (status < 0).
    Geo {
        lat: f64,
        lon: f64,
        alt: f64,
        fix: bool,
    },
}

/// A CDR message being read: its body (after the 4-byte encapsulation header), the byte order
/// that header names, and the position; alignment is relative to the body's start, as CDR's.
struct Cdr<'a> {
    body: &'a [u8],
    little: bool,
    at: usize,
}

impl<'a> Cdr<'a> {
    fn new(data: &'a [u8]) -> Result<Cdr<'a>, String> {
        let little = match data.get(..2) {
            Some([0, 0]) => false,
            Some([0, 1]) => true,
            Some(h) => {
                return Err(format!(
                    "encapsulation {h:02x?}: not plain CDR (big- or little-endian)"
                ))
            }
            None => return Err("shorter than its encapsulation header".into()),
        };
        Ok(Cdr {
            body: data
                .get(4..)
                .ok_or("shorter than its encapsulation header")?,
            little,
            at: 0,
        })
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        self.at = self.at.div_ceil(N) * N;
        let b = self
            .body
            .get(self.at..self.at + N)
            .ok_or_else(|| format!("cut short at byte {} of its body", self.at))?;
        self.at += N;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        if !self.little {
            a.reverse();
        }
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32, String> {
        self.take::<4>().map(u32::from_le_bytes)
    }

    fn i32(&mut self) -> Result<i32, String> {
        self.take::<4>().map(i32::from_le_bytes)
    }

    fn f64(&mut self) -> Result<f64, String> {
        self.take::<8>().map(f64::from_le_bytes)
    }

    /// Skips a string (its length, then that many bytes), which must fit in the message.
    fn skip_string(&mut self) -> Result<(), String> {
        let n = self.u32()? as usize;
        if n > self.body.len().saturating_sub(self.at) {
            return Err(format!(
                "a string of {n} bytes at byte {} of its {}-byte body",
                self.at,
                self.body.len()
            ));
        }
        self.at += n;
        Ok(())
    }

    /// A `std_msgs/Header`'s stamp (seconds), its `frame_id` skipped.
    fn header(&mut self) -> Result<f64, String> {
        let sec = self.i32()?;
        let nanosec = self.u32()?;
        self.skip_string()?;
        Ok(f64::from(sec) + f64::from(nanosec) * 1e-9)
    }

    /// A `geometry_msgs/Pose`: its position and orientation quaternion (x, y, z, w).
    fn pose(&mut self) -> Result<([f64; 3], [f64; 4]), String> {
        let p = [self.f64()?, self.f64()?, self.f64()?];
        let q = [self.f64()?, self.f64()?, self.f64()?, self.f64()?];
        Ok((p, q))
    }
}

/// The compass heading of an orientation (its yaw about ENU's z, from east counter-clockwise).
fn heading([x, y, z, w]: [f64; 4]) -> f64 {
    let yaw = (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
    compass_deg(90.0 - yaw.to_degrees())
}

/// An angle in degrees as a compass heading in [0, 360). (`rem_euclid` alone gives 360.0 for
/// a tiny negative angle: 360 − 1e-15 rounds to 360.)
pub fn compass_deg(deg: f64) -> f64 {
    let h = deg.rem_euclid(360.0);
    if h >= 360.0 {
        0.0
    } else {
        h
    }
}

/// The pose in `data`, a CDR message of `type_name` (one of [`TYPES`]).
pub fn decode_pose(type_name: &str, data: &[u8]) -> Result<PoseSample, String> {
    let bad = |e: String| format!("not a CDR message of its type ({e})");
    let mut m = Cdr::new(data).map_err(bad)?;
    let (stamp_s, (p, q)) = match type_name {
        "geometry_msgs/msg/PoseStamped" => (m.header().map_err(bad)?, m.pose().map_err(bad)?),
        "nav_msgs/msg/Odometry" => {
            let stamp = m.header().map_err(bad)?;
            m.skip_string().map_err(bad)?; // child_frame_id
            (stamp, m.pose().map_err(bad)?)
        }
        "sensor_msgs/msg/NavSatFix" => {
            let stamp_s = m.header().map_err(bad)?;
            let status = m.take::<1>().map_err(bad)?[0] as i8;
            let _service = m.take::<2>().map_err(bad)?;
            let (lat, lon, alt) = (
                m.f64().map_err(bad)?,
                m.f64().map_err(bad)?,
                m.f64().map_err(bad)?,
            );
            return Ok(PoseSample {
                stamp_s,
                position: PosePosition::Geo {
                    lat,
                    lon,
                    alt,
                    fix: status >= 0,
                },
                heading_deg: None,
            });
        }
        other => {
            return Err(format!(
                "a message of type {other:?}: a track takes {}",
                TYPES.join(", ")
            ))
        }
    };
    let unit = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    Ok(PoseSample {
        stamp_s,
        position: PosePosition::Xyz(p),
        // An orientation left at zero (all four) says nothing of the heading.
        heading_deg: (unit > 0.5).then(|| heading(q)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PoseStamped as ROS 2 serializes it (little-endian CDR): its header stamped 12.5 s,
    /// frame "map", at (1, 2, -3) facing ENU yaw 90° (north).
    fn pose_stamped() -> Vec<u8> {
        let mut b = vec![0, 1, 0, 0];
        b.extend(12i32.to_le_bytes());
        b.extend(500_000_000u32.to_le_bytes());
        b.extend(4u32.to_le_bytes());
        b.extend(b"map\0");
        for v in [1.0f64, 2.0, -3.0] {
            b.extend(v.to_le_bytes());
        }
        let h = std::f64::consts::FRAC_PI_4;
        for v in [0.0, 0.0, h.sin(), h.cos()] {
            b.extend(v.to_le_bytes());
        }
        b
    }

    /// The fuzz target's find: an orientation whose yaw is a hair past 90° gave a heading of
    /// exactly 360.0, outside [0, 360).
    #[test]
    fn a_heading_is_below_360_even_a_hair_under_north() {
        assert_eq!(compass_deg(-1e-15), 0.0);
        assert_eq!(compass_deg(-1e-15_f64.rem_euclid(360.0) - 360.0), 0.0);
        assert_eq!(compass_deg(720.0), 0.0);
        assert!((compass_deg(-90.0) - 270.0).abs() < 1e-12);
        let data = include_bytes!("../../fuzz/corpus/track_mcap/heading_360");
        let p = decode_pose("geometry_msgs/msg/PoseStamped", data).unwrap();
        let h = p.heading_deg.unwrap();
        assert!((0.0..360.0).contains(&h), "{h}");
    }

    #[test]
    fn a_pose_stamped_gives_its_stamp_position_and_compass_heading() {
        let p = decode_pose("geometry_msgs/msg/PoseStamped", &pose_stamped()).unwrap();
        assert_eq!(p.stamp_s, 12.5);
        assert_eq!(p.position, PosePosition::Xyz([1.0, 2.0, -3.0]));
        assert!(p.heading_deg.unwrap().abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn a_cut_or_lying_message_is_an_error_not_a_panic() {
        let full = pose_stamped();
        for n in 0..full.len() {
            assert!(decode_pose("geometry_msgs/msg/PoseStamped", &full[..n]).is_err());
        }
        let mut lying = full.clone();
        lying[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_pose("geometry_msgs/msg/PoseStamped", &lying).is_err());
        let e = decode_pose("std_msgs/msg/String", &full).unwrap_err();
        assert!(
            e.contains("a track takes geometry_msgs/msg/PoseStamped"),
            "{e}"
        );
    }
}
