"""Runs the two coordinators as separate nodes, linked over ZeroMQ: `network_coordinator`
(binds `network_endpoint`) and `physics_coordinator` (connects to it).

    ros2 launch netsim_cosim coordinators.launch.py scenario:=/path/to/scenario.yaml

Arguments:
  scenario          scenario file (default: the package's config/default.yaml)
  params_file       node parameters (default: the package's params/params.yaml)
  network_endpoint  where the network coordinator listens (default: tcp://127.0.0.1:5600)
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("netsim_cosim")
    scenario = {"scenario": LaunchConfiguration("scenario")}
    params = LaunchConfiguration("params_file")
    endpoint = LaunchConfiguration("network_endpoint")
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=os.path.join(share, "config", "default.yaml")),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "params", "params.yaml")),
        DeclareLaunchArgument("network_endpoint", default_value="tcp://127.0.0.1:5600"),
        Node(
            package="netsim_cosim",
            executable="network_coordinator",
            name="network_coordinator",
            arguments=["--bind", endpoint],
            parameters=[params, scenario],
            output="screen",
        ),
        Node(
            package="netsim_cosim",
            executable="physics_coordinator",
            name="physics_coordinator",
            arguments=["--network-coordinator", endpoint],
            parameters=[params, scenario],
            output="screen",
        ),
    ])
