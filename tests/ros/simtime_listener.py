"""A stock rclpy listener for the sim-time test: subscribes to `chatter` (std_msgs/String) and
prints one JSON line per message with the message and its own node clock's time (`rx_sim_ns`;
sim time with `--ros-args -p use_sim_time:=true`). Exits once the node clock has stopped
advancing for 3 s of wall time (the run ended), or after 90 s."""
import json
import time

import rclpy
from std_msgs.msg import String

from simclock import spin_until_clock_stops


def main():
    rclpy.init()
    node = rclpy.create_node("simtime_listener")

    def on_msg(m):
        now = node.get_clock().now().nanoseconds
        print(json.dumps({"received": json.loads(m.data), "rx_sim_ns": now, "wall_s": time.monotonic()}), flush=True)

    node.create_subscription(String, "chatter", on_msg, 10)
    print(json.dumps({"ready": True, "use_sim_time": node.get_parameter("use_sim_time").value}), flush=True)
    spin_until_clock_stops(node)


if __name__ == "__main__":
    main()
