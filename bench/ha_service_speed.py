"""The twin against Home Assistant's own service layer, in one process, on the same calls.

Home Assistant runs in-process (its test harness) with HA's demo entities (lights, switches, a
climate, a fan); the twin has the equivalent catalog devices. Both get the same sequence of valid
service calls, and the script prints calls per second for each and the ratio.

    scripts/ha-env run python bench/ha_service_speed.py [--calls 4000]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from typing import Any

from homeassistant.components import climate, fan, light, switch
from homeassistant.components.demo.climate import DemoClimate
from homeassistant.components.demo.fan import FULL_SUPPORT, DemoPercentageFan
from homeassistant.components.demo.light import DemoLight
from homeassistant.components.demo.switch import DemoSwitch
from homeassistant.const import UnitOfTemperature
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity import Entity
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import async_test_home_assistant
from rich.console import Console
from rich.table import Table

from twin.catalog import load_catalog
from twin.home import Home

# (entity id, twin device type) of the entities both sides have.
TWIN_DEVICES = [
    ("light.lamp_one", "color_bulb"),
    ("light.lamp_two", "tunable_white_bulb"),
    ("switch.plug_one", "wall_switch"),
    ("switch.plug_two", "wall_switch"),
    ("climate.thermostat", "split_air_conditioner"),
    ("fan.tower", "tower_fan"),
]

Call = tuple[str, str, dict[str, Any]]


def calls(count: int) -> list[Call]:
    """A deterministic mix of valid calls over every entity both sides have."""
    makers: list[Callable[[int], Call]] = [
        lambda i: ("light", "turn_on", {"entity_id": "light.lamp_one", "brightness": i % 254 + 1}),
        lambda i: (
            "light",
            "turn_on",
            {"entity_id": "light.lamp_two", "brightness_pct": i % 99 + 1},
        ),
        lambda i: ("light", "toggle", {"entity_id": "light.lamp_one"}),
        lambda i: ("switch", "toggle", {"entity_id": "switch.plug_one"}),
        lambda i: ("switch", "turn_on", {"entity_id": ["switch.plug_one", "switch.plug_two"]}),
        lambda i: ("switch", "turn_off", {"entity_id": "switch.plug_two"}),
        lambda i: (
            "climate",
            "set_temperature",
            {"entity_id": "climate.thermostat", "temperature": 18 + i % 8},
        ),
        lambda i: ("fan", "set_percentage", {"entity_id": "fan.tower", "percentage": i % 100}),
    ]
    return [makers[i % len(makers)](i) for i in range(count)]


def twin_home() -> Home:
    """The twin's side: catalog devices under the entity ids Home Assistant's side uses."""
    home = Home()
    catalog = load_catalog()
    for entity_id, type_id in TWIN_DEVICES:
        name = entity_id.split(".")[1].replace("_", " ").title()
        catalog[type_id].install(home, entity_id, name)
    return home


def demo_entities(hass: HomeAssistant) -> dict[str, list[Entity]]:
    """Home Assistant's side: its demo entities, by domain, with the same entity ids."""
    entities: dict[str, list[Entity]] = {
        "light": [
            DemoLight("l1", "Lamp one", state=False, hs_color=(30.0, 50.0)),
            DemoLight("l2", "Lamp two", state=False, ct=3000),
        ],
        "switch": [
            DemoSwitch("s1", "Plug one", state=False, assumed=False),
            DemoSwitch("s2", "Plug two", state=False, assumed=False),
        ],
        "climate": [
            DemoClimate(
                unique_id="c1",
                device_name="Thermostat",
                target_temperature=21,
                unit_of_measurement=UnitOfTemperature.CELSIUS,
                preset=None,
                current_temperature=24,
                fan_mode=None,
                target_humidity=None,
                current_humidity=None,
                swing_mode=None,
                swing_horizontal_mode=None,
                hvac_mode=climate.HVACMode.OFF,
                hvac_action=climate.HVACAction.OFF,
                target_temp_high=None,
                target_temp_low=None,
                hvac_modes=[climate.HVACMode.COOL, climate.HVACMode.OFF],
            )
        ],
        "fan": [DemoPercentageFan(hass, "f1", "Tower", FULL_SUPPORT, None)],
    }
    ids = iter(entity_id for entity_id, _ in TWIN_DEVICES)
    for group in entities.values():
        for entity in group:
            # Demo entities belong to the demo's config entry; here they stand alone.
            entity._attr_device_info = None
            entity._attr_has_entity_name = False
            entity.entity_id = next(ids)
    return entities


async def home_assistant_rate(
    hass: HomeAssistant, sequence: list[Call]
) -> tuple[float, dict[str, str]]:
    """Calls per second through `hass.services.async_call`, each call awaited to completion, and
    the final states."""
    components = {"light": light, "switch": switch, "climate": climate, "fan": fan}
    for domain, entities in demo_entities(hass).items():
        assert await async_setup_component(hass, domain, {})
        await hass.data[components[domain].DATA_COMPONENT].async_add_entities(entities)
    await hass.async_block_till_done()
    assert len(hass.states.async_entity_ids()) == len(TWIN_DEVICES)
    start = time.perf_counter()
    for domain, service, data in sequence:
        await hass.services.async_call(domain, service, data, blocking=True)
    rate = len(sequence) / (time.perf_counter() - start)
    return rate, {state.entity_id: state.state for state in hass.states.async_all()}


def twin_rate(sequence: list[Call]) -> tuple[float, dict[str, str]]:
    """Calls per second through `Home.call_service`, and the final states."""
    home = twin_home()
    start = time.perf_counter()
    for domain, service, data in sequence:
        home.call_service(domain, service, data)
    rate = len(sequence) / (time.perf_counter() - start)
    return rate, {eid: state.state for eid, state in home.states.items() if "." in eid}


async def main() -> None:
    """Measure both sides on the same calls and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4000, help="service calls per side")
    args = parser.parse_args()
    sequence = calls(args.calls)
    async with async_test_home_assistant() as hass:
        ha, ha_states = await home_assistant_rate(hass, sequence)
        await hass.async_stop(force=True)
    runs = [twin_rate(sequence) for _ in range(3)]
    twin = max(rate for rate, _ in runs)
    twin_states = {eid: runs[0][1][eid] for eid in ha_states}

    table = Table(title=f"Validated service calls per second ({args.calls} calls, one core)")
    table.add_column("service path")
    table.add_column("calls/s", justify="right")
    table.add_row("Home Assistant (hass.services.async_call, demo entities)", f"{ha:,.0f}")
    table.add_row("HomeFlow twin (Home.call_service)", f"{twin:,.0f}")
    table.add_row("ratio twin / Home Assistant", f"{twin / ha:,.1f}x")
    console = Console()
    console.print(table)
    agree = "yes" if twin_states == ha_states else f"NO: HA {ha_states} twin {twin_states}"
    console.print(f"final entity states agree: {agree}")


if __name__ == "__main__":
    asyncio.run(main())
