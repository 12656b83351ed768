"""Headless Chromium driven over the DevTools protocol, for the playground's browser tests.

``chromium --dump-dom`` with ``--virtual-time-budget`` dumps the page before a Web Worker's
answer arrives (virtual time does not wait for workers), so the tests open the page in a
headless Chromium with ``--remote-debugging-port`` and ask it, over the protocol's WebSocket,
to evaluate expressions until the page says it is done. The WebSocket client is the few lines
of RFC 6455 a local, trusted peer needs (text frames, masking, fragments), so the tests need
no package beyond the standard library.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from typing import Any


class WebSocket:
    """A blocking WebSocket client for ``ws://host:port/path`` (text messages only)."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        host, port, path = re.match(r"ws://([^:/]+):(\d+)(/.*)", url).groups()
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           ).encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.sock.recv(4096)
        if b" 101 " not in response.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"no WebSocket at {url}: {response[:200]!r}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def send(self, text: str) -> None:
        payload = text.encode()
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 1 << 16 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the browser closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def recv(self) -> str:
        parts = []
        while True:
            first, second = self._read(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            if first & 0x0F in (0x1, 0x0):
                parts.append(payload)
                if first & 0x80:
                    return b"".join(parts).decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium page: ``goto``, ``evaluate``, ``wait_for``, ``screenshot``."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        assert chromium, "the browser tests need Chromium: apt-get install -y chromium"
        # (Chromium may still write its profile while it exits: cleanup errors are not test failures.)
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = found and found.group(1)
        assert port, "Chromium did not start its DevTools server"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as response:
            page = next(t for t in json.load(response) if t["type"] == "page")
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 60.0) -> float:
        """Poll ``expression`` until it is truthy; returns the slowest single poll's seconds
        (how long the page's main thread kept the browser waiting)."""
        deadline = time.monotonic() + timeout
        slowest = 0.0
        while True:
            start = time.monotonic()
            value = self.evaluate(expression)
            slowest = max(slowest, time.monotonic() - start)
            if value:
                return slowest
            assert time.monotonic() < deadline, f"timed out waiting for {expression}"
            time.sleep(0.05)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        self.ws.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        self.profile.cleanup()
