"""A node started during a run: prints how long after its subscription to /clock the first
message came (wall seconds, null after 10 s without one) and how long it waited (one JSON line),
also when the run stops it first (SIGINT or SIGTERM)."""
import json
import signal
import time

import rclpy
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rosgraph_msgs.msg import Clock


def stop(*_):
    raise KeyboardInterrupt


signal.signal(signal.SIGTERM, stop)
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = Node('first_clock')
first = []
node.create_subscription(Clock, '/clock', lambda m: first.append(m.clock), 10)
subscribed = time.monotonic()
try:
    while not first and time.monotonic() - subscribed < 10.0:
        rclpy.spin_once(node, timeout_sec=0.02)
except KeyboardInterrupt:
    pass
waited = time.monotonic() - subscribed
print(json.dumps({'first_clock_after_s': waited if first else None, 'waited_s': waited}), flush=True)
node.destroy_node()
rclpy.try_shutdown()
