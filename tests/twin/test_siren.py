"""siren: turn_on with Home Assistant's tone, volume and duration rules; turn_off and toggle."""

from __future__ import annotations

import pytest

from twin.catalog import load_catalog
from twin.domains import siren
from twin.errors import InvalidServiceDataError, ServiceNotSupportedError, ServiceValidationError
from twin.home import Home
from twin.homefile import import_ha_snapshot
from twin.registry import Area, EntityEntry

ALARM = "siren.alarm"  # tones, volume, duration
STROBE = "siren.strobe"  # on and off only


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    catalog = load_catalog()
    catalog["alarm_siren"].install(home, "alarm", "Alarm", "hall")
    catalog["outdoor_siren"].install(home, "strobe", "Strobe", "hall")
    return home


def call(home: Home, service: str, entity_id: str = ALARM, **data: object) -> str:
    home.call_service("siren", service, data, {"entity_id": entity_id})
    return home.state(entity_id).state


def test_features_are_home_assistants(home: Home) -> None:
    assert siren.DOMAIN.features == {
        "turn_on": 1,
        "turn_off": 2,
        "tones": 4,
        "volume_set": 8,
        "duration": 16,
    }
    assert home.state(ALARM).attributes["available_tones"][0] == "Burglar alarm"
    assert "available_tones" not in home.state(STROBE).attributes


def test_turn_on_with_a_tone_volume_and_duration_then_off(home: Home) -> None:
    assert call(home, "turn_on", tone="Chime", volume_level="0.5", duration="10") == "on"
    assert call(home, "turn_off") == "off"


def test_toggle(home: Home) -> None:
    assert call(home, "toggle", STROBE) == "on"
    assert call(home, "toggle", STROBE) == "off"


@pytest.mark.parametrize("tone", ["Siren", 2, "2"])
def test_a_tone_the_siren_lacks_is_refused_in_home_assistants_words(
    home: Home, tone: object
) -> None:
    with pytest.raises(ServiceValidationError) as err:
        call(home, "turn_on", tone=tone)
    assert str(err.value) == (
        f"Invalid tone specified for entity {ALARM}: {int(tone) if tone != 'Siren' else tone}, "
        "check the available_tones attribute for valid tones to pass in"
    )
    assert home.state(ALARM).state == "off"


def test_a_siren_without_tones_ignores_the_tone(home: Home) -> None:
    assert call(home, "turn_on", STROBE, tone="anything", volume_level=1, duration=3) == "on"


def test_a_tone_may_be_a_key_or_a_name_of_a_mapping(home: Home) -> None:
    tones = {"1": "Burglar", "2": "Fire"}
    home.add_entity(
        EntityEntry(
            "siren.zwave", "Z", supported_features=7, capabilities={"available_tones": tones}
        ),
        "off",
    )
    assert call(home, "turn_on", "siren.zwave", tone="Fire") == "on"
    with pytest.raises(ServiceValidationError):
        call(home, "turn_on", "siren.zwave", tone="Chime")


@pytest.mark.parametrize(
    "data", [{"volume_level": 1.5}, {"duration": -1}, {"duration": "long"}, {"tone": None}]
)
def test_bad_data_is_invalid(home: Home, data: dict[str, object]) -> None:
    with pytest.raises(InvalidServiceDataError):
        call(home, "turn_on", **data)


def test_a_siren_without_turn_off_cannot_toggle(home: Home) -> None:
    home.add_entity(EntityEntry("siren.on_only", "On only", supported_features=1), "off")
    with pytest.raises(ServiceNotSupportedError):
        call(home, "toggle", "siren.on_only")


@pytest.mark.parametrize("tone", [1, "1", "Burglar"])
def test_a_mappings_ids_read_from_json_match_a_tone_given_as_a_number(
    home: Home, tone: object
) -> None:
    # A Z-Wave siren holds {1: "Burglar"}; Home Assistant's JSON (a snapshot) writes the ids as
    # text, and HA coerces a tone "1" to 1, which the siren has.
    home.add_entity(
        EntityEntry(
            "siren.zwave",
            "Z",
            supported_features=7,
            capabilities={"available_tones": {"1": "Burglar"}},
        ),
        "off",
    )
    assert call(home, "turn_on", "siren.zwave", tone=tone) == "on"


@pytest.mark.parametrize(("is_on", "state"), [(True, "on"), (False, "off"), (None, "unknown")])
def test_an_inventory_siren_is_on_as_its_argument_says(is_on: bool | None, state: str) -> None:
    attributes = {"supported_features": 3} | ({} if is_on is None else {"is_on": is_on})
    inventory = {"entities": [{"id": "siren.hall", "attributes": attributes}]}
    home, _ = import_ha_snapshot(inventory)
    assert home.state("siren.hall").state == state
    assert "is_on" not in home.state("siren.hall").attributes
