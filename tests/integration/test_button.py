"""Buttons: button.press presses the twin's button, and Home Assistant shows its time of the last
press on the twin's clock; every catalog type's buttons."""

from __future__ import annotations

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .parity import assert_registered_as_the_twin, call_both, independent_twin, shown

RESTART = "button.video_doorbell_restart"


async def test_every_catalog_button_presses(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    twin = loaded_home.runtime_data.home
    buttons = sorted(e for e in twin.entities if e.startswith("button."))
    assert buttons == [RESTART]
    assert_registered_as_the_twin(hass, loaded_home, "button", buttons)
    registered = er.async_get(hass).async_get(RESTART)
    assert registered is not None
    assert registered.entity_category == "config"
    assert shown(hass, RESTART) == {
        "state": "unknown",
        "device_class": "restart",
        "friendly_name": "Video Doorbell Restart",
    }
    other = independent_twin(loaded_home)
    target = {"entity_id": RESTART}
    assert await call_both(hass, loaded_home, other, "button", "press", target, {}) is None
    assert shown(hass, RESTART)["state"] == "2026-01-01T00:00:00+00:00"


@pytest.mark.parametrize(
    ("service", "code"), [("press", "invalid_data"), ("turn_on", "service_not_found")]
)
async def test_refused_calls_change_nothing(
    hass: HomeAssistant, loaded_home: MockConfigEntry, service: str, code: str
) -> None:
    other = independent_twin(loaded_home)
    data = {"hard": True} if service == "press" else {}
    target = {"entity_id": RESTART}
    assert await call_both(hass, loaded_home, other, "button", service, target, data) == code
    assert shown(hass, RESTART)["state"] == "unknown"
