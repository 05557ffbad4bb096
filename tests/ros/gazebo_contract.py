"""Drives a Gazebo world through ros_gz's ControlWorld as a coordinator would and reports what it
saw, as one JSON line: used by test/ros.rs against test/ros/gazebo_standin.py, to hold the
stand-in to gz-sim's documented semantics.

    gazebo_contract.py --world W --model NAME --step S
"""

import argparse
import json
import time

import rclpy
from geometry_msgs.msg import PoseStamped
from rosgraph_msgs.msg import Clock
from ros_gz_interfaces.srv import ControlWorld


def ns(t):
    return t.sec * 1_000_000_000 + t.nanosec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--step", type=float, default=0.001)
    a = ap.parse_args()
    step_ns = round(a.step * 1e9)
    rclpy.init()
    node = rclpy.create_node("gazebo_contract")
    poses, clocks = [], []
    node.create_subscription(PoseStamped, f"/model/{a.model}/pose", lambda m: poses.append((ns(m.header.stamp), m.pose.position.x)), 100)
    node.create_subscription(Clock, "/clock", lambda m: clocks.append(ns(m.clock)), 100)
    client = node.create_client(ControlWorld, f"/world/{a.world}/control")
    assert client.wait_for_service(timeout_sec=20), "no control service"
    # Let the subscriptions match (discovery takes longer on a busy machine), then a moment more.
    end = time.monotonic() + 20
    while time.monotonic() < end and (
        node.count_publishers(f"/model/{a.model}/pose") < 1 or node.count_publishers("/clock") < 1
    ):
        rclpy.spin_once(node, timeout_sec=0.05)
    time.sleep(0.5)

    def control(pause, multi_step=0):
        req = ControlWorld.Request()
        req.world_control.pause = pause
        req.world_control.multi_step = multi_step
        fut = client.call_async(req)
        rclpy.spin_until_future_complete(node, fut, timeout_sec=5)
        return fut.result().success

    def spin_for(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)

    def spin_until(cond, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end and not cond():
            rclpy.spin_once(node, timeout_sec=0.01)
        return cond()

    out = {}
    spin_for(0.3)
    out["poses_while_paused_at_start"] = len(poses)
    # pause + multi_step 5: the reply comes first, the steps after; five steps, then paused.
    poses.clear()
    out["reply"] = control(True, 5)
    out["poses_at_reply"] = len(poses)
    out["reached"] = spin_until(lambda: bool(poses) and poses[-1][0] >= 5 * step_ns, 5.0)
    spin_for(0.3)
    out["stamps_after_5"] = [p[0] // step_ns for p in poses]
    out["clock_after_5"] = sorted(set(c // step_ns for c in clocks))
    # multi_step without pause: the world just runs.
    poses.clear()
    out["reply_run"] = control(False, 3)
    spin_until(lambda: len(poses) > 3, 5.0)
    out["steps_when_running"] = len(poses)
    control(True, 0)
    spin_for(1.0)  # what was in flight when it paused
    poses.clear()
    spin_for(0.3)
    out["poses_after_pause"] = len(poses)
    print(json.dumps(out), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
