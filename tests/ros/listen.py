"""Subscribes to the netsim_cosim topics and prints one JSON line per message received.

    listen.py VEHICLE... [--timeout S]

Prints {"ready": true} once subscribed; exits when /clock stops for 3 s after the first one
(or at the timeout)."""
import json
import sys
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from std_msgs.msg import UInt8MultiArray
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray


def ns(t):
    return t.sec * 1_000_000_000 + t.nanosec


def main():
    args = sys.argv[1:]
    timeout = 60.0
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = float(args[i + 1])
        del args[i:i + 2]
    vehicles = args
    rclpy.init()
    node = rclpy.create_node("netsim_test_listener")
    out = lambda d: (print(json.dumps(d), flush=True))
    last = {"clock": None}

    def on_clock(m):
        last["clock"] = time.monotonic()
        out({"topic": "/clock", "t_ns": ns(m.clock)})

    reliable = lambda depth: QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE)
    subs = [node.create_subscription(Clock, "/clock", on_clock, reliable(100))]
    for v in vehicles:
        subs.append(node.create_subscription(
            PoseStamped, f"/{v}/pose",
            lambda m, v=v: out({"topic": f"/{v}/pose", "t_ns": ns(m.header.stamp), "frame": m.header.frame_id,
                                "p": [m.pose.position.x, m.pose.position.y, m.pose.position.z],
                                "q": [m.pose.orientation.w, m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z]}),
            qos_profile_sensor_data))
    subs.append(node.create_subscription(
        TFMessage, "/tf",
        lambda m: out({"topic": "/tf", "t": [{"t_ns": ns(t.header.stamp), "parent": t.header.frame_id,
                                              "child": t.child_frame_id,
                                              "xyz": [t.transform.translation.x, t.transform.translation.y, t.transform.translation.z]}
                                             for t in m.transforms]}), reliable(100)))
    subs.append(node.create_subscription(
        MarkerArray, "/netsim/paths",
        lambda m: out({"topic": "/netsim/paths", "markers": [
            {"ns": k.ns, "id": k.id, "type": k.type, "frame": k.header.frame_id, "t_ns": ns(k.header.stamp),
             "color": [k.color.r, k.color.g, k.color.b], "points": [[p.x, p.y, p.z] for p in k.points]} for k in m.markers]}),
        reliable(100)))
    subs.append(node.create_subscription(
        DiagnosticArray, "/diagnostics",
        lambda m: out({"topic": "/diagnostics", "t_ns": ns(m.header.stamp), "status": [
            {"name": s.name, "level": int.from_bytes(s.level, "little") if isinstance(s.level, bytes) else int(s.level),
             "message": s.message, "hardware_id": s.hardware_id, "values": {kv.key: kv.value for kv in s.values}}
            for s in m.status]}), reliable(100)))
    subs.append(node.create_subscription(
        UInt8MultiArray, "/netsim/channel_data",
        lambda m: out({"topic": "/netsim/channel_data", "label": m.layout.dim[0].label if m.layout.dim else "",
                       "hex": bytes(m.data).hex()}), reliable(100)))
    out({"ready": True})
    start = time.monotonic()
    while rclpy.ok() and time.monotonic() - start < timeout:
        rclpy.spin_once(node, timeout_sec=0.05)
        if last["clock"] is not None and time.monotonic() - last["clock"] > 3.0:
            break
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
