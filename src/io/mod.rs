//! The operating-system side: tokio tasks on sockets and devices. Live traffic (Linux, root):
//! network namespaces ([`netns`]), TUN interfaces ([`tun`]) and the tasks that move packets
//! between them and the packet logic in [`crate::net`] ([`live`]); the TCP servers of the
//! acoustic front: the NETSIM manager ([`netsim_manager`]) and the modem bridges
//! ([`modem_bridge`]); the programs a scenario starts ([`programs`]) and the metrics
//! files they report values in ([`metrics`]); the ns-3 adapter as a
//! child process ([`ns3`]); the ZeroMQ AUV simulator interface served from the embedded physics
//! ([`auv_server`]) and followed as an external physics simulator ([`auv_client`]); with the
//! feature `gazebo`, Gazebo as the physics simulator through ros_gz_bridge ([`gazebo`]); a
//! process and what it started, as `/proc` shows them ([`procfs`]); children that die with
//! this process ([`child`]); a run without root in a user namespace of its own ([`userns`]); the
//! live viewer server ([`viewer`]).
pub mod agents;
pub mod auv_client;
pub mod auv_server;
pub mod child;
#[cfg(feature = "gazebo")]
pub mod gazebo;
pub mod live;
pub mod metrics;
pub mod modem_bridge;
pub mod netns;
pub mod netsim_manager;
pub mod ns3;
pub mod ports;
pub mod procfs;
pub mod programs;
pub mod timer;
pub mod tun;
pub mod userns;
pub mod viewer;
