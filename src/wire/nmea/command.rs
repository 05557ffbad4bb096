//! Host → modem sentences (`$CC…`) as typed values: [`Command::parse`] checks every field the
//! way a Micro-Modem does and, on a refusal, gives the [`ErrCode`] and text of its `$CAERR`
//! answer; [`Command::emit`] writes the sentence a host would send.
//!
//! To add a command: its id in [`CommandId`] and an entry in the table of [`Command`] (see
//! `table.rs` for its language).

use std::fmt;

use super::field::{hex16, Addr, Clock, CycleInit, IsoNs, Mini, ParamValue};
use super::param::Param;
use super::report::ErrCode;
use super::table::{sentences, Plain, Put, Read, Tag, Take};
use super::{decode_hex, emit, rate_frames, NmeaError, Sentence};
use crate::wire::utc::Civil;

/// A refused command: what the modem answers with `$CAERR,hhmmss,NMEA,<code>,<text>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text}")]
pub struct CommandError {
    pub code: ErrCode,
    pub text: String,
}

impl CommandError {
    pub fn new(code: ErrCode, text: impl Into<String>) -> CommandError {
        CommandError {
            code,
            text: text.into(),
        }
    }

    /// A missing or invalid field of `id`: `CCxxx: <what>`.
    pub fn bad_field(id: CommandId, what: &str) -> CommandError {
        CommandError::new(ErrCode::BadField, format!("{id}: {what}"))
    }
}

impl From<NmeaError> for CommandError {
    fn from(e: NmeaError) -> CommandError {
        CommandError::new(ErrCode::Malformed, e.to_string())
    }
}

/// The ids of the commands, each with its sentence id.
macro_rules! command_ids {
    ($($id:ident = $text:literal),* $(,)?) => {
        /// The sentence ids the emulated modem reads.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum CommandId {
            $($id,)*
        }

        impl CommandId {
            pub const ALL: [CommandId; [$($text),*].len()] = [$(CommandId::$id),*];

            /// `CCCFG`, `CCCFQ`, …
            pub fn as_str(self) -> &'static str {
                match self {
                    $(CommandId::$id => $text,)*
                }
            }
        }
    };
}

command_ids! {
    Cfg = "CCCFG",
    Cfq = "CCCFQ",
    Clk = "CCCLK",
    Tms = "CCTMS",
    Tmq = "CCTMQ",
    Msc = "CCMSC",
    Cyc = "CCCYC",
    Txd = "CCTXD",
    Mpc = "CCMPC",
    Muc = "CCMUC",
}

impl CommandId {
    /// The command a sentence names (either case), or the `$CAERR` for one the modem does not know.
    pub fn of(s: &Sentence) -> Result<CommandId, CommandError> {
        let talker = s.talker.to_ascii_uppercase();
        let kind = s.kind.to_ascii_uppercase();
        if talker != "CC" {
            return Err(CommandError::new(
                ErrCode::Unknown,
                format!("unknown sentence {talker}{kind}"),
            ));
        }
        CommandId::ALL
            .into_iter()
            .find(|id| id.as_str()[2..] == kind)
            .ok_or_else(|| CommandError::new(ErrCode::Unknown, format!("unknown command CC{kind}")))
    }
}

impl fmt::Display for CommandId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `$CCCFQ` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// `ALL`: every parameter.
    All,
    /// `TOP`: the top-level ones.
    Top,
    One(Param),
}

sentences! {
    /// One host command with its fields checked.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Command(id: CommandId, read by Checker) {
        /// Back to factory values.
        FactoryReset = CommandId::Cfg => [name = "ALL", value("ALL value") = "0"],
        /// Set a parameter (within its range).
        Cfg = CommandId::Cfg => { param("name"): Param, value: i64 as ParamValue },
        /// Query parameters.
        Cfq = CommandId::Cfq => (Query),
        /// Set the clock (MM1), as written (nanos 0; a valid date).
        Clk = CommandId::Clk => (Civil as Clock),
        /// Set the clock (MM2), as written.
        Tms = CommandId::Tms => { time: Civil as IsoNs, mode: Option<u8> },
        /// Query the clock (fields ignored).
        Tmq = CommandId::Tmq => [query ~ "0"],
        /// Miscellaneous (`0` = reboot); `command` echoed as sent.
        Msc = CommandId::Msc => { src: u8 as Addr, dest: u8 as Addr, command: String },
        /// Start a data cycle.
        Cyc = CommandId::Cyc => (CycleInit),
        /// One frame's data (empty hex = none).
        Txd = CommandId::Txd => { src: u8 as Addr, dest: u8 as Addr, ack: bool, data: Vec<u8> },
        /// Two-way ping.
        Mpc = CommandId::Mpc => { src: u8 as Addr, dest: u8 as Addr },
        /// 13-bit mini-packet.
        Muc = CommandId::Muc => { src: u8 as Addr, dest: u8 as Addr, value: u16 as Mini },
    }
}

impl Command {
    /// One line from a host: framing, then the command.
    pub fn from_line(line: &[u8]) -> Result<Command, CommandError> {
        Command::parse(&Sentence::parse(line)?)
    }

    /// Checks the fields (surrounding blanks ignored) in the order a modem does; the first
    /// problem is the refusal.
    pub fn parse(s: &Sentence) -> Result<Command, CommandError> {
        let id = CommandId::of(s)?;
        let fields: Vec<&str> = s.fields.iter().map(|x| x.trim()).collect();
        Command::read(id, || Checker::new(id, &fields)).unwrap_or_else(|| {
            Err(CommandError::new(
                ErrCode::Unknown,
                format!("unknown command {id}"),
            ))
        })
    }

    /// The sentence a host sends, checksum and CRLF included; it parses back to `self`.
    pub fn emit(&self) -> String {
        let mut fields = Vec::new();
        self.put_fields(&mut fields);
        let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
        emit(self.id().as_str(), &refs)
    }
}

/// The fields of one command, trimmed, read in order with the checks a modem makes (extra
/// fields ignored).
struct Checker<'s> {
    id: CommandId,
    fields: &'s [&'s str],
    next: usize,
    tag: Tag,
    /// The parameter the last name field named, for the value after it.
    named: Option<Param>,
}

impl<'s> Checker<'s> {
    fn new(id: CommandId, fields: &'s [&'s str]) -> Checker<'s> {
        Checker {
            id,
            fields,
            next: 0,
            tag: Tag::default(),
            named: None,
        }
    }

    fn bad(&self, what: &str) -> CommandError {
        CommandError::bad_field(self.id, what)
    }

    /// The next field, if there is one.
    fn field(&mut self) -> Option<&'s str> {
        let v = self.fields.get(self.next).copied();
        self.next += 1;
        v
    }

    /// The next field as an integer in `lo..=hi`.
    fn int(&mut self, name: &str, lo: i64, hi: i64) -> Result<i64, CommandError> {
        let v: i64 = self
            .field()
            .and_then(|x| x.parse().ok())
            .ok_or_else(|| self.bad(&format!("{name} missing or not a number")))?;
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.bad(&format!("{name} {v} outside {lo}-{hi}")))
        }
    }

    /// The next field as a parameter name or selector (upper-cased).
    fn name(&mut self) -> Result<String, CommandError> {
        self.field()
            .map(|x| x.to_ascii_uppercase())
            .filter(|x| !x.is_empty())
            .ok_or_else(|| self.bad("parameter name missing"))
    }

    fn param(&mut self, name: &str) -> Result<Param, CommandError> {
        let p = Param::named(name).ok_or_else(|| self.bad(&format!("unknown parameter {name}")))?;
        self.named = Some(p);
        Ok(p)
    }
}

impl Read for Checker<'_> {
    type Error = CommandError;

    /// A number is checked as a number (`00` is `0`), a text in either case.
    fn fixed(&mut self, name: &'static str, text: &'static str) -> Result<(), CommandError> {
        let checked = match text.parse::<i64>() {
            Ok(n) => self.int(name, n, n).map(drop),
            Err(_) => match self.field() {
                Some(v) if v.eq_ignore_ascii_case(text) => Ok(()),
                _ => Err(self.bad(&format!("{name} is not {text}"))),
            },
        };
        self.tag.check(checked)
    }

    fn skip(&mut self, _: &'static str) -> Result<(), CommandError> {
        self.next += 1;
        Ok(())
    }

    fn other_sentence(&self) -> bool {
        self.tag.missed()
    }

    fn finish(&self) -> Result<(), CommandError> {
        Ok(())
    }
}

impl Take<u8, Checker<'_>> for Addr {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<u8, CommandError> {
        Ok(r.int(name, 0, 127)? as u8)
    }
}

/// `0` or `1`.
impl Take<bool, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<bool, CommandError> {
        Ok(r.int(name, 0, 1)? == 1)
    }
}

/// As sent; none is empty.
impl Take<String, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, _: &'static str) -> Result<String, CommandError> {
        Ok(r.field().unwrap_or("").to_string())
    }
}

/// Hex in either case; none is no data.
impl Take<Vec<u8>, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<Vec<u8>, CommandError> {
        let hex = r.field().unwrap_or("");
        decode_hex(hex).ok_or_else(|| r.bad(&format!("{name} is not hex")))
    }
}

/// None when missing or empty.
impl Take<Option<u8>, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<Option<u8>, CommandError> {
        match r.field().filter(|x| !x.is_empty()) {
            Some(m) => Ok(Some(
                m.parse()
                    .map_err(|_| r.bad(&format!("{name} is not a number")))?,
            )),
            None => Ok(None),
        }
    }
}

impl Take<Param, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, _: &'static str) -> Result<Param, CommandError> {
        let name = r.name()?;
        r.param(&name)
    }
}

/// Within the range of the parameter named before it, which names it in a refusal.
impl Take<i64, Checker<'_>> for ParamValue {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<i64, CommandError> {
        match r.named {
            Some(p) => {
                let (lo, hi) = p.range();
                r.int(p.name(), lo, hi)
            }
            None => r.int(name, i64::MIN, i64::MAX),
        }
    }
}

impl Put<Query> for Plain {
    fn put(v: &Query, out: &mut Vec<String>) {
        out.push(match v {
            Query::All => "ALL".into(),
            Query::Top => "TOP".into(),
            Query::One(p) => p.name().into(),
        })
    }
}

impl Take<Query, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, _: &'static str) -> Result<Query, CommandError> {
        Ok(match r.name()?.as_str() {
            "ALL" => Query::All,
            "TOP" => Query::Top,
            n => Query::One(r.param(n)?),
        })
    }
}

/// `YYYY-MM-DDThh:mm:ss[.f…]Z`.
impl Take<Civil, Checker<'_>> for IsoNs {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<Civil, CommandError> {
        r.field()
            .and_then(Civil::parse_iso)
            .ok_or_else(|| r.bad(&format!("{name} is not YYYY-MM-DDThh:mm:ssZ")))
    }
}

/// Six numbers in range making a valid date.
impl Take<Civil, Checker<'_>> for Clock {
    fn take(r: &mut Checker<'_>, _: &'static str) -> Result<Civil, CommandError> {
        let c = Civil {
            year: r.int("year", 1970, 2200)?,
            month: r.int("month", 1, 12)?,
            day: r.int("day", 1, 31)?,
            hour: r.int("hour", 0, 23)?,
            minute: r.int("minute", 0, 59)?,
            second: r.int("second", 0, 60)?,
            nanos: 0,
        };
        c.to_ns().ok_or_else(|| r.bad("not a valid date"))?;
        Ok(c)
    }
}

/// 1–4 hex digits, at most 13 bits.
impl Take<u16, Checker<'_>> for Mini {
    fn take(r: &mut Checker<'_>, name: &'static str) -> Result<u16, CommandError> {
        let value = r
            .field()
            .and_then(hex16)
            .ok_or_else(|| r.bad(&format!("{name} is not 1-4 hex digits")))?;
        if value > 0x1fff {
            return Err(r.bad(&format!("{name} exceeds 13 bits")));
        }
        Ok(value)
    }
}

/// A cycle a modem starts: a command and a rate it knows, no more frames than the rate
/// carries. (The generic reading of a [`CycleInit`] does not apply here: commands have no
/// plain `u8`.)
impl Take<CycleInit, Checker<'_>> for Plain {
    fn take(r: &mut Checker<'_>, _: &'static str) -> Result<CycleInit, CommandError> {
        let cmd = r.int("command", 0, 127)? as u8;
        let src = <Addr as Take<u8, _>>::take(r, "src")?;
        let dest = <Addr as Take<u8, _>>::take(r, "dest")?;
        let rate = r.int("rate", 0, 6)? as u8;
        let ack = <Plain as Take<bool, _>>::take(r, "ack")?;
        let (frames, _) = rate_frames(rate).ok_or_else(|| r.bad("rate"))?;
        let nframes = r.int("nframes", 1, frames.into())? as u8;
        Ok(CycleInit {
            cmd,
            src,
            dest,
            rate,
            ack,
            nframes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Command, CommandError> {
        Command::from_line(line.as_bytes())
    }

    /// One known-good line per command, with the value it parses to.
    fn good() -> Vec<(&'static str, Command)> {
        let p = |n| Param::named(n).unwrap();
        let civil = |year, month, day, hour, minute, second, nanos| Civil {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
        };
        vec![
            ("$CCCFG,ALL,0", Command::FactoryReset),
            (
                "$CCCFG,SRC,3*33",
                Command::Cfg {
                    param: p("SRC"),
                    value: 3,
                },
            ),
            (
                "$cccfg, pow , -20\r\n",
                Command::Cfg {
                    param: p("POW"),
                    value: -20,
                },
            ),
            ("$CCCFQ,ALL", Command::Cfq(Query::All)),
            ("$CCCFQ,top", Command::Cfq(Query::Top)),
            ("$CCCFQ,SRC", Command::Cfq(Query::One(p("SRC")))),
            (
                "$CCCLK,2027,01,02,03,04,05",
                Command::Clk(civil(2027, 1, 2, 3, 4, 5, 0)),
            ),
            (
                "$CCTMS,2027-01-02T03:04:05Z,0",
                Command::Tms {
                    time: civil(2027, 1, 2, 3, 4, 5, 0),
                    mode: Some(0),
                },
            ),
            (
                "$CCTMS,2027-01-02T03:04:05.25Z",
                Command::Tms {
                    time: civil(2027, 1, 2, 3, 4, 5, 250_000_000),
                    mode: None,
                },
            ),
            ("$CCTMQ,0", Command::Tmq),
            (
                "$CCMSC,1,1,0",
                Command::Msc {
                    src: 1,
                    dest: 1,
                    command: "0".into(),
                },
            ),
            (
                "$CCCYC,0,1,2,5,1,8",
                Command::Cyc(CycleInit {
                    cmd: 0,
                    src: 1,
                    dest: 2,
                    rate: 5,
                    ack: true,
                    nframes: 8,
                }),
            ),
            (
                "$CCTXD,1,2,1,DEADbeef",
                Command::Txd {
                    src: 1,
                    dest: 2,
                    ack: true,
                    data: vec![0xde, 0xad, 0xbe, 0xef],
                },
            ),
            (
                "$CCTXD,1,2,0,",
                Command::Txd {
                    src: 1,
                    dest: 2,
                    ack: false,
                    data: vec![],
                },
            ),
            ("$CCMPC,1,2", Command::Mpc { src: 1, dest: 2 }),
            (
                "$CCMUC,1,2,1fff",
                Command::Muc {
                    src: 1,
                    dest: 2,
                    value: 0x1fff,
                },
            ),
        ]
    }

    #[test]
    fn every_command_parses_from_a_known_good_line_and_round_trips() {
        let good = good();
        for id in CommandId::ALL {
            assert!(
                good.iter().any(|(_, c)| c.id() == id),
                "{id} has no known-good line"
            );
        }
        for (line, want) in good {
            assert_eq!(parse(line).as_ref(), Ok(&want), "{line}");
            let again = want.emit();
            assert!(
                again.starts_with(&format!("${},", want.id())) && again.ends_with("\r\n"),
                "{again:?}"
            );
            assert_eq!(parse(&again), Ok(want), "{again:?}");
        }
    }

    #[test]
    fn refusals_carry_the_caerr_code_and_text() {
        let cases: &[(&str, ErrCode, &str)] = &[
            (
                "$CCCFG,SRC,1*00",
                ErrCode::Malformed,
                "checksum mismatch: sentence says 00, computed 31",
            ),
            ("$GPGGA,1", ErrCode::Unknown, "unknown sentence GPGGA"),
            ("$ccxxx,1", ErrCode::Unknown, "unknown command CCXXX"),
            ("$CCCFG", ErrCode::BadField, "CCCFG: parameter name missing"),
            (
                "$CCCFG,ALL,1",
                ErrCode::BadField,
                "CCCFG: ALL value 1 outside 0-0",
            ),
            (
                "$CCCFG,FOO,1",
                ErrCode::BadField,
                "CCCFG: unknown parameter FOO",
            ),
            (
                "$CCCFG,dto,31",
                ErrCode::BadField,
                "CCCFG: DTO 31 outside 1-30",
            ),
            (
                "$CCCFQ,FOO",
                ErrCode::BadField,
                "CCCFQ: unknown parameter FOO",
            ),
            (
                "$CCCLK,2026,2,30,0,0,0",
                ErrCode::BadField,
                "CCCLK: not a valid date",
            ),
            (
                "$CCCLK,2026,1",
                ErrCode::BadField,
                "CCCLK: day missing or not a number",
            ),
            (
                "$CCTMS,2026-13-01T00:00:00Z",
                ErrCode::BadField,
                "CCTMS: time is not YYYY-MM-DDThh:mm:ssZ",
            ),
            (
                "$CCTMS,2026-01-01T00:00:00Z,x",
                ErrCode::BadField,
                "CCTMS: mode is not a number",
            ),
            (
                "$CCMSC,128,1,0",
                ErrCode::BadField,
                "CCMSC: src 128 outside 0-127",
            ),
            (
                "$CCCYC,0,1,2,0,0,2",
                ErrCode::BadField,
                "CCCYC: nframes 2 outside 1-1",
            ),
            (
                "$CCCYC,0,1,2,7,0,1",
                ErrCode::BadField,
                "CCCYC: rate 7 outside 0-6",
            ),
            (
                "$CCTXD,1,2,0,abc",
                ErrCode::BadField,
                "CCTXD: data is not hex",
            ),
            (
                "$CCMPC,1",
                ErrCode::BadField,
                "CCMPC: dest missing or not a number",
            ),
            (
                "$CCMUC,1,2,2000",
                ErrCode::BadField,
                "CCMUC: value exceeds 13 bits",
            ),
            (
                "$CCMUC,1,2,12345",
                ErrCode::BadField,
                "CCMUC: value is not 1-4 hex digits",
            ),
        ];
        for (line, code, text) in cases {
            assert_eq!(parse(line), Err(CommandError::new(*code, *text)), "{line}");
        }
    }

    #[test]
    fn never_panics_and_what_parses_round_trips() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let seeds: Vec<String> = good().into_iter().map(|(l, _)| l.to_string()).collect();
        let mut parsed = 0;
        for i in 0..50_000 {
            let mut line = seeds[i % seeds.len()].as_bytes().to_vec();
            crate::wire::mutate(&mut rng, &mut line, b"$*,.-:TZ0123456789abcdefABCDEF\r\n ");
            if let Ok(c) = Command::from_line(&line) {
                parsed += 1;
                assert_eq!(
                    Command::from_line(c.emit().as_bytes()),
                    Ok(c),
                    "{:?}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
        assert!(parsed > 5_000, "{parsed}");
    }
}
