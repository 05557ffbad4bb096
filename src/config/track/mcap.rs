//! A track log as the messages of one topic of an MCAP file, as ROS 2 records its bags
//! (`ros2 bag record -s mcap`): `geometry_msgs/msg/PoseStamped` and `nav_msgs/msg/Odometry`
//! (x, y, z in the scenario's ENU frame, the heading from the orientation) or
//! `sensor_msgs/msg/NavSatFix` (degrees; messages without a fix skipped), CDR-encoded
//! ([`crate::wire::ros_pose`]), timed by their header stamps (the log time where a stamp is
//! zero), in the file's order; errors at the message (counted from 1 on the topic).

use super::log::{Builder, Position, TrackLog, Unit};
use crate::config::files::{FileError, Place};
use crate::config::GeoOrigin;
use crate::wire::mcap::{End, WalkError};
use crate::wire::ros_pose::{decode_pose, PosePosition, TYPES};

/// The log in the MCAP `bytes` of `file` (named in errors): the messages of `topic`, positions
/// in the frame of `origin`; a gap between messages longer than `max_gap_s` is refused.
pub fn parse(
    bytes: &[u8],
    file: &str,
    topic: &str,
    origin: &GeoOrigin,
    max_gap_s: f64,
) -> Result<TrackLog, FileError> {
    let whole = |m: String| FileError::new(file, Place::Whole, m);
    // The mcap crate panics on some malformed files: a panic in it is this file's error.
    let (messages, topics) = std::panic::catch_unwind(|| messages_on(bytes, topic))
        .map_err(|_| whole("not an MCAP file that can be read: its reader failed on it".into()))?
        .map_err(whole)?;
    let mut b = Builder::new(file, Unit::Message, origin, max_gap_s);
    let mut n = 0u64;
    for m in messages {
        n += 1;
        let type_name = m.type_name.as_str();
        if m.encoding != "cdr" {
            return Err(b.error(
                n,
                format!(
                    "encoded as {:?}: a track's messages are CDR, as ROS 2 records them",
                    m.encoding
                ),
            ));
        }
        if !TYPES.contains(&type_name) {
            return Err(b.error(
                n,
                format!("of type {type_name:?}: a track takes {}", TYPES.join(", ")),
            ));
        }
        let p = decode_pose(type_name, &m.data).map_err(|e| b.error(n, e))?;
        let t = if p.stamp_s != 0.0 {
            p.stamp_s
        } else {
            m.log_time_ns as f64 / 1e9
        };
        let position = match p.position {
            PosePosition::Xyz(xyz) => Position::Enu(xyz),
            PosePosition::Geo { fix: false, .. } => continue,
            PosePosition::Geo { lat, lon, alt, .. } => Position::Geo { lat, lon, up: alt },
        };
        b.push(n, t, position, p.heading_deg)?;
    }
    if n == 0 {
        let others: Vec<String> = topics.into_iter().collect();
        return Err(whole(format!(
            "no message on {topic} (its topics: {})",
            if others.is_empty() {
                "none".to_owned()
            } else {
                others.join(", ")
            }
        )));
    }
    b.finish()
}

/// One message of the track's topic, as the file holds it.
struct TopicMessage {
    type_name: String,
    encoding: String,
    log_time_ns: u64,
    data: Vec<u8>,
}

/// The messages of `topic` in `bytes`, in the file's order, and (if it has none) the file's
/// other topics (at most 64); an error says why the file cannot be read.
fn messages_on(
    bytes: &[u8],
    topic: &str,
) -> Result<(Vec<TopicMessage>, std::collections::BTreeSet<String>), String> {
    // The crate allocates what a length field states: every length is checked first.
    crate::wire::mcap::walk(&mut &bytes[..], End::File, &mut |_, _, _| {
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|e| match e {
        WalkError::Malformed(what) => format!("not an MCAP file that can be read: {what}"),
        WalkError::Io(e) => format!("cannot read: {e}"),
        WalkError::Visit(never) => match never {},
    })?;
    let stream = ::mcap::MessageStream::new(bytes)
        .map_err(|e| format!("not an MCAP file that can be read: {e}"))?;
    let mut topics = std::collections::BTreeSet::new();
    let mut messages = Vec::new();
    for m in stream {
        let m = m.map_err(|e| {
            format!(
                "unreadable after message {} of {topic} ({e}; lz4-compressed chunks are not \
                 read: write the bag with zstd or none)",
                messages.len()
            )
        })?;
        if m.channel.topic != topic {
            if topics.len() < 64 {
                topics.insert(m.channel.topic.clone());
            }
            continue;
        }
        messages.push(TopicMessage {
            type_name: m
                .channel
                .schema
                .as_ref()
                .map_or(String::new(), |s| s.name.clone()),
            encoding: m.channel.message_encoding.clone(),
            log_time_ns: m.log_time,
            data: m.data.into_owned(),
        });
    }
    Ok((messages, topics))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::track::log::test_origin;

    #[test]
    fn a_file_the_mcap_crate_panics_on_is_an_error() {
        // Found by the `track_mcap` fuzz target.
        let bytes = include_bytes!("../../../fuzz/corpus/track_mcap/mcap_reader_panics.mcap");
        let e = parse(bytes, "f.mcap", "/pose", &test_origin(), 10.0).unwrap_err();
        assert!(
            e.message.starts_with("not an MCAP file that can be read"),
            "{e}"
        );
    }

    #[test]
    fn a_file_cut_inside_a_record_is_refused_before_the_crate_reads_it() {
        // Found by the `track_mcap` fuzz target: a chunk stating more bytes than the file has,
        // which the crate went on to read as a header with a 2.5 GB string.
        let bytes = include_bytes!("../../../fuzz/corpus/track_mcap/chunk_cut_short.mcap");
        let e = parse(bytes, "f.mcap", "/pose", &test_origin(), 10.0).unwrap_err();
        assert!(e.message.contains("the file ends 78 bytes into it"), "{e}");
    }

    #[test]
    fn a_map_that_splits_an_entry_is_refused_before_the_crate_reads_it() {
        // Found by the `track_mcap` fuzz target: a chunk index whose map of 10-byte entries
        // states 27 bytes; the crate read on by whole entries, then a 4 GB string.
        let bytes =
            include_bytes!("../../../fuzz/corpus/track_mcap/chunk_index_map_misaligned.mcap");
        let e = parse(bytes, "f.mcap", "/pose", &test_origin(), 10.0).unwrap_err();
        assert!(
            e.message
                .contains("not a whole number of its 10-byte entries"),
            "{e}"
        );
    }

    #[test]
    fn a_length_the_file_does_not_hold_is_refused_before_anything_is_allocated() {
        // A header record whose profile string states 4 GiB: the crate would allocate it.
        let mut bytes = crate::wire::mcap::MAGIC.to_vec();
        bytes.push(0x01);
        bytes.extend(8u64.to_le_bytes());
        bytes.extend(u32::MAX.to_le_bytes());
        bytes.extend([0u8; 4]);
        let e = parse(&bytes, "f.mcap", "/pose", &test_origin(), 10.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.mcap: not an MCAP file that can be read: the length at byte 17 states \
             4294967295 bytes; its record has 4 left"
        );
    }
}
