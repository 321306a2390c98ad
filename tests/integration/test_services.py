"""The homeflow.* actions: goals and their verification, reset, time, export and re-import."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import voluptuous as vol
from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.selector import validate_selector
from homeassistant.util import dt as dt_util
from homeassistant.util.yaml import load_yaml_dict
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.homeflow.const import DOMAIN
from custom_components.homeflow.services import EXPORT_SNAPSHOT_SCHEMA
from custom_components.homeflow.virtual_home import build_home
from twin.homefile import import_ha_snapshot, load_home

COMPONENT = Path(__file__).parents[2] / "custom_components" / DOMAIN
PLUG = "switch.smart_plug"
WALL = "switch.wall_switch"
PLUG_ON = f'state("{PLUG}") == "on"'
SERVICES = ["set_goal", "verify", "reset", "advance_time", "export_snapshot"]
# Valid data for each action besides the home.
DATA: dict[str, dict[str, Any]] = {
    "set_goal": {"conditions": [PLUG_ON]},
    "verify": {},
    "reset": {},
    "advance_time": {"seconds": 60},
    "export_snapshot": {},
}
RESPONDS = {"verify", "export_snapshot"}


async def _call(
    hass: HomeAssistant, service: str, entry: MockConfigEntry, **data: Any
) -> dict[str, Any] | None:
    """Call a homeflow action on `entry`'s home, with a response where the action gives one."""
    return await hass.services.async_call(
        DOMAIN,
        service,
        {"config_entry_id": entry.entry_id, **data},
        blocking=True,
        return_response=service in RESPONDS,
    )


async def _switch(hass: HomeAssistant, service: str, entity_id: str) -> None:
    await hass.services.async_call("switch", service, {"entity_id": entity_id}, blocking=True)


async def test_actions_are_registered_once_and_described(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert set(hass.services.async_services_for_domain(DOMAIN)) == set(SERVICES)
    # They stay registered when the home unloads: they belong to the integration.
    assert await hass.config_entries.async_unload(loaded_home.entry_id)
    assert set(hass.services.async_services_for_domain(DOMAIN)) == set(SERVICES)


def test_every_action_and_field_is_described_and_translated() -> None:
    described = load_yaml_dict(str(COMPONENT / "services.yaml"))
    strings = json.loads((COMPONENT / "strings.json").read_text())
    assert json.loads((COMPONENT / "translations" / "en.json").read_text()) == strings
    assert set(described) == set(SERVICES) == set(strings["services"])
    for service, description in described.items():
        translated = strings["services"][service]
        assert translated["name"]
        assert translated["description"]
        assert set(description["fields"]) == set(translated["fields"])
        for field in description["fields"].values():
            validate_selector(field["selector"])
    schema_fields = {str(key) for key in EXPORT_SNAPSHOT_SCHEMA.schema}
    assert schema_fields == set(described["export_snapshot"]["fields"])
    options = described["export_snapshot"]["fields"]["format"]["selector"]["select"]["options"]
    assert set(options) == set(strings["selector"]["export_format"]["options"])


# --- set_goal and verify -----------------------------------------------------------------------


async def test_verify_follows_the_goal(hass: HomeAssistant, loaded_home: MockConfigEntry) -> None:
    await _call(hass, "set_goal", loaded_home, conditions=[PLUG_ON])
    assert await _call(hass, "verify", loaded_home) == {
        "done": False,
        "conditions": [{"condition": PLUG_ON, "satisfied": False, "error": None}],
        "collateral": [],
    }

    await _switch(hass, "turn_on", PLUG)
    assert await _call(hass, "verify", loaded_home) == {
        "done": True,
        "conditions": [{"condition": PLUG_ON, "satisfied": True, "error": None}],
        "collateral": [],
    }

    await _switch(hass, "turn_on", WALL)
    await _call(hass, "advance_time", loaded_home, seconds=3600)  # sensors move: not collateral
    report = await _call(hass, "verify", loaded_home)
    assert report is not None
    assert report["done"] is True
    assert WALL in report["collateral"]
    assert not [eid for eid in report["collateral"] if "sensor." in eid]


async def test_a_new_goal_replaces_the_old_and_starts_now(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    await _call(hass, "set_goal", loaded_home, conditions=[PLUG_ON])
    await _switch(hass, "turn_on", WALL)
    unchanged = f'unchanged("{WALL}")'
    # One condition may be given as a plain string.
    await _call(hass, "set_goal", loaded_home, conditions=unchanged)
    assert await _call(hass, "verify", loaded_home) == {
        "done": True,
        "conditions": [{"condition": unchanged, "satisfied": True, "error": None}],
        "collateral": [],
    }
    await _switch(hass, "turn_off", WALL)
    report = await _call(hass, "verify", loaded_home)
    assert report is not None
    assert report["conditions"][0]["satisfied"] is False


async def test_a_condition_that_cannot_be_evaluated_reports_why(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    condition = f'attr("{PLUG}", "friendly_name") > 3'
    await _call(hass, "set_goal", loaded_home, conditions=[PLUG_ON, condition])
    report = await _call(hass, "verify", loaded_home)
    assert report is not None
    assert report["done"] is False
    failed = report["conditions"][1]
    assert failed["satisfied"] is False
    assert "Smart Plug" in failed["error"]


@pytest.mark.parametrize(
    ("condition", "quoted"),
    [
        ('state("switch.smart_plug") == ', "line 1, column"),
        ('state("switch.no_such_plug") == "on"', "switch.no_such_plug"),
        ('area("attic").temperature > 20', "'attic'"),
        ("__import__('os')", "not allowed"),
    ],
)
async def test_a_bad_condition_is_refused_with_the_twins_reason(
    hass: HomeAssistant, loaded_home: MockConfigEntry, condition: str, quoted: str
) -> None:
    await _call(hass, "set_goal", loaded_home, conditions=[PLUG_ON])
    with pytest.raises(ServiceValidationError) as caught:
        await _call(hass, "set_goal", loaded_home, conditions=[PLUG_ON, condition])
    assert caught.value.translation_domain == DOMAIN
    assert caught.value.translation_key == "invalid_condition"
    assert str(caught.value).startswith("The goal cannot be set: Condition")
    assert quoted in str(caught.value)
    # The earlier goal stands.
    report = await _call(hass, "verify", loaded_home)
    assert report is not None
    assert [c["condition"] for c in report["conditions"]] == [PLUG_ON]


@pytest.mark.parametrize("conditions", [[], [{"state": "on"}], None])
async def test_set_goal_needs_a_list_of_texts(
    hass: HomeAssistant, loaded_home: MockConfigEntry, conditions: Any
) -> None:
    with pytest.raises(vol.Invalid):
        await _call(hass, "set_goal", loaded_home, conditions=conditions)


async def test_verify_without_a_goal_says_to_set_one(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    with pytest.raises(ServiceValidationError, match=r"homeflow\.set_goal") as caught:
        await _call(hass, "verify", loaded_home)
    assert caught.value.translation_key == "no_goal"


# --- which home -----------------------------------------------------------------------------


@pytest.mark.parametrize("service", SERVICES)
async def test_every_action_needs_a_loaded_homeflow_home(
    hass: HomeAssistant, loaded_home: MockConfigEntry, service: str
) -> None:
    other = MockConfigEntry(domain="demo", title="Not a home")
    other.add_to_hass(hass)
    unloaded = MockConfigEntry(domain=DOMAIN, title="Cabin", data=dict(loaded_home.data))
    unloaded.add_to_hass(hass)
    for entry, key in [
        (MockConfigEntry(domain=DOMAIN, entry_id="nope"), "service_config_entry_not_found"),
        (other, "service_config_entry_wrong_domain"),
        (unloaded, "service_config_entry_not_loaded"),
    ]:
        with pytest.raises(ServiceValidationError) as caught:
            await _call(hass, service, entry, **DATA[service])
        assert caught.value.translation_key == key
    with pytest.raises(vol.Invalid):
        await hass.services.async_call(
            DOMAIN, service, DATA[service], blocking=True, return_response=service in RESPONDS
        )


async def test_two_homes_are_kept_apart(hass: HomeAssistant, loaded_home: MockConfigEntry) -> None:
    second = MockConfigEntry(
        domain=DOMAIN,
        title="Cabin",
        unique_id="cabin",
        data=dict(loaded_home.data),
        options={"physics": False},
    )
    second.add_to_hass(hass)
    assert await hass.config_entries.async_setup(second.entry_id)
    await hass.async_block_till_done()
    await _call(hass, "set_goal", second, conditions=[PLUG_ON])
    await _call(hass, "advance_time", second, seconds=600)
    assert second.runtime_data.home.now == loaded_home.runtime_data.home.now + 600
    with pytest.raises(ServiceValidationError):
        await _call(hass, "verify", loaded_home)


# --- reset and time ---------------------------------------------------------------------------


async def test_reset_returns_to_the_initial_state_and_drops_the_goal(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    virtual = loaded_home.runtime_data
    initial = build_home(loaded_home.data, dt_util.now())
    await _call(hass, "set_goal", loaded_home, conditions=[PLUG_ON])
    await _switch(hass, "turn_on", PLUG)
    await _call(hass, "advance_time", loaded_home, seconds=6 * 3600)
    moved = [eid for eid in initial.states if virtual.home.states[eid] != initial.states[eid]]
    assert PLUG in moved
    assert any(eid.startswith("sensor.") for eid in moved)

    await _call(hass, "reset", loaded_home)
    assert virtual.home.now == initial.now
    assert virtual.home.rooms == initial.rooms
    assert virtual.home.states == initial.states
    for entity_id in moved:
        if (state := hass.states.get(entity_id)) is not None:
            assert state.state == initial.states[entity_id].state, entity_id
    assert hass.states.get(PLUG).state == "off"
    with pytest.raises(ServiceValidationError, match="no goal"):
        await _call(hass, "verify", loaded_home)


async def test_advance_time_runs_the_physics_now(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    virtual = loaded_home.runtime_data
    start = virtual.home.now
    await _call(hass, "advance_time", loaded_home, seconds=3 * 3600)
    assert virtual.home.now == start + 3 * 3600
    sensors = [eid for eid in virtual.home.states if eid.startswith("sensor.")]
    for entity_id in sensors:
        assert hass.states.get(entity_id).state == virtual.home.states[entity_id].state


@pytest.mark.parametrize("seconds", [0, -5, 604801, "soon"])
async def test_advance_time_refuses_out_of_range(
    hass: HomeAssistant, loaded_home: MockConfigEntry, seconds: Any
) -> None:
    start = loaded_home.runtime_data.home.now
    with pytest.raises(vol.Invalid):
        await _call(hass, "advance_time", loaded_home, seconds=seconds)
    assert loaded_home.runtime_data.home.now == start


async def test_advance_time_takes_up_to_a_week(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    start = loaded_home.runtime_data.home.now
    await _call(hass, "advance_time", loaded_home, seconds=604800)
    assert loaded_home.runtime_data.home.now == start + 604800


async def _one_tick(hass: HomeAssistant, entry: MockConfigEntry, tick: int, speed: float) -> float:
    """The simulated seconds one tick of the physics clock steps, with these options."""
    options = {"physics": True, "tick": tick, "speed": speed}
    hass.config_entries.async_update_entry(entry, options=options)
    assert await hass.config_entries.async_reload(entry.entry_id)
    start = entry.runtime_data.home.now
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=tick + 1))
    await hass.async_block_till_done()
    return float(entry.runtime_data.home.now - start)


async def test_with_physics_on_time_also_runs_on_its_own(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert await _one_tick(hass, loaded_home, tick=30, speed=60.0) == 30 * 60
    now = loaded_home.runtime_data.home.now
    await _call(hass, "advance_time", loaded_home, seconds=60)
    assert loaded_home.runtime_data.home.now == now + 60


async def test_options_saved_before_the_limit_step_at_most_a_day(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """The options form refuses more than a simulated day per tick; an entry that holds more
    (saved before the limit) is stepped a day at a time, not blocking the event loop longer."""
    assert await _one_tick(hass, loaded_home, tick=3600, speed=3600.0) == 86400


# --- export and import ------------------------------------------------------------------------


async def _import(hass: HomeAssistant, name: str, text: str) -> MockConfigEntry:
    """A new home made through the config flow's import step, beside the first: the first's
    areas, which hold its devices, are offered and not chosen."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "import_home"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"name": name, "home": text}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "rooms"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"]["areas"] == []
    await hass.async_block_till_done()
    return result["result"]


async def test_export_a_home_file_and_import_it_back(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    await _switch(hass, "turn_on", PLUG)
    await _call(hass, "advance_time", loaded_home, seconds=3600)
    home = loaded_home.runtime_data.home
    response = await _call(hass, "export_snapshot", loaded_home)  # a home file by default
    assert response is not None
    assert response == await _call(hass, "export_snapshot", loaded_home, format="home_file")
    text = response["home"]
    assert isinstance(text, str)
    assert load_home(text).states == home.states

    copy = await _import(hass, "Copy", text)
    assert copy.runtime_data.home.states == home.states
    assert hass.states.get(f"{PLUG}_2").state == "on"


async def test_export_a_snapshot_and_import_it_back(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    await _switch(hass, "turn_on", WALL)
    home = loaded_home.runtime_data.home
    response = await _call(hass, "export_snapshot", loaded_home, format="ha_snapshot")
    assert response is not None
    snapshot = response["home"]
    assert isinstance(snapshot, dict)
    text = json.dumps(snapshot)  # what a user pastes into the import step
    assert import_ha_snapshot(snapshot)[0].states == home.states

    copy = await _import(hass, "Snapshot copy", text)
    assert copy.runtime_data.home.states == home.states
    assert hass.states.get(f"{WALL}_2").state == "on"


async def test_export_refuses_an_unknown_format(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    with pytest.raises(vol.Invalid):
        await _call(hass, "export_snapshot", loaded_home, format="csv")
