"""What the sim-time test nodes share: spin a node until its clock stops."""
import time

import rclpy


def spin_until_clock_stops(node, idle_s=3.0, limit_s=90.0):
    """Spins `node` until its clock (sim time under use_sim_time) has not advanced for `idle_s`
    of wall time (the run ended), or for at most `limit_s`; then shuts rclpy down."""
    start = time.monotonic()
    last, last_change = None, None
    while rclpy.ok() and time.monotonic() - start < limit_s:
        rclpy.spin_once(node, timeout_sec=0.02)
        now = node.get_clock().now().nanoseconds
        if now != last:
            last, last_change = now, time.monotonic()
        if last and time.monotonic() - last_change > idle_s:
            break
    node.destroy_node()
    rclpy.shutdown()
