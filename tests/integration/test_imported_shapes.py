"""Imported entity shapes: a minimal Home Assistant entity and the twin given the same calls.

Home Assistant's own entity platform (its entity classes, registered services, required features)
runs a bare entity with the features an imported home's entity has; the twin runs the same entity
imported from a synthetic-home inventory. Both must refuse alike, or end in the same state.
"""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.components.fan import DATA_COMPONENT, FanEntity, FanEntityFeature
from homeassistant.components.light import DATA_COMPONENT as LIGHT_COMPONENT
from homeassistant.components.light import ColorMode, LightEntity
from homeassistant.components.media_player import DATA_COMPONENT as PLAYER_COMPONENT
from homeassistant.components.media_player import (
    MediaPlayerEntity,
    MediaPlayerEntityFeature,
    MediaPlayerState,
)
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import slugify as ha_slugify

from twin.catalog import slugify
from twin.errors import TwinError
from twin.home import Home
from twin.homefile import import_ha_snapshot

from .parity import as_json, ha_error_code

FAN = "fan.desk"
# A fan that has speeds and oscillates but declares neither TURN_ON nor TURN_OFF.
SPEED_ONLY = FanEntityFeature.SET_SPEED | FanEntityFeature.OSCILLATE


class MinimalFan(FanEntity):
    """A bare FanEntity: it holds what it is told, as a simple integration's fan does."""

    _attr_name = "desk"
    _attr_should_poll = False
    _attr_percentage = 0
    _attr_oscillating = False

    def __init__(self, features: FanEntityFeature) -> None:
        self._attr_supported_features = features
        self.entity_id = FAN

    async def async_set_percentage(self, percentage: int) -> None:
        self._attr_percentage = percentage
        self.async_write_ha_state()

    async def async_oscillate(self, oscillating: bool) -> None:
        self._attr_oscillating = oscillating
        self.async_write_ha_state()


async def minimal_fan(hass: HomeAssistant, features: FanEntityFeature) -> None:
    """Home Assistant's fan platform, with one MinimalFan."""
    assert await async_setup_component(hass, "fan", {})
    await hass.data[DATA_COMPONENT].async_add_entities([MinimalFan(features)])
    await hass.async_block_till_done()


def imported_fan(features: int) -> Home:
    """The same fan in the twin, imported from an inventory."""
    attributes = {"supported_features": features, "percentage": 0, "oscillating": False}
    entity = {"id": FAN, "name": "desk", "state": "off", "attributes": attributes}
    home, _ = import_ha_snapshot({"entities": [entity]})
    return home


async def call_both(
    hass: HomeAssistant, twin: Home, service: str, data: dict[str, Any]
) -> tuple[str | None, str | None]:
    """The service on both; each side's error code, or None where it was done."""
    ha_code = twin_code = None
    try:
        await hass.services.async_call("fan", service, {"entity_id": FAN, **data}, blocking=True)
    except Exception as err:  # any error: compared by its code
        ha_code = ha_error_code(err)
    try:
        twin.call_service("fan", service, target={"entity_id": FAN}, data=data)
    except TwinError as err:
        twin_code = err.code
    return ha_code, twin_code


@pytest.mark.parametrize("service", ["turn_on", "turn_off", "toggle"])
async def test_a_fan_without_turn_on_or_off_refuses_them_as_home_assistant_does(
    hass: HomeAssistant, service: str
) -> None:
    """HA registers turn_on, turn_off and toggle with TURN_ON/TURN_OFF as required features."""
    await minimal_fan(hass, SPEED_ONLY)
    assert await call_both(hass, imported_fan(SPEED_ONLY), service, {}) == (
        "service_not_supported",
        "service_not_supported",
    )


@pytest.mark.parametrize(
    ("service", "data"),
    [("set_percentage", {"percentage": 40}), ("oscillate", {"oscillating": True})],
)
async def test_a_speed_only_fan_shows_what_home_assistant_shows(
    hass: HomeAssistant, service: str, data: dict[str, Any]
) -> None:
    """FanEntity.state_attributes shows preset_mode (None) with SET_SPEED: the twin does too."""
    await minimal_fan(hass, SPEED_ONLY)
    twin = imported_fan(SPEED_ONLY)
    assert await call_both(hass, twin, service, data) == (None, None)
    ha = hass.states.get(FAN)
    assert ha is not None
    mine = twin.state(FAN)
    assert (mine.state, dict(mine.attributes)) == (ha.state, dict(ha.attributes))


LIGHT = "light.lamp"
LAMP_SETUP = {"color_mode": "hs", "hs_color": [30, 50], "brightness": 0}


class MinimalLight(LightEntity):
    """A bare hs LightEntity, off at brightness 0: turn_on without data only switches it on."""

    _attr_name = "lamp"
    _attr_should_poll = False
    _attr_color_mode = ColorMode.HS
    _attr_hs_color = (30, 50)
    _attr_brightness = 0
    _attr_is_on = False

    def __init__(self) -> None:
        self._attr_supported_color_modes = {ColorMode.HS}
        self.entity_id = LIGHT

    async def async_turn_on(self, **kwargs: Any) -> None:
        self._attr_brightness = kwargs.get("brightness", self._attr_brightness)
        self._attr_is_on = True
        self.async_write_ha_state()


async def test_a_light_off_at_brightness_0_shows_and_turns_on_as_home_assistant_does(
    hass: HomeAssistant,
) -> None:
    """Off, HA writes no colour mode; turn_on without brightness gives no brightness (no
    default profile), so the entity keeps its 0."""
    assert await async_setup_component(hass, "light", {})
    await hass.data[LIGHT_COMPONENT].async_add_entities([MinimalLight()])
    await hass.async_block_till_done()
    attributes = {"supported_color_modes": ["hs"], **LAMP_SETUP}
    entity = {"id": LIGHT, "name": "lamp", "state": "off", "attributes": attributes}
    twin, _ = import_ha_snapshot({"entities": [entity]})
    for call in (None, "turn_on"):
        if call is not None:
            await hass.services.async_call("light", call, {"entity_id": LIGHT}, blocking=True)
            twin.call_service("light", call, target={"entity_id": LIGHT})
        ha = hass.states.get(LIGHT)
        assert ha is not None
        mine = twin.state(LIGHT)
        assert as_json(mine.state, mine.attributes) == as_json(ha.state, ha.attributes)


PLAYER = "media_player.den"
PLAYER_FEATURES = (
    MediaPlayerEntityFeature.PLAY
    | MediaPlayerEntityFeature.PAUSE
    | MediaPlayerEntityFeature.NEXT_TRACK
)


class MinimalPlayer(MediaPlayerEntity):
    """A bare player that knows nothing of what it plays: it only changes state."""

    _attr_name = "den"
    _attr_should_poll = False
    _attr_supported_features = PLAYER_FEATURES
    _attr_state = MediaPlayerState.IDLE

    def __init__(self) -> None:
        self.entity_id = PLAYER

    async def async_media_play(self) -> None:
        self._attr_state = MediaPlayerState.PLAYING
        self.async_write_ha_state()

    async def async_media_pause(self) -> None:
        self._attr_state = MediaPlayerState.PAUSED
        self.async_write_ha_state()

    async def async_media_next_track(self) -> None:
        self.async_write_ha_state()


@pytest.mark.parametrize(
    "services", [["media_play"], ["media_play", "media_pause"], ["media_play", "media_next_track"]]
)
async def test_a_player_with_no_media_shows_none_as_home_assistant_does(
    hass: HomeAssistant, services: list[str]
) -> None:
    """Play, pause and next track invent no title, artist or track on a player that had none."""
    assert await async_setup_component(hass, "media_player", {})
    await hass.data[PLAYER_COMPONENT].async_add_entities([MinimalPlayer()])
    await hass.async_block_till_done()
    attributes = {"supported_features": int(PLAYER_FEATURES)}
    entity = {"id": PLAYER, "name": "den", "state": "idle", "attributes": attributes}
    twin, _ = import_ha_snapshot({"entities": [entity]})
    for service in services:
        await hass.services.async_call(
            "media_player", service, {"entity_id": PLAYER}, blocking=True
        )
        twin.call_service("media_player", service, target={"entity_id": PLAYER})
    ha = hass.states.get(PLAYER)
    assert ha is not None
    mine = twin.state(PLAYER)
    assert as_json(mine.state, mine.attributes) == as_json(ha.state, ha.attributes)


def test_the_twins_slugs_are_home_assistants() -> None:
    """An imported area or floor without an id gets the id Home Assistant's registry gives it."""
    for name in ["Living Room", "Leo's Room", "Étage", "Küche", "居間", "São Paulo 🏠", "1,000 ft"]:
        assert slugify(name) == ha_slugify(name), name
