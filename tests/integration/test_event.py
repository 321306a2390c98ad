"""Event entities: Home Assistant shows the twin's last event (its time on the twin's clock, its
type and attributes) and the entity's event types; they take no action."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.domains.event import trigger
from twin.service import EntityDraft

from .parity import assert_registered_as_the_twin, shown

DOORBELL = "event.video_doorbell"
BUTTON = "event.smart_button"


async def test_events_show_the_twins(hass: HomeAssistant, loaded_home: MockConfigEntry) -> None:
    assert_registered_as_the_twin(hass, loaded_home, "event", [BUTTON, DOORBELL])
    assert shown(hass, DOORBELL) == {
        "state": "unknown",
        "event_types": ["ring"],
        "event_type": None,
        "device_class": "doorbell",
        "friendly_name": "Video Doorbell",
    }
    virtual = loaded_home.runtime_data
    fired = virtual.home.copy()
    for entity_id, event_type, attributes in (
        (DOORBELL, "ring", {}),
        (BUTTON, "short_release", {"duration": 0.3}),
    ):
        draft = EntityDraft.of(fired.entities[entity_id], fired.states[entity_id], fired.now)
        trigger(draft, event_type, attributes)
        fired.write(draft)
    virtual.replace(fired)
    await hass.async_block_till_done()
    assert_registered_as_the_twin(hass, loaded_home, "event", [BUTTON, DOORBELL])
    assert shown(hass, DOORBELL)["state"] == "2026-01-01T00:00:00.000+00:00"
    assert shown(hass, BUTTON)["event_type"] == "short_release"
    assert shown(hass, BUTTON)["duration"] == 0.3
