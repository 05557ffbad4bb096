//! `auv_bridge`: the ZeroMQ AUV simulator interface as ROS 2 topics (see
//! `netsim_cosim::ros::auv_bridge`): per thruster-driven vehicle of the scenario, a thruster
//! command topic in, telemetry as PoseStamped and Odometry and the cameras as CompressedImage
//! out, stamped with the coordinator's `/clock`.
use clap::Parser;
use netsim_cosim::{
    cli::{self, args::AuvBridgeArgs},
    ros::auv_bridge,
};

#[tokio::main]
async fn main() {
    cli::init_logging();
    let a = AuvBridgeArgs::parse_from(cli::args());
    cli::exit_with(
        async {
            let (params, node) = cli::node("auv_bridge")?;
            let node = node.ok_or_else(|| anyhow::anyhow!("auv_bridge needs ROS 2"))?;
            let loaded = cli::load_with(&params, a.scenario.clone(), &Default::default())?;
            let endpoints = auv_bridge::Endpoints::of(&loaded, &a.host);
            auv_bridge::run(&loaded, endpoints, node.node, cli::shutdown_signal()).await?;
            Ok(0)
        }
        .await,
    )
}
