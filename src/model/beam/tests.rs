use super::*;
use crate::model::terrain::Terrain;

/// A seabed that takes everything: the water's own speed and density (R = 0).
fn absorbing(c: f64) -> Seabed {
    Seabed {
        speed_mps: c,
        density_ratio: 1.0,
        attenuation_db_per_wavelength: 0.0,
    }
}

fn isovelocity(depth: f64, seabed: Seabed) -> Environment {
    Environment {
        profile: Profile::constant(1500.0),
        seabed,
        section: Section::flat(depth),
    }
}

fn db(a: f64) -> f64 {
    20.0 * a.log10()
}

#[test]
fn profiles_refuse_what_they_cannot_hold() {
    assert!(Profile::new(vec![0.0, 10.0], vec![1500.0, 1490.0]).is_ok());
    let e = Profile::new(vec![0.0, 10.0, 10.0], vec![1500.0; 3]).unwrap_err();
    assert!(e.contains("row 2"), "{e}");
    assert!(Profile::new(vec![5.0], vec![1500.0])
        .unwrap_err()
        .contains("surface"));
    assert!(Profile::new(vec![0.0], vec![-1.0]).is_err());
    assert!(Profile::new(vec![], vec![]).is_err());
    let p = Profile::new(vec![0.0, 10.0, 30.0], vec![1500.0, 1510.0, 1490.0]).unwrap();
    assert_eq!(p.speed(0.0, 5.0), 1505.0);
    assert_eq!(p.speed(0.0, 20.0), 1500.0);
    assert_eq!(p.speed(0.0, 100.0), 1490.0);
}

#[test]
fn a_range_dependent_profile_is_bilinear_and_constant_beyond_its_columns() {
    let p = Profile::range_dependent(
        vec![0.0, 100.0],
        vec![0.0, 1000.0],
        vec![vec![1500.0, 1480.0], vec![1520.0, 1540.0]],
    )
    .unwrap();
    assert_eq!(p.speed(0.0, 50.0), 1490.0);
    assert_eq!(p.speed(1000.0, 50.0), 1530.0);
    assert_eq!(p.speed(500.0, 50.0), 1510.0);
    assert_eq!(p.speed(250.0, 0.0), 1505.0);
    assert_eq!(p.speed(5000.0, 100.0), 1540.0);
    assert_eq!(p.speed(-10.0, 100.0), 1480.0);
    let s = p.sound(0, 0, 500.0, 50.0);
    // −0.2 s⁻¹ in the first column, +0.2 in the second: none half-way, 0.4 s⁻¹ per km.
    assert!((s.cr - 0.04).abs() < 1e-12 && s.cz.abs() < 1e-12, "{s:?}");
    assert!((s.crz - 0.0004).abs() < 1e-12, "{s:?}");
    let e = Profile::range_dependent(vec![0.0], vec![0.0, 0.0], vec![vec![1500.0]; 2]).unwrap_err();
    assert!(e.contains("ranges must increase"), "{e}");
    let e = Profile::range_dependent(
        vec![0.0, 5.0],
        vec![0.0, 9.0],
        vec![vec![1500.0; 2], vec![1500.0]],
    )
    .unwrap_err();
    assert!(e.contains("column 1"), "{e}");
}

#[test]
fn equal_columns_trace_as_one_profile() {
    // A profile with four equal columns is the one-column profile: the steps that land on the
    // columns' ranges change the arrivals by the integrator's step error only.
    let rows = vec![0.0, 30.0, 100.0];
    let speeds = vec![1510.0, 1495.0, 1500.0];
    let one = Environment {
        profile: Profile::new(rows.clone(), speeds.clone()).unwrap(),
        seabed: Seabed::SAND,
        section: Section::flat(100.0),
    };
    let four = Environment {
        profile: Profile::range_dependent(rows, vec![0.0, 700.0, 1400.0, 2100.0], vec![speeds; 4])
            .unwrap(),
        ..one.clone()
    };
    let fan = Fan::symmetric(801, 60.0);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    arrivals(&one, &fan, 20.0, 2000.0, 40.0, &mut a);
    arrivals(&four, &fan, 20.0, 2000.0, 40.0, &mut b);
    assert!(
        a.len() > 3 && a.len() == b.len(),
        "{} vs {}",
        a.len(),
        b.len()
    );
    for (x, y) in a.iter().zip(&b) {
        assert!((x.delay_s - y.delay_s).abs() < 1e-6, "{x:?} vs {y:?}");
        assert!(
            (x.amplitude - y.amplitude).abs() < 1e-3 * x.amplitude,
            "{x:?} vs {y:?}"
        );
    }
}

#[test]
fn the_rayleigh_coefficient_by_hand() {
    // Normal incidence, lossless: (ρ₂c₂ − ρ₁c₁)/(ρ₂c₂ + ρ₁c₁).
    let bed = Seabed {
        speed_mps: 1600.0,
        density_ratio: 1.6,
        attenuation_db_per_wavelength: 0.0,
    };
    let r = bed.reflection(1500.0, 0.0, 1.0);
    let z = 1.6 * 1600.0;
    assert!((r.re - (z - 1500.0) / (z + 1500.0)).abs() < 1e-12 && r.im.abs() < 1e-12);
    // Below the critical grazing angle acos(1500/1600) = 20.4°, total reflection.
    let g = 10f64.to_radians();
    assert!((bed.reflection(1500.0, g.cos(), g.sin()).norm() - 1.0).abs() < 1e-12);
    // A lossy bottom reflects less there.
    let lossy = Seabed {
        attenuation_db_per_wavelength: 0.5,
        ..bed
    };
    assert!(lossy.reflection(1500.0, g.cos(), g.sin()).norm() < 0.99);
    // The water's own half-space reflects nothing.
    assert!(
        absorbing(1500.0)
            .reflection(1500.0, g.cos(), g.sin())
            .norm()
            < 1e-12
    );
}

#[test]
fn direct_and_surface_paths_follow_the_image_source() {
    // Lloyd's mirror in deep isovelocity water over an absorbing bottom: two arrivals, each of
    // amplitude 1/R along its own geometric path, the surface one with phase π.
    let env = isovelocity(2000.0, absorbing(1500.0));
    let (zs, zr, r) = (100.0, 150.0, 1000.0);
    let mut out = Vec::new();
    arrivals(&env, &Fan::symmetric(2001, 80.0), zs, r, zr, &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    let direct = out.iter().find(|a| a.surface_bounces == 0).unwrap();
    let surface = out.iter().find(|a| a.surface_bounces == 1).unwrap();
    let rd = r.hypot(zr - zs);
    let rs = r.hypot(zr + zs);
    assert!((direct.delay_s - rd / 1500.0).abs() < 1e-6, "{direct:?}");
    assert!((surface.delay_s - rs / 1500.0).abs() < 1e-6, "{surface:?}");
    assert!(
        (db(direct.amplitude) - db(1.0 / rd)).abs() < 0.3,
        "{direct:?}"
    );
    assert!(
        (db(surface.amplitude) - db(1.0 / rs)).abs() < 0.3,
        "{surface:?}"
    );
    assert!((surface.phase_rad - direct.phase_rad - std::f64::consts::PI).abs() < 1e-9);
    assert!((direct.path_m - rd).abs() < 0.01);
    assert_eq!((direct.bottom_bounces, surface.bottom_bounces), (0, 0));
    // Angles: the direct path leaves downward at atan(50/1000).
    let expect = (zr - zs).atan2(r).to_degrees();
    assert!((direct.launch_deg - expect).abs() < 0.1, "{direct:?}");
    assert!((direct.arrival_deg - expect).abs() < 0.1, "{direct:?}");
}

#[test]
fn a_bottom_bounce_arrives_by_its_image_with_the_rayleigh_loss() {
    let bed = Seabed {
        speed_mps: 1600.0,
        density_ratio: 1.6,
        attenuation_db_per_wavelength: 0.0,
    };
    let env = isovelocity(100.0, bed);
    let (zs, zr, r) = (20.0, 50.0, 300.0);
    let mut out = Vec::new();
    arrivals(&env, &Fan::symmetric(4001, 89.0), zs, r, zr, &mut out);
    let bounce = out
        .iter()
        .find(|a| a.bottom_bounces == 1 && a.surface_bounces == 0)
        .expect("a bottom bounce");
    let rb = r.hypot(2.0 * 100.0 - zs - zr);
    assert!((bounce.delay_s - rb / 1500.0).abs() < 1e-6, "{bounce:?}");
    let sin_g = (2.0 * 100.0 - zs - zr) / rb;
    let refl = bed
        .reflection(1500.0, (1.0 - sin_g * sin_g).sqrt(), sin_g)
        .norm();
    assert!(
        (db(bounce.amplitude) - db(refl / rb)).abs() < 0.3,
        "{} vs {}",
        db(bounce.amplitude),
        db(refl / rb)
    );
}

#[test]
fn the_incoherent_field_is_spherical_spreading_of_two_paths() {
    // Far from the source, direct and surface paths have nearly equal lengths: the incoherent
    // sum is 2/R², TL = 20 log10 R − 3 dB; with absorption it adds α·R.
    let env = isovelocity(3000.0, absorbing(1500.0));
    let ranges = [2000.0, 4000.0];
    let depths = [200.0];
    for alpha in [0.0, 1.0] {
        let tl = field(
            &env,
            &Fan::symmetric(1001, 60.0),
            100.0,
            1000.0,
            alpha,
            &ranges,
            &depths,
            Sum::Incoherent,
        );
        for (k, r) in ranges.iter().enumerate() {
            let expect = 20.0 * r.log10() - 10.0 * 2f64.log10() + alpha * r / 1000.0;
            assert!((tl[k] - expect).abs() < 0.5, "{} vs {expect} at {r}", tl[k]);
        }
    }
}

#[test]
fn a_downward_refracting_profile_makes_a_shadow_zone() {
    // Speed falling 0.2 s⁻¹ with depth bends every ray down: a receiver near the surface
    // 3 km away is beyond the limiting ray, while a straight line sees it; with an absorbing
    // bottom nothing arrives there. Closer in, the direct path is heard.
    let env = Environment {
        profile: Profile::new(vec![0.0, 500.0], vec![1520.0, 1420.0]).unwrap(),
        seabed: absorbing(1420.0),
        section: Section::flat(500.0),
    };
    let mut out = Vec::new();
    arrivals(
        &env,
        &Fan::symmetric(2001, 80.0),
        10.0,
        3000.0,
        10.0,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    arrivals(
        &env,
        &Fan::symmetric(2001, 80.0),
        10.0,
        300.0,
        10.0,
        &mut out,
    );
    assert!(out.iter().any(|a| a.surface_bounces == 0), "{out:?}");
}

#[test]
fn land_between_blocks_every_path() {
    // A section rising above the sea between source and receiver.
    let env = Environment {
        profile: Profile::constant(1500.0),
        seabed: Seabed::SAND,
        section: Section {
            range_m: vec![0.0, 100.0, 150.0, 200.0, 400.0],
            depth_m: vec![40.0, 40.0, -2.0, 40.0, 40.0],
        },
    };
    let mut out = Vec::new();
    arrivals(
        &env,
        &Fan::symmetric(1001, 80.0),
        20.0,
        300.0,
        20.0,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    arrivals(
        &env,
        &Fan::symmetric(1001, 80.0),
        20.0,
        90.0,
        20.0,
        &mut out,
    );
    assert!(!out.is_empty());
}

#[test]
fn a_section_follows_the_terrain_along_the_bearing() {
    let terrain = Terrain::from_grid(vec![-30.0; 201 * 201], 201, 201, 1.0).unwrap();
    let s = Section::along(&terrain, [-50.0, 0.0], [50.0, 0.0], 10.0);
    assert_eq!(s.range_m.first(), Some(&0.0));
    assert!((s.range_m.last().unwrap() - 110.0).abs() < 1e-9);
    assert!(s.depth_m.iter().all(|&d| (d - 30.0).abs() < 1e-9));
}

#[test]
fn multipath_sums_by_hand() {
    let a = |delay_s: f64, amplitude: f64, phase_rad: f64| Arrival {
        delay_s,
        amplitude,
        phase_rad,
        path_m: 1000.0,
        ..Arrival::default()
    };
    let m = Multipath::of(&[a(1.0, 1e-3, 0.0), a(1.01, 1e-3, 0.0)], 100.0, 0.0);
    // Two equal arrivals: incoherent 2e-6 → 56.99 dB; 10 ms apart at 100 Hz they are in phase.
    assert!((m.incoherent_tl_db - 56.9897).abs() < 1e-3);
    assert!((m.coherent_tl_db - (60.0 - 20.0 * 2f64.log10())).abs() < 1e-6);
    assert!((m.delay_spread_s - 0.005).abs() < 1e-9);
    assert_eq!(m.first_delay_s, 1.0);
    // Absorption over each path: 1 dB/km over 1 km costs 1 dB.
    let m2 = Multipath::of(&[a(1.0, 1e-3, 0.0)], 50.0, 1.0);
    assert!((m2.incoherent_tl_db - 61.0).abs() < 1e-9);
    // None: nothing arrives.
    assert_eq!(
        Multipath::of(&[], 50.0, 0.0).incoherent_tl_db,
        f64::INFINITY
    );
}

#[test]
fn bellhop_figures_of_a_shallow_channel() {
    // BELLHOP on a 25 m isovelocity channel at 25 kHz, source 5 m, receiver 10 m, bottom
    // 1600 m/s, ρ 1.6, 0.1 dB/λ, Thorp: at 1 km 34 arrivals, direct path 66.1 dB, incoherent
    // sum 52.5 dB, RMS delay spread 11.7 ms; at 2 km 65, 78.3, 62.3 dB, 20.4 ms.
    let env = Environment {
        profile: Profile::constant(1500.0),
        seabed: Seabed {
            speed_mps: 1600.0,
            density_ratio: 1.6,
            attenuation_db_per_wavelength: 0.1,
        },
        section: Section::flat(25.0),
    };
    let thorp = crate::model::acoustic::absorption_thorp_db_per_km(25.0);
    let mut out = Vec::new();
    for (r, n, direct, incoherent, spread) in [
        (1000.0, 34, 66.1, 52.5, 11.7e-3),
        (2000.0, 65, 78.3, 62.3, 20.4e-3),
    ] {
        arrivals(&env, &Fan::symmetric(2001, 89.0), 5.0, r, 10.0, &mut out);
        let m = Multipath::of(&out, 25e3, thorp);
        let d = out
            .iter()
            .find(|a| a.surface_bounces == 0 && a.bottom_bounces == 0)
            .expect("direct");
        let direct_tl = -db(d.amplitude) + thorp * d.path_m / 1000.0;
        let figures = format!(
            "{r} m: {} arrivals (BELLHOP {n}), direct {direct_tl:.2} dB ({direct}), incoherent \
             {:.2} dB ({incoherent}), spread {:.2} ms ({})",
            out.len(),
            m.incoherent_tl_db,
            m.delay_spread_s * 1e3,
            spread * 1e3
        );
        assert!(out.len().abs_diff(n) <= 4, "{figures}");
        assert!((direct_tl - direct).abs() < 0.2, "{figures}");
        assert!((m.incoherent_tl_db - incoherent).abs() < 0.3, "{figures}");
        assert!((m.delay_spread_s - spread).abs() < 0.3e-3, "{figures}");
    }
}
