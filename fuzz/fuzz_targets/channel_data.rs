//! A ChannelData from an external physics simulator: decoded, checked against the scenario's
//! vehicles (`config/default.yaml`, three) and against as many as its node list holds, then
//! read as its consumers do: the view's accessors, the ROS 2 layer's window state, the
//! emulated modems' and the network simulator's geometry.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::model::link::ChannelGeometry;
use netsim_cosim::model::modem::Front;
use netsim_cosim::ros::state::Vehicles;
use netsim_cosim::wire::channel::ChannelView;
use netsim_cosim::wire::proto::{decode_checked, ChannelData, NetworkUpdate};

fn read(view: &ChannelView) {
    for i in 0..view.vehicles() {
        assert!(view.pose(i).is_some());
        let _ = view.position(i);
    }
    for p in view.paths() {
        assert!(p.a < p.b && p.b < view.vehicles());
        let _ = (view.distance_m(p.a, p.b), p.hops(), p.points(), p.loss_db());
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(channel) = decode_checked::<ChannelData>(data) else { return };
    let s = &netsim_cosim_fuzz::default_scenario().scenario;
    if let Ok(view) = ChannelView::check(&channel, s.vehicles.len()) {
        read(&view);
        let _ = Vehicles::from_scenario(s).window(0, 0, &view, &NetworkUpdate::default());
    }
    if let Ok(view) = ChannelView::check(&channel, channel.node_list.len() / 7) {
        read(&view);
    }
    let geometry = ChannelGeometry::new(&channel, s.vehicles.len());
    for a in 0..s.vehicles.len() {
        for b in 0..s.vehicles.len() {
            let _ = geometry.between(a, b);
        }
    }
    let modems = &netsim_cosim_fuzz::acoustic_modems().scenario;
    let mut front = Front::from_scenario(modems).expect("the scenario has modems");
    front.set_channel(0, &channel);
    front.host_line(0, 0, b"$CCMPC,1,2");
    front.shutdown(10_000_000_000);
});
