#!/usr/bin/env python3
"""Home Assistant's dashboard showing a generated HomeFlow home, as a PNG.

    scripts/screenshot.py [-o PNG] [--area NAME] [--seed 7] [--type house] [--city Oslo] ...

starts a server with a generated home as scripts/hass_server.py does, opens the default dashboard
(Overview), or an area's page, in headless chromium logged in as the owner, waits until it shows
every area of the home (or the area's name) and has stopped changing, and captures it. The
pictures in docs/ were made with

    scripts/screenshot.py --type house --city Oslo --name "Oslo house" -o docs/dashboard.png
    scripts/screenshot.py --type house --city Oslo --name "Oslo house" --area "Living Room" \
        -o docs/dashboard_room.png

It needs Debian's chromium, which it does not install: `apt-get install -y chromium`. Chromium
runs with --headless --no-sandbox --disable-gpu --disable-background-networking
--disable-component-update and is driven over its DevTools pipe (--remote-debugging-pipe), so it
listens on no port (chromedriver, from chromium-driver, would: on [::1] as well as 127.0.0.1).
It logs in as the frontend itself does: the owner's tokens in localStorage `hassTokens`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hass_server import HassError, HassServer, Tokens, add_home_arguments, start_home

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-proxy-server",
    "--hide-scrollbars",
)
RENDER_TIMEOUT = 60.0

# The text on the page, through open shadow roots (the frontend is all web components).
PAGE_TEXT = """(() => {
  const parts = [];
  const walk = (root) => {
    for (const node of root.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) parts.push(node.textContent);
      if (node.nodeName === "SCRIPT" || node.nodeName === "STYLE") continue;
      if (node.shadowRoot) walk(node.shadowRoot);
      walk(node);
    }
  };
  walk(document);
  return parts.join(" ");
})()"""


class Chromium:
    """Headless chromium driven over its DevTools pipe: commands on fd 3, answers on fd 4."""

    def __init__(self, executable: str, profile: str, width: int, height: int) -> None:
        to_browser, self._send = os.pipe()
        self._receive, from_browser = os.pipe()
        # The browser's ends, moved to 10 and up so that they cannot be 3 or 4, where bash then
        # puts them for chromium (subprocess only places stdin, stdout and stderr).
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
        os.close(to_browser)
        os.close(from_browser)
        place = f'exec "$0" "$@" 3<&{ends[0]} 4>&{ends[1]} {ends[0]}<&- {ends[1]}>&-'
        flags = [f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"]
        self.process = subprocess.Popen(
            ["bash", "-c", place, executable, *CHROMIUM_FLAGS, *flags],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=ends,
        )
        for fd in ends:
            os.close(fd)
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(HassError, OSError):
            self.call("Browser.close", timeout=5.0)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._send)
        os.close(self._receive)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Send one DevTools command and wait for its result (events in between are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        payload = json.dumps(message).encode() + b"\0"
        while payload:
            payload = payload[os.write(self._send, payload) :]
        deadline = time.monotonic() + timeout
        while (answer := self._read(deadline, method)).get("id") != self._next_id:
            pass
        if "error" in answer:
            raise HassError(f"DevTools {method} failed: {answer['error']}")
        result: dict[str, Any] = answer["result"]
        return result

    def _read(self, deadline: float, method: str) -> dict[str, Any]:
        """The next message from the browser."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._receive], [], [], left)[0]:
                raise HassError(f"chromium did not answer {method}")
            chunk = os.read(self._receive, 1 << 20)
            if not chunk:
                raise HassError(f"chromium exited (code {self.process.poll()}) during {method}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def open_page(self, width: int, height: int) -> str:
        """A new tab of width x height CSS pixels; its DevTools session id."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attach = {"targetId": target, "flatten": True}
        session: str = self.call("Target.attachToTarget", attach)["sessionId"]
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=session)
        return session

    def page_text(self, session: str) -> str:
        """Every text on the page, shadow DOM included."""
        evaluate = {"expression": PAGE_TEXT, "returnByValue": True}
        result = self.call("Runtime.evaluate", evaluate, session=session)["result"]
        return str(result.get("value") or "")


def capture_dashboard(
    server: HassServer,
    tokens: Tokens,
    path: Path,
    expect: list[str],
    size: tuple[int, int] = (1400, 1000),
    page_path: str = "/",
) -> None:
    """Open `page_path` (the default dashboard) logged in with `tokens`; once it shows every name
    in `expect` and has stopped changing, write a PNG of it to `path`."""
    width, height = size
    executable = shutil.which("chromium")
    if executable is None:
        raise HassError("no chromium on PATH; install it with: apt-get install -y chromium")
    stored = {
        "hassUrl": server.url,
        "clientId": server.client_id,
        "access_token": tokens.access_token,
        "refresh_token": tokens.refresh_token,
        "token_type": "Bearer",
        "expires_in": tokens.expires_in,
        "expires": int(time.time() * 1000) + tokens.expires_in * 1000,
    }
    login = {"source": f"localStorage.setItem('hassTokens', {json.dumps(json.dumps(stored))});"}
    with (
        tempfile.TemporaryDirectory(prefix="homeflow-chromium-") as profile,
        Chromium(executable, profile, width, height) as browser,
    ):
        page = browser.open_page(width, height)
        browser.call("Page.enable", session=page)
        browser.call("Page.addScriptToEvaluateOnNewDocument", login, session=page)
        browser.call("Page.navigate", {"url": server.url + page_path}, session=page)
        deadline = time.monotonic() + RENDER_TIMEOUT
        before = None
        while True:
            text = browser.page_text(page).lower()
            missing = [name for name in expect if name.lower() not in text]
            if not missing and text == before:
                break
            if time.monotonic() > deadline:
                raise HassError(f"the dashboard did not show {missing} in {RENDER_TIMEOUT:.0f} s")
            before = text
            time.sleep(1.0)
        time.sleep(1.0)  # icons and fonts
        png = browser.call("Page.captureScreenshot", {"format": "png"}, session=page)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(png["data"]))


def main(argv: list[str] | None = None) -> int:
    """Start a server with a home, capture its dashboard, stop the server."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-o", "--output", type=Path, default=Path("docs/dashboard.png"))
    parser.add_argument("--window", type=int, nargs=2, default=[1400, 1000], metavar=("W", "H"))
    parser.add_argument("--area", help="capture this area's page instead of the Overview")
    add_home_arguments(parser)
    args = parser.parse_args(argv)
    try:
        with HassServer(args.password, browser_port=args.port) as server:
            tokens = start_home(server, args)
            size = (args.window[0], args.window[1])
            if args.area:
                template = {"template": f"{{{{ area_id({json.dumps(args.area)}) }}}}"}
                area_id = server.call("POST", "/api/template", template, token=tokens.access_token)
                if not area_id:
                    raise HassError(f"no area named {args.area!r}")
                page, expect = f"/home/areas-{area_id}", [args.area]
            else:
                page, expect = "/", server.home_areas(tokens.access_token)
            capture_dashboard(server, tokens, args.output, expect, size, page)
    except HassError as err:
        print(f"screenshot: {err}", file=sys.stderr)
        return 1
    print(f"dashboard captured to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
