"""Scenes: scene.turn_on activates the twin's scene, and Home Assistant shows its time of
activation on the twin's clock."""

from __future__ import annotations

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .parity import assert_registered_as_the_twin, assert_same, call_both, independent_twin, shown

MOVIE = "scene.movie_night"


async def test_a_scene_shows_its_last_activation(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert_registered_as_the_twin(hass, loaded_home, "scene", [MOVIE])
    assert shown(hass, MOVIE) == {"state": "unknown", "friendly_name": "Movie night"}
    other = independent_twin(loaded_home)
    target = {"entity_id": MOVIE}
    for data in ({}, {"transition": 2.5}, {"transition": "7000"}):
        assert await call_both(hass, loaded_home, other, "scene", "turn_on", target, data) is None
    assert shown(hass, MOVIE)["state"] == "2026-01-01T00:00:00+00:00"  # the twin's clock
    twin = loaded_home.runtime_data
    twin.advance(30)
    other.advance(30)
    assert await call_both(hass, loaded_home, other, "scene", "turn_on", target, {}) is None
    assert shown(hass, MOVIE)["state"] == "2026-01-01T00:00:30+00:00"


@pytest.mark.parametrize("data", [{"transition": "slow"}, {"transition": None}, {"speed": 1}])
async def test_bad_data_changes_nothing(
    hass: HomeAssistant, loaded_home: MockConfigEntry, data: dict[str, object]
) -> None:
    other = independent_twin(loaded_home)
    target = {"entity_id": MOVIE}
    assert await call_both(hass, loaded_home, other, "scene", "turn_on", target, data) == (
        "invalid_data"
    )
    assert shown(hass, MOVIE)["state"] == "unknown"


async def test_turning_on_a_room_activates_its_scene(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    other = independent_twin(loaded_home)
    target = {"area_id": "living_room"}
    assert await call_both(hass, loaded_home, other, "homeassistant", "turn_on", target, {}) is None
    assert_same(hass, loaded_home, other, "scene")
    assert shown(hass, MOVIE)["state"] == "2026-01-01T00:00:00+00:00"
