//! The formats of fields, as a sentence table names them (`field: Type as Format`), and what
//! each writes ([`Put`]); how each is read back is beside the reader of each direction
//! (`report.rs`, `command.rs`). And the fields that start a data cycle ([`CycleInit`]), which
//! the host's `$CCCYC` and the modem's `$CACYC` both carry.

use super::encode_hex;
use super::param::Param;
use super::table::{group, Plain, Put};
use crate::wire::utc::{Civil, TimeOfDay};

/// A number as Rust writes it (`0`, `-1.5`); read back finite.
pub(crate) struct Real;

/// A number written with `N` decimals; read back finite.
pub(crate) struct Fixed<const N: usize>;

/// A time `YYYY-MM-DDThh:mm:ss.ffffZ`, to 0.1 ms.
pub(crate) struct Iso;

/// A time `YYYY-MM-DDThh:mm:ssZ`, with a fraction of up to 9 digits when it has one.
pub(crate) struct IsoNs;

/// A time to the second in six fields: `YYYY,MM,DD,hh,mm,ss`.
pub(crate) struct Clock;

/// A time to 0.1 ms in two fields: `YYYYMMDD,hhmmss.ffff`.
pub(crate) struct DateTime;

/// A 13-bit mini-packet: four upper-case hex digits (1–4 read).
pub(crate) struct Mini;

/// An acoustic address (0–127).
pub(crate) struct Addr;

/// The value of the parameter named in the field before it.
pub(crate) struct ParamValue;

group! {
    /// The fields that start a data cycle: `cmd,src,dest,rate,ack,nframes` (the host's
    /// `$CCCYC`; the modem's `$CACYC` echoes it, and reports a cycle it hears the same way).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct CycleInit {
        cmd: u8,
        src: u8,
        dest: u8,
        /// Micro-Modem rate 0–6 (see [`rate_frames`](super::rate_frames)).
        rate: u8,
        ack: bool,
        /// Frames in the packet, from 1 to what the rate carries.
        nframes: u8,
    }
}

/// Numbers written as Rust writes them.
macro_rules! put_display {
    ($($t:ty => $format:ty),* $(,)?) => {$(
        impl Put<$t> for $format {
            fn put(v: &$t, out: &mut Vec<String>) {
                out.push(v.to_string())
            }
        }
    )*};
}

put_display!(u8 => Plain, u16 => Plain, usize => Plain, i64 => Plain, TimeOfDay => Plain);
put_display!(f64 => Real, u8 => Addr, i64 => ParamValue);

/// `1` or `0`.
impl Put<bool> for Plain {
    fn put(v: &bool, out: &mut Vec<String>) {
        out.push(if *v { "1" } else { "0" }.into())
    }
}

/// As given (it has no `,` `*` or line end).
impl Put<String> for Plain {
    fn put(v: &String, out: &mut Vec<String>) {
        out.push(v.clone())
    }
}

/// Lower-case hex (as Goby writes payloads); empty for none.
impl Put<Vec<u8>> for Plain {
    fn put(v: &Vec<u8>, out: &mut Vec<String>) {
        out.push(encode_hex(v))
    }
}

/// A field when there is a value, none after the last one when not.
impl Put<Option<u8>> for Plain {
    fn put(v: &Option<u8>, out: &mut Vec<String>) {
        out.extend(v.map(|x| x.to_string()))
    }
}

/// Its name.
impl Put<Param> for Plain {
    fn put(v: &Param, out: &mut Vec<String>) {
        out.push(v.name().into())
    }
}

/// One field each.
impl<const N: usize> Put<[f64; N]> for Real {
    fn put(v: &[f64; N], out: &mut Vec<String>) {
        out.extend(v.iter().map(|x| x.to_string()))
    }
}

impl<const N: usize> Put<f64> for Fixed<N> {
    fn put(v: &f64, out: &mut Vec<String>) {
        out.push(format!("{v:.N$}"))
    }
}

impl Put<Civil> for Iso {
    fn put(v: &Civil, out: &mut Vec<String>) {
        out.push(v.iso())
    }
}

impl Put<Civil> for IsoNs {
    fn put(c: &Civil, out: &mut Vec<String>) {
        let frac = if c.nanos == 0 {
            String::new()
        } else {
            format!(".{:09}", c.nanos)
        };
        out.push(format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{frac}Z",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        ))
    }
}

impl Put<Civil> for Clock {
    fn put(c: &Civil, out: &mut Vec<String>) {
        out.push(format!("{:04}", c.year));
        for v in [c.month, c.day, c.hour, c.minute, c.second] {
            out.push(format!("{v:02}"));
        }
    }
}

impl Put<Civil> for DateTime {
    fn put(c: &Civil, out: &mut Vec<String>) {
        out.push(format!("{:04}{:02}{:02}", c.year, c.month, c.day));
        out.push(TimeOfDay::tenths_ms(c).to_string());
    }
}

impl Put<u16> for Mini {
    fn put(v: &u16, out: &mut Vec<String>) {
        out.push(format!("{v:04X}"))
    }
}

/// 1–4 hex digits, either case.
pub(crate) fn hex16(v: &str) -> Option<u16> {
    (!v.is_empty() && v.len() <= 4 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u16::from_str_radix(v, 16).ok())
        .flatten()
}
