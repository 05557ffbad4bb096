#!/usr/bin/env python3
"""A stock rclpy listener: subscribes to std_msgs/String on /chatter and logs each message.

The ROS 2 tutorial's minimal subscriber, unchanged for the co-simulation. On exit it logs how many
messages it heard (the run's programs logs keep it).
"""
import rclpy
from rclpy.node import Node
from std_msgs.msg import String


class Listener(Node):
    def __init__(self):
        super().__init__('listener')
        self.heard = 0
        self.create_subscription(String, 'chatter', self.on_message, 10)

    def on_message(self, msg):
        self.heard += 1
        self.get_logger().info(f'I heard: "{msg.data}"')


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
