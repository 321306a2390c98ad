"""A Home Assistant user's first hour, end to end on one fresh real server.

Installed as the README says for Home Assistant OS and Container (the release archive unzipped
into custom_components, no homeflow in Home Assistant's Python, no package registry), onboarded
as the frontend does it in Berlin (Living Room, Kitchen and Bedroom exist), HomeFlow is added
through the config flow REST API with the rooms step's defaults. The home then sits in the
user's own rooms, lives on Home Assistant's clock, the built-in Assist agent turns one of its
lights on, and Settings → Restart keeps the light, the areas and the devices as they were.

The other install, a plain copy without the package, is test_install's
`test_plain_copy_says_what_to_install` (the translated message and its fix), collected here too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scripts.hass_server import HassServer
from tests.integration import test_install as install
from tests.integration import test_real_server as real
from twin.homemaker import make_home
from twin.weather import city

unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations
test_plain_copy_says_what_to_install = install.test_plain_copy_says_what_to_install

# Seed 2 in Berlin: a house with a Living Room, a Kitchen and a Master Bedroom, and a garden
# with an illuminance sensor (tests/integration/test_rooms.py).
NAME, SEED, CITY, TIME_ZONE = "Berlin House", 2, "Berlin", "Europe/Berlin"
GARDEN_LUX = "sensor.garden_motion_sensor_illuminance"
# The areas onboarding makes, with its icons (homeassistant/components/onboarding/const.py).
ONBOARDING = {"Living Room": "mdi:sofa", "Kitchen": "mdi:stove", "Bedroom": "mdi:bed"}
ASSIST = "conversation.home_assistant"
NOW = "{{ now().isoformat() }}"  # Home Assistant's time, in its time zone


@dataclass(frozen=True)
class Home:
    """The server with the user's token, the home's config entry, and Home Assistant's wall
    clock just before the home was made."""

    api: real.Api
    entry_id: str
    before: datetime


@pytest.fixture(scope="module")
def home() -> Iterator[Home]:
    real.allow_unix_sockets()  # module fixtures come before `unix_sockets`
    with HassServer(from_archive=True, without_homeflow=True) as server:
        tokens = server.onboard(full=True)
        token = server.long_lived_token(tokens.access_token, "first hour")
        server.wait_until_running(token)
        with server.websocket(token) as ws:  # the location step of onboarding
            ws.command("config/core/update", time_zone=TIME_ZONE)
        api = real.Api(server, token)
        before = wall_clock(api)
        entry = server.create_home(token, NAME, SEED, city=CITY)
        yield Home(api, entry["entry_id"], before)


def wall_clock(api: real.Api) -> datetime:
    """Home Assistant's time now, as its clock on the wall in its time zone reads."""
    return datetime.fromisoformat(api.post("/api/template", {"template": NOW})).replace(tzinfo=None)


def registries(api: real.Api) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The area registry by name, and the devices, as the user's settings pages list them."""
    with api.server.websocket(api.token) as ws:
        areas = {area["name"]: area for area in ws.command("config/area_registry/list")}
        devices = ws.command("config/device_registry/list")
    return areas, devices


def home_states(api: real.Api) -> dict[str, dict[str, Any]]:
    """The states of the home's entities."""
    ours = set(
        api.post("/api/template", {"template": "{{ integration_entities('homeflow') | tojson }}"})
    )
    return {
        state["entity_id"]: state for state in api.get("/api/states") if state["entity_id"] in ours
    }


def test_the_home_is_in_the_users_rooms(home: Home) -> None:
    areas, devices = registries(home.api)
    assert {name: areas[name]["icon"] for name in ONBOARDING} == ONBOARDING  # theirs, kept
    assert not any(name.startswith(NAME) for name in areas)
    assert all(area["icon"] for area in areas.values())  # those made for the home too
    ours = [device for device in devices if home.entry_id in device["config_entries"]]
    rooms = {area["area_id"]: name for name, area in areas.items()}
    used = {rooms.get(device["area_id"]) for device in ours}
    assert {"Living Room", "Kitchen", "Master Bedroom"} <= used
    # No room of the home is called Bedroom: the user's stays theirs, empty.
    assert "Bedroom" not in used


def test_the_home_lives_on_home_assistants_clock(home: Home) -> None:
    """The twin's local time (its city's) is Home Assistant's wall clock when the home was
    made, moved on by its physics ticks since; the garden is dark exactly when the sun is down
    and its lights are off (in the evening they may be on)."""
    diagnostics = home.api.get(f"/api/diagnostics/config_entry/{home.entry_id}")["data"]
    moment = datetime.fromisoformat(diagnostics["time"])
    local = moment.replace(tzinfo=None) + timedelta(hours=city(CITY).utc_offset)
    assert home.before <= local <= wall_clock(home.api)
    made = make_home(SEED, city=CITY)
    sun = made.weather.at(moment.timestamp()).sun_elevation
    states = home_states(home.api)
    lux = float(states[GARDEN_LUX]["state"])
    garden = made.area_of(GARDEN_LUX)
    lit = [e for e in made.entities if e.startswith("light.") and made.area_of(e) == garden]
    lamps = any(states[light]["state"] == "on" for light in lit)
    assert (lux == 0) == (sun <= 0 and not lamps), (moment, sun, lux, lit)


def test_assist_turns_on_a_light_and_a_restart_keeps_it(home: Home) -> None:
    api = home.api
    lights = {e: s for e, s in home_states(api).items() if e.startswith("light.")}
    off = sorted(e for e, s in lights.items() if s["state"] == "off")
    assert off, f"every light of the home is on: {sorted(lights)}"
    light = off[0]
    name = lights[light]["attributes"]["friendly_name"]
    said = api.post(
        "/api/conversation/process",
        {"text": f"turn on the {name}", "language": "en", "agent_id": ASSIST},
    )
    assert said["response"]["response_type"] == "action_done", said
    assert [target["id"] for target in said["response"]["data"]["success"]] == [light]
    assert api.state(light)["state"] == "on"
    before = registries(api)
    restarted = datetime.now(UTC)
    api.server.restart(api.token)
    after = api.state(light)
    assert after["state"] == "on"
    assert datetime.fromisoformat(after["last_changed"]) > restarted  # a new Home Assistant's
    assert registries(api) == before
