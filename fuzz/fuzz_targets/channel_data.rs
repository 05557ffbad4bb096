//! A ChannelData from an external physics simulator: decoded (flat, and held to the generated
//! decoder: whatever it accepts decodes to the same content and re-encodes to bytes it reads
//! back the same), checked against the scenario's
//! vehicles (`config/patrol.yaml`, three), against as many as its node list holds and against
//! `config/acoustic_modems.yaml`'s four, then read as its consumers do: the view's accessors
//! (hop points and the beam tracer's arrivals),
//! the ROS 2 layer's window state, the network simulator's geometry and the emulated modems.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::model::link::ChannelGeometry;
use netsim_cosim::model::modem::Modems;
use netsim_cosim::ros::state::Vehicles;
use netsim_cosim::wire::channel::{Channel, ChannelView, MAX_ARRIVALS_PER_PATH};
use netsim_cosim::wire::proto::{decode_checked, ChannelData, NetworkUpdate};
use netsim_cosim::wire::update::NetworkView;

fn read(view: &ChannelView) {
    for i in 0..view.vehicles() {
        assert!(view.pose(i).is_some());
        let _ = view.position(i);
    }
    for p in view.paths() {
        assert!(p.a < p.b && p.b < view.vehicles());
        let _ = (view.distance_m(p.a, p.b), p.hops(), p.points(), p.loss_db());
        assert!(p.traced() || p.arrival_values().is_empty());
        let mut n = 0;
        for a in p.arrivals() {
            assert!(a.delay_s >= 0.0 && a.amplitude >= 0.0 && a.path_m >= 0.0);
            assert!(a.phase_rad.is_finite() && a.launch_deg.is_finite());
            n += 1;
        }
        assert!(n <= MAX_ARRIVALS_PER_PATH);
    }
}

/// The model's geometry of a checked view, read for the pairs among its first vehicles (and
/// one index beyond them).
fn geometry(view: &ChannelView) {
    let geometry = ChannelGeometry::new(view);
    assert_eq!(geometry.positions().len(), view.vehicles());
    let n = view.vehicles().min(8);
    for a in 0..=n {
        for b in 0..=n {
            let _ = geometry.between(a, b);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let flat = Channel::decode(data);
    let Ok(message) = decode_checked::<ChannelData>(data) else {
        return;
    };
    let channel =
        flat.unwrap_or_else(|e| panic!("the generated decoder accepts what Channel rejects: {e}"));
    // Compared as bytes: NaN values are equal to themselves there.
    let bytes = channel.encode_to_vec();
    assert_eq!(bytes, Channel::from(&message).encode_to_vec());
    assert_eq!(bytes, prost::Message::encode_to_vec(&message));
    assert_eq!(
        Channel::decode(&bytes).map(|c| c.encode_to_vec()).as_ref(),
        Ok(&bytes)
    );
    let s = &netsim_cosim_fuzz::default_scenario().scenario;
    if let Ok(view) = ChannelView::check(&channel, s.vehicles.len()) {
        read(&view);
        let end = NetworkView::check(NetworkUpdate::default()).expect("an empty END is valid");
        let _ = Vehicles::from_scenario(s).window(0, 0, &view, &end);
        geometry(&view);
    }
    if let Ok(view) = ChannelView::check(&channel, channel.to_message().node_list.len() / 7) {
        read(&view);
        geometry(&view);
    }
    let scenario = &netsim_cosim_fuzz::acoustic_modems().scenario;
    if let Ok(view) = ChannelView::check(&channel, scenario.vehicles.len()) {
        let mut modems = Modems::from_scenario(scenario).expect("the scenario has modems");
        modems.set_channel(0, &view);
        modems.host_line(0, 0, b"$CCMPC,1,2");
        modems.shutdown(10_000_000_000);
    }
});
