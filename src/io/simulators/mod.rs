//! Simulators outside this process: the ns-3 adapter as a child ([`ns3`]), the ZeroMQ AUV
//! simulator interface served from the embedded physics ([`auv_server`]) and followed as an
//! external physics simulator ([`auv_client`]), and Gazebo through ros_gz_bridge ([`gazebo`],
//! feature `gazebo`). The ones the run follows implement [`crate::sim::followed::Followed`].
pub mod auv_client;
pub mod auv_server;
#[cfg(feature = "gazebo")]
pub mod gazebo;
pub mod ns3;
