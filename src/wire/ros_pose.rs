//! The ROS 2 messages a logged track is read from, as CDR (how ROS 2 serializes them, and how
//! its MCAP bags store them): `geometry_msgs/msg/PoseStamped`, `nav_msgs/msg/Odometry` and
//! `sensor_msgs/msg/NavSatFix`, decoded as far as the pose, through the `cdr` crate with a
//! size limit of the message's own length (a string's length cannot make it allocate more).

use serde::Deserialize;

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

#[derive(Deserialize)]
struct Time {
    sec: i32,
    nanosec: u32,
}

#[derive(Deserialize)]
struct Header {
    stamp: Time,
    #[allow(dead_code)]
    frame_id: String,
}

#[derive(Deserialize)]
struct Point {
    x: f64,
    y: f64,
    z: f64,
}

#[derive(Deserialize)]
struct Quaternion {
    x: f64,
    y: f64,
    z: f64,
    w: f64,
}

#[derive(Deserialize)]
struct Pose {
    position: Point,
    orientation: Quaternion,
}

#[derive(Deserialize)]
struct PoseStamped {
    header: Header,
    pose: Pose,
}

/// Odometry up to its pose (the covariance and twist after it are not read).
#[derive(Deserialize)]
struct Odometry {
    header: Header,
    #[allow(dead_code)]
    child_frame_id: String,
    pose: Pose,
}

#[derive(Deserialize)]
struct NavSatStatus {
    status: i8,
    #[allow(dead_code)]
    service: u16,
}

/// NavSatFix up to its altitude.
#[derive(Deserialize)]
struct NavSatFix {
    header: Header,
    status: NavSatStatus,
    latitude: f64,
    longitude: f64,
    altitude: f64,
}

fn decode<'de, T: Deserialize<'de>>(data: &[u8]) -> Result<T, String> {
    cdr::deserialize_from::<_, T, _>(data, cdr::Bounded(data.len() as u64))
        .map_err(|e| format!("not a CDR message of its type ({e})"))
}

fn stamp(h: &Header) -> f64 {
    f64::from(h.stamp.sec) + f64::from(h.stamp.nanosec) * 1e-9
}

/// The compass heading of an orientation (its yaw about ENU's z, from east counter-clockwise).
fn heading(q: &Quaternion) -> f64 {
    let yaw = (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z));
    (90.0 - yaw.to_degrees()).rem_euclid(360.0)
}

/// The pose in `data`, a CDR message of `type_name` (one of [`TYPES`]).
pub fn decode_pose(type_name: &str, data: &[u8]) -> Result<PoseSample, String> {
    let (header, pose) = match type_name {
        "geometry_msgs/msg/PoseStamped" => {
            let m: PoseStamped = decode(data)?;
            (m.header, m.pose)
        }
        "nav_msgs/msg/Odometry" => {
            let m: Odometry = decode(data)?;
            (m.header, m.pose)
        }
        "sensor_msgs/msg/NavSatFix" => {
            let m: NavSatFix = decode(data)?;
            return Ok(PoseSample {
                stamp_s: stamp(&m.header),
                position: PosePosition::Geo {
                    lat: m.latitude,
                    lon: m.longitude,
                    alt: m.altitude,
                    fix: m.status.status >= 0,
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
    let p = pose.position;
    let q = &pose.orientation;
    let unit = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    Ok(PoseSample {
        stamp_s: stamp(&header),
        position: PosePosition::Xyz([p.x, p.y, p.z]),
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
