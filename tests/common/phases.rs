//! Where the link between two vehicles was, read back from a run's record: in sight, behind
//! the terrain, or out of range; and the copies each phase saw.
#![allow(dead_code)]

use netsim_cosim::output::{
    record::Record,
    schema::{Outcome, PacketRecord},
};

/// Where the link between two vehicles was at sim time `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    InSight,
    Blocked,
    OutOfRange,
}

/// The phase at `t` from the record's channel geometry and link states (the latest sample at
/// or before `t`, from `src` to `dst`); `None` within 0.3 s of a change (a packet near the
/// edge may fall either way).
pub fn phase_at(r: &Record, src: &str, dst: &str, t: f64) -> Option<Phase> {
    let pair = |a: &str, b: &str| (a == src && b == dst) || (a == dst && b == src);
    let at = |t: f64| -> Option<Phase> {
        let los = r
            .channel
            .iter()
            .rfind(|c| pair(&c.a, &c.b) && c.t_s <= t)?
            .los;
        let usable = r
            .link_states
            .iter()
            .rfind(|l| l.src == src && l.dst == dst && l.t_s <= t)?
            .usable;
        Some(match (los, usable) {
            (false, _) => Phase::Blocked,
            (true, true) => Phase::InSight,
            (true, false) => Phase::OutOfRange,
        })
    };
    let p = at(t)?;
    (at(t - 0.3) == Some(p) && at(t + 0.3) == Some(p)).then_some(p)
}

/// Copies from `src` to `dst` in `phase`: (delivered, dropped as out of range, all).
pub fn by_phase(r: &Record, src: &str, dst: &str, phase: Phase) -> (usize, usize, usize) {
    let copies: Vec<&PacketRecord> = r
        .packets
        .iter()
        .filter(|p| p.src == src && p.dst.as_deref() == Some(dst))
        .filter(|p| phase_at(r, src, dst, p.t_s) == Some(phase))
        .collect();
    (
        copies
            .iter()
            .filter(|p| p.outcome == Outcome::Delivered)
            .count(),
        copies
            .iter()
            .filter(|p| p.reason.as_deref() == Some("out of range"))
            .count(),
        copies.len(),
    )
}

/// The copies from `src` to `dst` follow the link's phases: in sight, at least 30 delivered and
/// 80 % of them; behind the ridge and out of range, none delivered and at least 5 dropped as
/// out of range.
#[track_caller]
pub fn assert_copies_follow_the_phases(r: &Record, src: &str, dst: &str) {
    let seen = |p| by_phase(r, src, dst, p);
    let (in_sight, blocked, far) = (
        seen(Phase::InSight),
        seen(Phase::Blocked),
        seen(Phase::OutOfRange),
    );
    println!(
        "{src} -> {dst}: (delivered, out of range, all) in sight {in_sight:?}, behind the ridge {blocked:?}, out of range {far:?}"
    );
    assert!(
        in_sight.0 >= 30 && in_sight.0 * 10 >= in_sight.2 * 8,
        "{src} -> {dst}: in sight, the copies are delivered: {in_sight:?}"
    );
    for (name, (delivered, out_of_range, _)) in
        [("behind the ridge", blocked), ("out of range", far)]
    {
        assert_eq!(delivered, 0, "{src} -> {dst}: nothing crosses {name}");
        assert!(
            out_of_range >= 5,
            "{src} -> {dst}: {name}, the copies are dropped as out of range: {out_of_range}"
        );
    }
}
