"""Gazebo co-simulation: Gazebo (gz-sim) as the physics simulator of a scenario, in lockstep.

    ros2 launch netsim_cosim gazebo.launch.py scenario:=/path/to/scenario.yaml

Exports the scenario as a Gazebo world (`cosim export-gazebo`: world.sdf with the terrain as a
heightmap and the vehicles as models, bridge.yaml) unless `world_dir` already holds one, then
starts `gz sim` on it (paused: the coordinator steps it), ros_gz_bridge with that bridge.yaml,
and the all-in-one node `netsim_cosim` (`cosim run`, built with `--features gazebo`), which
steps Gazebo by W per window. The launch ends when the run does.

Arguments:
  scenario     scenario file whose `simulators.physics` is `{kind: gazebo}` (default: the
               package's config/gazebo.yaml)
  params_file  node parameters (default: the package's params/params.yaml)
  world_dir    folder of an exported world to use, or to export into when it has no world.sdf
               (default: /tmp/netsim_cosim_gazebo/<scenario file's stem>)
  gz_args      more arguments for `gz sim`, e.g. `-s` for the server alone (no GUI)
"""
import os
import shlex
import subprocess

from ament_index_python.packages import get_package_prefix, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def start(context):
    scenario = LaunchConfiguration("scenario").perform(context)
    world_dir = LaunchConfiguration("world_dir").perform(context) or os.path.join(
        "/tmp/netsim_cosim_gazebo", os.path.splitext(os.path.basename(scenario))[0]
    )
    world = os.path.join(world_dir, "world.sdf")
    if not os.path.isfile(world):
        cosim = os.path.join(get_package_prefix("netsim_cosim"), "lib", "netsim_cosim", "cosim")
        subprocess.run([cosim, "export-gazebo", scenario, world_dir], check=True)
    sim_time = {"use_sim_time": True}
    return [
        # Without -r: the world loads paused, and only the coordinator's steps move it.
        ExecuteProcess(
            cmd=["gz", "sim", world] + shlex.split(LaunchConfiguration("gz_args").perform(context)),
            output="screen",
        ),
        Node(
            package="ros_gz_bridge",
            executable="parameter_bridge",
            name="gazebo_bridge",
            parameters=[{"config_file": os.path.join(world_dir, "bridge.yaml"), "use_sim_time": True}],
            output="screen",
        ),
        Node(
            package="netsim_cosim",
            executable="cosim",
            name="netsim_cosim",
            arguments=["run"],
            parameters=[LaunchConfiguration("params_file"), {"scenario": scenario}, sim_time],
            output="screen",
            on_exit=Shutdown(reason="the co-simulation ended"),
        ),
    ]


def generate_launch_description():
    share = get_package_share_directory("netsim_cosim")
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=os.path.join(share, "config", "gazebo.yaml")),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "params", "params.yaml")),
        DeclareLaunchArgument("world_dir", default_value=""),
        DeclareLaunchArgument("gz_args", default_value=""),
        OpaqueFunction(function=start),
    ])
