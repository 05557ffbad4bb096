//! What became of one copy of a packet or modem frame: [`Fate::Delivered`], or
//! [`Fate::Dropped`] with one [`DropReason`]. The one vocabulary of every ledger: the acoustic
//! medium's verdicts ([`crate::model::medium`]), the modem frame ledger
//! ([`crate::model::modem`]), the embedded network simulator's END and the IP ledger of live
//! traffic ([`crate::net::ledger`]). A network simulator reports its reasons as the protobuf
//! `NetworkUpdate.DropReason` values ([`DropReason::to_wire`], [`DropReason::from_wire`]).

use crate::wire::proto::rosnetsim::network_update::DropReason as WireReason;
use serde::{Serialize, Serializer};

/// Why a copy was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The medium: the receiver cannot decode the signal (no usable link between the two).
    OutOfRange,
    /// The packet-error draw failed (PER from the copy's bit error rate).
    PacketError,
    /// The medium: another heard signal overlapped the reception and was not captured.
    Collision,
    /// The medium: the receiver was transmitting during the reception.
    HalfDuplex,
    /// A bounded queue was full (ours, or the simulator's transmit queue), or the packet
    /// waited in the simulator's transmit queue past its lifetime without being sent.
    QueueFull,
    /// The simulator's MAC gave up: no acknowledgement after its last retry, or none within
    /// the frame's lifetime.
    RetryLimit,
    /// The simulator's bit error rate flipped bits and the link checks a CRC.
    BitErrors,
    /// Neither released nor dropped within `max_hold_windows`.
    HeldTooLong,
    /// The destination IP address belongs to no vehicle.
    NoRoute,
    /// The destination acoustic address belongs to no other modem.
    NoReceiver,
    /// Not an IP packet (truncated, bad version, bad lengths).
    Malformed,
    /// In flight (or still in the water) at the end of the run's last window.
    Shutdown,
    /// Captured after the run's last window, while its programs were being stopped.
    AfterEnd,
    /// A simulator dropped it without a reason (DROP_UNSPECIFIED), or named an unknown vehicle.
    Unspecified,
    /// Writing to the receiver's TUN failed.
    WriteError,
}

impl DropReason {
    pub const ALL: [DropReason; 15] = [
        DropReason::OutOfRange,
        DropReason::PacketError,
        DropReason::Collision,
        DropReason::HalfDuplex,
        DropReason::QueueFull,
        DropReason::RetryLimit,
        DropReason::BitErrors,
        DropReason::HeldTooLong,
        DropReason::NoRoute,
        DropReason::NoReceiver,
        DropReason::Malformed,
        DropReason::Shutdown,
        DropReason::AfterEnd,
        DropReason::Unspecified,
        DropReason::WriteError,
    ];

    /// From the protocol's `DropReason` value (unknown values count as unspecified).
    pub fn from_wire(v: i32) -> DropReason {
        match WireReason::try_from(v) {
            Ok(WireReason::OutOfRange) => DropReason::OutOfRange,
            Ok(WireReason::PacketError) => DropReason::PacketError,
            Ok(WireReason::Collision) => DropReason::Collision,
            Ok(WireReason::HalfDuplex) => DropReason::HalfDuplex,
            Ok(WireReason::QueueFull) => DropReason::QueueFull,
            Ok(WireReason::RetryLimit) => DropReason::RetryLimit,
            Ok(WireReason::DropUnspecified) | Err(_) => DropReason::Unspecified,
        }
    }

    /// The protocol's `DropReason` value; reasons a network simulator does not report are
    /// DROP_UNSPECIFIED.
    pub fn to_wire(self) -> i32 {
        let w = match self {
            DropReason::OutOfRange => WireReason::OutOfRange,
            DropReason::PacketError => WireReason::PacketError,
            DropReason::Collision => WireReason::Collision,
            DropReason::HalfDuplex => WireReason::HalfDuplex,
            DropReason::QueueFull => WireReason::QueueFull,
            DropReason::RetryLimit => WireReason::RetryLimit,
            _ => WireReason::DropUnspecified,
        };
        w as i32
    }

    pub fn label(self) -> &'static str {
        match self {
            DropReason::OutOfRange => "out of range",
            DropReason::PacketError => "packet error",
            DropReason::Collision => "collision",
            DropReason::HalfDuplex => "half-duplex",
            DropReason::QueueFull => "queue full",
            DropReason::RetryLimit => "retry limit",
            DropReason::BitErrors => "bit errors",
            DropReason::HeldTooLong => "held too long",
            DropReason::NoRoute => "no route",
            DropReason::NoReceiver => "no receiver",
            DropReason::Malformed => "malformed",
            DropReason::Shutdown => "shutdown",
            DropReason::AfterEnd => "after end",
            DropReason::Unspecified => "unspecified",
            DropReason::WriteError => "write error",
        }
    }
}

impl DropReason {
    /// What the reason means, in one sentence.
    pub fn meaning(self) -> &'static str {
        match self {
            DropReason::OutOfRange => "the receiver cannot decode the signal: no usable link",
            DropReason::PacketError => "the packet-error draw failed (PER from the bit error rate)",
            DropReason::Collision => "another signal overlapped the reception and was not captured",
            DropReason::HalfDuplex => "the receiver was transmitting during the reception",
            DropReason::QueueFull => {
                "a bounded queue was full (ours or the simulator's), or an 802.11 frame waited \
                 in it past its 500 ms lifetime unsent"
            }
            DropReason::RetryLimit => {
                "the simulator's MAC got no acknowledgement after its last retry, or an 802.11 \
                 frame none within its 500 ms lifetime"
            }
            DropReason::BitErrors => "bits were flipped and the link checks a CRC",
            DropReason::HeldTooLong => "neither released nor dropped within max_hold_windows",
            DropReason::NoRoute => "the destination IP address belongs to no vehicle",
            DropReason::NoReceiver => "the destination acoustic address belongs to no other modem",
            DropReason::Malformed => "not an IP packet (truncated, bad version, bad lengths)",
            DropReason::Shutdown => {
                "in flight (or still in the water) at the end of the last window"
            }
            DropReason::AfterEnd => {
                "captured after the run's last window, while its programs were being stopped"
            }
            DropReason::Unspecified => {
                "a simulator dropped it without a reason, or named an unknown vehicle"
            }
            DropReason::WriteError => "writing to the receiver's TUN failed",
        }
    }
}

/// What became of one copy. Serialized as `"delivered"` or the reason's snake_case name
/// (`"out_of_range"`, `"collision"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fate {
    Delivered,
    Dropped(DropReason),
}

impl Serialize for Fate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Fate::Delivered => s.serialize_str("delivered"),
            Fate::Dropped(r) => r.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values_are_the_protocol_s() {
        let wire: Vec<(DropReason, i32)> = DropReason::ALL
            .iter()
            .map(|&r| (r, r.to_wire()))
            .filter(|&(_, v)| v != 0)
            .collect();
        assert_eq!(
            wire,
            vec![
                (DropReason::OutOfRange, 1),
                (DropReason::PacketError, 2),
                (DropReason::Collision, 3),
                (DropReason::HalfDuplex, 4),
                (DropReason::QueueFull, 5),
                (DropReason::RetryLimit, 6)
            ]
        );
        for (r, v) in wire {
            assert_eq!(DropReason::from_wire(v), r);
        }
        assert_eq!(
            (
                DropReason::from_wire(0),
                DropReason::from_wire(99),
                DropReason::from_wire(-1)
            ),
            (
                DropReason::Unspecified,
                DropReason::Unspecified,
                DropReason::Unspecified
            )
        );
    }

    #[test]
    fn fates_serialize_as_one_word() {
        let json = |f: Fate| serde_json::to_string(&f).unwrap();
        assert_eq!(json(Fate::Delivered), "\"delivered\"");
        assert_eq!(
            json(Fate::Dropped(DropReason::OutOfRange)),
            "\"out_of_range\""
        );
        assert_eq!(
            json(Fate::Dropped(DropReason::HalfDuplex)),
            "\"half_duplex\""
        );
        assert_eq!(
            json(Fate::Dropped(DropReason::NoReceiver)),
            "\"no_receiver\""
        );
        assert_eq!(
            json(Fate::Dropped(DropReason::RetryLimit)),
            "\"retry_limit\""
        );
        assert_eq!(DropReason::RetryLimit.label(), "retry limit");
        assert_eq!(json(Fate::Dropped(DropReason::AfterEnd)), "\"after_end\"");
        assert_eq!(DropReason::AfterEnd.label(), "after end");
        assert_ne!(
            DropReason::AfterEnd.meaning(),
            DropReason::Shutdown.meaning()
        );
        let labels: std::collections::BTreeSet<&str> =
            DropReason::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels.len(), DropReason::ALL.len(), "labels are distinct");
    }
}
