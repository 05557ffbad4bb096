"""A node started during a run: prints how long after its subscription to /clock the first
message came (wall seconds, one JSON line), or null after 10 s without one."""
import json
import time

import rclpy
from rclpy.node import Node
from rosgraph_msgs.msg import Clock

rclpy.init()
node = Node('first_clock')
first = []
node.create_subscription(Clock, '/clock', lambda m: first.append(m.clock), 10)
subscribed = time.monotonic()
while not first and time.monotonic() - subscribed < 10.0:
    rclpy.spin_once(node, timeout_sec=0.02)
after = time.monotonic() - subscribed if first else None
print(json.dumps({'first_clock_after_s': after}), flush=True)
node.destroy_node()
rclpy.shutdown()
