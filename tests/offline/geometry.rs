//! Terrain loading and LOS/NLOS geometry against hand-computed positions.

use nalgebra::Point3;
use netsim_cosim::config::{GeoOrigin, Ridge, Terrain as TerrainCfg};

/// The origin the procedural terrains here do not depend on.
const ORIGIN: GeoOrigin = GeoOrigin {
    lat_deg: 0.0,
    lon_deg: 0.0,
    alt_m: 0.0,
};
use netsim_cosim::model::channel::{
    line_of_sight, line_of_sight_all, trace, trace_all, trace_naive, PathInfo, Tracer,
};
use netsim_cosim::model::terrain::{from_parry, to_parry, Terrain, TerrainError};
use parry3d_f64::query::{Ray, RayCast};

const LOSS: f64 = 2.0;
const TOL: f64 = 1e-6;

fn p(x: f64, y: f64, z: f64) -> Point3<f64> {
    Point3::new(x, y, z)
}

/// A flat floor at 0 with sharp triangular north–south ridges: crest 4 m at each `x` in
/// `crests`, base ±2 m, i.e. `h(x) = max(0, 4 - 2|x - crest|)`. 33 × 9 samples, 1 m cells:
/// x ∈ [-16, 16], y ∈ [-4, 4]. Heights do not depend on y, so the surface is exactly this.
fn ridges(crests: &[f64]) -> Terrain {
    let (cols, rows) = (33, 9);
    let mut h = Vec::new();
    for _ in 0..rows {
        for c in 0..cols {
            let x = c as f64 - 16.0;
            let v = crests
                .iter()
                .map(|cx| (4.0 - 2.0 * (x - cx).abs()).max(0.0))
                .fold(0.0, f64::max);
            h.push(v);
        }
    }
    Terrain::from_grid(h, cols, rows, 1.0).unwrap()
}

fn assert_pt(a: &Point3<f64>, b: &Point3<f64>) {
    assert!((a - b).norm() < TOL, "{a:?} != {b:?}");
}

/// Checks los, hop points and exit losses, with the broad phase and the naive reference.
fn check(t: &Terrain, a: Point3<f64>, b: Point3<f64>, los: bool, inner: &[(Point3<f64>, f64)]) {
    for (name, info) in [
        ("trace", trace(t, &a, &b, LOSS)),
        ("naive", trace_naive(t, &a, &b, LOSS)),
    ] {
        assert_eq!(info.los, los, "{name}: los for {a:?} -> {b:?}: {info:?}");
        assert_eq!(info.hops.len(), inner.len() + 2, "{name}: hops {info:?}");
        assert_pt(&info.hops[0].point, &a);
        assert_pt(&info.hops.last().unwrap().point, &b);
        assert_eq!(info.hops[0].loss_db, 0.0);
        assert_eq!(info.hops.last().unwrap().loss_db, 0.0);
        for (k, (q, loss)) in inner.iter().enumerate() {
            let hop = &info.hops[k + 1];
            assert_pt(&hop.point, q);
            assert!(
                (hop.loss_db - loss).abs() < TOL,
                "{name}: hop {k} loss {} != {loss}",
                hop.loss_db
            );
        }
    }
}

// ---------------------------------------------------------------- frames and the heightfield

#[test]
fn grid_layout_row0_north_col0_west() {
    // 3 × 2 samples, cell 2 m: x ∈ [-2, 2], y ∈ [-1, 1].
    let t = Terrain::from_grid(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2, 2.0).unwrap();
    assert_eq!(t.dims(), (3, 2));
    assert_eq!(t.half_extent(), [2.0, 1.0]);
    assert_eq!(t.cell_size(), 2.0);
    assert_eq!(t.height_at(-2.0, 1.0), Some(1.0)); // NW corner = row 0, col 0
    assert_eq!(t.height_at(2.0, 1.0), Some(3.0)); // NE
    assert_eq!(t.height_at(-2.0, -1.0), Some(4.0)); // SW
    assert_eq!(t.height_at(2.0, -1.0), Some(6.0)); // SE
    assert_eq!(t.height_at(0.0, 1.0), Some(2.0));
    assert_eq!(t.height_at(2.0 + 1e-9, 0.0), None);
    assert_eq!(t.height_at(0.0, -1.0 - 1e-9), None);
    // Inside a cell: NW triangle (u + v <= 1) and SE triangle.
    // Cell 0: NW=1, NE=2, SW=4, SE=5. u = 0.25, v = 0.5 -> 1 + 0.25*1 + 0.5*3 = 2.75.
    assert!((t.height_at(-1.5, 0.0).unwrap() - 2.75).abs() < 1e-12);
    // u = 0.75, v = 0.5 -> SE: 5 + 0.25*(4-5) + 0.5*(2-5) = 3.25.
    assert!((t.height_at(-0.5, 0.0).unwrap() - 3.25).abs() < 1e-12);
}

#[test]
fn parry_frame_mapping_matches_grid() {
    let t = Terrain::from_grid(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2, 2.0).unwrap();
    let hf = t.heightfield();
    let (tri, _) = hf.triangles_at(0, 0);
    let tri = tri.unwrap();
    // parry's (i=0, j=0) corner maps back to our NW sample.
    assert_pt(&from_parry(&tri.a), &p(-2.0, 1.0, 1.0));
    for q in [p(1.0, -2.0, 3.0), p(-0.3, 0.7, -5.0)] {
        assert_pt(&from_parry(&to_parry(&q)), &q);
    }
    // Every vertex of every parry triangle lies on our surface.
    for tri in hf.triangles() {
        for v in [tri.a, tri.b, tri.c] {
            let q = from_parry(&v);
            assert!((t.height_at(q.x, q.y).unwrap() - q.z).abs() < 1e-12);
        }
    }
}

#[test]
fn parry_ray_cast_is_two_sided_and_matches_height_at() {
    let t = ridges(&[0.0]);
    let hf = t.heightfield();
    for &(x, y) in &[
        (-1.25, 0.3),
        (0.5, -2.7),
        (1.9, 3.1),
        (-7.0, 0.0),
        (0.0, 0.0),
    ] {
        let h = t.height_at(x, y).unwrap();
        // From above, downwards.
        let down = Ray::new(
            to_parry(&p(x, y, 10.0)),
            parry3d_f64::na::Vector3::new(0.0, -1.0, 0.0),
        );
        let toi = hf
            .cast_local_ray(&down, 100.0, false)
            .expect("hit from above");
        assert!((10.0 - toi - h).abs() < 1e-9);
        // From below, upwards (solid = false): parry's triangles are two-sided.
        let up = Ray::new(
            to_parry(&p(x, y, -10.0)),
            parry3d_f64::na::Vector3::new(0.0, 1.0, 0.0),
        );
        let toi = hf
            .cast_local_ray(&up, 100.0, false)
            .expect("hit from below");
        assert!((-10.0 + toi - h).abs() < 1e-9);
    }
}

// ---------------------------------------------------------------- one ridge, hand-computed

#[test]
fn horizontal_path_through_ridge() {
    // z = 1: 4 - 2|x| = 1 at x = ±1.5; 3 m inside, 6 dB.
    let t = ridges(&[0.0]);
    check(
        &t,
        p(-10.0, 0.5, 1.0),
        p(10.0, 0.5, 1.0),
        false,
        &[(p(-1.5, 0.5, 1.0), 0.0), (p(1.5, 0.5, 1.0), 6.0)],
    );
    // Reversed: same points, in the other order.
    check(
        &t,
        p(10.0, 0.5, 1.0),
        p(-10.0, 0.5, 1.0),
        false,
        &[(p(1.5, 0.5, 1.0), 0.0), (p(-1.5, 0.5, 1.0), 6.0)],
    );
}

#[test]
fn sloped_path_through_ridge() {
    // A = (-10, 1, 0.5), B = (10, 1, 2.5): z = 1.5 + 0.1 x.
    // West slope 4 + 2x = 1.5 + 0.1x -> x = -25/19; east slope 4 - 2x = 1.5 + 0.1x -> x = 25/21.
    let t = ridges(&[0.0]);
    let z = |x: f64| 1.5 + 0.1 * x;
    let (xe, xx) = (-25.0 / 19.0, 25.0 / 21.0);
    let len = (xx - xe) * (20.0f64.powi(2) + 2.0f64.powi(2)).sqrt() / 20.0;
    check(
        &t,
        p(-10.0, 1.0, 0.5),
        p(10.0, 1.0, 2.5),
        false,
        &[(p(xe, 1.0, z(xe)), 0.0), (p(xx, 1.0, z(xx)), LOSS * len)],
    );
}

#[test]
fn diagonal_path_through_ridge() {
    // A = (-8, -3, 1), B = (8, 3, 1): crosses z = 1 contour at x = ±1.5, i.e. t = 6.5/16, 9.5/16.
    let t = ridges(&[0.0]);
    let len = 3.0 * (16.0f64 * 16.0 + 6.0 * 6.0).sqrt() / 16.0;
    check(
        &t,
        p(-8.0, -3.0, 1.0),
        p(8.0, 3.0, 1.0),
        false,
        &[
            (p(-1.5, -3.0 + 6.0 * 6.5 / 16.0, 1.0), 0.0),
            (p(1.5, -3.0 + 6.0 * 9.5 / 16.0, 1.0), LOSS * len),
        ],
    );
}

#[test]
fn grazing_the_crest_is_nlos_a_hair_above_is_los() {
    let t = ridges(&[0.0]);
    // Exactly touching the crest: NLOS, entry = exit = crest point, 0 dB.
    check(
        &t,
        p(-10.0, 0.0, 4.0),
        p(10.0, 0.0, 4.0),
        false,
        &[(p(0.0, 0.0, 4.0), 0.0), (p(0.0, 0.0, 4.0), 0.0)],
    );
    // Sloped, through the crest: A = (-6, 0, 6), B = (6, 0, 2) passes z = 4 at x = 0.
    check(
        &t,
        p(-6.0, 0.0, 6.0),
        p(6.0, 0.0, 2.0),
        false,
        &[(p(0.0, 0.0, 4.0), 0.0), (p(0.0, 0.0, 4.0), 0.0)],
    );
    for hair in [1e-9, 1e-7, 1e-3] {
        check(
            &t,
            p(-10.0, 0.0, 4.0 + hair),
            p(10.0, 0.0, 4.0 + hair),
            true,
            &[],
        );
        check(
            &t,
            p(-6.0, 0.0, 6.0),
            p(6.0, 0.0, 2.0 + 2.0 * hair),
            true,
            &[],
        );
    }
}

#[test]
fn moving_vehicle_goes_los_nlos_los_at_hand_computed_positions() {
    // A fixed at (-6, 0, 6); B at z = 2 moves east along y = 0.
    // - B reaches the west slope (4 + 2x = 2) at x = -1: on the surface from there (NLOS).
    // - East of the ridge the line clears the crest when 6 - 24/(xB + 6) > 4, i.e. xB > 6;
    //   at xB = 6 it grazes the crest (NLOS).
    let t = ridges(&[0.0]);
    let a = p(-6.0, 0.0, 6.0);
    let mut transitions = Vec::new();
    let mut prev = None;
    for k in 0..=(17 * 64) {
        let xb = -5.0 + k as f64 / 64.0;
        let info = trace(&t, &a, &p(xb, 0.0, 2.0), LOSS);
        assert!(
            same(&info, &trace_naive(&t, &a, &p(xb, 0.0, 2.0), LOSS)),
            "xb = {xb}"
        );
        assert_eq!(info.los, xb < -1.0 || xb > 6.0, "xb = {xb}: {info:?}");
        if prev.is_some_and(|l| l != info.los) {
            transitions.push(xb);
        }
        prev = Some(info.los);
    }
    // LOS -> NLOS at exactly -1 (first NLOS sample), NLOS -> LOS just after 6.
    assert_eq!(transitions, vec![-1.0, 6.0 + 1.0 / 64.0]);
    // Hairs around the two transition points.
    for (xb, los) in [
        (-1.0 - 1e-9, true),
        (-1.0, false),
        (6.0, false),
        (6.0 + 1e-9, true),
    ] {
        assert_eq!(trace(&t, &a, &p(xb, 0.0, 2.0), LOSS).los, los, "xb = {xb}");
    }
    // B on the surface at x = -1: the obstruction is B itself.
    check(
        &t,
        a,
        p(-1.0, 0.0, 2.0),
        false,
        &[(p(-1.0, 0.0, 2.0), 0.0), (p(-1.0, 0.0, 2.0), 0.0)],
    );
    // B = (1.5, 0, 2), past the crest and above the east slope (h = 1): the line
    // z = 6 - 4(x + 6)/7.5 meets 4 + 2x at x = -6/19... computed below.
    let xb = 1.5;
    let zl = |x: f64| 6.0 - 4.0 * (x + 6.0) / (xb + 6.0);
    // West slope: 6 - (8/15)(x + 6) = 4 + 2x -> 2 - 3.2 = (2 + 8/15) x -> x = -1.2 / (38/15).
    let xe = -1.2 * 15.0 / 38.0;
    // East slope: 6 - (8/15)(x + 6) = 4 - 2x -> (2 - 8/15) x = 1.2 -> x = 1.2 * 15 / 22.
    let xx = 1.2 * 15.0 / 22.0;
    let len = (xx - xe) * ((xb + 6.0).powi(2) + 16.0).sqrt() / (xb + 6.0);
    check(
        &t,
        a,
        p(xb, 0.0, 2.0),
        false,
        &[(p(xe, 0.0, zl(xe)), 0.0), (p(xx, 0.0, zl(xx)), LOSS * len)],
    );
}

#[test]
fn two_ridges_give_two_obstructions() {
    let t = ridges(&[-8.0, 8.0]);
    check(
        &t,
        p(-14.0, -1.0, 1.0),
        p(14.0, -1.0, 1.0),
        false,
        &[
            (p(-9.5, -1.0, 1.0), 0.0),
            (p(-6.5, -1.0, 1.0), 6.0),
            (p(6.5, -1.0, 1.0), 0.0),
            (p(9.5, -1.0, 1.0), 6.0),
        ],
    );
    // Grazing one crest and crossing the other: z = 4 passes crest -8 exactly... and crest 8
    // exactly too: two touches.
    check(
        &t,
        p(-14.0, 2.0, 4.0),
        p(14.0, 2.0, 4.0),
        false,
        &[
            (p(-8.0, 2.0, 4.0), 0.0),
            (p(-8.0, 2.0, 4.0), 0.0),
            (p(8.0, 2.0, 4.0), 0.0),
            (p(8.0, 2.0, 4.0), 0.0),
        ],
    );
}

/// `line_of_sight` stops at the first obstruction, not at a stretch too close to the surface
/// to decide at once: 1e-7 m above one crest (LOS there), then through the other ridge.
#[test]
fn line_of_sight_passes_a_near_miss_and_finds_the_later_obstruction() {
    let t = ridges(&[-8.0, 8.0]);
    let z = |x: f64| 4.0 + 1e-7 - 0.1 * (x + 8.0);
    let (a, b) = (p(-14.0, 0.5, z(-14.0)), p(14.0, 0.5, z(14.0)));
    let full = trace(&t, &a, &b, LOSS);
    assert!(!full.los && full.hops.len() == 4, "{full:?}");
    // Entry on the west flank of crest 8 (h = 2x - 12), exit on its east flank (h = 20 - 2x).
    let (xe, xx) = ((15.2 + 1e-7) / 2.1, (16.8 - 1e-7) / 1.9);
    assert_pt(&full.hops[1].point, &p(xe, 0.5, z(xe)));
    assert_pt(&full.hops[2].point, &p(xx, 0.5, z(xx)));
    assert!(!line_of_sight(&t, &a, &b));
    // The same line lifted clear of both crests is LOS for both.
    let (a2, b2) = (p(-14.0, 0.5, 9.0), p(14.0, 0.5, 6.0));
    assert!(trace(&t, &a2, &b2, LOSS).los && line_of_sight(&t, &a2, &b2));
}

#[test]
fn endpoints_below_the_surface() {
    let t = ridges(&[0.0]);
    // A inside the ridge (h(0) = 4): obstruction starts at A, exits at 4 - 2x = 2, x = 1.
    check(
        &t,
        p(0.0, 0.0, 2.0),
        p(10.0, 0.0, 2.0),
        false,
        &[(p(0.0, 0.0, 2.0), 0.0), (p(1.0, 0.0, 2.0), 2.0)],
    );
    // B inside: enters at x = -1, ends at B.
    check(
        &t,
        p(-10.0, 0.0, 2.0),
        p(0.5, 0.0, 2.0),
        false,
        &[(p(-1.0, 0.0, 2.0), 0.0), (p(0.5, 0.0, 2.0), 3.0)],
    );
    // Both inside: the whole segment.
    check(
        &t,
        p(-0.5, 0.0, 1.0),
        p(0.5, 0.0, 1.0),
        false,
        &[(p(-0.5, 0.0, 1.0), 0.0), (p(0.5, 0.0, 1.0), 2.0)],
    );
    // Below the flat floor, vertical.
    check(
        &t,
        p(10.0, 0.0, -3.0),
        p(10.0, 0.0, -1.0),
        false,
        &[(p(10.0, 0.0, -3.0), 0.0), (p(10.0, 0.0, -1.0), 4.0)],
    );
    // Vertical from below to above: exits at the floor.
    check(
        &t,
        p(10.0, 0.0, -3.0),
        p(10.0, 0.0, 5.0),
        false,
        &[(p(10.0, 0.0, -3.0), 0.0), (p(10.0, 0.0, 0.0), 6.0)],
    );
    // A single point below the surface.
    let info = trace(&t, &p(0.0, 0.0, 1.0), &p(0.0, 0.0, 1.0), LOSS);
    assert!(!info.los);
}

#[test]
fn outside_the_grid_there_is_no_terrain() {
    let t = ridges(&[0.0]);
    assert_eq!(t.height_at(-16.5, 0.0), None);
    // Entirely outside, far below the floor: LOS.
    check(&t, p(-30.0, 0.0, -100.0), p(-20.0, 0.0, -100.0), true, &[]);
    check(&t, p(0.0, 10.0, -100.0), p(0.0, 20.0, -5.0), true, &[]);
    // Below the floor, from outside into the grid: the obstruction starts at the west edge.
    check(
        &t,
        p(-20.0, 0.0, -1.0),
        p(-10.0, 0.0, -1.0),
        false,
        &[(p(-16.0, 0.0, -1.0), 0.0), (p(-10.0, 0.0, -1.0), 12.0)],
    );
    // Crossing the whole grid below the floor and the ridge: edge to edge.
    check(
        &t,
        p(-20.0, 1.0, -1.0),
        p(20.0, 1.0, -1.0),
        false,
        &[(p(-16.0, 1.0, -1.0), 0.0), (p(16.0, 1.0, -1.0), 64.0)],
    );
    // Passing outside the grid at the level of the ridge (north of y = 4): LOS.
    check(&t, p(-10.0, 5.0, 1.0), p(10.0, 5.0, 1.0), true, &[]);
    // Diagonal through the corner region, through the ridge: enters the grid at y = -4.
    // A = (-2, -6, 1), B = (2, 6, 1): x = -2 + (y + 6)/3; contour |x| = 1.5 -> y = -4.5 (outside), 4.5 (outside).
    // So inside the grid (y ∈ [-4, 4], x ∈ [-4/3, 4/3]) the segment is below the ridge (h ≥ 4 - 8/3 > 1).
    let len = 8.0 * (16.0f64 + 144.0).sqrt() / 12.0;
    check(
        &t,
        p(-2.0, -6.0, 1.0),
        p(2.0, 6.0, 1.0),
        false,
        &[
            (p(-2.0 + 2.0 / 3.0, -4.0, 1.0), 0.0),
            (p(2.0 - 2.0 / 3.0, 4.0, 1.0), LOSS * len),
        ],
    );
}

#[test]
fn path_along_a_flat_floor_is_nlos_without_loss() {
    let t = ridges(&[0.0]);
    // Lying on the floor east of the ridge: touches the surface all along, no penetration.
    let info = trace(&t, &p(4.0, 0.0, 0.0), &p(12.0, 0.0, 0.0), LOSS);
    assert!(!info.los, "{info:?}");
    assert!(info.total_loss_db().abs() < TOL);
}

// ---------------------------------------------------------------- trace_all and the reference

/// A tracer following moving vehicles window after window (small steps, a jump across the
/// grid, vehicles leaving and re-entering it, a change in the number of vehicles) gives every
/// window the paths a fresh `trace` gives, and matches parry alone.
#[test]
fn tracer_following_vehicles_equals_fresh_trace() {
    let t = random_terrain();
    let mut s = 5u64;
    let mut pts: Vec<_> = (0..16)
        .map(|_| {
            p(
                lcg(&mut s) * 250.0 - 125.0,
                lcg(&mut s) * 180.0 - 90.0,
                -75.0 + lcg(&mut s) * 55.0,
            )
        })
        .collect();
    let vel: Vec<[f64; 3]> = (0..16)
        .map(|_| {
            [
                lcg(&mut s) * 6.0 - 3.0,
                lcg(&mut s) * 6.0 - 3.0,
                lcg(&mut s) - 0.5,
            ]
        })
        .collect();
    let mut tracer = Tracer::new();
    let (mut nlos, mut n, mut changed) = (0, 0, 0);
    let mut last: Vec<PathInfo> = Vec::new();
    for w in 0..120 {
        for (q, v) in pts.iter_mut().zip(&vel) {
            q.x += v[0];
            q.y += v[1];
            q.z += v[2] * 0.2;
        }
        if w == 60 {
            pts[3] = p(-pts[3].x, -pts[3].y, pts[3].z); // a jump across the grid
        }
        let cut = if w == 90 { 12 } else { 16 };
        let all = tracer.trace_all(&t, &pts[..cut], LOSS);
        let mut k = 0;
        for i in 0..cut {
            for j in (i + 1)..cut {
                let fresh = trace(&t, &pts[i], &pts[j], LOSS);
                assert!(
                    same(&all[k], &fresh),
                    "window {w} pair ({i}, {j})\ntracer {:?}\nfresh {fresh:?}",
                    all[k]
                );
                assert_eq!(
                    line_of_sight(&t, &pts[i], &pts[j]),
                    fresh.los,
                    "window {w} pair ({i}, {j})"
                );
                if w % 20 == 0 {
                    assert!(
                        same(&fresh, &trace_naive(&t, &pts[i], &pts[j], LOSS)),
                        "window {w} pair ({i}, {j})"
                    );
                }
                n += 1;
                nlos += usize::from(!fresh.los);
                k += 1;
            }
        }
        changed += usize::from(
            last.len() == all.len() && last.iter().zip(all).any(|(a, b)| a.los != b.los),
        );
        last = all.to_vec();
    }
    // The vehicles really move through LOS and NLOS (and out of the grid).
    assert!(nlos > n / 10 && nlos < n * 9 / 10, "nlos {nlos} of {n}");
    assert!(changed > 20, "LOS/NLOS changed in only {changed} windows");
}

/// With small steps (the motion of a 1–10 ms window) the tracer reuses its certificates for
/// most pairs — only the stretches near the surface are walked again — and every window's
/// paths still equal a fresh `trace`'s, also while vehicles sink through a crest or climb
/// out of it so that crossings appear and disappear under a reused certificate.
#[test]
fn tracer_with_small_steps_reuses_its_certificates_and_equals_fresh_trace() {
    let t = random_terrain();
    let mut s = 11u64;
    let mut pts: Vec<_> = (0..12)
        .map(|_| {
            let (x, y) = (lcg(&mut s) * 220.0 - 110.0, lcg(&mut s) * 160.0 - 80.0);
            p(x, y, t.height_at(x, y).unwrap() + 1.0 + lcg(&mut s) * 25.0)
        })
        .collect();
    // 0.5–3 m/s at 5 ms windows: 2.5–15 mm per window; vertical drift up to 0.5 m/s.
    let vel: Vec<[f64; 3]> = (0..12)
        .map(|_| {
            let (h, v) = (lcg(&mut s) * std::f64::consts::TAU, 0.5 + lcg(&mut s) * 2.5);
            [v * h.sin(), v * h.cos(), lcg(&mut s) - 0.5]
        })
        .collect();
    let dt = 0.005;
    let mut tracer = Tracer::new();
    let (mut n, mut reused, mut nlos_reused_windows, mut changed) =
        (0usize, 0usize, 0usize, 0usize);
    let mut last: Vec<PathInfo> = Vec::new();
    for w in 0..400 {
        for (q, v) in pts.iter_mut().zip(&vel) {
            q.x += v[0] * dt;
            q.y += v[1] * dt;
            q.z += v[2] * dt;
        }
        // Vehicle 0 sinks through the terrain and back: its paths cross the surface anew.
        pts[0].z += if w < 200 { -0.05 } else { 0.05 };
        let all = tracer.trace_all(&t, &pts, LOSS).to_vec();
        if w > 0 {
            reused += tracer.reused();
            nlos_reused_windows += usize::from(tracer.reused() > 0 && all.iter().any(|p| !p.los));
        }
        let mut k = 0;
        for i in 0..pts.len() {
            for j in (i + 1)..pts.len() {
                let fresh = trace(&t, &pts[i], &pts[j], LOSS);
                assert!(
                    same(&all[k], &fresh),
                    "window {w} pair ({i}, {j})\ntracer {:?}\nfresh {fresh:?}",
                    all[k]
                );
                n += 1;
                k += 1;
            }
        }
        changed += usize::from(
            !last.is_empty()
                && last
                    .iter()
                    .zip(&all)
                    .any(|(a, b)| a.hops.len() != b.hops.len()),
        );
        last = all;
    }
    let pairs = n / 400;
    assert!(
        reused * 2 > (n - pairs),
        "certificates reused for only {reused} of {} pair-windows",
        n - pairs
    );
    assert!(nlos_reused_windows > 300, "{nlos_reused_windows}");
    assert!(
        changed > 10,
        "the number of crossings changed in only {changed} windows"
    );
}

/// A tracer used with another terrain starts afresh: its certificates were made for the first.
#[test]
fn tracer_moved_to_another_terrain_starts_afresh() {
    let a = random_terrain();
    let b = Terrain::from_grid(
        a.heights().iter().map(|h| h + 15.0).collect(),
        a.dims().0,
        a.dims().1,
        a.cell_size(),
    )
    .unwrap();
    let pts = [
        p(-100.0, -60.0, -40.0),
        p(90.0, 70.0, -35.0),
        p(0.0, 10.0, -30.0),
        p(50.0, -70.0, -38.0),
    ];
    let mut tracer = Tracer::new();
    for _ in 0..3 {
        tracer.trace_all(&a, &pts, LOSS);
    }
    let on_b = tracer.trace_all(&b, &pts, LOSS).to_vec();
    let mut k = 0;
    for i in 0..pts.len() {
        for j in (i + 1)..pts.len() {
            assert!(
                same(&on_b[k], &trace(&b, &pts[i], &pts[j], LOSS)),
                "pair ({i}, {j})"
            );
            k += 1;
        }
    }
    assert_eq!(tracer.reused(), 0);
    // Paths that certificates made on `a` would have got wrong on `b`.
    let differ = on_b
        .iter()
        .zip(tracer.trace_all(&a, &pts, LOSS))
        .filter(|(x, y)| !same(x, y))
        .count();
    assert!(
        differ >= 3,
        "only {differ} paths differ between the terrains"
    );
}

fn random_terrain() -> Terrain {
    let cfg = TerrainCfg::Procedural {
        size_m: [256.0, 192.0],
        cell_size_m: 2.0,
        base_height_m: -60.0,
        relief_m: 20.0,
        seed: Some(7),
        ridges: vec![
            Ridge {
                from: [-100.0, -80.0],
                to: [60.0, 90.0],
                crest_height_m: -20.0,
                width_m: 30.0,
            },
            Ridge {
                from: [40.0, -90.0],
                to: [40.0, 0.0],
                crest_height_m: -30.0,
                width_m: 20.0,
            },
        ],
    };
    Terrain::from_config(&cfg, 0, &ORIGIN).unwrap()
}

fn lcg(s: &mut u64) -> f64 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*s >> 11) as f64 / (1u64 << 53) as f64
}

fn same(a: &PathInfo, b: &PathInfo) -> bool {
    a.los == b.los
        && a.hops.len() == b.hops.len()
        && a.hops
            .iter()
            .zip(&b.hops)
            .all(|(x, y)| (x.point - y.point).norm() < 1e-6 && (x.loss_db - y.loss_db).abs() < 1e-6)
}

#[test]
fn broad_phase_agrees_with_parry_alone() {
    let t = random_terrain();
    let mut s = 1u64;
    let (mut nlos, mut n) = (0, 0);
    for _ in 0..3000 {
        let mut q = || {
            p(
                lcg(&mut s) * 300.0 - 150.0,
                lcg(&mut s) * 240.0 - 120.0,
                -75.0 + lcg(&mut s) * 60.0,
            )
        };
        let (a, b) = (q(), q());
        let (x, y) = (trace(&t, &a, &b, LOSS), trace_naive(&t, &a, &b, LOSS));
        assert!(same(&x, &y), "{a:?} -> {b:?}\nbroad {x:?}\nnaive {y:?}");
        assert_eq!(line_of_sight(&t, &a, &b), y.los, "{a:?} -> {b:?}");
        n += 1;
        nlos += usize::from(!x.los);
    }
    assert!(nlos > n / 10 && nlos < n * 9 / 10, "nlos {nlos} of {n}");
}

/// Buried length and minimum clearance of a segment by dense sampling of `height_at`.
fn sampled(t: &Terrain, a: &Point3<f64>, b: &Point3<f64>, n: usize) -> (f64, f64) {
    let (mut buried, mut min_f) = (0.0, f64::INFINITY);
    for k in 0..n {
        let q = a + (b - a) * ((k as f64 + 0.5) / n as f64);
        if let Some(h) = t.height_at(q.x, q.y) {
            min_f = min_f.min(q.z - h);
            if q.z < h {
                buried += (b - a).norm() / n as f64;
            }
        }
    }
    (buried, min_f)
}

#[test]
fn lines_through_grid_vertices_match_sampling() {
    // End points on grid vertices (cell 2 m): lines pass exactly through block corners and
    // start on cell boundaries. (parry's own HeightField traversal can stop early for a ray
    // starting exactly on a cell boundary, so the reference here is dense sampling.)
    let t = random_terrain();
    let mut s = 5u64;
    let mut nlos = 0;
    for _ in 0..1500 {
        let snap = |v: f64| (v / 2.0).round() * 2.0;
        let mut q = || {
            p(
                snap(lcg(&mut s) * 300.0 - 150.0),
                snap(lcg(&mut s) * 240.0 - 120.0),
                -75.0 + lcg(&mut s) * 60.0,
            )
        };
        let (a, b) = (q(), q());
        let info = trace(&t, &a, &b, LOSS);
        let n = 4000;
        let (buried, min_f) = sampled(&t, &a, &b, n);
        let step = (b - a).norm() / n as f64;
        if info.los {
            assert!(
                min_f > -1e-9,
                "{a:?} -> {b:?}: LOS but sampled clearance {min_f}"
            );
        } else {
            nlos += 1;
            let obstructions = (info.hops.len() - 2) / 2;
            let slack = 2.0 * step * obstructions as f64 + 1e-6;
            assert!(
                (info.total_loss_db() / LOSS - buried).abs() <= slack,
                "{a:?} -> {b:?}: {info:?} vs {buried}"
            );
            if min_f > step {
                // Sampling saw no contact: only a touch or a sliver shorter than a sample step.
                assert!(
                    info.total_loss_db() / LOSS <= slack,
                    "{a:?} -> {b:?}: {info:?}"
                );
            }
        }
    }
    assert!(nlos > 100, "nlos {nlos}");
    // The case that exposed the traversal issue: the line starts on a grid vertex.
    let (a, b) = (
        p(-6.0, 46.0, -40.35201219749217),
        p(66.0, 18.0, -19.958811276700224),
    );
    let info = trace(&t, &a, &b, LOSS);
    let (buried, min_f) = sampled(&t, &a, &b, 20000);
    assert!(!info.los && min_f < -15.0);
    assert!((info.total_loss_db() / LOSS - buried).abs() < 0.05);
}

#[test]
fn trace_all_equals_pairwise_trace() {
    let t = random_terrain();
    let mut s = 99u64;
    let pts: Vec<_> = (0..40)
        .map(|_| {
            p(
                lcg(&mut s) * 250.0 - 125.0,
                lcg(&mut s) * 180.0 - 90.0,
                -70.0 + lcg(&mut s) * 50.0,
            )
        })
        .collect();
    let all = trace_all(&t, &pts, LOSS);
    assert_eq!(all.len(), 40 * 39 / 2);
    let mut k = 0;
    for i in 0..pts.len() {
        for j in (i + 1)..pts.len() {
            assert_eq!(all[k], trace(&t, &pts[i], &pts[j], LOSS), "pair ({i}, {j})");
            k += 1;
        }
    }
    assert_eq!(trace_all(&t, &pts, LOSS), all);
    assert_eq!(
        line_of_sight_all(&t, &pts),
        all.iter().map(|p| p.los).collect::<Vec<_>>()
    );
    assert!(trace_all(&t, &pts[..1], LOSS).is_empty());
    assert_eq!(
        trace_all(&t, &pts[..2], LOSS),
        vec![trace(&t, &pts[0], &pts[1], LOSS)]
    );
}

// ---------------------------------------------------------------- procedural terrain

fn proc_cfg(seed: Option<u64>, relief: f64, ridges: Vec<Ridge>) -> TerrainCfg {
    TerrainCfg::Procedural {
        size_m: [200.0, 100.0],
        cell_size_m: 1.0,
        base_height_m: -50.0,
        relief_m: relief,
        seed,
        ridges,
    }
}

#[test]
fn procedural_is_deterministic_per_seed() {
    let a = Terrain::from_config(&proc_cfg(Some(3), 10.0, vec![]), 0, &ORIGIN).unwrap();
    let b = Terrain::from_config(&proc_cfg(Some(3), 10.0, vec![]), 99, &ORIGIN).unwrap();
    let c = Terrain::from_config(&proc_cfg(Some(4), 10.0, vec![]), 0, &ORIGIN).unwrap();
    let d = Terrain::from_config(&proc_cfg(None, 10.0, vec![]), 3, &ORIGIN).unwrap();
    assert_eq!(a.dims(), (201, 101));
    assert_eq!(a.half_extent(), [100.0, 50.0]);
    assert_eq!(a.heights(), b.heights());
    assert_eq!(
        a.heights(),
        d.heights(),
        "no own seed: the scenario seed is used"
    );
    assert_ne!(a.heights(), c.heights());
    // Peak-to-peak relief exactly relief_m, centred on the base height.
    let lo = a.heights().iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = a
        .heights()
        .iter()
        .cloned()
        .fold(f64::NEG_INFINITY, f64::max);
    assert!((hi - lo - 10.0).abs() < 1e-9);
    assert!((lo + 55.0).abs() < 1e-9 && (hi + 45.0).abs() < 1e-9);
    // Smooth: neighbouring samples differ by far less than the relief.
    let (cols, _) = a.dims();
    let max_step = a
        .heights()
        .windows(2)
        .enumerate()
        .filter(|(k, _)| (k + 1) % cols != 0)
        .map(|(_, w)| (w[1] - w[0]).abs())
        .fold(0.0, f64::max);
    assert!(max_step < 1.0, "max step {max_step}");
}

#[test]
fn procedural_ridge_crest_and_width() {
    // Ridge along y = 10 from x = -40 to x = 40, crest -20 over a floor of -50, width 16.
    let ridge = Ridge {
        from: [-40.0, 10.0],
        to: [40.0, 10.0],
        crest_height_m: -20.0,
        width_m: 16.0,
    };
    let t = Terrain::from_config(&proc_cfg(Some(1), 0.0, vec![ridge]), 0, &ORIGIN).unwrap();
    let h = |x: f64, y: f64| t.height_at(x, y).unwrap();
    for x in [-40.0, -13.0, 0.0, 27.0, 40.0] {
        assert!((h(x, 10.0) + 20.0).abs() < 1e-9, "crest at x = {x}");
        // Quarter width off the crest: half way up, (1 + cos(π/2)) / 2 = 1/2.
        assert!((h(x, 14.0) + 35.0).abs() < 1e-9);
        assert!((h(x, 6.0) + 35.0).abs() < 1e-9);
        // 2 m off: -50 + 30 * (1 + cos(π/4)) / 2.
        let exp = -50.0 + 30.0 * (1.0 + (std::f64::consts::PI / 4.0).cos()) / 2.0;
        assert!((h(x, 12.0) - exp).abs() < 1e-9);
        // At and beyond half the width: the floor.
        assert!((h(x, 18.0) + 50.0).abs() < 1e-9);
        assert!((h(x, 1.0) + 50.0).abs() < 1e-9);
    }
    // Rounded caps: 4 m beyond the end along the axis is like 4 m off the crest.
    assert!((h(44.0, 10.0) + 35.0).abs() < 1e-9);
    assert!((h(-44.0, 10.0) + 35.0).abs() < 1e-9);
    assert!((h(48.0, 10.0) + 50.0).abs() < 1e-9);
    // Diagonal cap: 3-4-5 triangle from the end point (40, 10) -> d = 5.
    let exp = -50.0 + 30.0 * (1.0 + (std::f64::consts::PI * 5.0 / 8.0).cos()) / 2.0;
    assert!((h(43.0, 14.0) - exp).abs() < 1e-9);
    // With relief, the ridge never digs below the floor and keeps its crest.
    let ridge = Ridge {
        from: [-40.0, 10.0],
        to: [40.0, 10.0],
        crest_height_m: -20.0,
        width_m: 16.0,
    };
    let flat = Terrain::from_config(&proc_cfg(Some(1), 6.0, vec![]), 0, &ORIGIN).unwrap();
    let t = Terrain::from_config(&proc_cfg(Some(1), 6.0, vec![ridge]), 0, &ORIGIN).unwrap();
    for (a, b) in t.heights().iter().zip(flat.heights()) {
        assert!(a >= b);
    }
    assert!((t.height_at(0.0, 10.0).unwrap() + 20.0).abs() < 1e-9);
}

#[test]
fn procedural_rejects_bad_parameters() {
    let mut cfg = proc_cfg(Some(1), 0.0, vec![]);
    if let TerrainCfg::Procedural { cell_size_m, .. } = &mut cfg {
        *cell_size_m = 0.0;
    }
    assert!(matches!(
        Terrain::from_config(&cfg, 0, &ORIGIN),
        Err(TerrainError::Invalid { .. })
    ));
    let mut cfg = proc_cfg(Some(1), 0.0, vec![]);
    if let TerrainCfg::Procedural {
        size_m,
        cell_size_m,
        ..
    } = &mut cfg
    {
        *size_m = [1e6, 10.0];
        *cell_size_m = 1.0;
    }
    assert!(matches!(
        Terrain::from_config(&cfg, 0, &ORIGIN),
        Err(TerrainError::TooLarge { .. })
    ));
}

// ---------------------------------------------------------------- files

fn write_png(
    path: &std::path::Path,
    w: u32,
    h: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) {
    let f = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(f), w, h);
    enc.set_color(color);
    enc.set_depth(depth);
    let mut wr = enc.write_header().unwrap();
    wr.write_image_data(data).unwrap();
}

fn png_cfg(path: &std::path::Path) -> TerrainCfg {
    TerrainCfg::Png {
        path: path.display().to_string(),
        cell_size_m: 2.0,
        min_height_m: -100.0,
        max_height_m: 0.0,
    }
}

#[test]
fn png_8_and_16_bit_grayscale() {
    let dir = tempfile::tempdir().unwrap();
    let f8 = dir.path().join("g8.png");
    // 3 × 2: row 0 (north) = 0, 255, 51; row 1 = 102, 204, 255.
    write_png(
        &f8,
        3,
        2,
        png::ColorType::Grayscale,
        png::BitDepth::Eight,
        &[0, 255, 51, 102, 204, 255],
    );
    let t = Terrain::from_config(&png_cfg(&f8), 0, &ORIGIN).unwrap();
    assert_eq!(t.dims(), (3, 2));
    assert_eq!(t.half_extent(), [2.0, 1.0]);
    let exp = [-100.0, 0.0, -80.0, -60.0, -20.0, 0.0];
    for (a, b) in t.heights().iter().zip(exp) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }
    assert!((t.height_at(-2.0, 1.0).unwrap() + 100.0).abs() < 1e-9); // NW = first pixel
    let f16 = dir.path().join("g16.png");
    let px: [u16; 4] = [0, 65535, 32768, 13107];
    let data: Vec<u8> = px.iter().flat_map(|v| v.to_be_bytes()).collect();
    write_png(
        &f16,
        2,
        2,
        png::ColorType::Grayscale,
        png::BitDepth::Sixteen,
        &data,
    );
    let t = Terrain::from_config(&png_cfg(&f16), 0, &ORIGIN).unwrap();
    let exp: Vec<f64> = px
        .iter()
        .map(|&v| -100.0 + 100.0 * f64::from(v) / 65535.0)
        .collect();
    for (a, b) in t.heights().iter().zip(exp) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }
}

#[test]
fn png_errors() {
    let dir = tempfile::tempdir().unwrap();
    let rgb = dir.path().join("rgb.png");
    write_png(
        &rgb,
        2,
        2,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &[0; 12],
    );
    let e = Terrain::from_config(&png_cfg(&rgb), 0, &ORIGIN).unwrap_err();
    assert!(matches!(e, TerrainError::PngColorType { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("rgb.png") && msg.contains("Rgb") && msg.contains("grayscale"),
        "{msg}"
    );
    let ga = dir.path().join("ga.png");
    write_png(
        &ga,
        2,
        2,
        png::ColorType::GrayscaleAlpha,
        png::BitDepth::Eight,
        &[0; 8],
    );
    assert!(matches!(
        Terrain::from_config(&png_cfg(&ga), 0, &ORIGIN),
        Err(TerrainError::PngColorType { .. })
    ));
    let g4 = dir.path().join("g4.png");
    write_png(
        &g4,
        2,
        2,
        png::ColorType::Grayscale,
        png::BitDepth::Four,
        &[0; 2],
    );
    assert!(matches!(
        Terrain::from_config(&png_cfg(&g4), 0, &ORIGIN),
        Err(TerrainError::PngColorType { bit_depth: 4, .. })
    ));
    let small = dir.path().join("small.png");
    write_png(
        &small,
        3,
        1,
        png::ColorType::Grayscale,
        png::BitDepth::Eight,
        &[0; 3],
    );
    assert!(matches!(
        Terrain::from_config(&png_cfg(&small), 0, &ORIGIN),
        Err(TerrainError::TooSmall {
            cols: 3,
            rows: 1,
            ..
        })
    ));
    let garbage = dir.path().join("garbage.png");
    std::fs::write(&garbage, b"not a png at all").unwrap();
    let e = Terrain::from_config(&png_cfg(&garbage), 0, &ORIGIN).unwrap_err();
    assert!(
        matches!(e, TerrainError::PngDecode { .. }) && e.to_string().contains("garbage.png"),
        "{e}"
    );
    let e =
        Terrain::from_config(&png_cfg(&dir.path().join("missing.png")), 0, &ORIGIN).unwrap_err();
    assert!(
        matches!(e, TerrainError::Io { .. }) && e.to_string().contains("missing.png"),
        "{e}"
    );
}

fn csv(text: &str) -> (tempfile::TempDir, Result<Terrain, TerrainError>) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("grid.csv");
    std::fs::write(&f, text).unwrap();
    let r = Terrain::from_config(
        &TerrainCfg::Csv {
            path: f.display().to_string(),
            cell_size_m: 0.5,
        },
        0,
        &ORIGIN,
    );
    (dir, r)
}

#[test]
fn csv_grid_with_comments() {
    let (_d, t) = csv("# bathymetry\n-10, -11, -12 # north row\n\n-13,-14,-15\n  # done\n");
    let t = t.unwrap();
    assert_eq!(t.dims(), (3, 2));
    assert_eq!(t.half_extent(), [0.5, 0.25]);
    assert_eq!(t.heights(), &[-10.0, -11.0, -12.0, -13.0, -14.0, -15.0]);
    assert_eq!(t.height_at(0.5, -0.25), Some(-15.0)); // SE
}

#[test]
fn csv_errors_name_file_line_and_column() {
    let (_d, r) = csv("1,2,3\n4,x5,6\n");
    let e = r.unwrap_err();
    assert!(
        matches!(&e, TerrainError::CsvBadValue { line: 2, column: 2, text, .. } if text == "x5"),
        "{e}"
    );
    assert!(e.to_string().contains("grid.csv:2:2"), "{e}");
    let (_d, r) = csv("# c\n1,2,3\n4,5\n");
    let e = r.unwrap_err();
    assert!(
        matches!(
            e,
            TerrainError::CsvRagged {
                line: 3,
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{e}"
    );
    let (_d, r) = csv("1,2\n3,NaN\n");
    assert!(matches!(
        r,
        Err(TerrainError::CsvNonFinite {
            line: 2,
            column: 2,
            ..
        })
    ));
    let (_d, r) = csv("1,inf\n3,4\n");
    assert!(matches!(
        r,
        Err(TerrainError::CsvNonFinite {
            line: 1,
            column: 2,
            ..
        })
    ));
    let (_d, r) = csv("1,2,\n3,4,5\n");
    assert!(matches!(
        r,
        Err(TerrainError::CsvBadValue {
            line: 1,
            column: 3,
            ..
        })
    ));
    let (_d, r) = csv("# only comments\n\n");
    assert!(matches!(r, Err(TerrainError::Empty { .. })));
    let (_d, r) = csv("1,2,3\n");
    assert!(matches!(
        r,
        Err(TerrainError::TooSmall {
            cols: 3,
            rows: 1,
            ..
        })
    ));
    let (_d, r) = csv("1\n2\n");
    assert!(matches!(
        r,
        Err(TerrainError::TooSmall {
            cols: 1,
            rows: 2,
            ..
        })
    ));
    let e = Terrain::from_config(
        &TerrainCfg::Csv {
            path: "/nonexistent/g.csv".into(),
            cell_size_m: 1.0,
        },
        0,
        &ORIGIN,
    )
    .unwrap_err();
    assert!(matches!(e, TerrainError::Io { .. }) && e.to_string().contains("/nonexistent/g.csv"));
}

#[test]
fn from_grid_validates() {
    assert!(matches!(
        Terrain::from_grid(vec![0.0; 4], 2, 2, 0.0),
        Err(TerrainError::Invalid { .. })
    ));
    assert!(matches!(
        Terrain::from_grid(vec![0.0; 3], 2, 2, 1.0),
        Err(TerrainError::Invalid { .. })
    ));
    assert!(matches!(
        Terrain::from_grid(vec![0.0, 1.0, f64::NAN, 0.0], 2, 2, 1.0),
        Err(TerrainError::Invalid { .. })
    ));
    assert!(matches!(
        Terrain::from_grid(vec![0.0; 2], 2, 1, 1.0),
        Err(TerrainError::TooSmall { .. })
    ));
    assert!(matches!(
        Terrain::from_grid(vec![], 8193, 2, 1.0),
        Err(TerrainError::TooLarge { .. })
    ));
}
