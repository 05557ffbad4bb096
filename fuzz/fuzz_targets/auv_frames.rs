//! The ZeroMQ AUV simulator interface's messages from outside: a thruster frame (from any
//! client) and a telemetry message (from an external simulator). The input's first byte splits
//! it into parts as ZeroMQ would deliver them. A frame that parses emits the same bytes; applied
//! to an AUV it leaves every power within [−100, 100]; telemetry that parses is finite and
//! re-emits its payload.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::config::AuvDynamics;
use netsim_cosim::model::auv::Auv;
use netsim_cosim::wire::auv::{Telemetry, ThrusterCommand};

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = ThrusterCommand::parse(data) {
        assert_eq!(&c.emit()[..], data);
        let mut auv = Auv::new(c.id, AuvDynamics::default());
        auv.command(&c);
        assert!(auv.power().iter().all(|p| (-100..=100).contains(p)));
    }
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(rest.len());
    let parts: Vec<&[u8]> = if cut == 0 {
        vec![rest]
    } else {
        vec![&rest[..cut], &rest[cut..]]
    };
    if let Ok((_, t)) = Telemetry::parse_message(&parts) {
        assert!([t.x, t.y, t.z, t.yaw, t.pitch, t.roll]
            .iter()
            .all(|v| v.is_finite()));
        assert_eq!(&t.emit()[..], parts[1]);
    }
});
