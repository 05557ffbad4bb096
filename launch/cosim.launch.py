"""Runs a scenario with the all-in-one node `netsim_cosim` (`cosim run`).

    ros2 launch netsim_cosim cosim.launch.py scenario:=/path/to/scenario.yaml

Arguments:
  scenario     scenario file (default: the package's config/default.yaml)
  params_file  node parameters (default: the package's params/params.yaml)
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("netsim_cosim")
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=os.path.join(share, "config", "default.yaml")),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "params", "params.yaml")),
        Node(
            package="netsim_cosim",
            executable="cosim",
            name="netsim_cosim",
            arguments=["run"],
            parameters=[LaunchConfiguration("params_file"), {"scenario": LaunchConfiguration("scenario")}],
            output="screen",
        ),
    ])
