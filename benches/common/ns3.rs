//! What the benchmarks that drive the ns-3 adapter share: finding it and starting it for a
//! scenario, as a run does.

use netsim_cosim::{
    config::{LoadedScenario, NetworkEndpoint},
    lockstep::Link,
};
use std::path::{Path, PathBuf};

/// Points `NETSIM_NS3` at the adapter `scripts/setup --ns3` builds, unless it is set.
pub fn use_built_adapter() {
    if std::env::var_os("NETSIM_NS3").is_none() {
        let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ns3/netsim-ns3");
        std::env::set_var("NETSIM_NS3", &built);
    }
}

/// The adapter for `loaded` (whose network simulator is ns-3), its log and socket in `dir`.
pub async fn start(loaded: &LoadedScenario, dir: &Path) -> Link {
    let NetworkEndpoint::Ns3(settings) = &loaded.scenario.simulators.network else {
        panic!("the scenario's network simulator is not ns-3")
    };
    std::fs::create_dir_all(dir).unwrap();
    netsim_cosim::io::simulators::ns3::start(loaded, settings, Some(dir))
        .await
        .unwrap_or_else(|e| panic!("{e:#}"))
}

/// Adds to BEGIN `b` a unicast packet `id` of `bytes` from vehicle `src` to `dst`, captured
/// at `t_ns`; vehicle i's address is 10.40.0.(i + 1).
pub fn push_unicast(
    b: &mut netsim_cosim::wire::proto::NetworkUpdate,
    id: u32,
    (src, dst): (usize, usize),
    bytes: u32,
    t_ns: u64,
) {
    b.pkt_id.push(id);
    b.src_ip.push(0x0a28_0001 + src as u32);
    b.dst_ip.push(0x0a28_0001 + dst as u32);
    b.pkt_lengths.push(bytes);
    b.pkt_time_ns.push(t_ns);
    b.src_node.push(src as u32);
    b.dst_node.push(dst as u32);
    b.multicast.push(false);
}
