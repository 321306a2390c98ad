"""A device type's physics parameters come from its YAML and reach the room physics."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import pytest
import yaml

from twin.catalog import DevicePhysics, load_catalog, parse_device_type, slugify
from twin.home import Home
from twin.outdoor import ConstantWeather, Outdoor
from twin.physics import DEFAULT_LUMENS, LIGHT_UTILISATION, ROOM_AREA_M2, type_physics
from twin.registry import Area, Device, EntityEntry, Floor
from twin.room import RoomClimate

HOUR = 3600.0
NIGHT = Outdoor(temperature=0.0, humidity=80.0, sun_elevation=-20.0, cloud_cover=1.0)


def shipped(file: str, type_id: str) -> dict[str, Any]:
    """A device type's YAML mapping as shipped in `twin/device_types/`."""
    raw: dict[str, Any] = yaml.safe_load(files("twin.device_types").joinpath(file).read_text())
    return raw[type_id]


def variant(
    monkeypatch: pytest.MonkeyPatch, file: str, type_id: str, physics: dict[str, Any]
) -> str:
    """Put into the catalog, for this test, a shipped device type with other physics."""
    raw = {**shipped(file, type_id), "physics": physics}
    variant_id = f"test_{type_id}"
    monkeypatch.setitem(load_catalog(), variant_id, parse_device_type(variant_id, raw, "test.yaml"))
    return variant_id


def make_home(*devices: str, room: RoomClimate | None = None) -> Home:
    """One room at night with catalog devices given as "type_id:Name"."""
    home = Home("Types", weather=ConstantWeather(NIGHT))
    home.add_floor(Floor("ground", "Ground"))
    home.add_area(Area("room", "Room", "ground"))
    for device in devices:
        type_id, _, name = device.partition(":")
        load_catalog()[type_id].install(home, slugify(name), name, "room")
    if room is not None:
        home.rooms["room"] = room
    return home


def call(home: Home, domain: str, service: str, entity_id: str, **data: Any) -> None:
    home.call_service(domain, service, data, {"entity_id": entity_id})


def test_the_shipped_types_declare_their_physics() -> None:
    catalog = load_catalog()
    assert catalog["ceiling_panel"].physics == DevicePhysics(lumens=2800.0)
    assert catalog["smart_thermostat"].physics == DevicePhysics(capacity=6.0, role="whole_home")
    assert catalog["air_purifier"].physics == DevicePhysics(role="purifier")
    assert catalog["dimmable_bulb"].physics == DevicePhysics()


def test_a_lamps_lumens_light_the_room(monkeypatch: pytest.MonkeyPatch) -> None:
    bright = variant(monkeypatch, "lights.yaml", "ceiling_panel", {"lumens": 5000})
    for type_id, lumens in [("ceiling_panel", 2800.0), (bright, 5000.0), ("dimmable_bulb", 800.0)]:
        home = make_home(f"{type_id}:Lamp")
        call(home, "light", "turn_on", "light.lamp", brightness=255)
        home.advance(60)
        lamp = LIGHT_UTILISATION / ROOM_AREA_M2 * lumens
        assert home.rooms["room"].illuminance == pytest.approx(lamp)


def test_a_heaters_capacity_sets_how_fast_it_heats(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = variant(
        monkeypatch, "climate.yaml", "radiator_thermostat", {"role": "room_valve", "capacity": 1}
    )
    cold = RoomClimate(temperature=15.0)
    rises = {}
    for type_id in ("radiator_thermostat", slow):
        heated, unheated = make_home(f"{type_id}:Radiator", room=cold), make_home(room=cold)
        call(heated, "climate", "set_temperature", "climate.radiator", temperature=22)
        heated.advance(600)
        unheated.advance(600)
        rises[type_id] = heated.rooms["room"].temperature - unheated.rooms["room"].temperature
    assert rises["radiator_thermostat"] == pytest.approx(5.0 / 6, abs=0.01)
    assert rises[slow] == pytest.approx(1.0 / 6, abs=0.01)


def test_a_fans_role_says_whether_it_cleans_the_air(monkeypatch: pytest.MonkeyPatch) -> None:
    cleaner = variant(monkeypatch, "air.yaml", "tower_fan", {"role": "purifier"})
    smoky = RoomClimate(pm25=80.0)
    pm25 = {}
    for type_id in ("tower_fan", cleaner):
        home = make_home(f"{type_id}:Fan", room=smoky)
        call(home, "fan", "set_percentage", "fan.fan", percentage=100)
        home.advance(HOUR)
        pm25[type_id] = home.rooms["room"].pm25
    assert pm25[cleaner] < pm25["tower_fan"] / 2


def test_devices_of_no_catalog_type_get_the_defaults() -> None:
    assert type_physics(None) == type_physics("imported_vendor_lamp") == DevicePhysics()
    home = make_home()
    home.add_device(Device("lamp", "Lamp", "Vendor", "X1", "room", "imported_vendor_lamp"))
    home.add_entity(
        EntityEntry(
            "light.lamp", "Lamp", "lamp", capabilities={"supported_color_modes": ["onoff"]}
        ),
        "on",
        {"color_mode": "onoff"},
    )
    home.advance(60)
    assert home.rooms["room"].illuminance == pytest.approx(
        LIGHT_UTILISATION / ROOM_AREA_M2 * DEFAULT_LUMENS
    )
