//! The medium a fan of beams is traced through: the water's sound-speed profile (by depth, or
//! by range and depth), the seabed under the bathymetry, the bathymetry along a bearing, and
//! the fan's launch angles.

use crate::model::terrain::Terrain;
use nalgebra::Complex;

/// Sound speed by depth, and by range where the profile has several columns: linear in depth
/// between rows, constant above the first and below the last; with columns at several ranges
/// (BELLHOP's `Q` option, a `.ssp` file), bilinear in range and depth inside each quadrilateral
/// of two columns and two rows, and constant in range before the first column and beyond the
/// last.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    depth: Vec<f64>,
    /// The columns' ranges (m along the section, increasing); one column holds everywhere.
    range: Vec<f64>,
    /// The speeds column by column: `speed[j * depth.len() + i]` at `range[j]`, `depth[i]`.
    speed: Vec<f64>,
}

/// Sound speed at a point and its derivatives in range and depth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Sound {
    pub c: f64,
    /// ∂c/∂r.
    pub cr: f64,
    /// ∂c/∂z.
    pub cz: f64,
    /// ∂²c/∂r∂z.
    pub crz: f64,
}

impl Profile {
    /// A profile from rows of depth (m, from 0, strictly increasing) and speed (m/s, > 0).
    pub fn new(depth_m: Vec<f64>, speed_mps: Vec<f64>) -> Result<Profile, String> {
        Profile::range_dependent(depth_m, vec![0.0], vec![speed_mps])
    }

    /// A range-dependent profile: `columns[j]` holds the speeds at `depth_m` (m, from 0,
    /// strictly increasing) of the profile `ranges_m[j]` (m, strictly increasing) along the
    /// section.
    pub fn range_dependent(
        depth_m: Vec<f64>,
        ranges_m: Vec<f64>,
        columns: Vec<Vec<f64>>,
    ) -> Result<Profile, String> {
        if depth_m.is_empty() {
            return Err("a profile needs at least one depth".into());
        }
        if ranges_m.is_empty() || ranges_m.len() != columns.len() {
            return Err(format!(
                "a profile needs as many ranges as columns, at least one ({} ranges, {} columns)",
                ranges_m.len(),
                columns.len()
            ));
        }
        if let Some((j, col)) = columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.len() != depth_m.len())
        {
            return Err(format!(
                "a profile needs as many depths as speeds ({} depths, {} speeds in column {j})",
                depth_m.len(),
                col.len()
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
        for (j, w) in ranges_m.windows(2).enumerate() {
            if w[1] <= w[0] || !w[1].is_finite() {
                return Err(format!(
                    "profile ranges must increase: column {} is at {} m after {} m",
                    j + 1,
                    w[1],
                    w[0]
                ));
            }
        }
        if !ranges_m[0].is_finite() {
            return Err(format!("profile column 0 is at range {} m", ranges_m[0]));
        }
        for (j, col) in columns.iter().enumerate() {
            if let Some((i, c)) = col
                .iter()
                .enumerate()
                .find(|(_, c)| !(c.is_finite() && **c > 0.0))
            {
                let column = if columns.len() > 1 {
                    format!(" of column {j}")
                } else {
                    String::new()
                };
                return Err(format!(
                    "profile row {i}{column}: sound speed {c} m/s is not positive"
                ));
            }
        }
        Ok(Profile {
            depth: depth_m,
            range: ranges_m,
            speed: columns.concat(),
        })
    }

    /// An isovelocity profile.
    pub fn constant(speed_mps: f64) -> Profile {
        Profile {
            depth: vec![0.0],
            range: vec![0.0],
            speed: vec![speed_mps],
        }
    }

    pub fn depths(&self) -> &[f64] {
        &self.depth
    }

    /// The columns' ranges (m): one for a profile the same at every range.
    pub fn ranges(&self) -> &[f64] {
        &self.range
    }

    /// The speeds of column `j` at [`Profile::depths`].
    pub fn column(&self, j: usize) -> &[f64] {
        let n = self.depth.len();
        &self.speed[j * n..(j + 1) * n]
    }

    /// Sound speed at `range_m` along the section and `depth_m`.
    pub fn speed(&self, range_m: f64, depth_m: f64) -> f64 {
        let i = self.layer(depth_m, 0);
        let j = self.segment(range_m, 0);
        self.sound(i, j, range_m, depth_m).c
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

    /// The range segment holding `r`: the column `j` with `range[j] <= r < range[j + 1]` (0
    /// before the first, the last beyond it), searched from `hint`.
    pub(super) fn segment(&self, r: f64, hint: usize) -> usize {
        bracket(&self.range, r, hint)
    }

    /// Whether the profile changes with range.
    pub(super) fn is_range_dependent(&self) -> bool {
        self.range.len() > 1
    }

    /// Speed and its depth derivative of column `j` in layer `i` at depth `z`.
    #[inline]
    fn column_at(&self, j: usize, i: usize, z: f64) -> (f64, f64) {
        let n = self.depth.len();
        let col = &self.speed[j * n..(j + 1) * n];
        if i + 1 >= n || z < self.depth[0] {
            return (col[i], 0.0);
        }
        let g = (col[i + 1] - col[i]) / (self.depth[i + 1] - self.depth[i]);
        (col[i] + g * (z - self.depth[i]), g)
    }

    /// Speed and its derivatives in layer `i` and range segment `j` at `(r, z)`: between two
    /// columns, the speeds of both at depth z weighted by the range's share of the segment
    /// (clamped to it) and ∂c/∂r their difference over the segment, as BELLHOP's `Quad`.
    #[inline]
    pub(super) fn sound(&self, i: usize, j: usize, r: f64, z: f64) -> Sound {
        let (c1, cz1) = self.column_at(j, i, z);
        if j + 1 >= self.range.len() || r < self.range[0] {
            return Sound {
                c: c1,
                cr: 0.0,
                cz: cz1,
                crz: 0.0,
            };
        }
        let (c2, cz2) = self.column_at(j + 1, i, z);
        let dr = self.range[j + 1] - self.range[j];
        let s = ((r - self.range[j]) / dr).clamp(0.0, 1.0);
        Sound {
            c: (1.0 - s) * c1 + s * c2,
            cr: (c2 - c1) / dr,
            cz: (1.0 - s) * cz1 + s * cz2,
            crz: (cz2 - cz1) / dr,
        }
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

    /// The ranges bounding segment `j` (−∞/+∞ beyond the first and last columns).
    pub(super) fn range_bounds(&self, j: usize) -> (f64, f64) {
        let left = if j == 0 {
            f64::NEG_INFINITY
        } else {
            self.range[j]
        };
        let right = self.range.get(j + 1).copied().unwrap_or(f64::INFINITY);
        (left, right)
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
