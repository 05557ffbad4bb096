//! Acoustic paths by beam tracing: the arrivals between two points of the sea, and the
//! transmission-loss field around a source, through a sound-speed profile over range-dependent
//! bathymetry. Pure code, SI units, no I/O and no clock; the physics side
//! ([`crate::sim::physics`]) runs it per pair over the scenario's terrain, and the pictures and
//! the validation against BELLHOP call it directly.
//!
//! The method is BELLHOP's (Porter & Bucker, "Gaussian beam tracing for computing ocean
//! acoustic fields", JASA 82(4), 1987; Porter, *The BELLHOP Manual and User's Guide*, 2011) with
//! its default beams, geometric hat beams in Cartesian coordinates:
//! - rays in the vertical plane of the bearing obey dx/ds = c·t, dt/ds = −∇c/c² (t the slowness
//!   vector), integrated by a second-order Runge–Kutta step that lands on every sound-speed
//!   layer and bathymetry vertex ([`ray`]);
//! - each ray carries the dynamic ray variables dq/ds = c·p, dp/ds = −c_nn/c²·q from q = 0,
//!   p = 1; c is linear in depth between the profile's rows (BELLHOP's `C`), so c_nn = 0 inside
//!   a layer, and a reflection changes p by q·RN (Müller, Geophys. J. R. astr. Soc. 79, 1984);
//! - the beam around a ray launched at α with spacing Δα has half-width W = |q|·Δα/c(source);
//!   at normal distance n < W from the ray its pressure is
//!   `√(c·cos α / (r·|q|)) · (1 − n/W) · Π|R|`, which adjacent beams sum to the ray amplitude;
//!   the phase adds π/2 per caustic (q changing sign) and each reflection's phase;
//! - the surface is pressure-release (R = −1); the bottom is a fluid half-space with the
//!   Rayleigh reflection coefficient of its speed, density and attenuation (dB/λ);
//! - a ray ends when it leaves the section's range, runs aground (water shallower than 1 mm),
//!   or its boundary losses bring its amplitude below 0.005 (BELLHOP's rule).
//!
//! Arrivals carry no volume absorption (as BELLHOP's amplitudes): the receiver applies its own
//! at its frequency over [`Arrival::path_m`]; [`field`] applies a given absorption.

mod environment;
mod ray;

pub use crate::wire::channel::Arrival;
pub use environment::{Environment, Fan, Profile, Seabed, Section};
use nalgebra::Complex;
use ray::{trace_fan, Segment};

/// How [`field`] sums the beams at a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sum {
    /// Complex pressures: interference patterns.
    Coherent,
    /// Intensities: the smooth mean field.
    Incoherent,
}

/// Arrivals from adjacent beams of one eigenray merge when their delays differ by less than
/// this (s).
const MERGE_DELAY_S: f64 = 1e-4;

/// Where a beam passes a receiver: the hat-weighted contribution of a segment.
struct Contribution {
    /// Hat-weighted amplitude.
    amplitude: f64,
    /// The hat weight, 1 on the ray and 0 at the beam's edge.
    weight: f64,
    delay_s: f64,
    phase_rad: f64,
    path_m: f64,
    angle_deg: f64,
}

/// A segment's length and unit tangent (range, depth), computed once for all its receivers;
/// None for a segment of no length.
#[inline]
fn tangent(seg: &Segment) -> Option<(f64, f64, f64)> {
    let (tr, tz) = (seg.b.r - seg.a.r, seg.b.z - seg.a.z);
    let len = (tr * tr + tz * tz).sqrt();
    (len > 0.0).then(|| (len, tr / len, tz / len))
}

/// The contribution of segment `seg` (of length `len` and unit tangent `(ur, uz)`, from
/// [`tangent`]) of a beam to the receiver at `(r, z)`, if inside the beam.
#[inline]
fn contribution(
    seg: &Segment,
    (len, ur, uz): (f64, f64, f64),
    r: f64,
    z: f64,
) -> Option<Contribution> {
    let (a, b) = (&seg.a, &seg.b);
    if r <= 0.0 {
        return None;
    }
    let (vr, vz) = (r - a.r, z - a.z);
    let s = (vr * ur + vz * uz) / len;
    let n = (-vr * uz + vz * ur).abs();
    let q = a.q + s * (b.q - a.q);
    let width = q.abs() * seg.width_per_q;
    if n.partial_cmp(&width) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let weight = (width - n) / width;
    let c = b.c;
    let amplitude = (seg.cos_launch * c / (r * q.abs())).sqrt() * weight * seg.loss;
    let mut phase_rad = seg.phase_rad + std::f64::consts::FRAC_PI_2 * f64::from(seg.caustics);
    if (q <= 0.0 && a.q > 0.0) || (q >= 0.0 && a.q < 0.0) {
        phase_rad += std::f64::consts::FRAC_PI_2;
    }
    Some(Contribution {
        amplitude,
        weight,
        delay_s: a.tau + s * (b.tau - a.tau),
        phase_rad,
        path_m: a.s + s * (b.s - a.s),
        angle_deg: b.zeta.atan2(b.xi).to_degrees(),
    })
}

/// The arrivals at a receiver `receiver_range_m` along the section and `receiver_depth_m` deep
/// from a source at `source_depth_m`, into `out` (cleared): one per eigenray, the contributions
/// of the adjacent beams that bracket it merged (their amplitudes summed, the delay their
/// amplitude-weighted mean), in order of launch angle. None: a shadow zone.
pub fn arrivals(
    env: &Environment,
    fan: &Fan,
    source_depth_m: f64,
    receiver_range_m: f64,
    receiver_depth_m: f64,
    out: &mut Vec<Arrival>,
) {
    let mut all = [std::mem::take(out)];
    arrivals_at(
        env,
        fan,
        source_depth_m,
        &[[receiver_range_m, receiver_depth_m]],
        &mut all,
    );
    let [one] = all;
    *out = one;
}

/// [`arrivals`] at several receivers (range, depth) from one trace of the fan: `out[i]`
/// (cleared) gets receiver i's.
pub fn arrivals_at(
    env: &Environment,
    fan: &Fan,
    source_depth_m: f64,
    receivers: &[[f64; 2]],
    out: &mut [Vec<Arrival>],
) {
    out.iter_mut().for_each(Vec::clear);
    // Per receiver and arrival: the last beam that added to it and its caustic count.
    let mut last: Vec<Vec<(usize, u32)>> = vec![Vec::new(); receivers.len()];
    let max_range = receivers.iter().map(|r| r[0]).fold(0.0, f64::max) * 1.01 + 1.0;
    trace_fan(env, fan, source_depth_m, max_range, &mut |seg: &Segment| {
        let (lo, hi) = if seg.a.r <= seg.b.r {
            (seg.a.r, seg.b.r)
        } else {
            (seg.b.r, seg.a.r)
        };
        let mut t = None;
        for ((&[r, z], out), last) in receivers.iter().zip(out.iter_mut()).zip(&mut last) {
            if !(lo <= r && r < hi) {
                continue;
            }
            let Some(t) = *t.get_or_insert_with(|| tangent(seg)) else {
                return;
            };
            if let Some(c) = contribution(seg, t, r, z) {
                add_contribution(seg, c, out, last);
            }
        }
    });
}

/// Adds a beam's contribution to a receiver's arrivals: merged into the arrival of the
/// adjacent beam of the same eigenray, else a new one.
fn add_contribution(
    seg: &Segment,
    c: Contribution,
    out: &mut Vec<Arrival>,
    last: &mut Vec<(usize, u32)>,
) {
    let found = (0..out.len()).rev().find(|&k| {
        let (beam, caustics) = last[k];
        let a = &out[k];
        beam + 1 == seg.beam
            && caustics == seg.caustics
            && a.surface_bounces == seg.surface_bounces
            && a.bottom_bounces == seg.bottom_bounces
            && (a.delay_s - c.delay_s).abs() < MERGE_DELAY_S
    });
    match found {
        Some(k) => {
            let a = &mut out[k];
            let total = a.amplitude + c.amplitude;
            if total > 0.0 {
                a.delay_s = (a.amplitude * a.delay_s + c.amplitude * c.delay_s) / total;
                a.path_m = (a.amplitude * a.path_m + c.amplitude * c.path_m) / total;
            }
            a.amplitude = total;
            last[k].0 = seg.beam;
        }
        None => {
            out.push(Arrival {
                delay_s: c.delay_s,
                amplitude: c.amplitude,
                phase_rad: c.phase_rad,
                launch_deg: seg.launch_deg,
                arrival_deg: c.angle_deg,
                path_m: c.path_m,
                surface_bounces: seg.surface_bounces,
                bottom_bounces: seg.bottom_bounces,
            });
            last.push((seg.beam, seg.caustics));
        }
    }
}

/// Transmission loss (dB re 1 m) on the grid `depths_m` × `ranges_m` (row-major by depth,
/// ranges and depths ascending), at `frequency_hz` with volume absorption `absorption_db_per_km` along
/// each ray; +∞ where nothing arrives.
#[allow(clippy::too_many_arguments)]
pub fn field(
    env: &Environment,
    fan: &Fan,
    source_depth_m: f64,
    frequency_hz: f64,
    absorption_db_per_km: f64,
    ranges_m: &[f64],
    depths_m: &[f64],
    sum: Sum,
) -> Vec<f64> {
    let (nr, nz) = (ranges_m.len(), depths_m.len());
    let mut intensity = vec![0.0; nr * nz];
    let mut pressure = vec![Complex::new(0.0, 0.0); nr * nz];
    let omega = 2.0 * std::f64::consts::PI * frequency_hz;
    // 10^(−α·s/20 000) as e^(decay·s).
    let decay = -absorption_db_per_km * std::f64::consts::LN_10 / 20_000.0;
    let max_range = ranges_m.iter().copied().fold(0.0, f64::max) * 1.01 + 1.0;
    trace_fan(env, fan, source_depth_m, max_range, &mut |seg: &Segment| {
        let (lo, hi) = if seg.a.r <= seg.b.r {
            (seg.a.r, seg.b.r)
        } else {
            (seg.b.r, seg.a.r)
        };
        let first = ranges_m.partition_point(|&r| r < lo);
        let end = ranges_m.partition_point(|&r| r < hi);
        if first >= end {
            return;
        }
        let Some(t) = tangent(seg) else {
            return;
        };
        // Only the depths the beam can cover at each range: within its widest half-width of
        // the ray, measured along the normal (so / |u_r| in depth).
        let (_, ur, uz) = t;
        let reach = seg.a.q.abs().max(seg.b.q.abs()) * seg.width_per_q / ur.abs().max(1e-3);
        for (ir, &r) in ranges_m.iter().enumerate().take(end).skip(first) {
            let z_ray = seg.a.z + (r - seg.a.r) * uz / if ur.abs() > 1e-12 { ur } else { 1e-12 };
            let (z0, z1) = if ur.abs() > 1e-3 {
                (
                    depths_m.partition_point(|&z| z < z_ray - reach),
                    depths_m.partition_point(|&z| z <= z_ray + reach),
                )
            } else {
                (0, depths_m.len())
            };
            for (iz, &z) in depths_m.iter().enumerate().take(z1).skip(z0) {
                let Some(c) = contribution(seg, t, r, z) else {
                    continue;
                };
                let a = c.amplitude * (decay * c.path_m).exp();
                let k = iz * nr + ir;
                match sum {
                    Sum::Incoherent => {
                        // Intensity weighted by the hat itself (adjacent weights sum to 1), as
                        // BELLHOP's incoherent runs.
                        intensity[k] += a * a / c.weight;
                    }
                    Sum::Coherent => {
                        pressure[k] += Complex::from_polar(a, c.phase_rad - omega * c.delay_s)
                    }
                }
            }
        }
    });
    match sum {
        Sum::Incoherent => intensity.iter().map(|&i| -10.0 * i.log10()).collect(),
        Sum::Coherent => pressure.iter().map(|p| -20.0 * p.norm().log10()).collect(),
    }
}

/// One traced ray, for pictures.
#[derive(Debug, Clone, PartialEq)]
pub struct Ray {
    /// (range, depth) points, m.
    pub points: Vec<[f64; 2]>,
    pub launch_deg: f64,
    pub surface_bounces: u32,
    pub bottom_bounces: u32,
}

/// Every ray of the fan to `max_range_m` (or where it ends).
pub fn rays(env: &Environment, fan: &Fan, source_depth_m: f64, max_range_m: f64) -> Vec<Ray> {
    let mut out: Vec<Ray> = Vec::with_capacity(fan.beams);
    trace_fan(
        env,
        fan,
        source_depth_m,
        max_range_m,
        &mut |seg: &Segment| {
            if out.len() <= seg.beam {
                out.push(Ray {
                    points: vec![[seg.a.r, seg.a.z]],
                    launch_deg: seg.launch_deg,
                    surface_bounces: 0,
                    bottom_bounces: 0,
                });
            }
            let ray = out.last_mut().expect("pushed above");
            ray.points.push([seg.b.r, seg.b.z]);
            ray.surface_bounces = seg.surface_bounces;
            ray.bottom_bounces = seg.bottom_bounces;
        },
    );
    out
}

/// What a receiver's arrivals amount to at one frequency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Multipath {
    /// Delay of the earliest arrival, s (+∞ without any).
    pub first_delay_s: f64,
    /// −10·log10 Σ|Aᵢ|² (dB).
    pub incoherent_tl_db: f64,
    /// −20·log10 |Σ Aᵢ·e^{i(φᵢ − ωτᵢ)}| (dB).
    pub coherent_tl_db: f64,
    /// RMS delay spread weighted by energy, s.
    pub delay_spread_s: f64,
}

impl Multipath {
    /// The arrivals' sums at `frequency_hz` with `absorption_db_per_km` over each path.
    pub fn of(arrivals: &[Arrival], frequency_hz: f64, absorption_db_per_km: f64) -> Multipath {
        let omega = 2.0 * std::f64::consts::PI * frequency_hz;
        let (mut e, mut et, mut et2) = (0.0, 0.0, 0.0);
        let mut p = Complex::new(0.0, 0.0);
        let mut first = f64::INFINITY;
        for a in arrivals {
            let amp = a.amplitude * 10f64.powf(-absorption_db_per_km * a.path_m / 20_000.0);
            let w = amp * amp;
            e += w;
            et += w * a.delay_s;
            et2 += w * a.delay_s * a.delay_s;
            p += Complex::from_polar(amp, a.phase_rad - omega * a.delay_s);
            first = first.min(a.delay_s);
        }
        let mean = if e > 0.0 { et / e } else { 0.0 };
        Multipath {
            first_delay_s: first,
            incoherent_tl_db: -10.0 * e.log10(),
            coherent_tl_db: -20.0 * p.norm().log10(),
            delay_spread_s: if e > 0.0 {
                (et2 / e - mean * mean).max(0.0).sqrt()
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests;
