#!/usr/bin/env python3
"""A stock rclpy listener: subscribes to std_msgs/String on /chatter and logs each message.

The ROS 2 tutorial's minimal subscriber, for the co-simulation. A message stamped by talker.py
("... stamp_ns=<ns> from=<vehicle>") has a latency: the node's clock at receipt minus the stamp,
in sim time with `-p use_sim_time:=true` (none before the node's first `/clock`). The listener
reports each one to the run as a metric line in the file COSIM_METRICS names (with its time of
receipt when that is sim time); the run records it and the report shows it beside the one-way
delay of the link from the talker's vehicle. On exit it logs how many messages it heard.
"""
import json
import os

import rclpy
from rclpy.node import Node
from std_msgs.msg import String


class Listener(Node):
    def __init__(self):
        super().__init__('listener')
        self.heard = 0
        self.sim_time = self.get_parameter('use_sim_time').value
        path = os.environ.get('COSIM_METRICS')
        # Line-buffered: every metric line reaches the file whole, as it is written.
        self.metrics = open(path, 'a', buffering=1) if path else None
        self.create_subscription(String, 'chatter', self.on_message, 10)

    def on_message(self, msg):
        now_ns = self.get_clock().now().nanoseconds
        self.heard += 1
        fields = dict(f.split('=', 1) for f in msg.data.split() if '=' in f)
        if not fields.get('stamp_ns', '').isdigit():
            self.get_logger().info(f'I heard: "{msg.data}"')
            return
        if self.sim_time and now_ns == 0:
            # On sim time a clock at 0 has had no /clock yet: there is no time of receipt.
            self.get_logger().info(f'I heard: "{msg.data}" (no /clock yet: no latency)')
            return
        latency_s = (now_ns - int(fields['stamp_ns'])) / 1e9
        self.get_logger().info(f'I heard: "{msg.data}" ({latency_s * 1e3:.1f} ms after its stamp)')
        if self.metrics:
            line = {'name': 'chatter_latency_s', 'value': latency_s, 'from': fields.get('from')}
            if self.sim_time:  # else the run stamps the value with its own sim time
                line['t_ns'] = now_ns
            self.metrics.write(json.dumps(line) + '\n')


def main():
    rclpy.init()
    node = Listener()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.get_logger().info(f'heard {node.heard} messages')
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
