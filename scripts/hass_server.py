#!/usr/bin/env python3
"""A real Home Assistant server running HomeFlow, driven over its REST API as any client would.

    scripts/hass_server.py [--seed 7] [--type apartment] [--city Oslo] [--port N]
                           [--from-archive] [--without-homeflow]

starts `hass` in the Home Assistant environment (scripts/ha-env; `make setup` makes it) with a
throwaway config directory that links this repository's custom_components/homeflow (or, with
--from-archive, holds the release archive unzipped as the README's install says); onboards the
owner (username `homeflow`, password from --password) through /api/onboarding; logs in with the
auth code; creates a generated home through the config flow REST API; and serves it on
http://127.0.0.1:N until Ctrl-C, then stops every process it started. When Home Assistant
restarts itself (Settings → Restart: its exit code 100), it runs again on the same config
directory, as Home Assistant Container's supervisor does. Tokens stay in memory:
nothing prints or logs them. scripts/screenshot.py captures the dashboard of such a server;
tests/integration/test_real_server.py drives one.

Home Assistant gets a network namespace of its own, whose only interface is loopback: whatever it
opens (its HTTP server on 127.0.0.1, and the mDNS sockets on every interface that its HTTP client
brings along) is out of reach. Clients reach it through a bridge, an abstract unix socket that
the process running `hass` relays to its port; a browser, through a 127.0.0.1 port relayed to
the bridge. That takes root, or unprivileged user namespaces.

With --without-homeflow, `hass` runs on a copy of the environment whose site-packages lacks the
homeflow distribution (links to every other entry), with the safe path (-P) so that the working
directory (this repository) is not importable either: Home Assistant's Python has only what the
integration's folder carries, as on Home Assistant OS or Container.

Standard library only: runs in .venv's Python, in Home Assistant's, or in any python3 >= 3.11.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import http.client
import importlib.util
import json
import os
import secrets
import selectors
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.parse
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
HASS_PORT = 8123  # in the server's own network namespace, where nothing else listens
USERNAME = "homeflow"
DEFAULT_PASSWORD = "homeflow"  # the server is reachable from this machine only and is thrown away
START_TIMEOUT = 90.0  # seconds; a start takes a few
STOP_TIMEOUT = 20.0
HTTP_TIMEOUT = 30.0
# Offline: never install a requirement (a missing one fails that integration's setup, logged).
HASS_FLAGS = ("--skip-pip", "--log-no-color")
# The homeflow distribution's entries in site-packages: its metadata and its editable install's.
HOMEFLOW_ENTRIES = ("homeflow-", "__editable__.homeflow-", "__editable___homeflow_")
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1  # <linux/sockios.h>, <net/if.h>
IFREQ = "16sh22x"  # struct ifreq: the interface's name, then its flags


class HassError(RuntimeError):
    """The server did not start, answer or act as expected; the message says what it answered."""


class WebSocketClosedError(HassError):
    """Home Assistant closed the websocket (it stops, or it refused the connection)."""


@dataclass(frozen=True)
class Response:
    """An HTTP answer: status and decoded JSON (or text when it is not JSON)."""

    status: int
    data: Any


@dataclass(frozen=True)
class Tokens:
    """The owner's tokens from the auth-code login; kept out of reprs, so out of test reports."""

    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    expires_in: int


def _now() -> str:
    """The time now, as Home Assistant stores it."""
    return datetime.now(UTC).isoformat()


def connect_bridge(bridge: str, timeout: float = HTTP_TIMEOUT) -> socket.socket:
    """A connection to the server through its bridge (an abstract unix socket)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    try:
        connection.connect("\0" + bridge)
    except OSError:
        connection.close()
        raise
    return connection


def relay(client: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Copy bytes both ways between `client` and a new connection, until either side ends."""
    with client:
        try:
            upstream = connect()
        except OSError:
            return
        with upstream, selectors.DefaultSelector() as selector:
            client.settimeout(None)
            upstream.settimeout(None)
            selector.register(client, selectors.EVENT_READ, (client, upstream))
            selector.register(upstream, selectors.EVENT_READ, (upstream, client))
            while True:
                for key, _ in selector.select():
                    source, target = key.data
                    try:
                        data = source.recv(1 << 16)
                        if not data:
                            return
                        target.sendall(data)
                    except OSError:
                        return


def serve_relays(listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Relay every connection `listener` accepts, each in a thread, until it is closed."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=relay, args=(client, connect), daemon=True).start()


# --- inside the Home Assistant environment: the server itself ----------------------------------


def isolate_network() -> None:
    """Move this process into a new network namespace and bring its loopback up (root may;
    others go through a user namespace that maps them to root, as `unshare -rn` does)."""
    uid, gid = os.getuid(), os.getgid()
    try:
        os.unshare(os.CLONE_NEWNET)
    except PermissionError:
        os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNET)
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
        Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        flags = struct.unpack(IFREQ, fcntl.ioctl(probe, SIOCGIFFLAGS, struct.pack(IFREQ, b"lo", 0)))
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", flags[1] | IFF_UP))


def install_integration(custom_components: Path, from_archive: bool) -> None:
    """The integration, as a user installs it: the release archive unzipped into
    custom_components/homeflow (what HACS does with a zip release), or a link to this
    repository's folder."""
    target = custom_components / "homeflow"
    if not from_archive:
        target.symlink_to(REPO / "custom_components" / "homeflow")
        return
    archive = custom_components.parent / "homeflow.zip"
    release = [sys.executable, str(REPO / "scripts" / "release.py"), "archive", str(archive)]
    subprocess.run(release, check=True, stdout=subprocess.DEVNULL)
    with zipfile.ZipFile(archive) as files:
        files.extractall(target)
    archive.unlink()


def python_without_homeflow(root: Path) -> str:
    """A venv at `root` whose site-packages links every entry of this one's but homeflow's (its
    dist-info and its editable install's hook): its interpreter."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(root)], check=True)
    paths = {"base": str(root), "platbase": str(root)}
    site_packages = Path(sysconfig.get_path("purelib", vars=paths))
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        if not entry.name.startswith(HOMEFLOW_ENTRIES):
            (site_packages / entry.name).symlink_to(entry)
    return str(root / "bin" / "python")


def write_config(config_dir: Path, from_archive: bool = False) -> None:
    """A minimal configuration (the API, config flows, the frontend, Assist's conversation
    API), HTTP on 127.0.0.1.

    default_config is left out: it pulls integrations whose packages the environment lacks. Home
    Assistant keeps HTTP settings in storage: YAML ones would be migrated as a trial that reverts
    to all interfaces unless confirmed within five minutes, so they are written to storage as the
    confirmed ("stable") settings instead."""
    from homeassistant.components.http import config as http  # only in the HA environment

    (config_dir / "configuration.yaml").write_text("api:\nconfig:\nfrontend:\nconversation:\n")
    (config_dir / "custom_components").mkdir()
    install_integration(config_dir / "custom_components", from_archive)
    settings = http.HTTP_STORAGE_SCHEMA({"server_host": ["127.0.0.1"], "server_port": HASS_PORT})
    stable = {**settings, "created_at": _now(), "error": None, "error_message": None}
    storage = {
        "version": http.STORAGE_VERSION,
        "minor_version": http.STORAGE_MINOR_VERSION,
        "key": http.STORAGE_KEY,
        "data": {"stable": stable, "pending": None, "yaml_migration_done": True},
    }
    (config_dir / ".storage").mkdir()
    (config_dir / ".storage" / http.STORAGE_KEY).write_text(json.dumps(storage))


def run_hass(bridge: str, from_archive: bool = False, without_homeflow: bool = False) -> int:
    """Run `hass` in a network namespace of its own on a throwaway config directory, relaying
    the bridge to it, until it exits or is told to stop; clean up."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # until hass runs: clean up, leave
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + bridge)  # in the caller's namespace, before leaving it
    listener.listen()
    try:
        isolate_network()
    except OSError as err:
        print(
            f"cannot give Home Assistant a network namespace of its own: {err}; "
            "run as root, or enable unprivileged user namespaces",
            file=sys.stderr,
        )
        return 3
    upstream = ("127.0.0.1", HASS_PORT)
    threading.Thread(
        target=serve_relays,
        args=(listener, lambda: socket.create_connection(upstream)),
        daemon=True,
    ).start()
    with (
        tempfile.TemporaryDirectory(prefix="homeflow-hass-") as config,
        tempfile.TemporaryDirectory(prefix="homeflow-python-") as python_root,
    ):
        write_config(Path(config), from_archive)
        python = [sys.executable]
        if without_homeflow:
            python = [python_without_homeflow(Path(python_root)), "-P"]
        return supervise([*python, "-m", "homeassistant", "--config", config, *HASS_FLAGS])


def supervise(command: list[str]) -> int:
    """Run `hass` until it exits for good: on its restart exit code, start it again on the same
    config directory, as Home Assistant Container's supervisor does after Settings → Restart."""
    from homeassistant.const import RESTART_EXIT_CODE  # only in the HA environment

    stopping = False
    hass = subprocess.Popen(command)

    def forward(signum: int, frame: FrameType | None) -> None:
        """Stop hass for good, then wait for it below (it gets the group's signals anyway)."""
        nonlocal stopping
        stopping = True
        hass.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while (code := hass.wait()) == RESTART_EXIT_CODE and not stopping:
        hass = subprocess.Popen(command)
    return code


# --- anywhere: start, stop and drive the server ---------------------------------------------------


def _group_alive(pgid: int) -> bool:
    """Whether any live (not zombie) process is in process group `pgid` (Linux /proc)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # After the command name (which may hold spaces and parentheses): state ppid pgrp ...
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


class _BridgeConnection(http.client.HTTPConnection):
    """HTTP to the server through its bridge."""

    def __init__(self, bridge: str, timeout: float) -> None:
        super().__init__("127.0.0.1", HASS_PORT, timeout=timeout)
        self._bridge = bridge

    def connect(self) -> None:
        self.sock = connect_bridge(self._bridge, self.timeout)


class HassServer:
    """One `hass` process group; `with` starts it and always stops it.

    Inside the Home Assistant environment `hass` runs directly; elsewhere through scripts/ha-env.
    With `browser_port` (0: a free one), a browser reaches it at `url` on 127.0.0.1.
    `from_archive` and `without_homeflow` say how the integration is installed (see the module)."""

    def __init__(
        self,
        password: str = DEFAULT_PASSWORD,
        browser_port: int | None = None,
        *,
        from_archive: bool = False,
        without_homeflow: bool = False,
    ) -> None:
        self.password = password
        self._hass_options = [
            *(["--from-archive"] if from_archive else []),
            *(["--without-homeflow"] if without_homeflow else []),
        ]
        self.bridge = f"homeflow-hass-{secrets.token_hex(8)}"
        self._browser_port = browser_port
        self.url = f"http://127.0.0.1:{HASS_PORT}"  # as the server sees itself
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._listener: socket.socket | None = None

    @property
    def client_id(self) -> str:
        """The OAuth client id of this client: its URL, as the frontend's is."""
        return f"{self.url}/"

    def __enter__(self) -> HassServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start `hass` in a process group of its own and wait until its HTTP server answers."""
        if importlib.util.find_spec("homeassistant") is not None:
            command = [sys.executable, str(Path(__file__).resolve())]
        else:
            command = [str(REPO / "scripts" / "ha-env"), "run", "python", "scripts/hass_server.py"]
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self._process = subprocess.Popen(
            [*command, "hass", "--bridge", self.bridge, *self._hass_options],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise HassError(f"hass exited with code {self._process.returncode}\n{self.log()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.request("GET", "/api/onboarding", timeout=2).status == 200:
                    break
            time.sleep(0.2)
        else:
            raise HassError(f"hass did not answer in {START_TIMEOUT:.0f} s\n{self.log()}")
        if self._browser_port is not None:
            self._listener = socket.create_server(("127.0.0.1", self._browser_port))
            self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
            threading.Thread(
                target=serve_relays,
                args=(self._listener, lambda: connect_bridge(self.bridge)),
                daemon=True,
            ).start()

    def stop(self) -> None:
        """Stop the whole process group: SIGTERM, then SIGKILL if it outlives STOP_TIMEOUT."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._process is not None:
            pgid = self._process.pid
            for signum in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signum)
                deadline = time.monotonic() + STOP_TIMEOUT
                while _group_alive(pgid) and time.monotonic() < deadline:
                    self._process.poll()  # reaps the group leader
                    time.sleep(0.1)
                if not _group_alive(pgid):
                    break
            self._process.wait()
            self._process = None
            if _group_alive(pgid):
                raise HassError(f"process group {pgid} outlived SIGKILL")
        if self._log is not None:
            self._log.close()
            self._log = None

    def log(self, lines: int = 60) -> str:
        """The last lines the server wrote: Home Assistant's log, and any crash."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return "\n".join(self._log.read().decode(errors="replace").splitlines()[-lines:])

    # --- HTTP ----------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        form: dict[str, str] | None = None,
        timeout: float = HTTP_TIMEOUT,
    ) -> Response:
        """One request; `body` goes as JSON, `form` as a urlencoded form, `token` as Bearer."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection = _BridgeConnection(self.bridge, timeout)
        try:
            connection.request(method, path, data, headers)
            answer = connection.getresponse()
            status, text = answer.status, answer.read().decode(errors="replace")
        finally:
            connection.close()
        try:
            return Response(status, json.loads(text))
        except ValueError:
            return Response(status, text)

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        """`request`, expecting 200 or 201; the answer's JSON."""
        answer = self.request(method, path, body, **kwargs)
        if answer.status not in (200, 201):
            raise HassError(f"{method} {path} answered {answer.status}: {answer.data}")
        return answer.data

    def websocket(self, token: str) -> WebSocket:
        """An authenticated connection to the websocket API."""
        return WebSocket(connect_bridge(self.bridge), token)

    # --- onboarding and the home ---------------------------------------------------------------

    def onboard(self, *, full: bool = False) -> Tokens:
        """Create the owner through onboarding and log in as them with the auth code it returns.

        `full` also finishes the other onboarding steps, as the frontend asks for them (the core
        config step starts HA's suggested integrations; those whose packages are missing fail,
        logged)."""
        owner = {"name": "HomeFlow", "username": USERNAME, "password": self.password}
        code = self.call(
            "POST",
            "/api/onboarding/users",
            {**owner, "client_id": self.client_id, "language": "en"},
        )["auth_code"]
        login = {"grant_type": "authorization_code", "code": code, "client_id": self.client_id}
        token = self.call("POST", "/auth/token", form=login)
        tokens = Tokens(token["access_token"], token["refresh_token"], int(token["expires_in"]))
        if full:
            access = tokens.access_token
            self.call("POST", "/api/onboarding/core_config", {}, token=access)
            self.call("POST", "/api/onboarding/analytics", {}, token=access)
            # As the frontend's onboarding does: a country (else a repair issue asks for one),
            # and the version onboarded (else the dashboard greets an upgraded install).
            version = self.call("GET", "/api/config", token=access)["version"]
            onboarded = {"onboarded_version": version, "onboarded_date": _now()}
            with self.websocket(access) as ws:
                ws.command("config/core/update", country="US", currency="USD")
                ws.command("frontend/set_system_data", key="core", value=onboarded)
            redirect = {"client_id": self.client_id, "redirect_uri": f"{self.url}/?auth_callback=1"}
            self.call("POST", "/api/onboarding/integration", redirect, token=access)
        return tokens

    def long_lived_token(self, token: str, client_name: str) -> str:
        """A long-lived access token (valid a day), as a user makes one for an API client."""
        with self.websocket(token) as ws:
            request = {"client_name": client_name, "lifespan": 1}
            result: str = ws.command("auth/long_lived_access_token", **request)
        return result

    def wait_until_running(self, token: str, timeout: float = START_TIMEOUT) -> None:
        """Wait until Home Assistant has finished starting (its core state is RUNNING)."""
        deadline = time.monotonic() + timeout
        while (state := self.call("GET", "/api/config", token=token)["state"]) != "RUNNING":
            if time.monotonic() > deadline:
                raise HassError(f"Home Assistant still {state} after {timeout:.0f} s\n{self.log()}")
            time.sleep(0.2)

    def restart(self, token: str, timeout: float = START_TIMEOUT) -> None:
        """Restart Home Assistant as Settings → Restart does (the homeassistant.restart service),
        on the same config directory, and wait until the new process runs."""
        with self.websocket(token) as ws:
            try:
                ws.command("call_service", domain="homeassistant", service="restart")
            except (WebSocketClosedError, ConnectionError):
                pass  # it stopped before answering
            else:
                ws.until_closed()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise HassError(f"hass exited with code {self._process.returncode}\n{self.log()}")
            with contextlib.suppress(OSError, http.client.HTTPException, HassError):
                if self.call("GET", "/api/config", token=token, timeout=2)["state"] == "RUNNING":
                    return
            time.sleep(0.2)
        raise HassError(f"Home Assistant did not run again in {timeout:.0f} s\n{self.log()}")

    def remove_areas(self, token: str) -> None:
        """Delete every area (onboarding makes Living Room, Kitchen, Bedroom), so that a home
        created next keeps its own area names instead of prefixing them with its name."""
        with self.websocket(token) as ws:
            for area in ws.command("config/area_registry/list"):
                ws.command("config/area_registry/delete", area_id=area["area_id"])

    def create_home(
        self,
        token: str,
        name: str,
        seed: int,
        home_type: str | None = None,
        size: str | None = None,
        city: str | None = None,
    ) -> dict[str, Any]:
        """Generate a home through HomeFlow's config flow, as the UI does (taking the rooms step's
        defaults); its config entry."""
        flow = self.call(
            "POST", "/api/config/config_entries/flow", {"handler": "homeflow"}, token=token
        )
        step = f"/api/config/config_entries/flow/{flow['flow_id']}"
        self.call("POST", step, {"next_step_id": "generate"}, token=token)
        options = {"home_type": home_type, "size": size, "city": city}
        user_input = {"name": name, "seed": seed} | {k: v for k, v in options.items() if v}
        result = self.call("POST", step, user_input, token=token)
        if result["type"] == "form" and result["step_id"] == "rooms":
            # The user's areas and floors named as the home's: the ones offered by default.
            result = self.call("POST", step, {}, token=token)
        if result["type"] != "create_entry":
            raise HassError(f"the config flow did not create the home: {result}")
        entry: dict[str, Any] = result["result"]
        return entry

    def home_areas(self, token: str) -> list[str]:
        """The names of the areas that hold HomeFlow's entities, from HA's registries."""
        template = (
            "{{ integration_entities('homeflow') | map('area_name') | reject('none') | unique"
            " | sort | list | tojson }}"
        )
        names: list[str] = self.call("POST", "/api/template", {"template": template}, token=token)
        return names


class WebSocket:
    """Home Assistant's websocket API (/api/websocket), authenticated: enough for a few commands.

    A minimal RFC 6455 client (text frames, masked as clients must, pings answered)."""

    def __init__(self, connection: socket.socket, token: str) -> None:
        self._socket = connection
        self._buffer = b""
        self._next_id = 0
        key = base64.b64encode(os.urandom(16)).decode()
        upgrade = (
            f"GET /api/websocket HTTP/1.1\r\nHost: 127.0.0.1:{HASS_PORT}\r\n"
            f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        )
        self._socket.sendall(upgrade.encode())
        while b"\r\n\r\n" not in self._buffer:
            self._buffer += self._recv()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise HassError(f"no websocket upgrade: {head.decode(errors='replace')}")
        self._receive()  # auth_required
        self._send({"type": "auth", "access_token": token})
        if (answer := self._receive())["type"] != "auth_ok":
            raise HassError(f"websocket authentication failed: {answer.get('message')}")

    def __enter__(self) -> WebSocket:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(OSError):
            self._frame(0x8, b"")
        self._socket.close()

    def command(self, kind: str, **fields: Any) -> Any:
        """Send one command and return its result (raises HassError on failure)."""
        self._next_id += 1
        self._send({"id": self._next_id, "type": kind, **fields})
        while (answer := self._receive()).get("id") != self._next_id or answer["type"] != "result":
            pass
        if not answer["success"]:
            raise HassError(f"websocket {kind} failed: {answer['error']}")
        return answer["result"]

    def until_closed(self) -> None:
        """Read (and drop) messages until Home Assistant closes the connection."""
        with contextlib.suppress(WebSocketClosedError, ConnectionError):
            while True:
                self._receive()

    def _send(self, message: dict[str, Any]) -> None:
        self._frame(0x1, json.dumps(message).encode())

    def _frame(self, opcode: int, data: bytes) -> None:
        size = len(data)
        if size < 126:
            length = bytes([0x80 | size])
        elif size < 1 << 16:
            length = bytes([0x80 | 126]) + size.to_bytes(2, "big")
        else:
            length = bytes([0x80 | 127]) + size.to_bytes(8, "big")
        mask = os.urandom(4)
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(data))
        self._socket.sendall(bytes([0x80 | opcode]) + length + mask + masked)

    def _receive(self) -> dict[str, Any]:
        """The next JSON message, through fragments and pings."""
        payload = b""
        while True:
            first, second = self._exact(2)
            size = second & 0x7F
            if size >= 126:
                size = int.from_bytes(self._exact(2 if size == 126 else 8), "big")
            data = self._exact(size)  # a server's frames are not masked
            opcode = first & 0x0F
            if opcode == 0x8:
                raise WebSocketClosedError("Home Assistant closed the websocket")
            if opcode == 0x9:
                self._frame(0xA, data)
            elif opcode in (0x0, 0x1):
                payload += data
                if first & 0x80:
                    message: dict[str, Any] = json.loads(payload)
                    return message

    def _exact(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._buffer += self._recv()
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _recv(self) -> bytes:
        chunk = self._socket.recv(1 << 16)
        if not chunk:
            raise WebSocketClosedError("Home Assistant closed the websocket")
        return chunk


def add_install_arguments(parser: argparse.ArgumentParser) -> None:
    """How the integration is installed (see the module's docstring)."""
    parser.add_argument("--from-archive", action="store_true", help="the release archive")
    parser.add_argument(
        "--without-homeflow", action="store_true", help="homeflow hidden from HA's Python"
    )


def add_home_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that say which server and which home (shared with scripts/screenshot.py)."""
    parser.add_argument("--port", type=int, default=0, help="browser port on 127.0.0.1; 0: free")
    parser.add_argument("--password", default=DEFAULT_PASSWORD, help="the owner's password")
    parser.add_argument("--name", default="HomeFlow home", help="the home's name")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--type", choices=["studio", "apartment", "house", "duplex", "villa"])
    parser.add_argument("--size", choices=["small", "medium", "large"])
    parser.add_argument("--city")


def start_home(server: HassServer, args: argparse.Namespace) -> Tokens:
    """Onboard a fresh server fully and create the home `args` describe, in its rooms."""
    started = time.monotonic()
    tokens = server.onboard(full=True)
    server.wait_until_running(tokens.access_token)
    entry = server.create_home(
        tokens.access_token, args.name, args.seed, args.type, args.size, args.city
    )
    areas = server.home_areas(tokens.access_token)
    print(
        f"{entry['title']}: {len(areas)} areas, ready in {time.monotonic() - started:.1f} s "
        f"at {server.url} (log in as {USERNAME})",
        flush=True,
    )
    return tokens


def main(argv: list[str] | None = None) -> int:
    """Serve a home until Ctrl-C; `hass --bridge NAME` is the part inside the HA environment."""
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["hass"]:
        internal = argparse.ArgumentParser(prog="hass_server.py hass")
        internal.add_argument("--bridge", required=True)
        add_install_arguments(internal)
        hass_args = internal.parse_args(argv[1:])
        return run_hass(hass_args.bridge, hass_args.from_archive, hass_args.without_homeflow)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_home_arguments(parser)
    add_install_arguments(parser)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))  # stop the server too
    try:
        install = {"from_archive": args.from_archive, "without_homeflow": args.without_homeflow}
        with HassServer(args.password, browser_port=args.port, **install) as server:
            start_home(server, args)
            with contextlib.suppress(KeyboardInterrupt):
                signal.pause()
    except HassError as err:
        print(f"hass_server: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
