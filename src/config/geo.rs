//! Geodetic (WGS84 latitude, longitude, altitude) ↔ the scenario's local ENU frame, the frame
//! `world.origin` defines and every position of the configuration is in.
//!
//! Exact transformation through Earth-centred Earth-fixed (ECEF) coordinates, no flat-earth
//! approximation: geodetic → ECEF (closed form), ECEF offset → ENU by the rotation at the
//! origin; the inverse uses Bowring's method with two refinement steps (sub-millimetre
//! accuracy for points within hundreds of kilometres of the surface). Depth is −altitude.

use super::GeoOrigin;
use nalgebra::{Matrix3, Point3, Vector3};

const A: f64 = 6_378_137.0; // WGS84 semi-major axis, m
const F: f64 = 1.0 / 298.257_223_563; // flattening
const E2: f64 = F * (2.0 - F); // first eccentricity squared

/// A local tangent plane anchored at a geodetic origin.
#[derive(Debug, Clone, Copy)]
pub struct LocalFrame {
    origin_ecef: Vector3<f64>,
    /// Rows: east, north, up unit vectors in ECEF.
    ecef_to_enu: Matrix3<f64>,
}

fn geodetic_to_ecef(lat_deg: f64, lon_deg: f64, alt_m: f64) -> Vector3<f64> {
    let (lat, lon) = (lat_deg.to_radians(), lon_deg.to_radians());
    let n = A / (1.0 - E2 * lat.sin().powi(2)).sqrt();
    Vector3::new(
        (n + alt_m) * lat.cos() * lon.cos(),
        (n + alt_m) * lat.cos() * lon.sin(),
        (n * (1.0 - E2) + alt_m) * lat.sin(),
    )
}

fn ecef_to_geodetic(p: &Vector3<f64>) -> (f64, f64, f64) {
    let lon = p.y.atan2(p.x);
    let r = (p.x * p.x + p.y * p.y).sqrt();
    let mut lat = p.z.atan2(r * (1.0 - E2));
    let mut alt = 0.0;
    for _ in 0..4 {
        let n = A / (1.0 - E2 * lat.sin().powi(2)).sqrt();
        alt = if lat.cos().abs() > 1e-9 {
            r / lat.cos() - n
        } else {
            p.z.abs() - n * (1.0 - E2)
        };
        lat = p.z.atan2(r * (1.0 - E2 * n / (n + alt)));
    }
    (lat.to_degrees(), lon.to_degrees(), alt)
}

impl LocalFrame {
    pub fn new(origin: &GeoOrigin) -> Self {
        let (lat, lon) = (origin.lat_deg.to_radians(), origin.lon_deg.to_radians());
        let (sl, cl, so, co) = (lat.sin(), lat.cos(), lon.sin(), lon.cos());
        let ecef_to_enu = Matrix3::new(-so, co, 0.0, -sl * co, -sl * so, cl, cl * co, cl * so, sl);
        LocalFrame {
            origin_ecef: geodetic_to_ecef(origin.lat_deg, origin.lon_deg, origin.alt_m),
            ecef_to_enu,
        }
    }

    /// Latitude and longitude in degrees, depth in metres (positive down) → ENU point.
    pub fn from_lat_lon_depth(&self, lat_deg: f64, lon_deg: f64, depth_m: f64) -> Point3<f64> {
        Point3::from(
            self.ecef_to_enu * (geodetic_to_ecef(lat_deg, lon_deg, -depth_m) - self.origin_ecef),
        )
    }

    /// ENU point → (latitude°, longitude°, depth m).
    pub fn to_lat_lon_depth(&self, p: &Point3<f64>) -> (f64, f64, f64) {
        let ecef = self.ecef_to_enu.transpose() * p.coords + self.origin_ecef;
        let (lat, lon, alt) = ecef_to_geodetic(&ecef);
        (lat, lon, -alt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> LocalFrame {
        LocalFrame::new(&GeoOrigin {
            lat_deg: 41.5265,
            lon_deg: -70.6731,
            alt_m: 0.0,
        })
    }

    #[test]
    fn origin_maps_to_zero_and_depth_to_negative_z() {
        let p = frame().from_lat_lon_depth(41.5265, -70.6731, 30.0);
        assert!(
            p.x.abs() < 1e-6 && p.y.abs() < 1e-6 && (p.z + 30.0).abs() < 1e-6,
            "{p}"
        );
    }

    #[test]
    fn one_arc_minute_north_is_one_nautical_mile_give_or_take_the_ellipsoid() {
        // Meridional arc length at 41.5°: M·dφ with M = a(1−e²)/(1−e² sin²φ)^1.5 ≈ 6.3626e6 m.
        let p = frame().from_lat_lon_depth(41.5265 + 1.0 / 60.0, -70.6731, 0.0);
        let lat = 41.5265f64.to_radians();
        let m = A * (1.0 - E2) / (1.0 - E2 * lat.sin().powi(2)).powf(1.5);
        assert!((p.y - m * (1.0f64 / 60.0).to_radians()).abs() < 0.05, "{p}");
        assert!(p.x.abs() < 1e-6);
        // East: N·cosφ·dλ.
        let q = frame().from_lat_lon_depth(41.5265, -70.6731 + 1.0 / 60.0, 0.0);
        let n = A / (1.0 - E2 * lat.sin().powi(2)).sqrt();
        assert!(
            (q.x - n * lat.cos() * (1.0f64 / 60.0).to_radians()).abs() < 0.05,
            "{q}"
        );
    }

    #[test]
    fn round_trips_to_sub_millimetre() {
        let f = frame();
        for &(lat, lon, depth) in &[
            (41.53, -70.67, 12.0),
            (41.6, -70.5, 3000.0),
            (41.0, -71.2, 0.0),
        ] {
            let p = f.from_lat_lon_depth(lat, lon, depth);
            let (la, lo, d) = f.to_lat_lon_depth(&p);
            assert!(
                (la - lat).abs() < 1e-9 && (lo - lon).abs() < 1e-9 && (d - depth).abs() < 1e-3,
                "{la} {lo} {d}"
            );
        }
    }
}
