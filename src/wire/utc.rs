//! UTC civil time ↔ nanoseconds since the Unix epoch (proleptic Gregorian, no leap seconds):
//! ISO 8601 times (`YYYY-MM-DDThh:mm:ss[.f]Z`: `acoustic_modems.epoch_utc` as a [`UtcTime`],
//! `$CCTMS`) and the Micro-Modem's clock fields ([`TimeOfDay`]). Days ↔ civil dates after
//! Howard Hinnant's `days_from_civil`.

use std::fmt;
use std::str::FromStr;

const NS: i64 = 1_000_000_000;
const DAY_NS: i64 = 86_400 * NS;

/// Days since 1970-01-01 of a civil date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Civil date of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub nanos: i64,
}

impl Civil {
    pub fn from_ns(ns: i64) -> Civil {
        let days = ns.div_euclid(DAY_NS);
        let rest = ns.rem_euclid(DAY_NS);
        let (year, month, day) = civil_from_days(days);
        let secs = rest / NS;
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            nanos: rest % NS,
        }
    }

    /// None if a field is out of range (years 1970–2200).
    pub fn to_ns(&self) -> Option<i64> {
        let ok = (1970..=2200).contains(&self.year)
            && (1..=12).contains(&self.month)
            && (1..=days_in_month(self.year, self.month)).contains(&self.day)
            && (0..24).contains(&self.hour)
            && (0..60).contains(&self.minute)
            && (0..=60).contains(&self.second)
            && (0..NS).contains(&self.nanos);
        ok.then(|| {
            days_from_civil(self.year, self.month, self.day) * DAY_NS
                + (self.hour * 3600 + self.minute * 60 + self.second) * NS
                + self.nanos
        })
    }

    /// `hhmmss` as in the modem's `$CAREV`, `$CADRQ`, `$CAERR`.
    pub fn hhmmss(&self) -> String {
        format!("{:02}{:02}{:02}", self.hour, self.minute, self.second)
    }

    /// `YYYY-MM-DDThh:mm:ss.ffffZ` (MM2 `$CATMS`, `$CATMQ`).
    pub fn iso(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:04}Z",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.nanos / 100_000
        )
    }
}

/// A time of day as the modem writes it: `hhmmss` (`$CAREV`, `$CADRQ`, `$CAERR`, `$CAMSG`) or,
/// with a fraction in units of 0.1 ms, `hhmmss.ffff` (`$CACST` time of arrival).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    /// Ten-thousandths of a second, when written.
    pub frac: Option<u16>,
}

impl TimeOfDay {
    /// `hhmmss` of a civil time.
    pub fn seconds(c: &Civil) -> TimeOfDay {
        TimeOfDay {
            hour: c.hour as u8,
            minute: c.minute as u8,
            second: c.second as u8,
            frac: None,
        }
    }

    /// `hhmmss.ffff` of a civil time (truncated to 0.1 ms).
    pub fn tenths_ms(c: &Civil) -> TimeOfDay {
        TimeOfDay {
            frac: Some((c.nanos / 100_000) as u16),
            ..TimeOfDay::seconds(c)
        }
    }

    /// `hhmmss` or `hhmmss.ffff`, exactly those digits; None when out of range.
    pub fn parse(s: &str) -> Option<TimeOfDay> {
        let (hms, frac) = match s.split_once('.') {
            Some((a, f)) => (a, Some(f)),
            None => (s, None),
        };
        // Six digits reach 235960: more than a u16 holds.
        let digits = |t: &str, n: usize| {
            (t.len() == n && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse::<u32>().ok())
                .flatten()
        };
        let v = digits(hms, 6)?;
        let t = TimeOfDay {
            hour: (v / 10_000) as u8,
            minute: (v / 100 % 100) as u8,
            second: (v % 100) as u8,
            frac: None,
        };
        if t.hour > 23 || t.minute > 59 || t.second > 60 {
            return None;
        }
        match frac {
            None => Some(t),
            Some(f) => Some(TimeOfDay {
                frac: Some(u16::try_from(digits(f, 4)?).ok()?),
                ..t
            }),
        }
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}{:02}{:02}", self.hour, self.minute, self.second)?;
        match self.frac {
            Some(x) => write!(f, ".{x:04}"),
            None => Ok(()),
        }
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DDThh:mm:ss[.fff…]Z` (the `Z` optional) to ns since the Unix epoch.
pub fn parse_iso_utc_ns(s: &str) -> Option<i64> {
    Civil::parse_iso(s)?.to_ns()
}

impl Civil {
    /// `YYYY-MM-DDThh:mm:ss[.fff…]Z` (the `Z` optional, up to 9 fraction digits) as written:
    /// `…:60` stays a 60th second. None unless [`Civil::to_ns`] accepts it.
    pub fn parse_iso(s: &str) -> Option<Civil> {
        let s = s.trim();
        let s = s
            .strip_suffix('Z')
            .or_else(|| s.strip_suffix('z'))
            .unwrap_or(s);
        let (date, time) = s.split_once(['T', 't', ' '])?;
        let mut d = date.split('-');
        let (year, month, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
        if d.next().is_some() {
            return None;
        }
        let (hms, frac) = match time.split_once('.') {
            Some((a, f)) => (a, Some(f)),
            None => (time, None),
        };
        let mut t = hms.split(':');
        let (hour, minute, second) = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
        if t.next().is_some() {
            return None;
        }
        let nanos = match frac {
            None => 0,
            Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => {
                f.parse::<i64>().ok()? * 10i64.pow(9 - f.len() as u32)
            }
            Some(_) => return None,
        };
        let c = Civil {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
        };
        c.to_ns().map(|_| c)
    }
}

/// An instant in UTC: nanoseconds since 1970-01-01T00:00:00Z (no leap seconds), e.g. a
/// modem clock's epoch. Parsed from `YYYY-MM-DDThh:mm:ss[.fff…]Z` (see [`parse_iso_utc_ns`]);
/// displayed as `YYYY-MM-DDThh:mm:ss.ffffZ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UtcTime(i64);

impl UtcTime {
    pub const fn from_ns(ns: i64) -> UtcTime {
        UtcTime(ns)
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn ns(self) -> i64 {
        self.0
    }

    pub fn civil(self) -> Civil {
        Civil::from_ns(self.0)
    }
}

/// Why a text is not a [`UtcTime`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a UTC time YYYY-MM-DDThh:mm:ssZ (got {0:?})")]
pub struct UtcTimeError(pub String);

impl FromStr for UtcTime {
    type Err = UtcTimeError;

    fn from_str(s: &str) -> Result<UtcTime, UtcTimeError> {
        parse_iso_utc_ns(s)
            .map(UtcTime)
            .ok_or_else(|| UtcTimeError(s.to_owned()))
    }
}

impl fmt::Display for UtcTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.civil().iso())
    }
}

fn num(s: &str) -> Option<i64> {
    (!s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_known_values() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        let ns = parse_iso_utc_ns("2026-11-21T05:00:00Z").unwrap();
        assert_eq!(ns, 1_795_237_200 * NS);
        let c = Civil::from_ns(ns + 1_234_500_000);
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second),
            (2026, 11, 21, 5, 0, 1)
        );
        assert_eq!(c.iso(), "2026-11-21T05:00:01.2345Z");
        assert_eq!(c.hhmmss(), "050001");
        assert_eq!(
            parse_iso_utc_ns("2026-11-21T05:00:01.2345Z"),
            Some(ns + 1_234_500_000)
        );
        assert_eq!(
            parse_iso_utc_ns("2024-02-29T00:00:00Z").map(|n| Civil::from_ns(n).day),
            Some(29)
        );
        for bad in [
            "",
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-01",
            "2026-01-01T25:00:00Z",
            "x-1-1T0:0:0",
        ] {
            assert_eq!(parse_iso_utc_ns(bad), None, "{bad}");
            assert_eq!(
                bad.parse::<UtcTime>(),
                Err(UtcTimeError(bad.into())),
                "{bad}"
            );
        }
        let t: UtcTime = "2026-11-21T05:00:01.2345Z".parse().unwrap();
        assert_eq!(t.ns(), ns + 1_234_500_000);
        assert_eq!(t.to_string(), "2026-11-21T05:00:01.2345Z");
    }

    #[test]
    fn times_of_day_as_the_modem_writes_them() {
        let c = Civil::from_ns(parse_iso_utc_ns("2026-11-21T05:06:07.891234Z").unwrap());
        assert_eq!(TimeOfDay::seconds(&c).to_string(), c.hhmmss());
        assert_eq!(TimeOfDay::tenths_ms(&c).to_string(), "050607.8912");
        for t in [TimeOfDay::seconds(&c), TimeOfDay::tenths_ms(&c)] {
            assert_eq!(TimeOfDay::parse(&t.to_string()), Some(t));
        }
        for bad in [
            "",
            "05060",
            "0506077",
            "240000",
            "056000",
            "000061",
            "050607.",
            "050607.12345",
            "05060a",
            "+50607",
        ] {
            assert_eq!(TimeOfDay::parse(bad), None, "{bad}");
        }
        // Every time of day parses back, the afternoon's too (hhmmss above 065535).
        for (h, m, s) in [(6, 55, 36), (12, 0, 10), (23, 59, 59), (23, 59, 60)] {
            for frac in [None, Some(0), Some(9999)] {
                let t = TimeOfDay {
                    hour: h,
                    minute: m,
                    second: s,
                    frac,
                };
                assert_eq!(TimeOfDay::parse(&t.to_string()), Some(t), "{t}");
            }
        }
        // A 60th second, as written.
        assert_eq!(
            Civil::parse_iso("2026-12-31T23:59:60Z").map(|c| c.second),
            Some(60)
        );
    }
}
