"""A stock rclpy talker for the sim-time test: a 1.0 s timer on the node's clock (sim time with
`--ros-args -p use_sim_time:=true`) publishes std_msgs/String on `chatter` with
{"i", "sim_ns"}, the node clock's time at the callback.

Prints one JSON line per publication with the wall time (`wall_s`, monotonic) as well; exits once
the node clock has stopped advancing for 3 s of wall time (the run ended), or after 90 s."""
import json
import time

import rclpy
from std_msgs.msg import String

from simclock import spin_until_clock_stops


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
    spin_until_clock_stops(node)


if __name__ == "__main__":
    main()
