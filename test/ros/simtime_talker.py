"""A stock rclpy talker for the sim-time test: a 1.0 s timer on the node's clock (sim time with
`--ros-args -p use_sim_time:=true`) publishes std_msgs/String on `chatter` with
{"i", "sim_ns"}, the node clock's time at the callback.

Prints one JSON line per publication with the wall time (`wall_s`, monotonic) as well; exits once
the node clock has stopped advancing for 3 s of wall time (the run ended), or after 90 s."""
import json
import time

import rclpy
from std_msgs.msg import String


def main():
    rclpy.init()
    node = rclpy.create_node("simtime_talker")
    pub = node.create_publisher(String, "chatter", 10)
    count = {"i": 0}

    def tick():
        now = node.get_clock().now().nanoseconds
        m = String()
        m.data = json.dumps({"i": count["i"], "sim_ns": now})
        pub.publish(m)
        print(json.dumps({"published": count["i"], "sim_ns": now, "wall_s": time.monotonic()}), flush=True)
        count["i"] += 1

    node.create_timer(1.0, tick)
    print(json.dumps({"ready": True, "use_sim_time": node.get_parameter("use_sim_time").value}), flush=True)
    start = time.monotonic()
    last, last_change = None, None
    while rclpy.ok() and time.monotonic() - start < 90:
        rclpy.spin_once(node, timeout_sec=0.02)
        now = node.get_clock().now().nanoseconds
        if now != last:
            last, last_change = now, time.monotonic()
        if last and time.monotonic() - last_change > 3.0:
            break
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
