"""Clients of the ZeroMQ AUV simulator interface written as its document's Python examples
(pyzmq, struct, OpenCV's imdecode), for test/auv.rs. Each prints one JSON line of what it saw.

    doc_client.py motion ID PORT_BASE   thrusters and telemetry: forward, -127 keeps, up, turn
    doc_client.py ridge ID PORT_BASE    drives forward, recording telemetry and the cameras
    doc_client.py garbage PORT_BASE     malformed thruster frames
    doc_client.py drive ID PORT_BASE L R S V   one thruster frame
PORT_BASE + 0, 1, 2 are the images, thrusters and telemetry ports (5555, 5556, 5557 by default).
"""
import json
import math
import struct
import sys
import time

import cv2 as cv
import numpy as np
import zmq


def telemetry_socket(ctx, base, auv_id):
    # As the document's telemetry example.
    socket = ctx.socket(zmq.SUB)
    socket.connect(f"tcp://localhost:{base + 2}")
    socket.subscribe(bytes([auv_id]))  # Filter for AUV with ID=auv_id
    return socket


def thruster_socket(ctx, base):
    # As the document's thruster example.
    socket = ctx.socket(zmq.PUSH)
    socket.connect(f"tcp://localhost:{base + 1}")
    return socket


def push(socket, auv_id, left, right, side, vertical):
    data = struct.pack("Bbbbb", auv_id, left, right, side, vertical)
    socket.send(data)


def recv_telemetry(socket, ids):
    _auv_id, data = socket.recv_multipart(0)
    ids.add(_auv_id[0])
    x, y, z, yaw, pitch, roll = struct.unpack("<ffffff", data)
    return x, y, z, yaw, pitch, roll


def latest(socket, ids, settle):
    """The newest telemetry after `settle` seconds of reading."""
    end = time.monotonic() + settle
    t = recv_telemetry(socket, ids)
    while time.monotonic() < end:
        t = recv_telemetry(socket, ids)
    return t


def motion(auv_id, base):
    ctx = zmq.Context()
    tel = telemetry_socket(ctx, base, auv_id)
    thr = thruster_socket(ctx, base)
    ids = set()
    out = {}
    start = latest(tel, ids, 0.5)
    out["start"] = start
    # Forward on both thrusters.
    push(thr, auv_id, 60, 60, 0, 0)
    fwd = latest(tel, ids, 3.0)
    out["forward"] = fwd
    # -127 keeps left and right; vertical up.
    push(thr, auv_id, -127, -127, -127, 80)
    up = latest(tel, ids, 3.0)
    out["up"] = up
    # Stop everything, then a left/right differential.
    push(thr, auv_id, 0, 0, 0, 0)
    still = latest(tel, ids, 3.0)
    out["still"] = still
    push(thr, auv_id, -60, 60, 0, 0)
    turned = latest(tel, ids, 2.0)
    out["turned"] = turned
    push(thr, auv_id, 0, 0, 0, 0)
    out["ids"] = sorted(ids)
    print(json.dumps(out), flush=True)


def ridge(auv_id, base, seconds):
    ctx = zmq.Context()
    tel = telemetry_socket(ctx, base, auv_id)
    thr = thruster_socket(ctx, base)
    # As the document's image example.
    socket = ctx.socket(zmq.SUB)
    socket.connect(f"tcp://localhost:{base}")
    socket.subscribe(bytes([auv_id]))  # filter for AUV with ID=auv_id
    ids, images = set(), []
    x = latest(tel, ids, 0.5)[0]
    push(thr, auv_id, 100, 100, 0, 0)
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)
    poller.register(tel, zmq.POLLIN)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready = dict(poller.poll(200))
        if tel in ready:
            x = recv_telemetry(tel, ids)[0]
        if socket in ready:
            _auv_id, msg_front, msg_bottom = socket.recv_multipart(0)
            ids.add(_auv_id[0])
            data_front = np.frombuffer(msg_front, np.uint8)
            data_bottom = np.frombuffer(msg_bottom, np.uint8)
            img_front = cv.imdecode(data_front, cv.IMREAD_COLOR)
            img_bottom = cv.imdecode(data_bottom, cv.IMREAD_COLOR)
            images.append({
                "x": x,
                "front_shape": list(img_front.shape),
                "bottom_shape": list(img_bottom.shape),
                "front_mean": float(img_front.mean()),
                "bottom_mean": float(img_bottom.mean()),
                "bottom_std": float(img_bottom.std()),
            })
    push(thr, auv_id, 0, 0, 0, 0)
    print(json.dumps({"ids": sorted(ids), "images": images}), flush=True)


def garbage(base):
    ctx = zmq.Context()
    thr = thruster_socket(ctx, base)
    frames = [
        b"\x00\x01\x02\x03",              # 4 bytes
        b"\x00\x01\x02\x03\x04\x05",      # 6 bytes
        struct.pack("Bbbbb", 9, 10, 10, 0, 0),   # no AUV 9
        struct.pack("Bbbbb", 0, 101, 0, 0, 0),   # power out of range
        struct.pack("Bbbbb", 0, 0, 0, 0, -128),  # -128 is neither a power nor -127
        b"",
    ]
    for _ in range(5):
        for f in frames:
            thr.send(f)
        thr.send_multipart([b"\x00", b"\x00\x00\x00\x00"])  # two parts
        time.sleep(0.2)
    time.sleep(0.5)
    print(json.dumps({"sent": 5 * (len(frames) + 1)}), flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "motion":
        motion(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "ridge":
        ridge(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "drive":
        ctx = zmq.Context()
        thr = thruster_socket(ctx, int(sys.argv[3]))
        push(thr, int(sys.argv[2]), *(int(a) for a in sys.argv[4:8]))
        time.sleep(0.5)  # let the frame out before the socket closes
        print(json.dumps({"sent": 1}), flush=True)
    else:
        garbage(int(sys.argv[2]))
