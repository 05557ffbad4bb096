"""One vehicle's DDS-like traffic for the scale benchmark (run inside its namespace as a
scenario program): a 100-byte multicast heartbeat to 239.255.0.1:7400 every 100 ms (as DDS's
SPDP announcements) and a 100-byte unicast datagram to a neighbour at 10 packets/s. Every
datagram carries its send time (CLOCK_REALTIME, ns); the receiver's one-way times in ms go to
$COSIM_OUT/traffic/<vehicle>.json when the run stops the program (SIGINT).

usage: traffic.py MY_ADDRESS NEIGHBOUR_ADDRESS
"""
import json
import os
import random
import select
import socket
import sys
import time

GROUP, PORT, SIZE, PERIOD_S = "239.255.0.1", 7400, 100, 0.1
MAX_SAMPLES = 20000


def main():
    me, neighbour = sys.argv[1], sys.argv[2]
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    rx.bind(("", PORT))
    rx.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                  socket.inet_aton(GROUP) + socket.inet_aton(me))
    rx.setblocking(False)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(me))
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    sent = received = 0
    delays = []
    start = time.monotonic()
    next_hb = start + random.uniform(0, PERIOD_S)
    next_uc = start + random.uniform(0, PERIOD_S)
    try:
        while True:
            now = time.monotonic()
            for kind, dest in (("H", (GROUP, PORT)), ("U", (neighbour, PORT))):
                due = next_hb if kind == "H" else next_uc
                if now >= due:
                    payload = f"{kind}{time.time_ns()}".encode().ljust(SIZE, b".")
                    try:
                        tx.sendto(payload, dest)
                        sent += 1
                    except OSError:
                        pass
                    if kind == "H":
                        next_hb += PERIOD_S
                    else:
                        next_uc += PERIOD_S
            wait = max(0.0, min(next_hb, next_uc) - time.monotonic())
            readable, _, _ = select.select([rx], [], [], wait)
            while readable:
                try:
                    data = rx.recv(2048)
                except BlockingIOError:
                    break
                t = time.time_ns()
                received += 1
                try:
                    one_way_ms = (t - int(data[1:].split(b".")[0])) / 1e6
                except ValueError:
                    continue
                if len(delays) < MAX_SAMPLES:
                    delays.append(one_way_ms)
    except KeyboardInterrupt:
        pass
    out = os.path.join(os.environ.get("COSIM_OUT", "."), "traffic")
    os.makedirs(out, exist_ok=True)
    name = os.environ.get("COSIM_VEHICLE", me)
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump({"sent": sent, "received": received, "one_way_ms": delays}, f)


if __name__ == "__main__":
    main()
