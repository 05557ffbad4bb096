//! A NetworkUpdate decoded and checked as window 0's, on both sides of the protocol
//! (`config/acoustic.yaml`):
//! - as an END from an external network simulator, then what the network coordinator does
//!   with it: its packet engine (holding packets it described in BEGIN(0)) releases, drops and
//!   corrupts copies; and the ROS 2 layer's per-pair traffic for the window;
//! - as a BEGIN from an external coordinator, served by the embedded network simulator, whose
//!   END must pass the coordinator's check.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::lockstep::protocol::expect_network;
use netsim_cosim::net::traffic::Frame;
use netsim_cosim::ros::state::Vehicles;
use netsim_cosim::sim::network::NetworkSim;
use netsim_cosim::wire::channel::ChannelView;
use netsim_cosim::wire::ip::IpRepr;
use netsim_cosim::wire::proto::{rosnetsim::network_update::MsgType, NetworkUpdate};

/// Packets from every vehicle to the next one and one broadcast, captured before window 0.
fn captured(engine: &mut netsim_cosim::net::traffic::Engine, s: &netsim_cosim::config::Scenario) {
    let ip = |i: usize| s.vehicles[i].addresses[0].addr();
    let n = s.vehicles.len();
    for i in 0..n {
        let repr = IpRepr {
            src: ip(i),
            dst: ip((i + 1) % n),
            protocol: 17,
            hop_limit: 64,
            payload_len: 0,
        };
        engine.capture(
            i,
            Frame::plain(repr.packet(&[i as u8; 100]).unwrap()),
            i as u64,
        );
    }
    let bcast = IpRepr {
        src: ip(0),
        dst: "255.255.255.255".parse().unwrap(),
        protocol: 17,
        hop_limit: 1,
        payload_len: 0,
    };
    engine.capture(0, Frame::plain(bcast.packet(b"hello").unwrap()), 5);
}

fuzz_target!(|data: &[u8]| {
    let loaded = netsim_cosim_fuzz::acoustic();
    let s = &loaded.scenario;
    if let Ok(end) = expect_network(data, MsgType::End, 0) {
        let mut engine = netsim_cosim_fuzz::engine(loaded);
        captured(&mut engine, s);
        engine.fill_begin(0, &mut NetworkUpdate::default());
        for d in engine.apply_end(0, &end) {
            assert!(d.t_ns <= loaded.schedule().last_ns(0));
            engine.delivered(&d, true);
        }
        engine.shutdown(loaded.schedule().start_ns(1));
        assert!(engine.ledger.balances(), "{:?}", engine.ledger);
        let _ = end.check_nodes(s.vehicles.len());
        netsim_cosim::ros::state::HeldLinks::new(s.vehicles.len()).update(&end);
        let channel = netsim_cosim_fuzz::channel_at_start(s);
        let view = ChannelView::check(&channel, s.vehicles.len())
            .expect("a channel of the scenario's vehicles");
        let _ = Vehicles::from_scenario(s).window(0, 0, &view, &end);
    }
    if let Ok(reply) = NetworkSim::from_scenario(loaded).handle(data) {
        if let Err(e) = expect_network(&reply, MsgType::End, 0)
            .and_then(|end| end.check_nodes(s.vehicles.len()))
        {
            panic!("the embedded simulator's END fails the coordinator's check: {e}");
        }
    }
});
