"""A page opened in headless Chromium and driven through its DevTools protocol.

The protocol runs over `--remote-debugging-pipe` (commands on the browser's descriptor 3, answers on
its descriptor 4, each message JSON ended by a NUL byte), so no port is opened and only the standard
library is needed. `Runtime.evaluate` runs outside the page's Content Security Policy, which is how a
test reads and drives a page whose policy lets no script of ours in.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

REQUIRE_CHROMIUM_ENV = "MLPERF_AUDIT_REQUIRE_CHROMIUM"


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get(REQUIRE_CHROMIUM_ENV):
            pytest.fail("Debian's chromium is required here (.ci/run installs it) but missing")
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    return path


class Page:
    """One page in a headless Chromium; every event the browser sent is kept in `events`."""

    def __init__(self, page: Path, profile: Path, width: int = 1400, height: int = 1000, timeout: float = 120) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def descriptors() -> None:  # the browser reads commands from 3 and writes answers to 4
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)

        self.process = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                f"--window-size={width},{height}",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=descriptors,  # noqa: PLW1509 (a test's single-threaded child)
            pass_fds=(3, 4),  # kept open once the child closes the others (after `descriptors`)
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": page.as_uri()})
        self.wait_for("Page.loadEventFired")

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            if not select.select([self._from_browser], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError("the browser did not answer")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._send(method, params, self.session)

    def wait_for(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, key: str, code: str, key_code: int, text: str = "", shift: bool = False) -> None:
        """A key pressed and released as a keyboard would (focus moves, buttons activate)."""
        common = {"key": key, "code": code, "windowsVirtualKeyCode": key_code, "modifiers": 8 if shift else 0}
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **common, **({"text": text} if text else {})})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **common})

    def errors(self) -> list[str]:
        """Every script error and every console or security error the page met."""
        self.evaluate("1")  # let pending events arrive
        found = []
        for event in self.events:
            if event.get("method") == "Runtime.exceptionThrown":
                found.append(json.dumps(event["params"]["exceptionDetails"])[:2000])
            elif event.get("method") == "Log.entryAdded" and event["params"]["entry"]["level"] == "error":
                found.append(event["params"]["entry"]["text"])
            elif event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] == "error":
                found.append(json.dumps(event["params"]["args"])[:2000])
        return found

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        import base64

        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
            params["captureBeyondViewport"] = True
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))

    def close(self) -> None:
        try:
            self._send("Browser.close")
        except (EOFError, OSError, TimeoutError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
