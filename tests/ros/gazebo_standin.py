"""A stand-in for Gazebo (gz-sim) and ros_gz_bridge, for the tests: what a coordinator sees of a
world `--world` through the bridge, with gz-sim's documented semantics (src/SimulationRunner.cc,
the PosePublisher system):

- `/world/<world>/control` (ros_gz_interfaces/srv/ControlWorld) answers `success: true` at once,
  before anything runs; the request is applied at the next iteration of the loop. `pause` is set
  first; `multi_step` (or `step` = 1) is honoured only when the same request sets `pause: true`,
  and the world pauses again once those steps ran; `pause: false` runs the world freely.
- One step per iteration of the loop, as fast as it can go (the exported world's
  real_time_factor 0). Each step of `--step` seconds: `/clock` (rosgraph_msgs/Clock, or
  `--clock-topic`) carries the time at the *start* of the step, then the models move, then each
  model's pose goes out on `/model/<name>/pose` (geometry_msgs/PoseStamped, stamped with the
  sim time after the step, frame `world`). PosePublisher's throttle: with `--update-frequency F`
  > 0 a pose goes out only when at least 1/F of sim time passed since the last one (counted
  from 0), with -1 (the default) every step. Nothing is published while paused (`/clock`
  repeats its time about every 1 ms of wall time, as a paused world does).
- The models move along a scripted straight line: `--model NAME,X,Y,Z,VX,VY,VZ` (m, m/s).

Failure modes: `--never-step` answers `true` and never steps; `--die-after-steps N` exits after
N steps; `--running` starts the world unpaused, as `gz sim -r` does. It prints `ready` once its service is up, and one line per control request it applied
to stdout (`applied pause=1 multi_step=5 at iteration 12`). `--report FILE` gets, when it ends
(also on SIGTERM/SIGINT), what a coordinator made it do as JSON: `requests`, the largest
`max_multi_step`, `requests_while_stepping` (applied while steps of an earlier one were still
to run: a coordinator running ahead), `t_ns` (its sim time) and `steps`.
"""

import argparse
import json
import os
import signal
import time

import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy
from rosgraph_msgs.msg import Clock
from ros_gz_interfaces.srv import ControlWorld


def stamp(ns):
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", required=True)
    ap.add_argument("--step", type=float, default=0.001, help="step size (s)")
    ap.add_argument("--model", action="append", default=[], help="NAME,X,Y,Z,VX,VY,VZ")
    ap.add_argument("--clock-topic", default="/clock")
    ap.add_argument("--update-frequency", type=float, default=-1.0, help="PosePublisher's update_frequency (Hz)")
    ap.add_argument("--never-step", action="store_true")
    ap.add_argument("--running", action="store_true", help="start unpaused (gz sim -r)")
    ap.add_argument("--die-after-steps", type=int, default=0)
    ap.add_argument("--report", help="write what happened here (JSON) when ending")
    ap.add_argument("--timeout", type=float, default=120.0, help="exit after this many wall seconds")
    a = ap.parse_args()

    rclpy.init()
    node = rclpy.create_node("gazebo_standin")
    step_ns = round(a.step * 1e9)
    period_ns = round(1e9 / a.update_frequency) if a.update_frequency > 0 else 0
    models = []
    for spec in a.model:
        name, *v = spec.split(",")
        x, y, z, vx, vy, vz = (float(t) for t in v)
        models.append([name, x, y, z, vx, vy, vz])
    clock_pub = node.create_publisher(Clock, a.clock_topic, QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST))
    pose_pubs = {m[0]: node.create_publisher(PoseStamped, f"/model/{m[0]}/pose", 10) for m in models}
    state = {"t_ns": 0, "iterations": 0, "paused": not a.running, "pending_steps": 0, "queue": [], "steps_done": 0, "last_pose_ns": 0}
    report = {"requests": 0, "max_multi_step": 0, "requests_while_stepping": 0}

    def write_report():
        if a.report:
            with open(a.report, "w") as f:
                json.dump(dict(report, t_ns=state["t_ns"], steps=state["steps_done"]), f)

    def control(request, response):
        # gz-sim queues the request and answers at once; it is applied later.
        state["queue"].append(request.world_control)
        response.success = True
        return response

    node.create_service(ControlWorld, f"/world/{a.world}/control", control)

    def one_step():
        clock_pub.publish(Clock(clock=stamp(state["t_ns"])))  # the step's start
        state["t_ns"] += step_ns
        state["iterations"] += 1
        state["steps_done"] += 1
        for m in models:
            m[1] += m[4] * a.step
            m[2] += m[5] * a.step
            m[3] += m[6] * a.step
        # PosePublisher::PostUpdate: skip while less than the update period passed since the last.
        # (lastPosePubTime starts at 0, so the first pose waits a whole period too.)
        if 0 < state["t_ns"] - state["last_pose_ns"] < period_ns:
            pass
        else:
            state["last_pose_ns"] = state["t_ns"]
            for m in models:
                msg = PoseStamped()
                msg.header.stamp = stamp(state["t_ns"])
                msg.header.frame_id = "world"
                msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = m[1], m[2], m[3]
                msg.pose.orientation.w = 1.0
                pose_pubs[m[0]].publish(msg)
        if a.die_after_steps and state["steps_done"] >= a.die_after_steps:
            print(f"dying after {state['steps_done']} steps", flush=True)
            write_report()
            os._exit(3)

    def iteration():
        # The end of an iteration: apply what was requested, then run the step it allows.
        while state["queue"]:
            wc = state["queue"].pop(0)
            report["requests"] += 1
            if state["pending_steps"] > 0:
                report["requests_while_stepping"] += 1
            state["paused"] = wc.pause
            steps = wc.multi_step if wc.multi_step > 0 else (1 if wc.step else 0)
            report["max_multi_step"] = max(report["max_multi_step"], steps)
            if wc.pause and steps > 0:
                state["pending_steps"] = steps
            print(f"applied pause={int(wc.pause)} multi_step={wc.multi_step} step={int(wc.step)} at iteration {state['iterations']}", flush=True)
        if a.never_step:
            return False
        if state["pending_steps"] > 0:
            one_step()
            state["pending_steps"] -= 1
            return True
        if not state["paused"]:
            one_step()
            return True
        clock_pub.publish(Clock(clock=stamp(state["t_ns"])))
        return False

    def end(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, end)
    print("ready", flush=True)
    deadline = time.monotonic() + a.timeout
    busy = False
    try:
        while rclpy.ok() and time.monotonic() < deadline:
            # A paused world sleeps about 1 ms per iteration; a stepping one goes straight on.
            rclpy.spin_once(node, timeout_sec=0.0 if busy else 0.001)
            busy = iteration()
    except KeyboardInterrupt:
        pass
    write_report()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
