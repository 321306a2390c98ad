"""The device catalog: every device type installs, and malformed types are refused clearly."""

from __future__ import annotations

from typing import Any

import pytest

from twin.catalog import DevicePhysics, load_catalog, parse_device_type, slugify
from twin.errors import HomeDefinitionError
from twin.home import Home
from twin.registry import Area


@pytest.mark.parametrize("type_id", sorted(load_catalog()))
def test_every_device_type_installs(type_id: str) -> None:
    home = Home()
    home.add_area(Area("den", "Den"))
    device_type = load_catalog()[type_id]
    device = device_type.install(home, "dev1", "Den Thing", "den", model=1)
    assert device.manufacturer, device.model
    assert len(home.entities) == len(device_type.entities)
    for entity_id, entry in home.entities.items():
        assert entry.device_id == "dev1"
        assert entity_id.split(".")[1].startswith("den_thing")
        assert home.area_of(entity_id) == "den"


def test_two_devices_of_a_type_need_distinct_names() -> None:
    home = Home()
    plug = load_catalog()["smart_plug"]
    plug.install(home, "a", "Desk Plug")
    with pytest.raises(HomeDefinitionError, match="already"):
        plug.install(home, "b", "Desk plug")


def test_slugify_matches_home_assistant_entity_ids() -> None:
    assert slugify("Kid's Room Lamp #2") == "kid_s_room_lamp_2"
    assert slugify("  ") == "unnamed"


GOOD: dict[str, Any] = {
    "category": "switch",
    "models": [["Acme", "One"]],
    "entities": [{"domain": "switch", "state": "off"}],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"models": []}, "at least one model"),
        ({"entities": []}, "at least one model and one entity"),
        ({"entities": [{"domain": "sun"}]}, "domain 'sun' is not modelled"),
        ({"entities": [{"domain": "switch", "features": ["warp"]}]}, "no feature 'warp'"),
        ({"entities": [{"domain": "switch"}, {"domain": "sensor"}]}, "keys must be unique"),
        ({"entities": [{"domain": "switch", "colour": "red"}]}, "colour"),
        ({"category": None, "models": None}, "TypeError"),
    ],
)
def test_malformed_device_types_name_file_and_type(change: dict[str, Any], message: str) -> None:
    with pytest.raises(HomeDefinitionError, match=f"lamps.yaml: device type 'x'.*{message}"):
        parse_device_type("x", {**GOOD, **change}, "lamps.yaml")


LAMP: dict[str, Any] = {
    "category": "light",
    "models": [["Acme", "Lamp"]],
    "entities": [{"domain": "light", "state": "off"}],
}


@pytest.mark.parametrize(
    ("physics", "message"),
    [
        ({"lumen": 900}, "unknown physics key 'lumen'; known: \\['lumens', 'capacity', 'role'\\]"),
        ({"lumens": 0}, "physics lumens must be a number above 0, got 0"),
        ({"lumens": "bright"}, "physics lumens must be a number above 0"),
        ({"lumens": True}, "physics lumens must be a number above 0"),
        ({"lumens": float("inf")}, "physics lumens must be a number above 0"),
        ({"role": "heater"}, "physics role must be one of \\['whole_home', 'room_valve'"),
        ({"role": ["purifier"]}, "physics role must be one of"),
        ({"capacity": 5}, "physics capacity 5 needs a climate entity"),
        ({"role": "purifier"}, "physics role 'purifier' needs a fan entity"),
        ([{"lumens": 900}], "physics must be a mapping of \\['lumens', 'capacity', 'role'\\]"),
    ],
)
def test_malformed_physics_names_file_and_type(physics: object, message: str) -> None:
    with pytest.raises(HomeDefinitionError, match=f"lamps.yaml: device type 'x': {message}"):
        parse_device_type("x", {**LAMP, "physics": physics}, "lamps.yaml")


def test_physics_numbers_are_read_as_floats() -> None:
    lamp = parse_device_type("x", {**LAMP, "physics": {"lumens": 900}}, "lamps.yaml")
    assert lamp.physics == DevicePhysics(lumens=900.0)
    assert isinstance(lamp.physics.lumens, float)


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Living Room", "living_room"),
        ("Leo's Room", "leo_s_room"),
        ("Étage", "etage"),
        ("Küche", "kuche"),
        ("居間", "ju_jian"),
        ("São Paulo 🏠", "sao_paulo"),
        ("🏠", "unnamed"),
    ],
)
def test_slugs_transliterate_as_home_assistants(name: str, slug: str) -> None:
    """Imported areas and floors without ids get Home Assistant's ids (homeassistant.util.slugify):
    an accented or non-Latin name keeps its letters instead of losing them."""
    assert slugify(name) == slug
