//! One fan of rays through an [`Environment`]: the ray and dynamic ray equations stepped
//! segment by segment, reflections at the surface and the bottom, handed to a visitor that
//! turns segments into arrivals, fields or pictures.

use super::environment::{Environment, Fan};

/// Most steps of one ray (a bound on a ray trapped near a wedge's apex).
const MAX_STEPS: usize = 100_000;
/// A ray whose boundary losses leave less than this of its amplitude ends (BELLHOP's rule).
const MIN_LOSS: f64 = 0.005;
/// Water shallower than this (m) is land: a ray reaching it ends.
const AGROUND_M: f64 = 1e-3;

/// A point of a ray: position (range, depth), sound speed, dynamic ray variable q, travel time,
/// length along the ray and slowness vector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Point {
    pub r: f64,
    pub z: f64,
    pub c: f64,
    pub q: f64,
    pub p: f64,
    pub tau: f64,
    pub s: f64,
    pub xi: f64,
    pub zeta: f64,
}

/// One step of a beam, with what the ray has met before it.
pub(super) struct Segment {
    pub a: Point,
    pub b: Point,
    /// Index of the beam in its fan.
    pub beam: usize,
    pub launch_deg: f64,
    /// cos of the launch angle (the point source's spreading over the fan).
    pub cos_launch: f64,
    /// Beam half-width per unit |q|: Δα / c(source).
    pub width_per_q: f64,
    /// Product of the reflection coefficients' magnitudes.
    pub loss: f64,
    /// Sum of the reflection phases (rad).
    pub phase_rad: f64,
    /// Caustics passed before `a`.
    pub caustics: u32,
    pub surface_bounces: u32,
    pub bottom_bounces: u32,
}

/// Traces every beam of `fan` from `source_depth_m` until it leaves `[0, max_range_m]`, runs
/// aground or fades, calling `visit` for each step in order, beam by beam.
pub(super) fn trace_fan(
    env: &Environment,
    fan: &Fan,
    source_depth_m: f64,
    max_range_m: f64,
    visit: &mut impl FnMut(&Segment),
) {
    let (d0, _) = env.section.depth_at(0.0, 0);
    if !(source_depth_m >= 0.0 && source_depth_m < d0) || fan.beams == 0 {
        return;
    }
    let c0 = env.profile.speed(0.0, source_depth_m);
    let (a0, a1) = (fan.min_deg.to_radians(), fan.max_deg.to_radians());
    let dalpha = if fan.beams > 1 {
        (a1 - a0) / (fan.beams - 1) as f64
    } else {
        0.0
    };
    // BELLHOP's default step: a tenth of the water depth.
    let h0 = (env.section.max_depth() / 10.0).max(0.01);
    for beam in 0..fan.beams {
        let alpha = a0 + dalpha * beam as f64;
        let mut seg = Segment {
            a: Point {
                r: 0.0,
                z: source_depth_m,
                c: c0,
                q: 0.0,
                p: 1.0,
                tau: 0.0,
                s: 0.0,
                xi: alpha.cos() / c0,
                zeta: alpha.sin() / c0,
            },
            b: Point {
                r: 0.0,
                z: 0.0,
                c: 0.0,
                q: 0.0,
                p: 0.0,
                tau: 0.0,
                s: 0.0,
                xi: 0.0,
                zeta: 0.0,
            },
            beam,
            launch_deg: alpha.to_degrees(),
            cos_launch: alpha.cos().abs(),
            width_per_q: dalpha.abs() / c0,
            loss: 1.0,
            phase_rad: 0.0,
            caustics: 0,
            surface_bounces: 0,
            bottom_bounces: 0,
        };
        trace_ray(env, &mut seg, h0, max_range_m, visit);
    }
}

/// The step from `x` along the unit tangent `(ur, uz)` to the first of: `h0`, the layer's
/// bounds, the profile's range segment's ends, the surface, the bottom segment's line, the
/// segment's range ends, the range box.
#[allow(clippy::too_many_arguments)]
fn reduce_step(
    env: &Environment,
    layer: usize,
    column: usize,
    bseg: usize,
    r: f64,
    z: f64,
    ur: f64,
    uz: f64,
    h0: f64,
    max_range: f64,
) -> f64 {
    let mut h = h0;
    let (top, bottom) = env.profile.bounds(layer);
    if uz < 0.0 {
        if top.is_finite() && z >= top {
            h = h.min((top - z) / uz);
        }
        h = h.min(-z / uz);
    } else if uz > 0.0 && bottom.is_finite() && z <= bottom {
        h = h.min((bottom - z) / uz);
    }
    if env.profile.is_range_dependent() {
        let (left, right) = env.profile.range_bounds(column);
        if ur > 0.0 && right.is_finite() && r < right {
            h = h.min((right - r) / ur);
        } else if ur < 0.0 && left.is_finite() && r > left {
            h = h.min((left - r) / ur);
        }
    }
    let sec = &env.section;
    let f0 = sec.depth_in(bseg, r) - z;
    if let (Some(&r1), Some(&d1)) = (sec.range_m.get(bseg + 1), sec.depth_m.get(bseg + 1)) {
        let (ra, da) = (sec.range_m[bseg], sec.depth_m[bseg]);
        let slope = (d1 - da) / (r1 - ra);
        let closing = uz - slope * ur;
        if closing > 0.0 {
            h = h.min(f0 / closing);
        }
        if ur > 0.0 && r < r1 {
            h = h.min((r1 - r) / ur);
        } else if ur < 0.0 && r > ra {
            h = h.min((ra - r) / ur);
        }
    } else if uz > 0.0 {
        h = h.min(f0 / uz);
    }
    if ur > 0.0 {
        h = h.min((max_range - r) / ur + 1e-6);
    }
    h.max(1e-4 * h0)
}

/// Steps one ray to its end.
///
/// Each step is BELLHOP's polygon (midpoint) method: the derivatives at the start carry the ray
/// half a step, those at the midpoint the whole step, with dx/ds = c·t, dt/ds = −∇c/c²,
/// dq/ds = c·p, dp/ds = −(c_nn/c²)·q and dτ/ds = 1/c, where c_nn/c² = −2·c_rz·ξ·ζ for a
/// profile linear in depth and in range (c_rr = c_zz = 0; 0 when it does not change with
/// range).
fn trace_ray(
    env: &Environment,
    seg: &mut Segment,
    h0: f64,
    max_range: f64,
    visit: &mut impl FnMut(&Segment),
) {
    let profile = &env.profile;
    let sec = &env.section;
    let mut layer = profile.layer(seg.a.z, 0);
    let mut column = profile.segment(seg.a.r, 0);
    let mut bseg = sec.segment(0.0, 0);
    for _ in 0..MAX_STEPS {
        let a = seg.a;
        let s0 = profile.sound(layer, column, a.r, a.z);
        let c = s0.c;
        let cnn0 = -2.0 * s0.crz * a.xi * a.zeta;
        let mut h = reduce_step(
            env,
            layer,
            column,
            bseg,
            a.r,
            a.z,
            c * a.xi,
            c * a.zeta,
            h0,
            max_range,
        );
        // The state half a step on, and the sound there (in the step's layer and segment).
        let mid = |h: f64| {
            let half = h / 2.0;
            let xi1 = a.xi - half * s0.cr / (c * c);
            let zeta1 = a.zeta - half * s0.cz / (c * c);
            let p1 = a.p - half * cnn0 * a.q;
            let q1 = a.q + half * c * a.p;
            let s1 = profile.sound(
                layer,
                column,
                a.r + half * c * a.xi,
                a.z + half * c * a.zeta,
            );
            (xi1, zeta1, p1, q1, s1)
        };
        let (mut xi1, mut zeta1, mut p1, mut q1, mut s1) = mid(h);
        let h2 = reduce_step(
            env,
            layer,
            column,
            bseg,
            a.r,
            a.z,
            s1.c * xi1,
            s1.c * zeta1,
            h0,
            max_range,
        );
        if h2 < h {
            h = h2;
            (xi1, zeta1, p1, q1, s1) = mid(h);
        }
        let c1 = s1.c;
        let cnn1 = -2.0 * s1.crz * xi1 * zeta1;
        let mut b = Point {
            r: a.r + h * c1 * xi1,
            z: a.z + h * c1 * zeta1,
            c: 0.0,
            q: a.q + h * c1 * p1,
            p: a.p - h * cnn1 * q1,
            tau: a.tau + h / c1,
            s: a.s + h,
            xi: a.xi - h * s1.cr / (c1 * c1),
            zeta: a.zeta - h * s1.cz / (c1 * c1),
        };
        let (from, from_column) = (layer, column);
        bseg = sec.segment(b.r, bseg);
        let depth = sec.depth_in(bseg, b.r);
        // Land on a boundary the step reached.
        let at_surface = b.z <= 1e-9 && b.zeta < 0.0;
        let at_bottom = b.z >= depth - 1e-9;
        if at_surface {
            b.z = 0.0;
        } else if at_bottom {
            b.z = depth;
        }
        layer = profile.layer_from(b.z, from);
        column = profile.segment(b.r, from_column);
        let s2 = profile.sound(layer, column, b.r, b.z);
        b.c = s2.c;
        // Across a layer interface or a range segment's end the gradient jumps: the curvature
        // correction of p (BELLHOP's `Step2D` jump condition), with the slowness t = (ξ, ζ),
        // the jump Δ∇c = (Δc_r, Δc_z), Δc_n = Δ∇c·(−ζ, ξ), Δc_s = Δ∇c·(ξ, ζ), and
        // RN = RM·(2·Δc_n − RM·Δc_s)/c with RM = ξ/ζ across a layer, −ζ/ξ across a segment.
        let (dcr, dcz) = (s2.cr - s0.cr, s2.cz - s0.cz);
        let rm = if layer != from && b.zeta != 0.0 {
            Some(b.xi / b.zeta)
        } else if column != from_column && b.xi != 0.0 {
            Some(-b.zeta / b.xi)
        } else {
            None
        };
        if let Some(rm) = rm {
            let cn = dcz * b.xi - dcr * b.zeta;
            let rn = rm * (2.0 * cn - rm * dcz * b.zeta - rm * dcr * b.xi) / s2.c;
            b.p -= b.q * rn;
        }
        seg.b = b;
        visit(seg);
        if (a.q > 0.0 && b.q <= 0.0) || (a.q < 0.0 && b.q >= 0.0) {
            seg.caustics += 1;
        }
        seg.a = b;
        if !(b.r < max_range && b.r >= 0.0) || depth < AGROUND_M {
            return;
        }
        if at_surface {
            reflect(env, seg, layer, column, (0.0, -1.0), true);
        } else if at_bottom {
            let slope = match (sec.range_m.get(bseg + 1), sec.depth_m.get(bseg + 1)) {
                (Some(&r1), Some(&d1)) if b.r >= sec.range_m[bseg] => {
                    (d1 - sec.depth_m[bseg]) / (r1 - sec.range_m[bseg])
                }
                _ => 0.0,
            };
            let norm = slope.hypot(1.0);
            reflect(env, seg, layer, column, (-slope / norm, 1.0 / norm), false);
        }
        if seg.loss < MIN_LOSS {
            return;
        }
    }
}

/// Reflects the ray at `seg.a` off a boundary with outward unit normal `n` (r, z): the
/// slowness mirrored, p corrected for the sound-speed gradient's jump (BELLHOP's `Reflect2D`
/// after Müller 1984, flat boundaries), the reflection coefficient's magnitude and phase.
fn reflect(
    env: &Environment,
    seg: &mut Segment,
    layer: usize,
    column: usize,
    n: (f64, f64),
    top: bool,
) {
    let x = &mut seg.a;
    let th = x.xi * n.0 + x.zeta * n.1;
    if th <= 0.0 {
        return;
    }
    let tb = if top { (-n.1, n.0) } else { (n.1, -n.0) };
    let tg = x.xi * tb.0 + x.zeta * tb.1;
    let sound = env.profile.sound(layer, column, x.r, x.z);
    let (c, g, cr) = (sound.c, sound.cz, sound.cr);
    let (xi2, zeta2) = (x.xi - 2.0 * th * n.0, x.zeta - 2.0 * th * n.1);
    // Unit tangents and normals before and after, and the gradient's jumps along them.
    let (tr, tz) = (c * x.xi, c * x.zeta);
    let nz = tr;
    let (tr2, tz2) = (c * xi2, c * zeta2);
    let nz2 = -tr2;
    // The gradient is (c_r, g); the normals' range components are −t_z before and t_z
    // after.
    let mut cn_jump = -g * (nz2 - nz) - cr * (tz2 + tz);
    let cs_jump = -g * (tz2 - tz) - cr * (tr2 - tr);
    if top {
        cn_jump = -cn_jump;
    }
    let rm = tg / th;
    let rn = rm * (2.0 * cn_jump - rm * cs_jump) / (c * c);
    x.p += x.q * rn;
    x.xi = xi2;
    x.zeta = zeta2;
    if top {
        seg.phase_rad += std::f64::consts::PI;
        seg.surface_bounces += 1;
    } else {
        let (sin_g, cos_g) = ((th * c).min(1.0), (tg * c).abs().min(1.0));
        let r = env.seabed.reflection(c, cos_g, sin_g);
        seg.loss *= r.norm();
        // BELLHOP's phases are for e^{+iωt}: the conjugate's.
        seg.phase_rad -= r.arg();
        seg.bottom_bounces += 1;
    }
}
