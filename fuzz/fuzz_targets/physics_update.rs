//! A PhysicsUpdate from an external physics simulator (END) or coordinator (BEGIN), decoded
//! and checked as window 0's; an END's ChannelData then as the physics coordinator reads it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::lockstep::protocol::expect_physics;
use netsim_cosim::wire::channel::{Channel, ChannelView};
use netsim_cosim::wire::proto::rosnetsim::physics_update::MsgType;

fuzz_target!(|data: &[u8]| {
    let _ = expect_physics(data, MsgType::Begin, 0);
    let Ok(end) = expect_physics(data, MsgType::End, 0) else {
        return;
    };
    let vehicles = netsim_cosim_fuzz::default_scenario()
        .scenario
        .vehicles
        .len();
    if let Ok(channel) = Channel::decode(&end.channel_data) {
        let _ = ChannelView::check(&channel, vehicles);
    }
});
