"""HomeFlow in a real, running Home Assistant server, driven over its REST API as a client would.

One server (scripts/hass_server.py: its own process group and network namespace, a throwaway
config, reached through a unix socket) serves the whole module and is always stopped afterwards.
It is onboarded, a generated home is created through the config flow REST API, and the tests act
with a long-lived access token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import homeassistant
import pytest
import pytest_socket

from scripts.hass_server import HassServer
from twin.home import Home
from twin.homemaker import make_home

SEED, HOME_TYPE, CITY = 7, "apartment", "Oslo"
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Api:
    """The server's REST API with a token, as an API client holds it."""

    server: HassServer
    token: str = field(repr=False)  # out of test reports

    def get(self, path: str) -> Any:
        return self.server.call("GET", path, token=self.token)

    def post(self, path: str, body: Any) -> Any:
        return self.server.call("POST", path, body, token=self.token)

    def state(self, entity_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.get(f"/api/states/{entity_id}")
        return answer


def allow_unix_sockets() -> None:
    """Home Assistant's test plugin lets tests connect to 127.0.0.1 only; the server's bridge is
    a unix socket."""
    pytest_socket.socket_allow_hosts(["127.0.0.1"], allow_unix_socket=True)


@pytest.fixture(autouse=True)
def unix_sockets() -> None:
    """Every test talks to the server (the plugin restricts sockets anew for each)."""
    allow_unix_sockets()


@pytest.fixture
def auto_enable_custom_integrations() -> None:
    """No Home Assistant in this process: the server is another one."""


@pytest.fixture(scope="module")
def twin() -> Home:
    """The home the server generates from the same seed (ids and names do not depend on time)."""
    return make_home(SEED, HOME_TYPE, city=CITY)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    """A running server with the home, onboarded; stopped (its whole process group) at the end."""
    allow_unix_sockets()  # module fixtures come before `unix_sockets`
    with HassServer() as server:
        tokens = server.onboard()
        server.wait_until_running(tokens.access_token)
        server.remove_areas(tokens.access_token)  # the layout is the home's alone
        server.create_home(tokens.access_token, "Test Home", SEED, HOME_TYPE, city=CITY)
        yield Api(server, server.long_lived_token(tokens.access_token, "test_real_server"))


def test_the_home_is_served_with_its_entities_and_areas(api: Api, twin: Home) -> None:
    served = {state["entity_id"]: state for state in api.get("/api/states")}
    template = "{{ integration_entities('homeflow') | tojson }}"
    ours = api.post("/api/template", {"template": template})
    assert sorted(ours) == sorted(twin.states)
    for entity_id, entity in twin.entities.items():
        assert served[entity_id]["attributes"]["friendly_name"] == entity.name
    areas = {twin.areas[area].name for e in twin.entities if (area := twin.area_of(e))}
    assert set(api.server.home_areas(api.token)) == areas


def test_the_home_is_in_the_users_own_rooms() -> None:
    """On a normally onboarded server: the home's Living Room and Kitchen are onboarding's, the
    areas it made have icons, and no area is named after the home."""
    with HassServer() as server:
        token = server.onboard().access_token
        server.wait_until_running(token)
        server.create_home(token, "Test Home", SEED, HOME_TYPE, city=CITY)
        with server.websocket(token) as ws:
            areas = {area["name"]: area for area in ws.command("config/area_registry/list")}
            devices = ws.command("config/device_registry/list")
    assert areas["Living Room"]["icon"] == "mdi:sofa"  # onboarding's, kept
    assert not any(name.startswith("Test Home") for name in areas)
    assert areas["Master Bedroom"]["icon"] == "mdi:bed"
    assert areas["Hallway"]["icon"] == "mdi:door"
    living_room = areas["Living Room"]["area_id"]
    in_living_room = [device["name"] for device in devices if device["area_id"] == living_room]
    assert in_living_room
    assert all(name.startswith("Living Room") for name in in_living_room)
    assert areas["Living Room"]["floor_id"] == areas["Hallway"]["floor_id"] is not None


def test_switch_services_change_its_state(api: Api, twin: Home) -> None:
    switch = first(twin, "switch")
    for service, expected in [("turn_on", "on"), ("turn_off", "off"), ("toggle", "on")]:
        before = api.state(switch)["state"]
        changed = api.post(f"/api/services/switch/{service}", {"entity_id": switch})
        assert api.state(switch)["state"] == expected
        # The answer lists the states the call changed.
        ours = [state["state"] for state in changed if state["entity_id"] == switch]
        assert ours == ([] if before == expected else [expected])


def test_light_brightness(api: Api, twin: Home) -> None:
    light = dimmable_light(api, twin)
    changed = api.post("/api/services/light/turn_on", {"entity_id": light, "brightness": 77})
    ours = [s for s in changed if s["entity_id"] == light]
    assert [(s["state"], s["attributes"]["brightness"]) for s in ours] == [("on", 77)]
    assert api.state(light)["attributes"]["brightness"] == 77
    api.post("/api/services/light/turn_on", {"entity_id": light, "brightness_pct": 40})
    assert api.state(light)["attributes"]["brightness"] == 102  # round(40 * 255 / 100)
    api.post("/api/services/light/turn_off", {"entity_id": light})
    after = api.state(light)
    assert (after["state"], after["attributes"]["brightness"]) == ("off", None)


def test_an_invalid_call_is_refused_and_changes_nothing(api: Api, twin: Home) -> None:
    light = dimmable_light(api, twin)
    before = api.state(light)
    bad = {"entity_id": light, "brightness_pct": 140}  # (brightness is clamped, not refused)
    answer = api.server.request("POST", "/api/services/light/turn_on", bad, token=api.token)
    assert answer.status == 400
    assert api.state(light) == before


def test_requests_without_a_valid_token_are_refused(api: Api, twin: Home) -> None:
    switch = first(twin, "switch")
    before = api.state(switch)
    flip = "turn_off" if before["state"] == "on" else "turn_on"
    server = api.server
    assert server.request("GET", "/api/states").status == 401
    assert server.request("GET", "/api/states", token="not-a-token").status == 401
    answer = server.request("POST", f"/api/services/switch/{flip}", {"entity_id": switch})
    assert answer.status == 401
    assert api.state(switch) == before


def test_ha_env_pins_what_home_assistant_pins() -> None:
    """scripts/ha-env installs the versions Home Assistant pins, but for the two it documents
    (no Python 3.14 wheels of those)."""
    script = (REPO / "scripts" / "ha-env").read_text()
    block = re.search(r"^HA_PINS=\((.*?)^\)", script, re.M | re.S)
    assert block is not None
    ours = {name.lower(): pin for name, pin in re.findall(r"^\s+(\S+)==(\S+)$", block[1], re.M)}
    constraints = (Path(homeassistant.__file__).parent / "package_constraints.txt").read_text()
    theirs = {name.lower(): pin for name, pin in re.findall(r"^(\S+)==(\S+)$", constraints, re.M)}
    assert ours["homeassistant"] == version("homeassistant")
    differ = {name for name, pin in ours.items() if theirs.get(name, pin) != pin}
    assert differ == {"pymicro-vad", "pyspeex-noise"}


def first(twin: Home, domain: str) -> str:
    """The home's first entity of `domain`, by id."""
    return min(entity_id for entity_id in twin.states if entity_id.startswith(f"{domain}."))


def dimmable_light(api: Api, twin: Home) -> str:
    """The home's first light that supports brightness, as the server reports it."""
    lights = sorted(entity_id for entity_id in twin.states if entity_id.startswith("light."))
    for light in lights:
        if set(api.state(light)["attributes"].get("supported_color_modes") or []) - {"onoff"}:
            return light
    pytest.fail(f"no dimmable light among {lights}")
