"""event: read-only; the home fires events (a doorbell's ring), each at the home's time to the
millisecond, as EventEntity's state, with event_type among the entity's event_types."""

from __future__ import annotations

from dataclasses import replace

import pytest

from twin import tools
from twin.catalog import load_catalog
from twin.domains import DEVICE_DOMAINS, event
from twin.errors import HomeDefinitionError, ServiceNotFoundError
from twin.home import Home
from twin.homefile import dump_home, import_ha_snapshot, load_home
from twin.registry import Area
from twin.service import EntityDraft

BELL = "event.front_door"
BUTTON = "event.desk_button"


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    catalog = load_catalog()
    catalog["video_doorbell"].install(home, "bell", "Front Door", "hall")
    catalog["smart_button"].install(home, "button", "Desk Button", "hall")
    return home


def fire(home: Home, entity_id: str, event_type: str, **attributes: object) -> None:
    draft = EntityDraft.of(home.entities[entity_id], home.state(entity_id), home.now)
    event.trigger(draft, event_type, dict(attributes))
    home.write(draft)


def test_an_event_entity_is_read_only_and_shows_its_types(home: Home) -> None:
    assert event.DOMAIN.services == {}
    assert "event" not in DEVICE_DOMAINS
    state = home.state(BELL)
    assert state.state == "unknown"
    assert state.attributes == {
        "event_types": ["ring"],
        "event_type": None,
        "device_class": "doorbell",
        "friendly_name": "Front Door",
    }
    with pytest.raises(ServiceNotFoundError):
        home.call_service("event", "trigger", target={"entity_id": BELL})
    listed = tools.list_entities(home, domain="event")["entities"]
    assert [item["entity_id"] for item in listed] == [BUTTON, BELL]


def test_events_are_dated_to_the_millisecond_and_always_later(home: Home) -> None:
    fire(home, BUTTON, "short_release", duration=0.2)
    assert home.state(BUTTON).state == "2026-01-01T00:00:00.000+00:00"
    assert home.state(BUTTON).attributes["event_type"] == "short_release"
    assert home.state(BUTTON).attributes["duration"] == 0.2
    fire(home, BUTTON, "long_press")
    assert home.state(BUTTON).state == "2026-01-01T00:00:00.001+00:00"
    assert "duration" not in home.state(BUTTON).attributes  # the last event's own attributes
    home.advance(5, step=5)
    fire(home, BELL, "ring")
    assert home.state(BELL).state == "2026-01-01T00:00:05.000+00:00"


def test_an_event_type_the_entity_lacks_is_refused(home: Home) -> None:
    draft = EntityDraft.of(home.entities[BELL], home.state(BELL), home.now)
    with pytest.raises(ValueError, match="Invalid event type knock"):
        event.trigger(draft, "knock")


@pytest.mark.parametrize(
    ("state", "attributes", "message"),
    [
        ("ringing", {}, "expected a time"),
        ("2026-01-01T00:00:00.000+00:00", {"event_type": "knock"}, "none of its event_types"),
    ],
)
def test_a_home_file_with_an_event_no_home_assistant_shows_is_refused(
    home: Home, state: str, attributes: dict[str, object], message: str
) -> None:
    old = home.states[BELL]
    home.states[BELL] = replace(old, state=state, attributes={**old.attributes, **attributes})
    with pytest.raises(HomeDefinitionError, match=message):
        load_home(dump_home(home))


def test_a_snapshot_carries_event_types_as_capabilities() -> None:
    snapshot = {
        "states": [
            {
                "entity_id": "event.hall_remote",
                "state": "2026-01-01T08:00:00.123+00:00",
                "attributes": {
                    "event_types": ["press", "hold"],
                    "event_type": "hold",
                    "friendly_name": "Hall remote",
                },
            }
        ]
    }
    home, skipped = import_ha_snapshot(snapshot)
    assert skipped == []
    assert home.entities["event.hall_remote"].capabilities == {"event_types": ["press", "hold"]}
    assert home.state("event.hall_remote").attributes["event_type"] == "hold"


def test_an_inventory_carries_events_buttons_and_scenes() -> None:
    """synthetic-home entities of the three: their arguments made Home Assistant's state."""
    inventory = {
        "devices": [{"name": "Front Door", "id": "bell", "info": {"manufacturer": "Reolink"}}],
        "entities": [
            {
                "id": "event.front_door",
                "device": "bell",
                "attributes": {
                    "device_class": "event.EventDeviceClass.DOORBELL",
                    "event_types": ["ring"],
                    "event_type": None,
                },
            },
            {"id": "button.front_door_restart", "device": "bell", "name": "Restart"},
            {"id": "scene.evening", "name": "Evening", "state": "2026-01-01T18:00:00+00:00"},
        ],
    }
    home, skipped = import_ha_snapshot(inventory)
    assert skipped == []
    assert home.entities["event.front_door"].device_class == "doorbell"
    assert home.entities["event.front_door"].capabilities == {"event_types": ["ring"]}
    assert home.state("event.front_door").state == "unknown"
    assert home.state("button.front_door_restart").state == "unknown"
    assert home.state("scene.evening").state == "2026-01-01T18:00:00+00:00"
    home.call_service("button", "press", target={"device_id": "bell"})
    assert home.state("button.front_door_restart").state != "unknown"
