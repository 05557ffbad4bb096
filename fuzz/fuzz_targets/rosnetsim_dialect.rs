//! ROS-NetSim's dialect of the window messages from a peer (a PhysicsUpdate, a NetworkUpdate,
//! a `channel_data` field, gzip or bare): never a panic; a channel it accepts decodes as ours
//! and, when its node list is whole, passes our channel check; every message it accepts
//! decodes as ours.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::wire::channel::{Channel, ChannelView};
use netsim_cosim::wire::proto::{ChannelData, NetworkUpdate, PhysicsUpdate};
use netsim_cosim::wire::rosnetsim::{
    channel_from_rosnetsim, network_from_rosnetsim, physics_from_rosnetsim,
};
use prost::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(ours) = channel_from_rosnetsim(data) {
        let c = Channel::decode(&ours).expect("a translated channel decodes");
        let nodes = ChannelData::decode(ours.as_slice())
            .expect("decodes")
            .node_list
            .len();
        if nodes % 7 == 0 {
            ChannelView::check(&c, nodes / 7).expect("a translated channel is consistent");
        }
    }
    if PhysicsUpdate::decode(data).is_ok() {
        if let Ok(ours) = physics_from_rosnetsim(data.to_vec()) {
            PhysicsUpdate::decode(ours.as_slice()).expect("a translated PhysicsUpdate decodes");
        }
    }
    if NetworkUpdate::decode(data).is_ok() {
        if let Ok(ours) = network_from_rosnetsim(data.to_vec()) {
            NetworkUpdate::decode(ours.as_slice()).expect("a translated NetworkUpdate decodes");
        }
    }
});
