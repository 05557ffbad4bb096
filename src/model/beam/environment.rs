//! The medium a fan of beams is traced through: the water's sound-speed profile, the seabed
//! under the bathymetry, the bathymetry along a bearing, and the fan's launch angles.

use crate::model::terrain::Terrain;
use nalgebra::Complex;

/// Sound speed by depth: linear between rows, constant above the first and below the last.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    depth: Vec<f64>,
    speed: Vec<f64>,
}

impl Profile {
    /// A profile from rows of depth (m, from 0, strictly increasing) and speed (m/s, > 0).
    pub fn new(depth_m: Vec<f64>, speed_mps: Vec<f64>) -> Result<Profile, String> {
        if depth_m.is_empty() || depth_m.len() != speed_mps.len() {
            return Err(format!(
                "a profile needs as many depths as speeds, at least one ({} depths, {} speeds)",
                depth_m.len(),
                speed_mps.len()
            ));
        }
        if depth_m[0] != 0.0 {
            return Err(format!(
                "a profile starts at the surface: its first depth is {} m, not 0",
                depth_m[0]
            ));
        }
        for (i, w) in depth_m.windows(2).enumerate() {
            if w[1] <= w[0] || !w[1].is_finite() {
                return Err(format!(
                    "profile depths must increase: row {} is at {} m after {} m",
                    i + 1,
                    w[1],
                    w[0]
                ));
            }
        }
        if let Some((i, c)) = speed_mps
            .iter()
            .enumerate()
            .find(|(_, c)| !(c.is_finite() && **c > 0.0))
        {
            return Err(format!(
                "profile row {i}: sound speed {c} m/s is not positive"
            ));
        }
        Ok(Profile {
            depth: depth_m,
            speed: speed_mps,
        })
    }

    /// An isovelocity profile.
    pub fn constant(speed_mps: f64) -> Profile {
        Profile {
            depth: vec![0.0],
            speed: vec![speed_mps],
        }
    }

    pub fn depths(&self) -> &[f64] {
        &self.depth
    }

    pub fn speeds(&self) -> &[f64] {
        &self.speed
    }

    /// Sound speed at `depth_m`.
    pub fn speed(&self, depth_m: f64) -> f64 {
        let i = self.layer(depth_m, 0);
        self.speed_in(i, depth_m).0
    }

    /// The layer holding `z`: the row `i` with `depth[i] <= z < depth[i + 1]` (the last row
    /// below the profile, row 0 above it), searched from `hint`.
    pub(super) fn layer(&self, z: f64, hint: usize) -> usize {
        bracket(&self.depth, z, hint)
    }

    /// The layer holding `z` seen from layer `hint`: `hint` itself while `z` lies within its
    /// bounds, both included (so a ray on an interface stays in the layer it came from until
    /// it steps across, as BELLHOP's segment search), else [`Profile::layer`].
    pub(super) fn layer_from(&self, z: f64, hint: usize) -> usize {
        let n = self.depth.len();
        if hint < n && self.depth[hint] <= z && (hint + 1 == n || z <= self.depth[hint + 1]) {
            return hint;
        }
        self.layer(z, hint)
    }

    /// Speed and its depth derivative in layer `i` at `z`.
    pub(super) fn speed_in(&self, i: usize, z: f64) -> (f64, f64) {
        if i + 1 >= self.depth.len() || z < self.depth[0] {
            return (self.speed[i], 0.0);
        }
        let g = (self.speed[i + 1] - self.speed[i]) / (self.depth[i + 1] - self.depth[i]);
        (self.speed[i] + g * (z - self.depth[i]), g)
    }

    /// The depths bounding layer `i` (−∞/+∞ beyond the profile).
    pub(super) fn bounds(&self, i: usize) -> (f64, f64) {
        let top = if i == 0 {
            f64::NEG_INFINITY
        } else {
            self.depth[i]
        };
        let bottom = self.depth.get(i + 1).copied().unwrap_or(f64::INFINITY);
        (top, bottom)
    }
}

/// The bottom half-space under the bathymetry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seabed {
    /// Compressional speed, m/s.
    pub speed_mps: f64,
    /// Density relative to the water's (BELLHOP's g/cm³ with water at 1).
    pub density_ratio: f64,
    /// Compressional attenuation, dB per wavelength.
    pub attenuation_db_per_wavelength: f64,
}

impl Seabed {
    /// Sand (Jensen, Kuperman, Porter & Schmidt, *Computational Ocean Acoustics*, 2nd ed.,
    /// Table 1.3: c_p/c_w 1.1, ρ 1.9, 0.8 dB/λ).
    pub const SAND: Seabed = Seabed {
        speed_mps: 1650.0,
        density_ratio: 1.9,
        attenuation_db_per_wavelength: 0.8,
    };

    /// The plane-wave reflection coefficient (Rayleigh, fluid–fluid; Jensen et al. eq. 1.57)
    /// for water of speed `c_water` at grazing angle `(cos θ, sin θ)`, time convention e^{−iωt}.
    /// The lossy bottom's speed is c·(1 − iε), ε = α/(40π·log10 e) for α in dB/λ.
    pub fn reflection(&self, c_water: f64, cos_g: f64, sin_g: f64) -> Complex<f64> {
        let eps = self.attenuation_db_per_wavelength
            / (40.0 * std::f64::consts::PI * std::f64::consts::LOG10_E);
        let c2 = Complex::new(self.speed_mps, -self.speed_mps * eps);
        let kx = cos_g / c_water;
        let kz1 = Complex::new(sin_g / c_water, 0.0);
        let mut kz2 = (Complex::new(1.0, 0.0) / (c2 * c2) - kx * kx).sqrt();
        if kz2.im < 0.0 {
            kz2 = -kz2;
        }
        let rho = self.density_ratio;
        let r = (kz1 * rho - kz2) / (kz1 * rho + kz2);
        if r.re.is_finite() && r.im.is_finite() {
            r
        } else {
            Complex::new(-1.0, 0.0)
        }
    }
}

/// The bathymetry along a bearing: depth (m, positive down; ≤ 0 is land) at increasing
/// ranges (m) from the source, linear between them and constant beyond the last.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub range_m: Vec<f64>,
    pub depth_m: Vec<f64>,
}

impl Section {
    /// A flat bottom at `depth_m`.
    pub fn flat(depth_m: f64) -> Section {
        Section {
            range_m: vec![0.0],
            depth_m: vec![depth_m],
        }
    }

    /// The terrain under the horizontal line from `from` to `to` ([x, y], metres), sampled at
    /// the terrain's cell size (at most 4096 samples), continued `beyond_m` past `to`; points
    /// off the terrain take its nearest edge's height.
    pub fn along(terrain: &Terrain, from: [f64; 2], to: [f64; 2], beyond_m: f64) -> Section {
        let (dx, dy) = (to[0] - from[0], to[1] - from[1]);
        let d = dx.hypot(dy);
        let (ux, uy) = if d > 0.0 {
            (dx / d, dy / d)
        } else {
            (1.0, 0.0)
        };
        let total = d + beyond_m.max(0.0);
        let n = ((total / terrain.cell_size().max(1e-3)).ceil() as usize).clamp(1, 4095);
        let [hx, hy] = terrain.half_extent();
        let mut s = Section {
            range_m: Vec::with_capacity(n + 1),
            depth_m: Vec::with_capacity(n + 1),
        };
        for k in 0..=n {
            let r = total * k as f64 / n as f64;
            let x = (from[0] + ux * r).clamp(-hx, hx);
            let y = (from[1] + uy * r).clamp(-hy, hy);
            s.range_m.push(r);
            s.depth_m.push(-terrain.height_at_unchecked(x, y));
        }
        s
    }

    /// Depth at range `r`, and the index of the segment holding it.
    pub(super) fn depth_at(&self, r: f64, hint: usize) -> (f64, usize) {
        let i = self.segment(r, hint);
        (self.depth_in(i, r), i)
    }

    /// The segment `i` with `range[i] <= r < range[i + 1]` (0 before, the last vertex beyond).
    pub(super) fn segment(&self, r: f64, hint: usize) -> usize {
        bracket(&self.range_m, r, hint)
    }

    pub(super) fn depth_in(&self, i: usize, r: f64) -> f64 {
        match (self.range_m.get(i + 1), self.depth_m.get(i + 1)) {
            (Some(&r1), Some(&d1)) if r >= self.range_m[i] => {
                let (r0, d0) = (self.range_m[i], self.depth_m[i]);
                d0 + (d1 - d0) * (r - r0) / (r1 - r0)
            }
            _ => self.depth_m[i],
        }
    }

    /// Deepest point (m).
    pub fn max_depth(&self) -> f64 {
        self.depth_m.iter().copied().fold(0.0, f64::max)
    }
}

/// Where the sound travels: the water's profile, the seabed and the bathymetry.
#[derive(Debug, Clone, PartialEq)]
pub struct Environment {
    pub profile: Profile,
    pub seabed: Seabed,
    pub section: Section,
}

/// The launch angles: `beams` rays evenly from `min_deg` to `max_deg` (from the horizontal,
/// positive down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fan {
    pub beams: usize,
    pub min_deg: f64,
    pub max_deg: f64,
}

impl Fan {
    /// `beams` rays from −`half_deg` to +`half_deg`.
    pub fn symmetric(beams: usize, half_deg: f64) -> Fan {
        Fan {
            beams,
            min_deg: -half_deg,
            max_deg: half_deg,
        }
    }
}

/// The index `i` with `xs[i] <= x < xs[i + 1]` in ascending `xs` (0 before the first, the last
/// beyond it), walked from `hint`: a ray's next step is mostly in the same interval or the next.
#[inline]
fn bracket(xs: &[f64], x: f64, hint: usize) -> usize {
    let n = xs.len();
    let mut i = hint.min(n - 1);
    while i > 0 && x < xs[i] {
        i -= 1;
    }
    while i + 1 < n && x >= xs[i + 1] {
        i += 1;
    }
    i
}
