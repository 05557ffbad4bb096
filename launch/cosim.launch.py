"""Runs a scenario with the all-in-one coordinator.

    ros2 launch netsim_cosim cosim.launch.py scenario:=/path/to/scenario.yaml

Arguments:
  scenario  scenario file (default: the package's config/default.yaml)
  out       output folder for timeline.jsonl and summary.json (default: out/<scenario name>)
"""
import os

from ament_index_python.packages import get_package_prefix, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    share = get_package_share_directory("netsim_cosim")
    cosim = os.path.join(get_package_prefix("netsim_cosim"), "lib", "netsim_cosim", "cosim")
    scenario = LaunchConfiguration("scenario")
    out = LaunchConfiguration("out")
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=os.path.join(share, "config", "default.yaml")),
        DeclareLaunchArgument("out", default_value="out/default"),
        ExecuteProcess(cmd=[cosim, "run", scenario, "--out", out], output="screen"),
    ])
