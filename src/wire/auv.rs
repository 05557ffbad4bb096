//! The ZeroMQ AUV simulator interface's binary messages (docs/src/reference/auv-interface.md):
//! little-endian throughout.
//!
//! - Thrusters (PUSH → PULL, port 5556): 5 bytes `[AUV id u8][left i8][right i8][side i8]
//!   [vertical i8]`, each power in [−100, 100], −127 = leave that thruster as it is.
//! - Telemetry (PUB, port 5557): two parts, `[AUV id u8]` and 24 bytes of six f32
//!   `x, y, z, yaw, pitch, roll`.
//! - Images (PUB, port 5555): three parts, `[AUV id u8]`, the front and the bottom camera's JPEG.
//!
//! Parsers return a [`FrameError`] naming the byte at fault; none panics on any input.

/// Thruster power that leaves a thruster at its last value.
pub const KEEP: i8 = -127;
pub const THRUSTER_FRAME_LEN: usize = 5;
pub const TELEMETRY_LEN: usize = 24;

/// The four thrusters, in frame order.
pub const THRUSTERS: [&str; 4] = ["left", "right", "side", "vertical"];

/// One thruster frame: the AUV it is for and per thruster a new power, or `None` to keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrusterCommand {
    pub id: u8,
    /// Left, right, side, vertical: power in [−100, 100], `None` for −127.
    pub power: [Option<i8>; 4],
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("{0} bytes, expected {1}")]
    Length(usize, usize),
    #[error("{0} thruster power {1} (byte {2}) outside [-100, 100] and not -127 (keep)")]
    Power(&'static str, i8, usize),
    #[error("{0} parts, expected {1}")]
    Parts(usize, usize),
    #[error("the id part has {0} bytes, expected 1")]
    IdPart(usize),
    #[error("{0} is not a finite number (bytes {1}..{2})")]
    NotFinite(&'static str, usize, usize),
}

impl ThrusterCommand {
    /// Parses a 5-byte thruster frame.
    pub fn parse(frame: &[u8]) -> Result<ThrusterCommand, FrameError> {
        let [id, rest @ ..] = frame else {
            return Err(FrameError::Length(0, THRUSTER_FRAME_LEN));
        };
        if frame.len() != THRUSTER_FRAME_LEN {
            return Err(FrameError::Length(frame.len(), THRUSTER_FRAME_LEN));
        }
        let mut power = [None; 4];
        for (i, (&b, slot)) in rest.iter().zip(&mut power).enumerate() {
            let p = b as i8;
            *slot = match p {
                KEEP => None,
                -100..=100 => Some(p),
                _ => return Err(FrameError::Power(THRUSTERS[i], p, i + 1)),
            };
        }
        Ok(ThrusterCommand { id: *id, power })
    }

    /// The 5-byte frame.
    pub fn emit(&self) -> [u8; THRUSTER_FRAME_LEN] {
        let mut f = [self.id, 0, 0, 0, 0];
        for (b, p) in f[1..].iter_mut().zip(self.power) {
            *b = p.unwrap_or(KEEP) as u8;
        }
        f
    }
}

/// One vehicle's telemetry: position (m) and attitude (rad), in the frames the book states
/// (docs/src/reference/auv-interface.md, "Units and axes").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Telemetry {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub yaw: f32,
    pub pitch: f32,
    pub roll: f32,
}

const TELEMETRY_FIELDS: [&str; 6] = ["x", "y", "z", "yaw", "pitch", "roll"];

impl Telemetry {
    /// The 24-byte payload.
    pub fn emit(&self) -> [u8; TELEMETRY_LEN] {
        let mut out = [0; TELEMETRY_LEN];
        for (chunk, v) in out.chunks_exact_mut(4).zip(self.values()) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Parses a 24-byte payload; every value must be finite.
    pub fn parse(payload: &[u8]) -> Result<Telemetry, FrameError> {
        if payload.len() != TELEMETRY_LEN {
            return Err(FrameError::Length(payload.len(), TELEMETRY_LEN));
        }
        let mut v = [0f32; 6];
        for (i, (slot, chunk)) in v.iter_mut().zip(payload.chunks_exact(4)).enumerate() {
            let f = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            if !f.is_finite() {
                return Err(FrameError::NotFinite(TELEMETRY_FIELDS[i], 4 * i, 4 * i + 4));
            }
            *slot = f;
        }
        let [x, y, z, yaw, pitch, roll] = v;
        Ok(Telemetry {
            x,
            y,
            z,
            yaw,
            pitch,
            roll,
        })
    }

    /// A telemetry message as its multipart parts: `[id]`, payload.
    pub fn parse_message(parts: &[&[u8]]) -> Result<(u8, Telemetry), FrameError> {
        let [id, payload] = parts else {
            return Err(FrameError::Parts(parts.len(), 2));
        };
        let &[id] = *id else {
            return Err(FrameError::IdPart(id.len()));
        };
        Ok((id, Telemetry::parse(payload)?))
    }

    fn values(&self) -> [f32; 6] {
        [self.x, self.y, self.z, self.yaw, self.pitch, self.roll]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thruster_frames_parse_and_reject_what_the_interface_forbids() {
        // The interface document's example: struct.pack("Bbbbb", 0, 75, -50, 0, -127).
        let f = [0u8, 75, (-50i8) as u8, 0, 0x81];
        let c = ThrusterCommand::parse(&f).unwrap();
        assert_eq!(
            c,
            ThrusterCommand {
                id: 0,
                power: [Some(75), Some(-50), Some(0), None]
            }
        );
        assert_eq!(c.emit(), f);
        assert_eq!(
            ThrusterCommand::parse(&f[..4]),
            Err(FrameError::Length(4, 5))
        );
        assert_eq!(ThrusterCommand::parse(&[]), Err(FrameError::Length(0, 5)));
        assert_eq!(
            ThrusterCommand::parse(&[0, 1, 2, 3, 4, 5]),
            Err(FrameError::Length(6, 5))
        );
        assert_eq!(
            ThrusterCommand::parse(&[3, 0, 0, 101, 0])
                .unwrap_err()
                .to_string(),
            "side thruster power 101 (byte 3) outside [-100, 100] and not -127 (keep)"
        );
        assert_eq!(
            ThrusterCommand::parse(&[3, 0x80, 0, 0, 0]),
            Err(FrameError::Power("left", -128, 1))
        );
        assert!(ThrusterCommand::parse(&[3, 100, (-100i8) as u8, 0, 0]).is_ok());
    }

    #[test]
    fn telemetry_is_six_little_endian_floats() {
        let t = Telemetry {
            x: 1.5,
            y: -2.0,
            z: -30.25,
            yaw: 0.5,
            pitch: 0.0,
            roll: -0.0,
        };
        let b = t.emit();
        assert_eq!(&b[..4], &1.5f32.to_le_bytes());
        assert_eq!(Telemetry::parse(&b).unwrap(), t);
        assert_eq!(Telemetry::parse_message(&[&[7], &b]).unwrap(), (7, t));
        assert_eq!(Telemetry::parse(&b[..23]), Err(FrameError::Length(23, 24)));
        let mut nan = b;
        nan[12..16].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            Telemetry::parse(&nan).unwrap_err().to_string(),
            "yaw is not a finite number (bytes 12..16)"
        );
        assert_eq!(
            Telemetry::parse_message(&[&b]),
            Err(FrameError::Parts(1, 2))
        );
        assert_eq!(
            Telemetry::parse_message(&[&[1, 2], &b]),
            Err(FrameError::IdPart(2))
        );
    }
}
