"""A minimal Foxglove WebSocket server for testing ws_client.py against what a real server
never sends (tests/offline/viewer.rs).

    fake_server.py PORT MODE

Listens on 127.0.0.1:PORT (printing "listening" once it does), takes one client, sends
serverInfo and an advertisement of the JSON channel /a (id 7), and after the client subscribes
sends a time message and one message on /a, then, by MODE:
  close   closes the connection normally;
  cut     sends message data cut short (opcode 0x01 and 5 bytes), then waits for the client to
          close.
Exits when the client is gone, or after 20 s.
"""
import asyncio
import json
import struct
import sys

from websockets.asyncio.server import serve

SUBPROTOCOL = "foxglove.websocket.v1"


async def handler(ws, mode, done):
    try:
        await ws.send(json.dumps({"op": "serverInfo", "name": "fake", "capabilities": ["time"],
                                  "supportedEncodings": [], "metadata": {}, "sessionId": "1"}))
        await ws.send(json.dumps({"op": "advertise", "channels": [
            {"id": 7, "topic": "/a", "encoding": "json", "schemaName": "A",
             "schema": "{}", "schemaEncoding": "jsonschema"}]}))
        sub = json.loads(await ws.recv())
        sid = sub["subscriptions"][0]["id"]
        await ws.send(struct.pack("<BQ", 0x02, 1_500_000_000))
        await ws.send(struct.pack("<BIQ", 0x01, sid, 2_000_000_000) + b'{"x": 1}')
        if mode == "close":
            await ws.close()
        else:
            await ws.send(struct.pack("<BI", 0x01, sid))
            await ws.wait_closed()
    finally:
        done.set()


async def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode not in ("close", "cut"):
        sys.exit(f"fake_server: unknown mode {mode}")
    done = asyncio.Event()
    async with serve(lambda ws: handler(ws, mode, done), "127.0.0.1", port,
                     subprotocols=[SUBPROTOCOL]):
        print("listening", flush=True)
        try:
            await asyncio.wait_for(done.wait(), 20)
        except asyncio.TimeoutError:
            sys.exit("fake_server: no client within 20 s")


asyncio.run(main())
