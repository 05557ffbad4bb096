"""Opens a run record in Foxglove Studio, in headless Chromium, and checks that it loads and
that its 3D panel draws.

    studio_check.py RECORD --layout LAYOUT.json --screenshot OUT.png [--seconds S]

Foxglove Studio is npm @foxglove/studio-base (its last open-source release, a built web app
bundle) with React 17, in <repo>/.npm-test (`scripts/setup --test`); tests/viewer/studio.html
starts it with the record as a remote file (served here over HTTP with byte ranges, on
loopback) and LAYOUT as its layout. Chromium is driven over its DevTools protocol (on
loopback, with `websockets`); WebGL runs on SwiftShader.

Fails (status 1), naming each, when: the player reports a problem (a channel it cannot read),
the page throws, the topics never appear within --seconds (default 90), or the 3D panel's
canvas stays blank (fewer than 5 % of its pixels differ from its background). Prints the
problems, the topics seen, and the share of the 3D panel drawn; saves a screenshot.
"""
import argparse
import asyncio
import base64
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import cv2
import numpy as np
from websockets.asyncio.client import connect

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_MODULES = os.path.join(REPO, ".npm-test", "node_modules")


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with `Range: bytes=A-B` (the remote MCAP reader asks for ranges)."""

    def send_head(self):
        path = self.translate_path(self.path)
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if not m or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        start = int(m.group(1))
        end = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
        if start > end:
            self.send_error(416)
            return None
        f = open(path, "rb")
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self.left = end - start + 1
        return f

    def copyfile(self, source, dest):
        left = getattr(self, "left", None)
        if left is None:
            return super().copyfile(source, dest)
        while left > 0:
            chunk = source.read(min(left, 1 << 16))
            if not chunk:
                break
            dest.write(chunk)
            left -= len(chunk)

    def end_headers(self):
        self.send_header("Accept-Ranges", "bytes")
        super().end_headers()

    def log_message(self, *args):
        pass


def fail(text):
    print(f"studio_check: {text}", file=sys.stderr, flush=True)
    sys.exit(1)


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.console = []
        self.exceptions = []

    async def call(self, method, **params):
        self.next_id += 1
        me = self.next_id
        await self.ws.send(json.dumps({"id": me, "method": method, "params": params}))
        while True:
            m = json.loads(await self.ws.recv())
            if m.get("id") == me:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            event = m.get("method")
            if event == "Runtime.consoleAPICalled":
                p = m["params"]
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
                self.console.append((p["type"], text))
            elif event == "Runtime.exceptionThrown":
                d = m["params"]["exceptionDetails"]
                self.exceptions.append(d.get("exception", {}).get("description") or d.get("text"))

    async def eval(self, expression):
        r = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return r.get("result", {}).get("value")


async def check(args, url, ws_url):
    async with connect(ws_url, max_size=64 << 20, proxy=None, ping_interval=None) as ws:
        page = Page(ws)
        await page.call("Runtime.enable")
        await page.call("Page.enable")
        await page.call("Page.navigate", url=url)
        deadline = time.monotonic() + args.seconds
        topics = []
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            text = await page.eval("document.body ? document.body.innerText : ''") or ""
            topics = sorted(set(re.findall(r"^(/\S+)\n(foxglove\.\w+)", text, re.M)))
            problems = [t for k, t in page.console if "Player problem" in t]
            if problems or page.exceptions:
                break
            if any(t == "/scene/terrain" for t, _ in topics):
                break
        # Give the 3D panel time to draw what it subscribed to.
        end = time.monotonic() + args.settle
        while time.monotonic() < end:
            await asyncio.sleep(0.5)
            await page.eval("1")
        rect = await page.eval(
            "(() => { const c = [...document.querySelectorAll('canvas')]"
            ".map(c => c.getBoundingClientRect()).sort((a, b) => b.width * b.height - a.width * a.height)[0];"
            " return c ? [c.x, c.y, c.width, c.height] : null })()"
        )
        shot = await page.call("Page.captureScreenshot", format="png")
        png = base64.b64decode(shot["data"])
        with open(args.screenshot, "wb") as f:
            f.write(png)
        return page, topics, rect, png


def drawn_share(png, rect):
    """Share of the canvas's pixels unlike its most common colour (the background)."""
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    x, y, w, h = (int(round(v)) for v in rect)
    part = img[max(y, 0):y + h, max(x, 0):x + w].reshape(-1, 3)
    if part.size == 0:
        return 0.0
    colours, counts = np.unique(part, axis=0, return_counts=True)
    background = colours[counts.argmax()].astype(int)
    differs = np.abs(part.astype(int) - background).sum(axis=1) > 30
    return float(differs.mean())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("record")
    p.add_argument("--layout", required=True)
    p.add_argument("--screenshot", required=True)
    p.add_argument("--seconds", type=float, default=90.0)
    p.add_argument("--settle", type=float, default=8.0, help=argparse.SUPPRESS)
    args = p.parse_args()
    record = os.path.join(args.record, "record.mcap") if os.path.isdir(args.record) else args.record
    for need in (record, args.layout, os.path.join(NODE_MODULES, "@foxglove/studio-base/assets/index.js"),
                 os.path.join(NODE_MODULES, "react/umd/react.production.min.js")):
        if not os.path.isfile(need):
            print(f"studio_check: {need} is missing (scripts/setup --test installs the viewer)", file=sys.stderr)
            sys.exit(2)
    chromium = shutil.which("chromium")
    if chromium is None:
        print("studio_check: chromium is missing (scripts/setup --test)", file=sys.stderr)
        sys.exit(2)

    site = tempfile.mkdtemp(prefix="studio-")
    profile = tempfile.mkdtemp(prefix="studio-profile-")
    browser = None
    server = None
    try:
        os.symlink(os.path.join(REPO, "tests/viewer/studio.html"), os.path.join(site, "index.html"))
        os.symlink(NODE_MODULES, os.path.join(site, "node_modules"))
        os.symlink(os.path.abspath(record), os.path.join(site, "record.mcap"))
        shutil.copy(args.layout, os.path.join(site, "layout.json"))
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(RangeHandler, directory=site))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        url = f"{base}/index.html?ds=remote-file&ds.url={base}/record.mcap"
        browser = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--enable-unsafe-swiftshader",
             "--use-angle=swiftshader", "--window-size=1400,900", "--no-first-run",
             f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if time.monotonic() > deadline or browser.poll() is not None:
                fail("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        import urllib.request
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        page, topics, rect, png = asyncio.run(check(args, url, ws_url))
    finally:
        if browser is not None:
            browser.kill()
            browser.wait()
        if server is not None:
            server.shutdown()
        shutil.rmtree(site, ignore_errors=True)
        shutil.rmtree(profile, ignore_errors=True)

    problems = [t for k, t in page.console if "Player problem" in t]
    errors = [t for k, t in page.console if k == "error" and "Player problem" not in t]
    for t, schema in topics:
        print(f"topic {t} {schema}")
    share = drawn_share(png, rect) if rect else 0.0
    print(f"3D panel: {100 * share:.1f} % drawn")
    bad = False
    seen = {}
    for t in problems:
        seen[t] = seen.get(t, 0) + 1
    for t, n in seen.items():
        print(f"problem{f' ({n} times)' if n > 1 else ''}: {t[:800]}", file=sys.stderr)
        bad = True
    for t in page.exceptions:
        print(f"exception: {t[:800]}", file=sys.stderr)
        bad = True
    for t in errors:
        print(f"console error: {t[:400]}", file=sys.stderr)
    if not any(t == "/scene/terrain" for t, _ in topics):
        print("studio_check: the topics never appeared (/scene/terrain missing)", file=sys.stderr)
        bad = True
    if rect is None:
        print("studio_check: no canvas (the 3D panel did not start)", file=sys.stderr)
        bad = True
    elif share < 0.05:
        print(f"studio_check: the 3D panel is blank ({100 * share:.1f} % drawn)", file=sys.stderr)
        bad = True
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
