//! The AUV's front and bottom cameras, rendered by raycasting the terrain: one ray per pixel
//! through a pinhole, each pixel shaded by the range to the seafloor it hits. Near seafloor is
//! bright, far seafloor fades into the water's colour at `max_range_m`, open water is the
//! water's colour. The front camera looks along the vehicle's heading, level; the bottom camera
//! straight down with the vehicle's forward at the top of the image.

use crate::config::Cameras;
use crate::model::terrain::Terrain;
use nalgebra::{Point3, Vector3};

/// Which camera.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Front,
    Bottom,
}

/// The colour of open water (RGB).
pub const WATER: [u8; 3] = [8, 28, 48];

/// An RGB image, row-major from the top-left pixel.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// Renders `view` from a vehicle at `position` with ENU yaw `yaw` (rad).
pub fn render(
    terrain: &Terrain,
    cam: &Cameras,
    position: &Point3<f64>,
    yaw: f64,
    view: View,
) -> Image {
    let (w, h) = (cam.width as usize, cam.height as usize);
    let half = (cam.fov_deg.to_radians() / 2.0).tan();
    let aspect = h as f64 / w as f64;
    let (s, c) = yaw.sin_cos();
    let forward = Vector3::new(c, s, 0.0);
    let right = Vector3::new(s, -c, 0.0);
    let (axis, up) = match view {
        View::Front => (forward, Vector3::z()),
        View::Bottom => (-Vector3::z(), forward),
    };
    let mut rgb = Vec::with_capacity(w * h * 3);
    for i in 0..h {
        let y = (1.0 - 2.0 * (i as f64 + 0.5) / h as f64) * half * aspect;
        for j in 0..w {
            let x = (2.0 * (j as f64 + 0.5) / w as f64 - 1.0) * half;
            let dir = (axis + right * x + up * y).normalize();
            rgb.extend_from_slice(&shade(
                terrain.cast_ray(position, &dir, cam.max_range_m),
                cam.max_range_m,
            ));
        }
    }
    Image {
        width: cam.width,
        height: cam.height,
        rgb,
    }
}

/// A pixel's colour for a hit at `range` (or none): the seafloor's sandy colour, faded into
/// the water's with distance.
fn shade(range: Option<f64>, max: f64) -> [u8; 3] {
    const FLOOR: [f64; 3] = [190.0, 200.0, 160.0];
    let near = range.map_or(0.0, |r| (1.0 - r / max).clamp(0.0, 1.0));
    let mut px = [0u8; 3];
    for k in 0..3 {
        px[k] = (f64::from(WATER[k]) + (FLOOR[k] - f64::from(WATER[k])) * near).round() as u8;
    }
    px
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{HeightGrid, Terrain as TerrainConfig};

    fn flat(height: f64) -> Terrain {
        let cfg: TerrainConfig = serde_yaml::from_str(&format!(
            "{{kind: procedural, size_m: [200, 200], cell_size_m: 2, base_height_m: {height}, relief_m: 0}}"
        ))
        .unwrap();
        let grid = HeightGrid::from_config(&cfg, 1).unwrap();
        Terrain::new(std::sync::Arc::new(grid))
    }

    fn mean(img: &Image) -> f64 {
        img.rgb.iter().map(|&v| f64::from(v)).sum::<f64>() / img.rgb.len() as f64
    }

    #[test]
    fn the_bottom_camera_is_brighter_near_the_floor_and_the_front_sees_water_above_the_horizon() {
        let cam = Cameras {
            width: 32,
            height: 24,
            ..Cameras::default()
        };
        let t = flat(-30.0);
        let near = render(&t, &cam, &Point3::new(0.0, 0.0, -25.0), 0.0, View::Bottom);
        let far = render(&t, &cam, &Point3::new(0.0, 0.0, -10.0), 0.0, View::Bottom);
        assert!(
            mean(&near) > mean(&far) + 30.0,
            "{} vs {}",
            mean(&near),
            mean(&far)
        );
        assert_eq!(near.rgb.len(), 32 * 24 * 3);
        let front = render(&t, &cam, &Point3::new(0.0, 0.0, -25.0), 0.0, View::Front);
        // The top row looks up into open water; the bottom row down at the floor 5 m below.
        assert_eq!(&front.rgb[..3], &WATER);
        let last = &front.rgb[front.rgb.len() - 3..];
        assert!(last[0] > WATER[0] + 50, "{last:?}");
    }
}
