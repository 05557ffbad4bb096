//! A scenario exported for other tools: a Gazebo world ([`gazebo`], `cosim export-gazebo`).
pub mod gazebo;
