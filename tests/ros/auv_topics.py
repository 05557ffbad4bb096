"""Uses the AUV bridge's topics as a ROS 2 user would, for test/ros.rs: waits for /<v>/auv/pose,
sends [60, 60, 0, 0] and then a malformed [1, 2, 3] on /<v>/thrusters, and reports as JSON what
came back on the pose, odometry and camera topics and /clock once SECONDS of sim time have
passed since it sent them and it has more than 50 poses (60 s of wall time at most: a loaded
machine may start this node late, so the wait is in sim time).

    auv_topics.py VEHICLE SECONDS
"""
import json
import sys
import time

import rclpy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CompressedImage
from std_msgs.msg import Int8MultiArray


def ns(t):
    return t.sec * 1_000_000_000 + t.nanosec


def main():
    v, seconds = sys.argv[1], float(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("auv_topics")
    seen = {"poses": [], "odom": [], "front": [], "bottom": [], "clock": []}
    node.create_subscription(PoseStamped, f"/{v}/auv/pose", lambda m: seen["poses"].append((ns(m.header.stamp), m.pose.position.x, m.header.frame_id, seen["clock"][-1] if seen["clock"] else None)), 100)
    node.create_subscription(Odometry, f"/{v}/auv/odom", lambda m: seen["odom"].append((m.twist.twist.linear.x, m.child_frame_id)), 100)
    for cam in ("front", "bottom"):
        node.create_subscription(CompressedImage, f"/{v}/camera/{cam}/image/compressed",
                                 lambda m, cam=cam: seen[cam].append((m.format, bytes(m.data[:2]).hex(), len(m.data))), qos_profile_sensor_data)
    node.create_subscription(Clock, "/clock", lambda m: seen["clock"].append(ns(m.clock)), 1)
    pub = node.create_publisher(Int8MultiArray, f"/{v}/thrusters", 10)
    sent = None
    end = time.monotonic() + 60
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
        if sent is None and len(seen["poses"]) > 5 and seen["clock"]:
            pub.publish(Int8MultiArray(data=[60, 60, 0, 0]))
            pub.publish(Int8MultiArray(data=[1, 2, 3]))
            sent = seen["clock"][-1]
        elif sent is not None and seen["clock"][-1] - sent >= seconds * 1e9 and len(seen["poses"]) > 50:
            break
    poses = seen["poses"]
    print(json.dumps({
        "poses": len(poses),
        "x_first": poses[0][1] if poses else None,
        "x_last": poses[-1][1] if poses else None,
        "frame": poses[0][2] if poses else None,
        "stamps_increasing": all(a[0] <= b[0] for a, b in zip(poses, poses[1:])),
        # each stamp against the /clock this node had heard when the pose arrived
        "stamp_minus_clock_ms": [(p[0] - p[3]) / 1e6 for p in poses if p[3] is not None],
        "odom_last_vx": seen["odom"][-1][0] if seen["odom"] else None,
        "odom_child": seen["odom"][-1][1] if seen["odom"] else None,
        "front": seen["front"][:1], "bottom": seen["bottom"][:1],
        "images": [len(seen["front"]), len(seen["bottom"])],
        "clock_max_s": max(seen["clock"]) / 1e9 if seen["clock"] else None,
    }), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
