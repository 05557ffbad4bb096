"""A Foxglove WebSocket protocol client (subprotocol foxglove.websocket.v1) on `websockets`.

    ws_client.py URL --topics T1,T2,... [--seconds S] [--stall-after S --stall-for S]
                 [--recv-buffer BYTES] [--connect-timeout S] [--cafile PEM]

Connects to URL (ws://HOST:PORT, or ws://HOST:PORT/?token=TOKEN; wss:// over TLS, trusting
the certificates of --cafile, or the system's), retrying until
--connect-timeout (default 20 s) while nothing listens yet; reads `serverInfo` and the
advertisements, and subscribes to each named topic once it is advertised. Prints to stdout one
JSON line per message received,

    {"topic": ..., "log_time_ns": ..., "message": <the payload, decoded JSON>}

and one per time message, {"time_ns": ...}. With --stall-after A --stall-for B it stops reading
the socket B seconds long, A seconds after connecting (a slow viewer: the server's sends back up
into the socket); --recv-buffer sets the socket's receive buffer (SO_RCVBUF) before it
connects, so that little is taken off the server while stalling. It stops after --seconds (closing the connection), or when the server closes.

Exit status: 0 when the server closed the connection or --seconds ran out, and every topic
named was advertised; 1 on a protocol error (a binary frame cut short, a message on an unknown
subscription, a payload that is not JSON, text that is not a known op), a connection lost
without a close, or topics never advertised; 2 when no connection could be made. Errors go to
stderr and name the frame (its opcode and length) or the topic.
"""
import argparse
import asyncio
import json
import socket
import ssl
import struct
import sys
import time
import urllib.parse

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidStatus

SUBPROTOCOL = "foxglove.websocket.v1"
OP_MESSAGE_DATA = 0x01
OP_TIME = 0x02
# Largest message taken from the server (the terrain mesh is the largest, a few MB).
MAX_MESSAGE = 256 << 20


class ProtocolError(Exception):
    pass


def log(text):
    print(f"ws_client: {text}", file=sys.stderr, flush=True)


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Client:
    def __init__(self, topics):
        self.wanted = list(topics)
        self.channels = {}  # channel id -> advertised channel
        self.subscriptions = {}  # subscription id -> topic
        self.subscribed = set()  # topics subscribed
        self.next_subscription = 1
        self.server_info = None

    def text(self, data):
        """A text (JSON) message; returns the subscribe message to send, if any."""
        try:
            op = json.loads(data)
        except ValueError as e:
            raise ProtocolError(f"text message is not JSON ({e}): {data[:80]!r}")
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise ProtocolError(f"text message without an op: {data[:80]!r}")
        kind = op["op"]
        if kind == "serverInfo":
            self.server_info = op
            log(f"server {op.get('name')!r}, capabilities {op.get('capabilities')}")
        elif kind == "advertise":
            for ch in op.get("channels", []):
                try:
                    self.channels[int(ch["id"])] = ch
                except (KeyError, TypeError, ValueError):
                    raise ProtocolError(f"advertise: a channel without an id: {ch!r:.120}")
        elif kind == "unadvertise":
            for cid in op.get("channelIds", []):
                ch = self.channels.pop(cid, None)
                if ch is not None:
                    log(f"channel {cid} ({ch.get('topic')}) unadvertised")
        elif kind == "status":
            log(f"status (level {op.get('level')}): {op.get('message')}")
        elif kind in ("removeStatus", "parameterValues", "advertiseServices",
                      "unadvertiseServices", "connectionGraphUpdate", "serviceCallFailure"):
            pass
        else:
            raise ProtocolError(f"unknown text op {kind!r}")
        return self.subscribe_new()

    def subscribe_new(self):
        subs = []
        for cid, ch in sorted(self.channels.items()):
            topic = ch.get("topic")
            if topic in self.wanted and topic not in self.subscribed:
                sid = self.next_subscription
                self.next_subscription += 1
                self.subscriptions[sid] = topic
                self.subscribed.add(topic)
                subs.append({"id": sid, "channelId": cid})
                log(f"subscribing to {topic} (channel {cid}, {ch.get('schemaName')})")
        if not subs:
            return None
        return json.dumps({"op": "subscribe", "subscriptions": subs})

    def binary(self, data):
        if len(data) < 1:
            raise ProtocolError("empty binary frame")
        op = data[0]
        if op == OP_MESSAGE_DATA:
            if len(data) < 13:
                raise ProtocolError(
                    f"binary frame cut short: opcode 0x01 (message data) needs 13 header "
                    f"bytes (opcode, u32 subscription, u64 log time), the frame has {len(data)}"
                )
            sid, t_ns = struct.unpack_from("<IQ", data, 1)
            topic = self.subscriptions.get(sid)
            if topic is None:
                raise ProtocolError(f"message data on subscription {sid}, which this client never made")
            try:
                message = json.loads(data[13:])
            except ValueError as e:
                raise ProtocolError(
                    f"{topic} message at {t_ns} ns: payload of {len(data) - 13} bytes is not JSON ({e})"
                )
            emit({"topic": topic, "log_time_ns": t_ns, "message": message})
        elif op == OP_TIME:
            if len(data) < 9:
                raise ProtocolError(
                    f"binary frame cut short: opcode 0x02 (time) needs 9 bytes "
                    f"(opcode, u64 time), the frame has {len(data)}"
                )
            (t_ns,) = struct.unpack_from("<Q", data, 1)
            emit({"time_ns": t_ns})
        else:
            log(f"binary frame with unknown opcode 0x{op:02x} ({len(data)} bytes) skipped")


def small_socket(url, recv_buffer):
    """A socket connected to the URL's host and port with a receive buffer of `recv_buffer`."""
    u = urllib.parse.urlsplit(url)
    s = socket.socket(socket.AF_INET6 if ":" in (u.hostname or "") else socket.AF_INET)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, recv_buffer)
        s.settimeout(2)
        s.connect((u.hostname, u.port or 80))
        s.setblocking(False)
    except OSError:
        s.close()
        raise
    return s


async def open_connection(url, timeout, max_queue, recv_buffer, cafile=None):
    deadline = time.monotonic() + timeout
    tls = {"ssl": ssl.create_default_context(cafile=cafile)} if url.startswith("wss://") else {}
    while True:
        try:
            extra = {"sock": small_socket(url, recv_buffer)} if recv_buffer else {}
            return await connect(
                url,
                **extra,
                **tls,
                subprotocols=[SUBPROTOCOL],
                max_size=MAX_MESSAGE,
                max_queue=max_queue,
                ping_interval=None,
                compression=None,
                proxy=None,
                open_timeout=max(1.0, timeout),
            )
        except InvalidStatus as e:
            # The server answered and refused: no point retrying.
            body = e.response.body.decode(errors="replace") if e.response.body else ""
            log(f"{url}: refused with HTTP {e.response.status_code}: {body}")
            sys.exit(2)
        except ssl.SSLError as e:
            log(f"{url}: TLS refused: {e}")
            sys.exit(2)
        except (OSError, asyncio.TimeoutError) as e:
            if time.monotonic() >= deadline:
                log(f"{url}: no connection within {timeout} s: {e}")
                sys.exit(2)
            await asyncio.sleep(0.1)


async def run(args):
    topics = [t for t in args.topics.split(",") if t]
    client = Client(topics)
    # While stalling, the library must not read ahead on its own: a small queue pauses its
    # reading from the socket once full.
    ws = await open_connection(
        args.url, args.connect_timeout, 2 if args.stall_for else 16, args.recv_buffer, args.cafile
    )
    if ws.subprotocol != SUBPROTOCOL:
        log(f"the server chose subprotocol {ws.subprotocol!r}, not {SUBPROTOCOL}")
        await ws.close()
        return 1
    log(f"connected to {args.url}")
    started = time.monotonic()
    end = started + args.seconds if args.seconds is not None else None
    stall_at = started + args.stall_after if args.stall_for else None
    code = 0
    try:
        while True:
            now = time.monotonic()
            if stall_at is not None and now >= stall_at:
                log(f"stalling: not reading for {args.stall_for} s")
                await asyncio.sleep(args.stall_for)
                log("reading again")
                stall_at = None
                continue
            wait = None
            for t in (end, stall_at):
                if t is not None:
                    wait = t - now if wait is None else min(wait, t - now)
            if end is not None and now >= end:
                log(f"{args.seconds} s over: closing")
                await ws.close()
                break
            try:
                data = await asyncio.wait_for(ws.recv(), timeout=wait) if wait is not None else await ws.recv()
            except asyncio.TimeoutError:
                continue
            if isinstance(data, str):
                reply = client.text(data)
                if reply:
                    await ws.send(reply)
            else:
                client.binary(data)
    except ConnectionClosedOK as e:
        log(f"the server closed the connection ({describe(e)})")
    except ConnectionClosed as e:
        if e.rcvd is None:
            log(f"the connection was lost without a close ({describe(e)})")
            code = 1
        else:
            log(f"the server closed the connection ({describe(e)})")
    except ProtocolError as e:
        log(f"protocol error: {e}")
        await ws.close(1002, "protocol error")
        return 1
    if client.server_info is None:
        log("no serverInfo was received")
        code = 1
    missing = [t for t in topics if t not in client.subscribed]
    if missing:
        log(f"never advertised: {', '.join(missing)}")
        code = 1
    return code


def describe(e):
    frame = e.rcvd
    if frame is None:
        return "no close frame"
    return f"code {frame.code}" + (f", {frame.reason}" if frame.reason else "")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("url")
    p.add_argument("--topics", required=True, help="comma-separated topics to subscribe to")
    p.add_argument("--seconds", type=float, help="stop after this long (default: until the server closes)")
    p.add_argument("--stall-after", type=float, default=0.0, metavar="S")
    p.add_argument("--stall-for", type=float, default=0.0, metavar="S")
    p.add_argument("--recv-buffer", type=int, default=0, metavar="BYTES",
                   help="the socket's receive buffer (default: the system's)")
    p.add_argument("--connect-timeout", type=float, default=20.0, metavar="S")
    p.add_argument("--cafile", metavar="PEM", help="certificates to trust for wss:// (default: the system's)")
    args = p.parse_args()
    if args.stall_for < 0 or args.stall_after < 0 or (args.seconds is not None and args.seconds <= 0):
        p.error("--seconds must be > 0, --stall-after and --stall-for >= 0")
    if args.recv_buffer < 0:
        p.error("--recv-buffer must be >= 0")
    try:
        sys.exit(asyncio.run(run(args)))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
