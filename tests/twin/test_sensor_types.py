"""The catalog's sensor and binary_sensor types: HA's device classes, units and state classes."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from twin.catalog import load_catalog
from twin.errors import ServiceNotFoundError
from twin.home import Home
from twin.registry import Area

# Per type: (domain, key, device class, unit, state class) of each entity.
Entity = tuple[str, str | None, str, str | None, str | None]
TEMPERATURE: Entity = ("sensor", "temperature", "temperature", "°C", "measurement")
HUMIDITY: Entity = ("sensor", "humidity", "humidity", "%", "measurement")
BATTERY: Entity = ("sensor", "battery", "battery", "%", "measurement")
EXPECTED: dict[str, list[Entity]] = {
    "temperature_sensor": [("sensor", None, "temperature", "°C", "measurement"), BATTERY],
    "temperature_humidity_sensor": [TEMPERATURE, HUMIDITY, BATTERY],
    "illuminance_sensor": [("sensor", None, "illuminance", "lx", "measurement"), BATTERY],
    "co2_sensor": [
        ("sensor", "co2", "carbon_dioxide", "ppm", "measurement"),
        TEMPERATURE,
        HUMIDITY,
        BATTERY,
    ],
    "air_quality_monitor": [
        ("sensor", "pm25", "pm25", "\u03bcg/m³", "measurement"),
        TEMPERATURE,
        HUMIDITY,
    ],
    "power_meter": [
        ("sensor", "power", "power", "W", "measurement"),
        ("sensor", "energy", "energy", "kWh", "total_increasing"),
    ],
    "motion_sensor": [
        ("binary_sensor", None, "motion", None, None),
        ("sensor", "illuminance", "illuminance", "lx", "measurement"),
        BATTERY,
    ],
    "door_sensor": [("binary_sensor", None, "door", None, None), BATTERY],
    "window_sensor": [("binary_sensor", None, "window", None, None), BATTERY],
    "water_leak_sensor": [("binary_sensor", None, "moisture", None, None), BATTERY],
}


def entity_id(domain: str, key: str | None) -> str:
    return f"{domain}.hall_device_{key}" if key else f"{domain}.hall_device"


@pytest.mark.parametrize("type_id", sorted(EXPECTED))
@pytest.mark.parametrize("model", [0, 1, 2])
def test_sensor_type_installs_with_home_assistants_classes_and_units(
    type_id: str, model: int
) -> None:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    device_type = load_catalog()[type_id]
    assert device_type.category == "sensor"
    device = device_type.install(home, "dev", "Hall device", "hall", model)
    assert device.manufacturer
    assert device.model
    expected = EXPECTED[type_id]
    assert len(home.states) == len(expected)
    for domain, key, device_class, unit, state_class in expected:
        state = home.state(entity_id(domain, key))
        assert state.attributes["device_class"] == device_class
        assert state.attributes.get("unit_of_measurement") == unit
        assert state.attributes.get("state_class") == state_class
        assert home.area_of(state.entity_id) == "hall"
        if domain == "binary_sensor":
            assert state.state == "off"
        else:
            assert float(state.state) >= 0
        category = home.entities[state.entity_id].entity_category
        assert category == ("diagnostic" if key == "battery" else None)


def test_sensors_yaml_holds_exactly_the_types_this_test_checks() -> None:
    raw = yaml.safe_load(files("twin.device_types").joinpath("sensors.yaml").read_text())
    assert set(raw) == set(EXPECTED)


def test_sensors_offer_no_services() -> None:
    home = Home()
    load_catalog()["motion_sensor"].install(home, "m", "Hall motion")
    with pytest.raises(ServiceNotFoundError, match=r"binary_sensor\.turn_on"):
        home.call_service(
            "binary_sensor", "turn_on", target={"entity_id": "binary_sensor.hall_motion"}
        )
    result = home.call_service(
        "homeassistant", "turn_on", target={"entity_id": "sensor.hall_motion_illuminance"}
    )
    assert result.entity_ids == ()
