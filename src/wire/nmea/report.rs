//! Modem → host sentences (`$CA…`) as typed values: [`Report::emit`] writes the bytes the
//! emulated modem sends; [`Report::parse`] reads them back (tests, fuzzing, host-side tools).
//! Numbers are written at the precision their sentence carries (its field's format in the
//! table below), so a value given at that precision parses back to itself.
//!
//! To add a report: an entry in the table of [`Report`] (see `table.rs` for its language).

use std::fmt;

use super::field::{hex16, Clock, CycleInit, DateTime, Fixed, Iso, Mini, Real};
use super::param::Param;
use super::table::{group, sentences, Plain, Put, Read, Tag, Take};
use super::{decode_hex, NmeaError, Out, Sentence};
use crate::wire::utc::{Civil, TimeOfDay};

/// `$CAERR` codes (field 3) for refused host commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrCode {
    /// Not a sentence: framing, characters or checksum.
    Malformed = 1,
    /// A sentence the modem does not know.
    Unknown = 2,
    /// A known command with missing or invalid fields.
    BadField = 3,
    /// The modem is busy with a cycle or a transmission.
    Busy = 4,
    /// A command that was not asked for (`$CCTXD` without `$CADRQ`).
    Unexpected = 5,
}

impl ErrCode {
    pub fn from_u8(n: u8) -> Option<ErrCode> {
        Some(match n {
            1 => ErrCode::Malformed,
            2 => ErrCode::Unknown,
            3 => ErrCode::BadField,
            4 => ErrCode::Busy,
            5 => ErrCode::Unexpected,
            _ => return None,
        })
    }
}

/// `$CAREV` after a reboot (`INIT`) or as a heartbeat (`AUV`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevEvent {
    Init,
    Auv,
}

group! {
    /// `$CAXST` (version 6): statistics of one data transmission. `packet_type` is 1 for
    /// FH-FSK, 3 for PSK; `probe_length` 0 for FH-FSK.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Xst {
        version = "6",
        /// Start of the transmission on the modem's clock.
        start: Civil as DateTime,
        clock_status: u8,
        mode: u8,
        probe_length: u16,
        bandwidth_hz("bandwidth"): f64 as Fixed<0>,
        carrier_hz("carrier"): f64 as Fixed<0>,
        rate: u8,
        src: u8,
        dest: u8,
        ack: bool,
        frames_expected: u8,
        frames_sent: u8,
        packet_type: u8,
        nbytes: usize,
    }
}

group! {
    /// `$CACST` (version 0): statistics of one received data packet. Fields the emulator has
    /// no value for are 0. `packet_type` is 1 for FH-FSK, 3 for PSK.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Cst {
        /// 0 good, 1 bad CRC, 2 packet timeout.
        mode: u8,
        /// Time of arrival on the modem's clock (`hhmmss.ffff`).
        toa: TimeOfDay,
        clock_status: f64 as Real,
        mfd_peak: f64 as Real,
        mfd_power: f64 as Real,
        mfd_ratio: f64 as Real,
        spl_db("spl"): f64 as Fixed<1>,
        shifts("shift"): [f64; 4] as Real,
        rate: u8,
        src: u8,
        dest: u8,
        psk_error: f64 as Real,
        packet_type: u8,
        frames: u8,
        bad_frames: u8,
        rss_db("rss"): f64 as Fixed<1>,
        snr_in_db("snr_in"): f64 as Fixed<1>,
        snr_out_db("snr_out"): f64 as Fixed<1>,
        symbol_snr_db("symbol_snr"): f64 as Fixed<1>,
        mse: f64 as Real,
        dqf: f64 as Real,
        /// Closing speed (m/s).
        doppler_mps("doppler"): f64 as Fixed<2>,
        noise_db("noise"): f64 as Fixed<1>,
        carrier_hz("carrier"): f64 as Fixed<0>,
        bandwidth_hz("bandwidth"): f64 as Fixed<0>,
    }
}

sentences! {
    /// One line from the modem to its host.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Report(id: &'static str, read by Reader) {
        /// `$CACFG,ALL,0`: factory values restored.
        FactoryReset = "CACFG" => [name = "ALL", value = "0"],
        /// A parameter (echo of `$CCCFG`, answer to `$CCCFQ`).
        Cfg = "CACFG" => { param("name"): Param, value: i64 },
        /// The clock (MM1), to the second.
        Clk = "CACLK" => (Civil as Clock),
        /// The clock set (MM2), to 0.1 ms.
        Tms = "CATMS" => { timed_out: bool, time: Civil as Iso },
        /// The clock (MM2), to 0.1 ms.
        Tmq = "CATMQ" => { time: Civil as Iso, clock_source: u8, pps_source: u8 },
        /// Echo of `$CCMSC`.
        Msc = "CAMSC" => { src: u8, dest: u8, command: String },
        /// After a reboot or as a heartbeat.
        Rev = "CAREV" => { time: TimeOfDay, event: RevEvent, version: String },
        /// A data cycle started here or heard.
        Cyc = "CACYC" => (CycleInit),
        /// Data request for frame `frame` (from 1).
        Drq = "CADRQ" => {
            time: TimeOfDay,
            src: u8,
            dest: u8,
            ack: bool,
            max_bytes: usize,
            frame: u8,
        },
        /// Echo of `$CCTXD`.
        Txd = "CATXD" => { src: u8, dest: u8, ack: bool, nbytes: usize },
        /// Transmission started.
        Txp = "CATXP" => { nbytes: usize },
        /// Transmission finished.
        Txf = "CATXF" => { nbytes: usize },
        /// Transmit statistics.
        Xst = "CAXST" => (Box<Xst>),
        /// A good frame.
        Rxd = "CARXD" => { src: u8, dest: u8, ack: bool, frame: u8, data: Vec<u8> },
        /// A bad frame.
        BadCrc = "CAMSG" => { kind = "BAD_CRC", time: TimeOfDay, frame: u8 },
        /// A packet lost.
        PacketTimeout = "CAMSG" => {
            kind = "PACKET_TIMEOUT",
            time: TimeOfDay,
            text ~ "packet lost in a collision",
        },
        /// Receive statistics.
        Cst = "CACST" => (Box<Cst>),
        /// A frame acknowledged, at its sender.
        Ack = "CAACK" => { acker: u8, original_src: u8, frame: u8, ack = "1" },
        /// Echo of `$CCMPC`.
        Mpc = "CAMPC" => { src: u8, dest: u8 },
        /// A ping heard at its target.
        Mpa = "CAMPA" => { src: u8, dest: u8 },
        /// A ping's one-way travel time (s).
        Mpr = "CAMPR" => { replier: u8, pinger: u8, owtt_s("owtt"): f64 as Fixed<4> },
        /// Echo of `$CCMUC`.
        Muc = "CAMUC" => { src: u8, dest: u8, value: u16 as Mini },
        /// A mini-packet received.
        Mua = "CAMUA" => { src: u8, dest: u8, value: u16 as Mini },
        /// A refused host command; `text` has no `,` (see [`Report::nmea_error`]).
        Error = "CAERR" => { time: TimeOfDay, module = "NMEA", code: ErrCode, text: String },
        /// A data request the host left unanswered.
        DataTimeout = "CAERR" => {
            time: TimeOfDay,
            module = "DATA_TIMEOUT",
            frame: u8,
            text ~ "no CCTXD for the data request; cycle abandoned",
        },
        /// A second client refused by the bridge.
        BridgeBusy = "CAERR" => {
            time: TimeOfDay,
            module = "BRIDGE",
            code = "1",
            text ~ "port busy: one client at a time",
        },
    }
}

/// A line that is not one of the reports above.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Nmea(#[from] NmeaError),
    #[error("{0} is not a sentence the emulated modem writes")]
    Unknown(String),
    #[error("{id}: field {index} ({name}) missing")]
    Missing {
        id: String,
        index: usize,
        name: &'static str,
    },
    #[error("{id}: {count} fields, {expected} expected")]
    Extra {
        id: String,
        count: usize,
        expected: usize,
    },
    #[error("{id}: field {index} ({name}) is not valid: {value:?}")]
    Field {
        id: String,
        index: usize,
        name: &'static str,
        value: String,
    },
}

impl Report {
    /// `$CAERR,hhmmss,NMEA,code,text` with `text` made safe for a field: `,` `*` `$` and
    /// anything but printable ASCII become blanks; at most 120 characters.
    pub fn nmea_error(time: TimeOfDay, code: ErrCode, text: &str) -> Report {
        let text = text
            .chars()
            .map(|c| {
                if matches!(c, ',' | '*' | '$') || !(' '..='~').contains(&c) {
                    ' '
                } else {
                    c
                }
            })
            .take(120)
            .collect();
        Report::Error { time, code, text }
    }

    /// The fields, in order, as written.
    pub fn fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.put_fields(&mut out);
        out
    }

    /// `$<id>,<fields>*HH\r\n`, checksum in upper case.
    pub fn emit(&self) -> String {
        self.to_string()
    }

    /// One line from a modem: framing, then the report.
    pub fn from_line(line: &[u8]) -> Result<Report, ReportError> {
        Report::parse(&Sentence::parse(line)?)
    }

    /// The report a sentence carries (id in either case; fields as this module writes them,
    /// the fixed texts of `$CAMSG` and `$CAERR` not compared).
    pub fn parse(s: &Sentence) -> Result<Report, ReportError> {
        let id = s.id().to_ascii_uppercase();
        Report::read(id.as_str(), || Reader::new(&id, &s.fields))
            .unwrap_or_else(|| Err(ReportError::Unknown(id.clone())))
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.fields();
        let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
        Out {
            id: self.id(),
            fields: &refs,
        }
        .fmt(f)
    }
}

/// The fields of one report, read in order as this module writes them.
struct Reader<'a> {
    id: &'a str,
    fields: &'a [&'a str],
    next: usize,
    tag: Tag,
}

impl<'a> Reader<'a> {
    fn new(id: &'a str, fields: &'a [&'a str]) -> Reader<'a> {
        Reader {
            id,
            fields,
            next: 0,
            tag: Tag::default(),
        }
    }

    fn invalid(&self, index: usize, name: &'static str) -> ReportError {
        let value = self
            .fields
            .get(index)
            .copied()
            .unwrap_or_default()
            .to_string();
        ReportError::Field {
            id: self.id.to_string(),
            index,
            name,
            value,
        }
    }

    fn str(&mut self, name: &'static str) -> Result<&'a str, ReportError> {
        let index = self.next;
        let v = self
            .fields
            .get(index)
            .copied()
            .ok_or_else(|| ReportError::Missing {
                id: self.id.to_string(),
                index,
                name,
            })?;
        self.next += 1;
        Ok(v)
    }

    /// A field parsed by `f`, or an invalid-field error naming it.
    fn with<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, ReportError> {
        let v = self.str(name)?;
        f(v).ok_or_else(|| self.invalid(self.next - 1, name))
    }
}

impl Read for Reader<'_> {
    type Error = ReportError;

    fn fixed(&mut self, name: &'static str, text: &'static str) -> Result<(), ReportError> {
        let v = self.str(name)?;
        let checked = if v == text {
            Ok(())
        } else {
            Err(self.invalid(self.next - 1, name))
        };
        self.tag.check(checked)
    }

    fn skip(&mut self, name: &'static str) -> Result<(), ReportError> {
        self.str(name).map(drop)
    }

    fn other_sentence(&self) -> bool {
        self.tag.missed()
    }

    fn finish(&self) -> Result<(), ReportError> {
        if self.next == self.fields.len() {
            Ok(())
        } else {
            Err(ReportError::Extra {
                id: self.id.to_string(),
                count: self.fields.len(),
                expected: self.next,
            })
        }
    }
}

/// Reads a field of a report with a parser of its text.
macro_rules! take_with {
    ($($t:ty as $format:ty => $parse:expr),* $(,)?) => {$(
        impl Take<$t, Reader<'_>> for $format {
            fn take(r: &mut Reader<'_>, name: &'static str) -> Result<$t, ReportError> {
                r.with(name, $parse)
            }
        }
    )*};
}

take_with!(
    u8 as Plain => |v| v.parse().ok(),
    u16 as Plain => |v| v.parse().ok(),
    usize as Plain => |v| v.parse().ok(),
    i64 as Plain => |v| v.parse().ok(),
    bool as Plain => |v| match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    },
    TimeOfDay as Plain => TimeOfDay::parse,
    String as Plain => |v| Some(v.to_string()),
    Vec<u8> as Plain => decode_hex,
    Param as Plain => Param::named,
    RevEvent as Plain => |v| match v {
        "INIT" => Some(RevEvent::Init),
        "AUV" => Some(RevEvent::Auv),
        _ => None,
    },
    f64 as Real => finite,
    u16 as Mini => hex16,
    // Kept to the 0.1 ms it is written with.
    Civil as Iso => |v| Civil::parse_iso(v).map(|c| Civil {
        nanos: c.nanos - c.nanos % 100_000,
        ..c
    }),
);

fn finite(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().filter(|x| x.is_finite())
}

impl<const N: usize> Take<f64, Reader<'_>> for Fixed<N> {
    fn take(r: &mut Reader<'_>, name: &'static str) -> Result<f64, ReportError> {
        r.with(name, finite)
    }
}

/// Each field named `name`.
impl<const N: usize> Take<[f64; N], Reader<'_>> for Real {
    fn take(r: &mut Reader<'_>, name: &'static str) -> Result<[f64; N], ReportError> {
        let mut v = [0.0; N];
        for x in &mut v {
            *x = r.with(name, finite)?;
        }
        Ok(v)
    }
}

impl Put<RevEvent> for Plain {
    fn put(v: &RevEvent, out: &mut Vec<String>) {
        out.push(if *v == RevEvent::Init { "INIT" } else { "AUV" }.into())
    }
}

impl Put<ErrCode> for Plain {
    fn put(v: &ErrCode, out: &mut Vec<String>) {
        out.push((*v as u8).to_string())
    }
}

/// A code `$CAERR` knows; a missing one is not valid either.
impl Take<ErrCode, Reader<'_>> for Plain {
    fn take(r: &mut Reader<'_>, name: &'static str) -> Result<ErrCode, ReportError> {
        let index = r.next;
        r.str(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .and_then(ErrCode::from_u8)
            .ok_or_else(|| r.invalid(index, name))
    }
}

/// Six numbers making a valid date.
impl Take<Civil, Reader<'_>> for Clock {
    fn take(r: &mut Reader<'_>, _: &'static str) -> Result<Civil, ReportError> {
        let index = r.next;
        let mut c = Civil::from_ns(0);
        for (v, name) in [
            (&mut c.year, "year"),
            (&mut c.month, "month"),
            (&mut c.day, "day"),
            (&mut c.hour, "hour"),
            (&mut c.minute, "minute"),
            (&mut c.second, "second"),
        ] {
            *v = <Plain as Take<i64, _>>::take(r, name)?;
        }
        c.to_ns().ok_or_else(|| r.invalid(index, "date"))?;
        Ok(c)
    }
}

/// `YYYYMMDD` then `hhmmss.ffff`, a valid date.
impl Take<Civil, Reader<'_>> for DateTime {
    fn take(r: &mut Reader<'_>, _: &'static str) -> Result<Civil, ReportError> {
        let index = r.next;
        let date = r.str("date")?;
        let ymd = (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())).then(|| {
            (
                date[..4].parse().ok(),
                date[4..6].parse().ok(),
                date[6..].parse().ok(),
            )
        });
        let Some((Some(year), Some(month), Some(day))) = ymd else {
            return Err(r.invalid(index, "date"));
        };
        let t = r.with("time", TimeOfDay::parse)?;
        let Some(frac) = t.frac else {
            return Err(r.invalid(index + 1, "time"));
        };
        let start = Civil {
            year,
            month,
            day,
            hour: t.hour.into(),
            minute: t.minute.into(),
            second: t.second.into(),
            nanos: i64::from(frac) * 100_000,
        };
        start.to_ns().ok_or_else(|| r.invalid(index, "date"))?;
        Ok(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::nmea::emit;

    fn civil(
        year: i64,
        month: i64,
        day: i64,
        hour: i64,
        minute: i64,
        second: i64,
        nanos: i64,
    ) -> Civil {
        Civil {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
        }
    }

    fn hms(hour: u8, minute: u8, second: u8) -> TimeOfDay {
        TimeOfDay {
            hour,
            minute,
            second,
            frac: None,
        }
    }

    /// A report, its id and its fields as written.
    type Sample = (Report, &'static str, String);

    /// One value of every report, at the precision its sentence carries, with its bytes as the
    /// framing writes them.
    fn samples() -> Vec<(Report, String)> {
        [answers(), data_cycle(), pings_and_errors()]
            .concat()
            .into_iter()
            .map(|(r, id, f)| (r, emit(id, &f.split(',').collect::<Vec<_>>())))
            .collect()
    }

    /// Configuration, clock, reboot and heartbeat.
    fn answers() -> Vec<Sample> {
        let t = hms(5, 0, 2);
        vec![
            (
                Report::Cfg {
                    param: Param::named("POW").unwrap(),
                    value: -100,
                },
                "CACFG",
                "POW,-100".into(),
            ),
            (Report::FactoryReset, "CACFG", "ALL,0".into()),
            (
                Report::Clk(civil(2027, 1, 2, 3, 4, 5, 0)),
                "CACLK",
                "2027,01,02,03,04,05".into(),
            ),
            (
                Report::Tms {
                    timed_out: false,
                    time: civil(2027, 1, 2, 3, 4, 5, 0),
                },
                "CATMS",
                "0,2027-01-02T03:04:05.0000Z".into(),
            ),
            (
                Report::Tmq {
                    time: civil(2027, 1, 2, 3, 4, 6, 500_000_000),
                    clock_source: 0,
                    pps_source: 0,
                },
                "CATMQ",
                "2027-01-02T03:04:06.5000Z,0,0".into(),
            ),
            (
                Report::Msc {
                    src: 1,
                    dest: 1,
                    command: "0".into(),
                },
                "CAMSC",
                "1,1,0".into(),
            ),
            (
                Report::Rev {
                    time: t,
                    event: RevEvent::Init,
                    version: "0.94.0.52".into(),
                },
                "CAREV",
                "050002,INIT,0.94.0.52".into(),
            ),
            (
                Report::Rev {
                    time: t,
                    event: RevEvent::Auv,
                    version: "0.94.0.52".into(),
                },
                "CAREV",
                "050002,AUV,0.94.0.52".into(),
            ),
        ]
    }

    /// The statistics of a transmission and of a reception.
    fn statistics() -> (Xst, Cst) {
        let t = hms(5, 0, 2);
        let xst = Xst {
            start: civil(2026, 11, 21, 5, 0, 0, 100_000_000),
            clock_status: 0,
            mode: 0,
            probe_length: 200,
            bandwidth_hz: 5000.0,
            carrier_hz: 25000.0,
            rate: 5,
            src: 1,
            dest: 2,
            ack: true,
            frames_expected: 8,
            frames_sent: 8,
            packet_type: 3,
            nbytes: 2048,
        };
        let cst = Cst {
            mode: 1,
            toa: TimeOfDay {
                frac: Some(1234),
                ..t
            },
            clock_status: 0.0,
            mfd_peak: 0.0,
            mfd_power: 0.0,
            mfd_ratio: 0.0,
            spl_db: 120.5,
            shifts: [0.0; 4],
            rate: 1,
            src: 1,
            dest: 2,
            psk_error: 0.0,
            packet_type: 3,
            frames: 3,
            bad_frames: 1,
            rss_db: 120.5,
            snr_in_db: 12.3,
            snr_out_db: -1.5,
            symbol_snr_db: -1.5,
            mse: 0.0,
            dqf: 0.0,
            doppler_mps: -0.25,
            noise_db: 87.1,
            carrier_hz: 25000.0,
            bandwidth_hz: 5000.0,
        };
        (xst, cst)
    }

    /// A cycle, its frames and their statistics.
    fn data_cycle() -> Vec<Sample> {
        let t = hms(5, 0, 2);
        let (xst, cst) = statistics();
        let cst_fields = "1,050002.1234,0,0,0,0,120.5,0,0,0,0,1,1,2,0,3,3,1,120.5,12.3,-1.5,-1.5,0,0,-0.25,87.1,25000,5000";
        vec![
            (
                Report::Cyc(CycleInit {
                    cmd: 0,
                    src: 1,
                    dest: 2,
                    rate: 0,
                    ack: true,
                    nframes: 1,
                }),
                "CACYC",
                "0,1,2,0,1,1".into(),
            ),
            (
                Report::Drq {
                    time: hms(5, 0, 0),
                    src: 1,
                    dest: 2,
                    ack: true,
                    max_bytes: 32,
                    frame: 1,
                },
                "CADRQ",
                "050000,1,2,1,32,1".into(),
            ),
            (
                Report::Txd {
                    src: 1,
                    dest: 2,
                    ack: true,
                    nbytes: 4,
                },
                "CATXD",
                "1,2,1,4".into(),
            ),
            (Report::Txp { nbytes: 4 }, "CATXP", "4".into()),
            (Report::Txf { nbytes: 4 }, "CATXF", "4".into()),
            (
                Report::Xst(Box::new(xst)),
                "CAXST",
                "6,20261121,050000.1000,0,0,200,5000,25000,5,1,2,1,8,8,3,2048".into(),
            ),
            (
                Report::Rxd {
                    src: 1,
                    dest: 2,
                    ack: true,
                    frame: 1,
                    data: vec![0xde, 0xad, 0xbe, 0xef],
                },
                "CARXD",
                "1,2,1,1,deadbeef".into(),
            ),
            (
                Report::BadCrc { time: t, frame: 2 },
                "CAMSG",
                "BAD_CRC,050002,2".into(),
            ),
            (
                Report::PacketTimeout { time: t },
                "CAMSG",
                "PACKET_TIMEOUT,050002,packet lost in a collision".into(),
            ),
            (Report::Cst(Box::new(cst)), "CACST", cst_fields.into()),
            (
                Report::Ack {
                    acker: 2,
                    original_src: 1,
                    frame: 1,
                },
                "CAACK",
                "2,1,1,1".into(),
            ),
        ]
    }

    /// Pings, mini-packets and errors.
    fn pings_and_errors() -> Vec<Sample> {
        let t = hms(5, 0, 2);
        vec![
            (Report::Mpc { src: 1, dest: 2 }, "CAMPC", "1,2".into()),
            (Report::Mpa { src: 1, dest: 2 }, "CAMPA", "1,2".into()),
            (
                Report::Mpr {
                    replier: 2,
                    pinger: 1,
                    owtt_s: 0.5,
                },
                "CAMPR",
                "2,1,0.5000".into(),
            ),
            (
                Report::Muc {
                    src: 1,
                    dest: 2,
                    value: 0x123,
                },
                "CAMUC",
                "1,2,0123".into(),
            ),
            (
                Report::Mua {
                    src: 1,
                    dest: 2,
                    value: 0x1fff,
                },
                "CAMUA",
                "1,2,1FFF".into(),
            ),
            (
                Report::Error {
                    time: hms(5, 0, 0),
                    code: ErrCode::BadField,
                    text: "CCCFG: SRC 200 outside 0-127".into(),
                },
                "CAERR",
                "050000,NMEA,3,CCCFG: SRC 200 outside 0-127".into(),
            ),
            (
                Report::DataTimeout { time: t, frame: 1 },
                "CAERR",
                "050002,DATA_TIMEOUT,1,no CCTXD for the data request; cycle abandoned".into(),
            ),
            (
                Report::BridgeBusy { time: t },
                "CAERR",
                "050002,BRIDGE,1,port busy: one client at a time".into(),
            ),
        ]
    }

    #[test]
    fn every_report_emits_its_bytes_and_parses_back_to_itself() {
        let samples = samples();
        for (r, want) in &samples {
            assert_eq!(&r.emit(), want);
            assert_eq!(
                Report::from_line(want.as_bytes()).as_ref(),
                Ok(r),
                "{want:?}"
            );
        }
        // Every variant has a sample (a new variant fails to compile here until it has one).
        let variant = |r: &Report| match r {
            Report::Cfg { .. } => 0,
            Report::FactoryReset => 1,
            Report::Clk(_) => 2,
            Report::Tms { .. } => 3,
            Report::Tmq { .. } => 4,
            Report::Msc { .. } => 5,
            Report::Rev { .. } => 6,
            Report::Cyc { .. } => 7,
            Report::Drq { .. } => 8,
            Report::Txd { .. } => 9,
            Report::Txp { .. } => 10,
            Report::Txf { .. } => 11,
            Report::Xst(_) => 12,
            Report::Rxd { .. } => 13,
            Report::BadCrc { .. } => 14,
            Report::PacketTimeout { .. } => 15,
            Report::Cst(_) => 16,
            Report::Ack { .. } => 17,
            Report::Mpc { .. } => 18,
            Report::Mpa { .. } => 19,
            Report::Mpr { .. } => 20,
            Report::Muc { .. } => 21,
            Report::Mua { .. } => 22,
            Report::Error { .. } => 23,
            Report::DataTimeout { .. } => 24,
            Report::BridgeBusy { .. } => 25,
        };
        let covered: std::collections::BTreeSet<usize> =
            samples.iter().map(|(r, _)| variant(r)).collect();
        assert_eq!(covered, (0..26).collect());
    }

    #[test]
    fn error_texts_are_made_safe_for_a_field() {
        let r = Report::nmea_error(
            hms(5, 0, 0),
            ErrCode::Malformed,
            "does not start with '$' (byte 0 is 0x43), *\u{e9}",
        );
        assert_eq!(
            r.emit(),
            emit(
                "CAERR",
                &[
                    "050000",
                    "NMEA",
                    "1",
                    "does not start with ' ' (byte 0 is 0x43)    "
                ]
            )
        );
        let long = Report::nmea_error(hms(5, 0, 0), ErrCode::Unknown, &"x".repeat(500));
        assert!(matches!(&long, Report::Error { text, .. } if text.len() == 120));
        assert_eq!(Report::from_line(long.emit().as_bytes()), Ok(long));
    }

    #[test]
    fn reports_of_the_afternoon_parse_back() {
        // Times past 06:55:35 (hhmmss above 65535) were refused.
        let line = "$CAREV,120010,AUV,0.94.0.52*0B\r\n";
        let r = Report::from_line(line.as_bytes()).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert_eq!(
            r,
            Report::Rev {
                time: hms(12, 0, 10),
                event: RevEvent::Auv,
                version: "0.94.0.52".into()
            }
        );
        assert_eq!(r.emit(), line);
        for r in [
            Report::Drq {
                time: hms(23, 59, 59),
                src: 1,
                dest: 2,
                ack: true,
                max_bytes: 32,
                frame: 1,
            },
            Report::PacketTimeout {
                time: hms(18, 30, 0),
            },
        ] {
            assert_eq!(Report::from_line(r.emit().as_bytes()), Ok(r));
        }
    }

    #[test]
    fn rejects_what_the_modem_does_not_write() {
        let bad: &[(&str, fn(&ReportError) -> bool)] = &[
            (
                "$CCCFG,SRC,1",
                |e| matches!(e, ReportError::Unknown(id) if id == "CCCFG"),
            ),
            ("$CACFG,FOO,1", |e| {
                matches!(
                    e,
                    ReportError::Field {
                        index: 0,
                        name: "name",
                        ..
                    }
                )
            }),
            ("$CACFG,SRC", |e| {
                matches!(
                    e,
                    ReportError::Missing {
                        index: 1,
                        name: "value",
                        ..
                    }
                )
            }),
            ("$CATXP,4,5", |e| {
                matches!(
                    e,
                    ReportError::Extra {
                        count: 2,
                        expected: 1,
                        ..
                    }
                )
            }),
            ("$CARXD,1,2,1,1,xyz", |e| {
                matches!(
                    e,
                    ReportError::Field {
                        index: 4,
                        name: "data",
                        ..
                    }
                )
            }),
            ("$CADRQ,250000,1,2,1,32,1", |e| {
                matches!(
                    e,
                    ReportError::Field {
                        index: 0,
                        name: "time",
                        ..
                    }
                )
            }),
            ("$CACYC,0,1,2,0,2,1", |e| {
                matches!(
                    e,
                    ReportError::Field {
                        index: 4,
                        name: "ack",
                        ..
                    }
                )
            }),
            ("$CAMPR,2,1,NaN", |e| {
                matches!(
                    e,
                    ReportError::Field {
                        index: 2,
                        name: "owtt",
                        ..
                    }
                )
            }),
            ("$CAERR,050000,NMEA,9,x", |e| {
                matches!(
                    e,
                    ReportError::Field {
                        index: 2,
                        name: "code",
                        ..
                    }
                )
            }),
            ("$CACLK,2027,02,30,03,04,05", |e| {
                matches!(e, ReportError::Field { name: "date", .. })
            }),
            ("CACFG,SRC,1", |e| {
                matches!(e, ReportError::Nmea(NmeaError::NoDollar(b'C')))
            }),
        ];
        for (line, ok) in bad {
            let e = Report::from_line(line.as_bytes()).expect_err(line);
            assert!(ok(&e), "{line}: {e:?}");
        }
    }

    #[test]
    fn never_panics_and_what_parses_emits_stably() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let seeds: Vec<String> = samples().into_iter().map(|(_, l)| l).collect();
        let mut parsed = 0;
        for i in 0..50_000 {
            let mut line = seeds[i % seeds.len()].as_bytes().to_vec();
            crate::wire::mutate(&mut rng, &mut line, b"$*,.-:TZ0123456789abcdefABCDEF\r\n ");
            if let Ok(r) = Report::from_line(&line) {
                parsed += 1;
                // Numbers may carry more digits than the sentence writes: what is written once
                // is written again the same.
                let once = r.emit();
                let again =
                    Report::from_line(once.as_bytes()).unwrap_or_else(|e| panic!("{once:?}: {e}"));
                assert_eq!(again.emit(), once);
            }
        }
        assert!(parsed > 5_000, "{parsed}");
    }
}
