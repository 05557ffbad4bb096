#!/usr/bin/env python3
"""A stock rclpy talker: publishes std_msgs/String "Hello World: <n>" on /chatter, stamped.

The ROS 2 tutorial's minimal publisher, for the co-simulation: run it inside a vehicle's network
namespace and its DDS traffic (discovery multicast included) crosses the simulated link. Each
message carries its stamp, the node's clock when it was published (sim time with
`-p use_sim_time:=true`), and the vehicle it left: "Hello World: 7 stamp_ns=1400000000 from=usv2".
Usage: talker.py [period_s] [--ros-args ...]   (default 0.1 s, on the node's clock)
"""
import os
import sys

import rclpy
from rclpy.node import Node
from rclpy.utilities import remove_ros_args
from std_msgs.msg import String


class Talker(Node):
    def __init__(self, period_s):
        super().__init__('talker')
        self.publisher = self.create_publisher(String, 'chatter', 10)
        self.vehicle = os.environ.get('COSIM_VEHICLE', 'host')
        self.count = 0
        self.create_timer(period_s, self.tick)

    def tick(self):
        stamp_ns = self.get_clock().now().nanoseconds
        msg = String()
        msg.data = f'Hello World: {self.count} stamp_ns={stamp_ns} from={self.vehicle}'
        self.publisher.publish(msg)
        self.get_logger().info(f'Publishing: "{msg.data}"')
        self.count += 1


def main():
    rclpy.init(args=sys.argv)
    args = remove_ros_args(sys.argv)
    node = Talker(float(args[1]) if len(args) > 1 else 0.1)
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
