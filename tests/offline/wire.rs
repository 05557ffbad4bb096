//! Wire messages: round trips, the NETSIM interface document's test vectors, and proto2
//! `required` semantics on decode.
use base64::{engine::general_purpose::STANDARD, Engine};
use netsim_cosim::wire::proto::{
    decode_checked,
    netsim::{
        net_sim_manager_response::Status, NavUpdate, NetSimManagerRequest, NetSimManagerResponse,
        ReceiveStats,
    },
    rosnetsim::{network_update, physics_update},
    ChannelData, DecodeError, NetworkUpdate, PathDetails, PhysicsUpdate,
};
use prost::Message;

const REQUEST_VECTOR: &str =
    "CEISOgiz5AMRQ4tUIbbq10EZQUDRT0vLUUAhQylH7tbMYcApMzMzMzMz0z8x65lyHNEpUj85AAAAAAAALkA=";
const RESPONSE_VECTOR: &str = "CEEQAQ==";

#[test]
fn netsim_request_vector_decodes_field_by_field() {
    let bytes = STANDARD.decode(REQUEST_VECTOR).unwrap();
    let req: NetSimManagerRequest = decode_checked(&bytes).unwrap();
    assert_eq!(req.id, 66);
    assert_eq!(req.nav.len(), 1);
    assert!(req.stats.is_empty());
    let nav = &req.nav[0];
    assert_eq!(nav.modem_tcp_port, 62003);
    assert_eq!(nav.time, 1605032069.3209999);
    assert!((nav.time - 1605032069.321).abs() < 1e-6);
    assert_eq!(nav.lat, 71.17647166666667);
    assert_eq!(nav.lon, -142.40123666666668);
    assert_eq!(nav.depth, 0.3);
    assert_eq!(nav.speed, 0.001108602724153247);
    assert_eq!(nav.heading, 15.0);
    // Re-encoding gives the same bytes (field order and encoding as the reference).
    assert_eq!(req.encode_to_vec(), bytes);
}

#[test]
fn netsim_response_vector_decodes_and_reencodes() {
    let bytes = STANDARD.decode(RESPONSE_VECTOR).unwrap();
    let resp: NetSimManagerResponse = decode_checked(&bytes).unwrap();
    assert_eq!(resp.request_id, 65);
    assert_eq!(resp.status(), Status::UpdateAccepted);
    let ours = NetSimManagerResponse {
        request_id: 65,
        status: Status::UpdateAccepted as i32,
    };
    assert_eq!(STANDARD.encode(ours.encode_to_vec()), RESPONSE_VECTOR);
}

#[test]
fn missing_required_fields_are_rejected_with_their_path() {
    // The request vector with nav.lat (field 3, 9 bytes: tag 0x19 + 8) cut out of the nested message.
    let full = STANDARD.decode(REQUEST_VECTOR).unwrap();
    let mut nav = NetSimManagerRequest::decode(full.as_slice()).unwrap().nav[0].encode_to_vec();
    let at = nav.iter().position(|&b| b == 0x19).unwrap();
    nav.drain(at..at + 9);
    let mut req = vec![0x08, 66, 0x12, nav.len() as u8];
    req.extend_from_slice(&nav);
    let err = decode_checked::<NetSimManagerRequest>(&req).unwrap_err();
    assert_eq!(
        err,
        DecodeError::MissingRequired {
            message: "netsim.protobuf.NetSimManagerRequest",
            field: "nav[0].lat".into()
        }
    );
    // prost alone would have accepted it with lat = 0.
    assert_eq!(
        NetSimManagerRequest::decode(req.as_slice()).unwrap().nav[0].lat,
        0.0
    );

    // Top-level: no id.
    let err = decode_checked::<NetSimManagerRequest>(&[]).unwrap_err();
    assert!(
        matches!(err, DecodeError::MissingRequired { ref field, .. } if field == "id"),
        "{err}"
    );
    // Response without status.
    let err = decode_checked::<NetSimManagerResponse>(&[0x08, 0x01]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "netsim.protobuf.NetSimManagerResponse: required field `status` is missing"
    );
}

#[test]
fn malformed_bytes_are_an_error_not_a_panic() {
    let full = STANDARD.decode(REQUEST_VECTOR).unwrap();
    // Every cut inside a field is an error; cutting after `id` (2 bytes) leaves a valid request.
    for cut in (1..full.len()).filter(|&c| c != 2) {
        assert!(
            decode_checked::<NetSimManagerRequest>(&full[..cut]).is_err(),
            "prefix of {cut} bytes accepted"
        );
    }
    let err = decode_checked::<PhysicsUpdate>(&[0x0a, 0xff]).unwrap_err();
    assert!(
        matches!(
            err,
            DecodeError::Malformed {
                message: "rosnetsim.PhysicsUpdate",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn receive_stats_keep_goby_statistics_verbatim() {
    let stats = ReceiveStats {
        modem_tcp_port: 62001,
        tx_modem_tcp_port: 62000,
        packet_success: true,
        mm_stats: Some(vec![0x08, 0x01, 0x10, 0x02]),
    };
    let req = NetSimManagerRequest {
        id: 1,
        nav: vec![],
        stats: vec![stats.clone()],
    };
    let back: NetSimManagerRequest = decode_checked(&req.encode_to_vec()).unwrap();
    assert_eq!(back.stats, vec![stats]);
    let nav = NavUpdate {
        modem_tcp_port: 1,
        time: 2.0,
        lat: 3.0,
        lon: 4.0,
        depth: 5.0,
        speed: 6.0,
        heading: 7.0,
    };
    let back: NavUpdate = decode_checked(&nav.encode_to_vec()).unwrap();
    assert_eq!(back, nav);
}

#[test]
fn rosnetsim_messages_round_trip_with_their_field_numbers() {
    let channel = ChannelData {
        node_list: vec![
            1.0, 2.0, -3.0, 1.0, 0.0, 0.0, 0.0, 4.0, 5.0, -6.0, 0.0, 0.0, 0.0, 1.0,
        ],
        path_details: vec![PathDetails {
            ids: vec![0, 1],
            los: false,
            num_hops: vec![4],
            hop_points: vec![
                1.0, 2.0, -3.0, 0.0, 2.0, 3.0, -4.0, 0.0, 3.0, 4.0, -5.0, 6.5, 4.0, 5.0, -6.0, 0.0,
            ],
            ..Default::default()
        }],
    };
    let bytes = channel.encode_to_vec();
    assert_eq!(bytes[0], (1 << 3) | 2, "node_list is field 1, packed");
    assert_eq!(decode_checked::<ChannelData>(&bytes).unwrap(), channel);

    let phys = PhysicsUpdate {
        msg_type: physics_update::MsgType::End as i32,
        time_val: 12,
        channel_data: bytes.clone().into(),
        set_pose: vec![],
    };
    let pb = phys.encode_to_vec();
    assert_eq!(
        &pb[..4],
        &[0x08, 0x01, 0x10, 12],
        "msg_type #1, time_val #2"
    );
    assert_eq!(decode_checked::<PhysicsUpdate>(&pb).unwrap(), phys);

    let net = NetworkUpdate {
        msg_type: network_update::MsgType::End as i32,
        time_val: 7,
        pkt_id: vec![1, 2],
        src_ip: vec![0x0a0a0001, 0x0a0a0002],
        dst_ip: vec![0x0a0a0002, 0x0a0a0001],
        pkt_lengths: vec![60, 1500],
        rx_ip: vec![0x0a0a0002],
        ber: vec![1e-6],
        channel_data: bytes.into(),
        clear_pkt_id: vec![1],
        clear_src_ip: vec![0x0a0a0001],
        clear_dst_ip: vec![0x0a0a0002],
        pkt_time_ns: vec![7_000_001, 7_000_002],
        src_node: vec![0, 1],
        dst_node: vec![1, 0],
        rx_time_ns: vec![7_004_000],
        rx_node: vec![1],
        drop_pkt_id: vec![2],
        drop_node: vec![0],
        drop_reason: vec![network_update::DropReason::OutOfRange as i32],
        link_state: vec![
            netsim_cosim::wire::proto::LinkState {
                src_node: 0,
                dst_node: 1,
                usable: true,
                snr_db: Some(13.95),
                rate_bps: 12e6,
                per: 0.002,
                delay_ns: 334,
            },
            netsim_cosim::wire::proto::LinkState {
                src_node: 1,
                dst_node: 0,
                usable: false,
                snr_db: None,
                rate_bps: 6e6,
                per: 1.0,
                delay_ns: 0,
            },
        ],
        multicast: vec![false, true],
        window_opened_unix_ns: 1_795_000_000_123_456_789,
    };
    let nb = net.encode_to_vec();
    assert_eq!(decode_checked::<NetworkUpdate>(&nb).unwrap(), net);
    // link_state is field 21 (tag 21 << 3 | 2 = 0xaa 0x01), an absent snr_db stays absent.
    assert!(nb.windows(2).any(|w| w == [0xaa, 0x01]), "link_state #21");
    // multicast is field 22, packed bools (tag 22 << 3 | 2 = 0xb2 0x01, 2 bytes).
    assert!(
        nb.windows(5).any(|w| w == [0xb2, 0x01, 2, 0, 1]),
        "multicast #22"
    );
    // fixed32 src_ip (#4, packed) and double ber (#8, packed) keep their wire types.
    let src_at = nb
        .windows(2)
        .position(|w| w == [(4 << 3) | 2, 8])
        .expect("src_ip packed fixed32");
    assert_eq!(&nb[src_at + 2..src_at + 6], &0x0a0a0001u32.to_le_bytes());
    assert!(
        nb.windows(2).any(|w| w == [(8 << 3) | 2, 8]),
        "ber packed doubles"
    );
}
