"""Headless Chromium driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`).

Why the protocol and not `--dump-dom`: the tests need to *interact* (pick a filter, search)
and then read the DOM, to see every request the page attempts (`Network.requestWillBeSent`)
and every Content-Security-Policy violation, to set a phone-sized viewport, and to take
screenshots; `--dump-dom` can only print the DOM once after load. Why a pipe and not a port:
nothing listens anywhere (no socket is opened), and no websocket library is needed. Messages
are JSON, each ended by a NUL byte: we write commands to the browser's fd 3 and read replies
and events from its fd 4.

Used by tests/integration/test_publish_browser.py and bench/bench_publish.py; `chromium_path()` is None
when no browser is installed (scripts/test.sh provisions Debian's `chromium`).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

# Injected before any page script (DevTools-injected scripts are not subject to the page's
# CSP): records every CSP violation the page causes.
_VIOLATIONS = (
    "window.__violations=[];document.addEventListener('securitypolicyviolation',"
    "function(e){window.__violations.push(e.violatedDirective+' '+e.blockedURI);});"
)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, timeout_s: float = 60.0) -> None:
        binary = chromium_path()
        if binary is None:
            raise RuntimeError("chromium is not installed: scripts/test.sh installs Debian's `chromium`")
        self.timeout_s = timeout_s
        self._profile = tempfile.mkdtemp(prefix="compare-tui-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--mute-audio",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-sync",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
            "about:blank",
        ]

        def fds() -> None:
            # Copied above 10 first, so that placing one on 3 or 4 cannot overwrite the other.
            read_end = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        # preexec_fn: only this test helper's own thread starts the browser.
        self._process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds,  # noqa: PLW1509
            close_fds=False,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")
        self.call("Page.addScriptToEvaluateOnNewDocument", {"source": _VIOLATIONS})

    # ------------------------------------------------------------------ protocol

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe (did it start?)")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command to the page."""
        return self.send(method, params, self._session)

    def wait_for(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        seen = len(self.events)
        while True:
            for message in self.events[seen:]:
                if message.get("method") == event:
                    return message
            seen = len(self.events)
            self.events.append(self._read_message(deadline))

    # ------------------------------------------------------------------ what tests use

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    def open(self, url: str) -> float:
        """Navigate and wait for the `load` event; returns seconds from navigate to load."""
        self.events.clear()
        started = time.perf_counter()
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")
        return time.perf_counter() - started

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def requests(self) -> list[str]:
        """Every URL the page asked for since `open` (the page itself included)."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ink_share(browser: Browser, png: bytes) -> float:
    """Share of a screenshot's pixels that differ from its top-left pixel (the background): 0 for
    a blank shot. Decoded by the browser itself (a canvas on about:blank), so no image library
    is needed. Leaves the browser on about:blank."""
    browser.open("about:blank")
    source = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return float(
        browser.evaluate(
            "new Promise(function(done){var img=new Image();img.onload=function(){"
            "var c=document.createElement('canvas');c.width=img.width;c.height=img.height;"
            "var g=c.getContext('2d');g.drawImage(img,0,0);var d=g.getImageData(0,0,c.width,c.height).data;"
            "var n=0;for(var i=0;i<d.length;i+=4){if(d[i]!==d[0]||d[i+1]!==d[1]||d[i+2]!==d[2])n++;}"
            f"done(n/(c.width*c.height));}};img.src={json.dumps(source)};}})"
        )
    )


def save(data: bytes, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
