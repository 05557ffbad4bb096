#!/usr/bin/env python3
"""An example AUV client: one vehicle's software, as it would talk to a real WHOI Micro-Modem and
to the netsim system's NETSIM manager. Python standard library only.

It integrates its own motion (a kinematic waypoint follower), reports its navigation to the
NETSIM manager (`NETSIM|netsim.protobuf.NetSimManagerRequest|<base64>` lines on TCP 61999, the
protobuf encoded by hand), and drives its modem over the NMEA host interface (TCP 62000+):
data cycles (`$CCCYC` → `$CADRQ` → `$CCTXD`, acknowledged by `$CAACK`) and two-way pings
(`$CCMPC` → `$CAMPR`). Everything it hears is logged; on SIGINT/SIGTERM it prints a summary line
`summary {...json...}` and exits 0.

    auv_client.py --name auv1 --modem 127.0.0.1:62000 --netsim 127.0.0.1:61999 \
        --origin 41.5265,-70.6731 --start -150,-80,10 --waypoints "150,-80,10 -150,-80,10" \
        --speed 1.5 --data-to 2 --data-every 12 --ping 3 --ping-every 15

Positions are local ENU metres from --origin (x east, y north), depth positive down. Time runs
at the co-simulation's pace: wall time × $COSIM_REAL_TIME_FACTOR (default 1).
"""
import argparse
import base64
import json
import math
import os
import selectors
import signal
import socket
import struct
import sys
import time

# WGS84: radii of curvature for the local-tangent conversion (exact enough over a few km).
A = 6378137.0
E2 = 6.69437999014e-3


def log(msg):
    print(f"{time.strftime('%H:%M:%S')} {msg}", flush=True)


# ---- the NETSIM manager's protobuf (proto2), by hand ----------------------------------------
def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def nav_update(port, t, lat, lon, depth, speed, heading):
    """NavUpdate: modem_tcp_port=1 (int32), time=2, lat=3, lon=4, depth=5, speed=6, heading=7 (double)."""
    m = b'\x08' + varint(port)
    for field, value in ((2, t), (3, lat), (4, lon), (5, depth), (6, speed), (7, heading)):
        m += bytes([field << 3 | 1]) + struct.pack('<d', value)
    return m


def request(req_id, nav):
    """NetSimManagerRequest: id=1 (int32), nav=2 (NavUpdate, repeated)."""
    return b'\x08' + varint(req_id) + b'\x12' + varint(len(nav)) + nav


def response(data):
    """NetSimManagerResponse → (request_id, status); None if it is not one."""
    fields, i = {}, 0
    try:
        while i < len(data):
            key, i = read_varint(data, i)
            if key & 7 != 0:
                return None
            fields[key >> 3], i = read_varint(data, i)
    except IndexError:
        return None
    return (fields.get(1), fields.get(2)) if 1 in fields and 2 in fields else None


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


STATUS = {1: 'accepted', 2: 'invalid modem tcp port', 3: 'invalid source address', 4: 'out of defined region'}


# ---- NMEA -----------------------------------------------------------------------------------
def sentence(body):
    c = 0
    for ch in body.encode():
        c ^= ch
    return f'${body}*{c:02X}\r\n'.encode()


def fields_of(line):
    line = line.strip()
    if not line.startswith('$'):
        return None
    return line[1:].split('*')[0].split(',')


# ---- the vehicle ----------------------------------------------------------------------------
class Vehicle:
    """Kinematic waypoint follower: cruise speed, heading turned at most `turn_rate` deg/s,
    depth changed at most 0.5 m/s; waypoints visited in order, looping."""

    def __init__(self, start, waypoints, speed, turn_rate=20.0):
        self.x, self.y, self.depth = start
        self.waypoints, self.speed, self.turn_rate = waypoints, speed, turn_rate
        self.next = 0
        wx, wy, _ = waypoints[0]
        self.heading = math.degrees(math.atan2(wx - self.x, wy - self.y)) % 360

    def step(self, dt):
        wx, wy, wd = self.waypoints[self.next]
        dx, dy = wx - self.x, wy - self.y
        if math.hypot(dx, dy) < max(2.0, self.speed * dt):
            self.next = (self.next + 1) % len(self.waypoints)
            wx, wy, wd = self.waypoints[self.next]
            dx, dy = wx - self.x, wy - self.y
        want = math.degrees(math.atan2(dx, dy)) % 360
        turn = (want - self.heading + 180) % 360 - 180
        limit = self.turn_rate * dt
        self.heading = (self.heading + max(-limit, min(limit, turn))) % 360
        h = math.radians(self.heading)
        self.x += self.speed * dt * math.sin(h)
        self.y += self.speed * dt * math.cos(h)
        self.depth += max(-0.5 * dt, min(0.5 * dt, wd - self.depth))

    def lat_lon(self, lat0, lon0):
        s = math.sin(math.radians(lat0))
        n = A / math.sqrt(1 - E2 * s * s)
        m = A * (1 - E2) / (1 - E2 * s * s) ** 1.5
        return lat0 + math.degrees(self.y / m), lon0 + math.degrees(self.x / (n * math.cos(math.radians(lat0))))


class LineConn:
    """A TCP connection read line by line (lines over 4 KiB are cut)."""

    def __init__(self, addr, name):
        host, port = addr.rsplit(':', 1)
        self.name, self.addr = name, (host, int(port))
        self.sock, self.buf = None, b''

    def connect(self, attempts=50):
        for _ in range(attempts):
            try:
                self.sock = socket.create_connection(self.addr, timeout=2)
                self.sock.setblocking(False)
                return True
            except OSError:
                time.sleep(0.1)
        log(f'{self.name}: cannot connect to {self.addr[0]}:{self.addr[1]}')
        return False

    def send(self, data):
        if self.sock:
            self.sock.setblocking(True)
            try:
                self.sock.sendall(data)
            finally:
                self.sock.setblocking(False)

    def lines(self):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return []
        if not data:
            raise ConnectionError(f'{self.name} closed the connection')
        self.buf += data
        *lines, self.buf = self.buf.replace(b'\r', b'\n').split(b'\n')
        self.buf = self.buf[-4096:]
        return [l.decode('ascii', 'replace') for l in lines if l]


def parse_points(text):
    return [tuple(float(v) for v in p.split(',')) for p in text.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--name', required=True)
    ap.add_argument('--modem', required=True, help='HOST:PORT of the modem (its NMEA interface)')
    ap.add_argument('--netsim', help='HOST:PORT of the NETSIM manager (omit: no nav reports)')
    ap.add_argument('--origin', required=True, help='LAT,LON of the local frame')
    ap.add_argument('--start', required=True, help='X,Y,DEPTH')
    ap.add_argument('--waypoints', required=True, help='"X,Y,DEPTH X,Y,DEPTH ..."')
    ap.add_argument('--speed', type=float, default=1.5)
    ap.add_argument('--nav-every', type=float, default=1.0, help='nav report period (s of sim time)')
    ap.add_argument('--data-to', type=int, help='acoustic address to send data packets to')
    ap.add_argument('--data-every', type=float, default=15.0)
    ap.add_argument('--rate', type=int, default=1, help='Micro-Modem packet rate 0-6')
    ap.add_argument('--ping', type=int, help='acoustic address to ping')
    ap.add_argument('--ping-every', type=float, default=20.0)
    ap.add_argument('--offset', type=float, default=2.0, help='sim seconds before the first data packet')
    ap.add_argument('--ping-offset', type=float, help='sim seconds before the first ping (default offset + data-every / 2)')
    a = ap.parse_args()

    rtf = float(os.environ.get('COSIM_REAL_TIME_FACTOR', '1') or 1) or 1.0
    lat0, lon0 = (float(v) for v in a.origin.split(','))
    port = int(a.modem.rsplit(':', 1)[1])
    vehicle = Vehicle(parse_points(a.start)[0], parse_points(a.waypoints), a.speed)
    stats = dict(vehicle=a.name, nav_sent=0, nav_accepted=0, nav_rejected=0, data_sent=0, data_acked=0,
                 frames_received=0, bad_frames=0, lost_in_collision=0, pings=0, ping_replies=0, modem_errors=0, ranges_m=[])

    modem = LineConn(a.modem, 'modem')
    if not modem.connect():
        return 1
    netsim = LineConn(a.netsim, 'NETSIM manager') if a.netsim else None
    if netsim and not netsim.connect():
        netsim = None
    sel = selectors.DefaultSelector()
    sel.register(modem.sock, selectors.EVENT_READ, modem)
    if netsim:
        sel.register(netsim.sock, selectors.EVENT_READ, netsim)

    stopping = []
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))

    modem.send(sentence('CCCFQ,SRC'))
    src = None
    t0 = time.monotonic()
    sim = lambda: (time.monotonic() - t0) * rtf
    last = 0.0
    next_nav, next_data = 0.0, a.offset
    next_ping = a.ping_offset if a.ping_offset is not None else a.offset + a.data_every / 2
    req_id, seq, pending_txd, ping_sent = 0, 0, None, None
    while not stopping:
        for key, _ in sel.select(timeout=0.05):
            conn = key.data
            try:
                lines = conn.lines()
            except (ConnectionError, OSError) as e:
                log(f'{e}; stopping')
                stopping.append(1)
                break
            for line in lines:
                if conn is netsim:
                    parts = line.split('|')
                    r = response(base64.b64decode(parts[2], validate=False)) if len(parts) == 3 else None
                    if r and r[1] == 1:
                        stats['nav_accepted'] += 1
                    else:
                        stats['nav_rejected'] += 1
                        log(f'netsim: {STATUS.get(r[1], r) if r else line}')
                    continue
                f = fields_of(line)
                if not f:
                    continue
                kind = f[0]
                if kind == 'CACFG' and len(f) >= 3 and f[1] == 'SRC':
                    src = int(f[2])
                    log(f'modem: acoustic address {src}')
                elif kind == 'CADRQ' and pending_txd and len(f) >= 7:
                    max_bytes = int(f[5])
                    payload = pending_txd[:max_bytes].ljust(max_bytes, b'.')
                    modem.send(sentence(f'CCTXD,{f[2]},{f[3]},{f[4]},{payload.hex()}'))
                elif kind == 'CATXF':
                    pending_txd = None
                elif kind == 'CAACK':
                    stats['data_acked'] += 1
                    log(f'modem: frame acknowledged by {f[1]}')
                elif kind == 'CARXD' and len(f) >= 6:
                    stats['frames_received'] += 1
                    text = bytes.fromhex(f[5]).rstrip(b'.').decode('ascii', 'replace')
                    log(f'modem: received from {f[1]}: {text!r}')
                elif kind == 'CAMSG' and len(f) >= 2:
                    stats['bad_frames' if f[1] == 'BAD_CRC' else 'lost_in_collision'] += 1
                    log(f'modem: {line.strip()}')
                elif kind == 'CAMPR' and len(f) >= 4:
                    owtt = float(f[3])
                    stats['ping_replies'] += 1
                    stats['ranges_m'].append(round(owtt * 1500.0, 1))
                    ping_sent = None
                    log(f'modem: ping reply from {f[1]}, one-way {owtt:.4f} s ≈ {owtt * 1500:.0f} m')
                elif kind == 'CAERR':
                    stats['modem_errors'] += 1
                    pending_txd = None
                    log(f'modem: {line.strip()}')
        now = sim()
        vehicle.step(now - last)
        last = now
        if netsim and now >= next_nav:
            next_nav += a.nav_every
            lat, lon = vehicle.lat_lon(lat0, lon0)
            req_id += 1
            body = request(req_id, nav_update(port, time.time(), lat, lon, vehicle.depth, vehicle.speed, vehicle.heading))
            netsim.send(b'NETSIM|netsim.protobuf.NetSimManagerRequest|' + base64.b64encode(body) + b'\n')
            stats['nav_sent'] += 1
        if src is None:
            continue
        if ping_sent is not None and now - ping_sent > 12.0:
            ping_sent = None
            log(f'modem: no reply to ping of {a.ping}')
        if a.data_to is not None and now >= next_data and pending_txd is None and ping_sent is None:
            next_data += a.data_every
            seq += 1
            pending_txd = f'{a.name} #{seq} at {vehicle.x:.0f},{vehicle.y:.0f}'.encode()
            modem.send(sentence(f'CCCYC,0,{src},{a.data_to},{a.rate},1,1'))
            stats['data_sent'] += 1
            log(f'modem: data #{seq} to {a.data_to}')
        elif a.ping is not None and now >= next_ping and pending_txd is None and ping_sent is None:
            next_ping += a.ping_every
            modem.send(sentence(f'CCMPC,{src},{a.ping}'))
            ping_sent = now
            stats['pings'] += 1
            log(f'modem: ping {a.ping}')
    print('summary ' + json.dumps(stats), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
