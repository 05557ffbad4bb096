#!/usr/bin/env python3
"""A stock rclpy talker: publishes std_msgs/String "Hello World: <n>" on /chatter.

The ROS 2 tutorial's minimal publisher, unchanged for the co-simulation: run it inside a vehicle's
network namespace and its DDS traffic (discovery multicast included) crosses the simulated link.
Usage: talker.py [period_s]   (default 0.1)
"""
import sys

import rclpy
from rclpy.node import Node
from std_msgs.msg import String


class Talker(Node):
    def __init__(self, period_s):
        super().__init__('talker')
        self.publisher = self.create_publisher(String, 'chatter', 10)
        self.count = 0
        self.create_timer(period_s, self.tick)

    def tick(self):
        msg = String()
        msg.data = f'Hello World: {self.count}'
        self.publisher.publish(msg)
        self.get_logger().info(f'Publishing: "{msg.data}"')
        self.count += 1


def main():
    rclpy.init()
    node = Talker(float(sys.argv[1]) if len(sys.argv) > 1 else 0.1)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.get_logger().info(f'published {node.count} messages')
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
