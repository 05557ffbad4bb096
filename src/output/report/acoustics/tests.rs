use super::*;
use crate::model::beam::{Profile, Seabed};
use crate::output::report::plots;

/// A PNG's width, height and RGB pixels.
pub(crate) fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// How many pixels are exactly `c`.
pub(crate) fn count(px: &[u8], c: RGBColor) -> usize {
    px.chunks_exact(3)
        .filter(|p| p[0] == c.0 && p[1] == c.1 && p[2] == c.2)
        .count()
}

/// How many pixels are within 3 of `c` in every channel.
pub(crate) fn near(px: &[u8], c: RGBColor) -> usize {
    px.chunks_exact(3)
        .filter(|p| {
            (i32::from(p[0]) - i32::from(c.0)).abs() <= 3
                && (i32::from(p[1]) - i32::from(c.1)).abs() <= 3
                && (i32::from(p[2]) - i32::from(c.2)).abs() <= 3
        })
        .count()
}

/// How many distinct colours the picture holds.
fn colours(px: &[u8]) -> usize {
    let mut all: Vec<[u8; 3]> = px.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    all.sort_unstable();
    all.dedup();
    all.len()
}

/// A 30 m isovelocity channel over sand, source at 8 m, receiver 400 m away at 20 m.
fn channel() -> Traced {
    let env = Environment {
        profile: Profile::constant(1500.0),
        seabed: Seabed::SAND,
        section: Section::flat(30.0),
    };
    let env = Environment {
        section: Section {
            range_m: vec![0.0, 460.0],
            depth_m: vec![30.0, 30.0],
        },
        ..env
    };
    let ends = Ends {
        source: "auv1".into(),
        receiver: "auv2".into(),
        source_depth_m: 8.0,
        receiver_range_m: 400.0,
        receiver_depth_m: 20.0,
    };
    Traced::compute(&env, &Fan::symmetric(301, 60.0), ends, 25e3, 4.0)
}

#[test]
fn viridis_runs_from_purple_to_yellow_and_takes_any_number() {
    assert_eq!(viridis(0.0), RGBColor(68, 1, 84));
    assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
    assert_eq!(viridis(-3.0), viridis(0.0));
    assert_eq!(viridis(7.0), viridis(1.0));
    assert_eq!(viridis(f64::NAN), viridis(0.0));
    // Brighter all the way (perceptually ordered).
    let luma = |c: RGBColor| 0.3 * f64::from(c.0) + 0.59 * f64::from(c.1) + 0.11 * f64::from(c.2);
    let steps: Vec<f64> = (0..=20).map(|k| luma(viridis(k as f64 / 20.0))).collect();
    assert!(steps.windows(2).all(|w| w[1] > w[0]), "{steps:?}");
}

#[test]
fn a_shallow_channel_has_direct_surface_and_bottom_eigenrays() {
    let t = channel();
    assert!(t.arrivals.len() >= 3, "{:?}", t.arrivals);
    // Most arrivals have their eigenray.
    assert!(
        t.eigenrays.len() * 4 >= t.arrivals.len() * 3,
        "{} eigenrays for {} arrivals",
        t.eigenrays.len(),
        t.arrivals.len()
    );
    let classes: Vec<Bounces> = t
        .eigenrays
        .iter()
        .map(|&i| Bounces::of(t.rays[i].surface_bounces, t.rays[i].bottom_bounces))
        .collect();
    for b in Bounces::ALL {
        assert!(classes.contains(&b), "{b:?} missing from {classes:?}");
    }
    // Each eigenray passes near the receiver.
    for &i in &t.eigenrays {
        let (z, _, _) = crossing(&t.rays[i], &t.section, t.ends.receiver_range_m).unwrap();
        assert!((z - 20.0).abs() < 3.0, "ray {i} at {z} m");
    }
}

#[test]
fn the_tl_field_decodes_with_its_ramp_seabed_and_ends() {
    plots::font().unwrap();
    let t = channel();
    let png = tl_field(&t, "auv1 → auv2").unwrap();
    let (w, h, px) = decode(&png);
    assert_eq!((w, h), SIZE);
    assert!(colours(&px) > 50, "{} colours", colours(&px));
    // The seabed fills the bottom (30 of 31.8 m shown: a band under the field).
    assert!(count(&px, SEABED) > 2000, "seabed: {}", count(&px, SEABED));
    assert!(count(&px, SOURCE) > 50, "source: {}", count(&px, SOURCE));
    // The loudest end of the ramp (near the source) and the colour bar's ends.
    assert!(near(&px, viridis(1.0)) > 100, "{}", near(&px, viridis(1.0)));
    assert!(near(&px, viridis(0.0)) > 100, "{}", near(&px, viridis(0.0)));
    // Many ramp colours in the field itself: count pixels near any viridis stop.
    let ramp = px
        .chunks_exact(3)
        .filter(|p| {
            (0..=40).any(|k| {
                let c = viridis(k as f64 / 40.0);
                (i32::from(p[0]) - i32::from(c.0)).abs() < 4
                    && (i32::from(p[1]) - i32::from(c.1)).abs() < 4
                    && (i32::from(p[2]) - i32::from(c.2)).abs() < 4
            })
        })
        .count();
    assert!(ramp > (w * h / 4) as usize, "{ramp} ramp pixels");
}

#[test]
fn the_ray_fan_decodes_with_every_bounce_class_in_bold() {
    plots::font().unwrap();
    let t = channel();
    let png = ray_fan(&t, "rays").unwrap();
    let (w, h, px) = decode(&png);
    assert_eq!((w, h), SIZE);
    for b in Bounces::ALL {
        // Full-strength colour: the eigenrays and the legend.
        assert!(
            count(&px, b.colour()) > 100,
            "{b:?}: {}",
            count(&px, b.colour())
        );
        // The pale fan behind them.
        assert!(count(&px, faded(b.colour(), 0.55)) > 0, "{b:?} fan");
    }
    assert!(count(&px, SEABED) > 2000);
    assert!(count(&px, SOURCE) > 50);
}

#[test]
fn arrival_stems_decode_and_a_shadow_zone_draws_no_stem() {
    plots::font().unwrap();
    let t = channel();
    let (w, h, px) = decode(&arrival_stems(&t.arrivals, "arrivals").unwrap());
    assert_eq!((w, h), (SIZE.0, SIZE.1 - 200));
    for b in Bounces::ALL {
        assert!(count(&px, b.colour()) > 20, "{b:?}");
    }
    let (_, _, px) = decode(&arrival_stems(&[], "shadow").unwrap());
    assert!(colours(&px) > 2);
    for b in Bounces::ALL {
        // Only the legend's short line.
        assert!(
            count(&px, b.colour()) < 200,
            "{b:?}: {}",
            count(&px, b.colour())
        );
    }
}

#[test]
fn the_arrival_pattern_decodes_with_levels_and_shadow_zones() {
    plots::font().unwrap();
    let t = channel();
    let moments: Vec<Moment> = (0..40)
        .map(|k| Moment {
            t_s: k as f64,
            arrivals: if (10..15).contains(&k) {
                Vec::new()
            } else {
                t.arrivals.clone()
            },
        })
        .collect();
    let (w, h, px) = decode(&arrival_pattern(&moments, "pattern").unwrap());
    assert_eq!((w, h), (SIZE.0, SIZE.1 - 100));
    // The strongest arrival in yellow (the bar's top too), the shadow zone's grey.
    assert!(near(&px, viridis(1.0)) > 200, "{}", near(&px, viridis(1.0)));
    assert!(count(&px, NO_ARRIVAL) > 5000, "{}", count(&px, NO_ARRIVAL));
    assert!(colours(&px) > 20);
    assert!(arrival_pattern(&[], "none").is_err());
}

#[test]
fn numbers_that_are_not_finite_are_refused_not_drawn() {
    plots::font().unwrap();
    let mut t = channel();
    t.ends.receiver_depth_m = f64::NAN;
    assert!(tl_field(&t, "x").unwrap_err().contains("not finite"));
    assert!(ray_fan(&t, "x").unwrap_err().contains("not finite"));
    let mut t = channel();
    t.field.tl_db.pop();
    assert!(tl_field(&t, "x").unwrap_err().contains("values for"));
    let bad = Arrival {
        delay_s: f64::INFINITY,
        ..Default::default()
    };
    assert!(arrival_stems(&[bad], "x")
        .unwrap_err()
        .contains("not finite"));
    let m = Moment {
        t_s: 0.0,
        arrivals: vec![bad],
    };
    assert!(arrival_pattern(&[m], "x")
        .unwrap_err()
        .contains("not finite"));
}

#[test]
fn a_field_where_nothing_arrives_is_drawn_grey_with_its_bar_saying_so() {
    plots::font().unwrap();
    let mut t = channel();
    t.field.tl_db.iter_mut().for_each(|v| *v = f64::INFINITY);
    assert_eq!(field_scale(&t.field.tl_db), None);
    let (_, _, px) = decode(&tl_field(&t, "x").unwrap());
    assert!(count(&px, NO_ARRIVAL) > 100_000);
    assert_eq!(near(&px, viridis(1.0)), 0);
}

/// A record whose pair a–b was beam-traced: its report has the pair's arrival pattern and the
/// stems of its richest moment, as PNG files and in the page, and the arrivals as a series; a
/// record without arrivals has none of them.
#[test]
fn the_report_draws_a_traced_pair_s_arrival_pattern() {
    use crate::output::record::Record;
    use crate::output::report::{series::Analysis, series::PacketFold, write};
    use crate::output::schema::{Arrival, PairChannel};
    let t = channel();
    let sample = |t_s: f64, arrivals: Option<Vec<Arrival>>| PairChannel {
        t_s,
        a: "a".into(),
        b: "b".into(),
        los: true,
        distance_m: 400.0,
        loss_db: 0.0,
        hops: 2,
        change: false,
        arrivals,
    };
    let traced: Vec<Arrival> = t.arrivals.clone();
    let record = Record {
        channel: (0..30)
            .map(|s| {
                let arrivals = match s {
                    10..=14 => Vec::new(),
                    20 => traced.clone(),
                    _ => traced[..3].to_vec(),
                };
                sample(s as f64, Some(arrivals))
            })
            .collect(),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let a = Analysis::with_packets(&record, PacketFold::default(), None);
    let files = write(dir.path(), a, Vec::new()).unwrap();
    let names: Vec<String> = files
        .plots
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"arrivals_a_b.png".to_string()), "{names:?}");
    assert!(
        names.contains(&"arrivals_a_b_at_20s.png".to_string()),
        "{names:?}"
    );
    let (w, h, px) = decode(&std::fs::read(dir.path().join("plots/arrivals_a_b.png")).unwrap());
    assert_eq!((w, h), (SIZE.0, SIZE.1 - 100));
    assert!(count(&px, NO_ARRIVAL) > 5000);
    assert!(near(&px, viridis(1.0)) > 100);
    let (w, h, px) =
        decode(&std::fs::read(dir.path().join("plots/arrivals_a_b_at_20s.png")).unwrap());
    assert_eq!((w, h), (SIZE.0, SIZE.1 - 200));
    assert!(count(&px, Bounces::Bottom.colour()) > 100);
    let csv = std::fs::read_to_string(dir.path().join("series/channel_arrivals.csv")).unwrap();
    assert!(csv.starts_with("t_s,a,b,delay_s,amplitude,phase_rad,launch_deg,arrival_deg,path_m,surface_bounces,bottom_bounces\n"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 24 * 3 + t.arrivals.len());
    let html = std::fs::read_to_string(&files.html).unwrap();
    assert!(html.contains("<h2 id=\"acoustic\">Acoustic paths</h2>"));
    assert!(html.contains("title=\"plots/arrivals_a_b.png\""));

    // The same pair not traced: no acoustic section, plot or series.
    let record = Record {
        channel: (0..30).map(|s| sample(s as f64, None)).collect(),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let a = Analysis::with_packets(&record, PacketFold::default(), None);
    let files = write(dir.path(), a, Vec::new()).unwrap();
    assert!(files
        .plots
        .iter()
        .all(|p| !p.to_string_lossy().contains("arrivals")));
    assert!(!dir.path().join("series/channel_arrivals.csv").exists());
    assert!(!std::fs::read_to_string(&files.html)
        .unwrap()
        .contains("id=\"acoustic\""));
}
