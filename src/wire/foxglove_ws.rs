//! The Foxglove WebSocket protocol (subprotocol `foxglove.websocket.v1`), the part a server
//! serving recorded-style JSON channels speaks: the client's `subscribe` / `unsubscribe` text
//! messages, read with their bounds checked, and the server's messages written (`serverInfo`,
//! `advertise`, `status` as JSON text; message data and time as binary frames, little-endian).

use serde::Deserialize;

/// The WebSocket subprotocol both sides name.
pub const SUBPROTOCOL: &str = "foxglove.websocket.v1";

/// Most subscriptions (or subscription ids) one client message may carry.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// Binary opcode: a message on a subscription.
pub const OP_MESSAGE_DATA: u8 = 0x01;
/// Binary opcode: the server's current (sim) time.
pub const OP_TIME: u8 = 0x02;

/// A client's text message, as this server takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientOp {
    /// `(subscription id, channel id)` pairs.
    Subscribe(Vec<(u32, u32)>),
    /// Subscription ids.
    Unsubscribe(Vec<u32>),
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
enum Op {
    Subscribe {
        subscriptions: Vec<Sub>,
    },
    Unsubscribe {
        #[serde(rename = "subscriptionIds")]
        subscription_ids: Vec<u32>,
    },
}

#[derive(Deserialize)]
struct Sub {
    id: u32,
    #[serde(rename = "channelId")]
    channel_id: u32,
}

impl ClientOp {
    /// Reads a client text message; the error says what is wrong with it (other ops —
    /// `advertise`, `getParameters`, … — are refused by name).
    pub fn parse(text: &[u8]) -> Result<ClientOp, String> {
        let op = serde_json::from_slice::<Op>(text).map_err(|e| e.to_string())?;
        let op = match op {
            Op::Subscribe { subscriptions } => {
                ClientOp::Subscribe(subscriptions.iter().map(|s| (s.id, s.channel_id)).collect())
            }
            Op::Unsubscribe { subscription_ids } => ClientOp::Unsubscribe(subscription_ids),
        };
        let n = match &op {
            ClientOp::Subscribe(s) => s.len(),
            ClientOp::Unsubscribe(s) => s.len(),
        };
        if n > MAX_SUBSCRIPTIONS {
            return Err(format!(
                "{n} subscriptions in one message, more than {MAX_SUBSCRIPTIONS}"
            ));
        }
        Ok(op)
    }
}

/// A channel as advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelInfo {
    pub id: u16,
    pub topic: String,
    pub schema_name: String,
    /// The JSON Schema, as text.
    pub schema: String,
}

/// `serverInfo`: the server's name, the `time` capability (it sends sim time) and a session.
pub fn server_info(name: &str, session: &str) -> String {
    serde_json::json!({
        "op": "serverInfo",
        "name": name,
        "capabilities": ["time"],
        "supportedEncodings": [],
        "metadata": {},
        "sessionId": session,
    })
    .to_string()
}

/// `advertise` of JSON channels with JSON Schemas.
pub fn advertise<'a>(channels: impl IntoIterator<Item = &'a ChannelInfo>) -> String {
    let channels: Vec<serde_json::Value> = channels
        .into_iter()
        .map(|c| {
            serde_json::json!({
                "id": c.id,
                "topic": c.topic,
                "encoding": "json",
                "schemaName": c.schema_name,
                "schema": c.schema,
                "schemaEncoding": "jsonschema",
            })
        })
        .collect();
    serde_json::json!({"op": "advertise", "channels": channels}).to_string()
}

/// `status` at level 1 (warning).
pub fn status_warning(message: &str) -> String {
    serde_json::json!({"op": "status", "level": 1, "message": message}).to_string()
}

/// Message data: opcode, subscription id, log time (ns), payload.
pub fn message_data(subscription: u32, t_ns: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(13 + payload.len());
    b.push(OP_MESSAGE_DATA);
    b.extend_from_slice(&subscription.to_le_bytes());
    b.extend_from_slice(&t_ns.to_le_bytes());
    b.extend_from_slice(payload);
    b
}

/// Time: opcode, time (ns).
pub fn time(t_ns: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(9);
    b.push(OP_TIME);
    b.extend_from_slice(&t_ns.to_le_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriptions_read_and_other_ops_are_refused_by_name() {
        let s = br#"{"op":"subscribe","subscriptions":[{"id":3,"channelId":7}]}"#;
        assert_eq!(ClientOp::parse(s), Ok(ClientOp::Subscribe(vec![(3, 7)])));
        let u = br#"{"op":"unsubscribe","subscriptionIds":[3,4]}"#;
        assert_eq!(ClientOp::parse(u), Ok(ClientOp::Unsubscribe(vec![3, 4])));
        let e = ClientOp::parse(br#"{"op":"getParameters","parameterNames":[]}"#).unwrap_err();
        assert!(e.contains("getParameters"), "{e}");
        assert!(ClientOp::parse(b"\xff{").is_err());
        let many = format!(
            r#"{{"op":"unsubscribe","subscriptionIds":[{}]}}"#,
            vec!["1"; MAX_SUBSCRIPTIONS + 1].join(",")
        );
        assert!(ClientOp::parse(many.as_bytes())
            .unwrap_err()
            .contains("more than"));
    }

    #[test]
    fn binary_frames_are_little_endian() {
        assert_eq!(
            message_data(0x0102_0304, 0x0a0b, b"{}"),
            [1, 4, 3, 2, 1, 0x0b, 0x0a, 0, 0, 0, 0, 0, 0, b'{', b'}']
        );
        assert_eq!(time(1), [2, 1, 0, 0, 0, 0, 0, 0, 0]);
    }
}
