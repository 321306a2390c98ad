"""The agent's tools inside Home Assistant (HassBackend, HomeFlow's LLM API) keep the contract.

The contract's scripted tool calls run through HassBackend on the harness's `hass` and through
TwinBackend on an independent twin of the same home (its export). Beyond the contract: only
exposed entities exist for the agent, only the policy's actions run, and the LLM API offers the
same tools to conversation agents.
"""

from __future__ import annotations

from typing import Any

import probatio
import pytest
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import Context, HomeAssistant, ServiceCall
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.backend import HassBackend
from custom_components.homeflow.const import (
    CONF_HOME,
    CONF_SOURCE,
    DOMAIN,
    HOMEFLOW_LLM_API,
    SOURCE_IMPORT,
)
from tests.integration.contract import assert_keeps_the_contract
from twin.auditor import CONFIRMING_POLICY
from twin.home import Home
from twin.homefile import dump_home, load_home
from twin.homemaker import make_home
from twin.tools import TOOL_SCHEMAS, argument_mismatch

# A generated home: its floor and area ids are those Home Assistant makes of their names.
SEED, HOME_TYPE, CITY = 3, "house", "Oslo"
HIDDEN = "light.kitchen_under_cabinet_lights"  # beside SHOWN in the kitchen
SHOWN = "light.kitchen_ceiling_light"
LOCK = "lock.kitchen_back_door_lock"
GARAGE = "cover.garage_door"


@pytest.fixture
async def twin(hass: HomeAssistant) -> Home:
    """The home, set up after the core integration (which keeps what is exposed), with every
    entity exposed to Assist; returns its independent twin, the home's export."""
    assert await async_setup_component(hass, "homeassistant", {})
    home = make_home(SEED, HOME_TYPE, city=CITY)
    entry = MockConfigEntry(
        domain=DOMAIN,
        data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(home)},
        options={"physics": False},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    answer = await hass.services.async_call(
        DOMAIN,
        "export_snapshot",
        {"config_entry_id": entry.entry_id, "format": "home_file"},
        blocking=True,
        return_response=True,
    )
    assert answer is not None
    for entity_id in home.states:
        async_expose_entity(hass, "conversation", entity_id, True)
    return load_home(str(answer["home"]))


async def kitchen_lights_off(hass: HomeAssistant) -> None:
    """Start from the kitchen's lights off, whatever the generated home's hour made them."""
    await hass.services.async_call("light", "turn_off", {"area_id": "kitchen"}, blocking=True)
    assert {hass.states.get(e).state for e in (SHOWN, HIDDEN)} == {"off"}


def llm_context() -> llm.LLMContext:
    return llm.LLMContext(
        platform=DOMAIN, context=Context(), language="en", assistant="conversation", device_id=None
    )


async def test_the_tools_agree_inside_home_assistant_and_on_the_twin(
    hass: HomeAssistant, twin: Home
) -> None:
    await assert_keeps_the_contract(HassBackend(hass), twin)


async def test_unexposed_entities_are_unknown_and_left_alone(
    hass: HomeAssistant, twin: Home
) -> None:
    await kitchen_lights_off(hass)
    async_expose_entity(hass, "conversation", HIDDEN, False)
    backend = HassBackend(hass)
    listed = await backend.run_tool("list_entities", {"area": "kitchen", "domain": "light"})
    assert [e["entity_id"] for e in listed["entities"]] == [SHOWN]
    assert HIDDEN not in await backend.states()
    assert all(HIDDEN not in dict(a.entities) for f in await backend.layout() for a in f.areas)
    for name in ("get_state", "describe"):
        refused = await backend.run_tool(name, {"entity_id": HIDDEN})
        assert refused["error"]["code"] == "entity_not_found"
    turn_on = {"domain": "light", "service": "turn_on"}
    refused = await backend.run_tool("call_service", {**turn_on, "target": {"entity_id": HIDDEN}})
    assert refused["error"]["code"] == "entity_not_found"
    assert hass.states.get(HIDDEN).state == "off"
    # An area reaches only its exposed entities.
    done = await backend.run_tool("call_service", {**turn_on, "target": {"area_id": "kitchen"}})
    assert [state["entity_id"] for state in done["changed"]] == [SHOWN]
    assert (hass.states.get(SHOWN).state, hass.states.get(HIDDEN).state) == ("on", "off")
    everything = await backend.run_tool(
        "call_service", {"domain": "light", "service": "turn_off", "target": {"entity_id": "all"}}
    )
    assert SHOWN in [state["entity_id"] for state in everything["changed"]]
    assert HIDDEN not in [state["entity_id"] for state in everything["changed"]]


async def test_actions_outside_the_policy_are_refused(hass: HomeAssistant, twin: Home) -> None:
    ran: list[ServiceCall] = []
    hass.services.async_register("script", "turn_on", ran.append)
    backend = HassBackend(hass, policy=CONFIRMING_POLICY)
    cases = [
        ("script", "turn_on", {"entity_id": SHOWN}, "forbidden_domain"),
        ("homeassistant", "restart", None, "forbidden_service"),
        ("lock", "unlock", {"entity_id": LOCK}, "confirmation_required"),
        ("cover", "open_cover", {"area_id": "garage"}, "confirmation_required"),
        ("homeassistant", "toggle", {"area_id": "garage"}, "confirmation_required"),
    ]
    for domain, service, target, code in cases:
        arguments = {"domain": domain, "service": service, "target": target}
        refused = await backend.run_tool("call_service", arguments)
        assert refused["error"]["code"] == code, arguments
    assert ran == []
    assert hass.states.get(LOCK).state == "locked"
    assert hass.states.get(GARAGE).state == "closed"


async def test_a_sensitive_action_runs_once_the_user_says_yes(
    hass: HomeAssistant, twin: Home
) -> None:
    """The default policy unlocks as Home Assistant lets any agent; the confirming one asks,
    and the user's yes in the conversation lets the same call through."""
    garage = {"domain": "cover", "service": "open_cover", "target": {"area_id": "garage"}}
    backend = HassBackend(hass, policy=CONFIRMING_POLICY)
    refused = await backend.run_tool("call_service", garage)
    assert refused["error"]["message"].startswith(f"cover.open_cover on {GARAGE} needs the user")
    backend.confirmation.hear("No")
    assert (await backend.run_tool("call_service", garage))["success"] is False
    backend.confirmation.hear("Yes, please")
    done = await backend.run_tool("call_service", garage)
    assert [state["entity_id"] for state in done["changed"]] == [GARAGE]
    assert hass.states.get(GARAGE).state in ("opening", "open")
    unlock = {"domain": "lock", "service": "unlock", "target": {"entity_id": LOCK}}
    assert (await HassBackend(hass).run_tool("call_service", unlock))["success"] is True
    assert hass.states.get(LOCK).state == "unlocked"


# Arguments each tool's schema takes or refuses, to compare the LLM API's parameters with.
SAMPLES: list[dict[str, Any]] = [
    {},
    {"area": "Kitchen"},
    {"area": None, "domain": "light"},
    {"area": 3},
    {"entity_id": "light.x"},
    {"entity_id": ["light.x"]},
    {"domain": "light", "service": "turn_on"},
    {"domain": "light", "service": "turn_on", "target": {"entity_id": ["light.x"]}, "data": {}},
    {"domain": "light", "service": "turn_on", "target": {"area_id": 3}},
    {"domain": "light", "service": "turn_on", "target": {"label_id": "x"}},
    {"domain": "light", "service": "turn_on", "target": None, "data": {"brightness": 3}},
    {"domain": "light", "service": "turn_on", "data": "bright"},
    {"domain": "light", "service": "turn_on", "extra": 1},
]


async def test_the_llm_api_offers_the_tools_and_acts_on_the_home(
    hass: HomeAssistant, twin: Home
) -> None:
    await kitchen_lights_off(hass)
    assert HOMEFLOW_LLM_API in [api.id for api in llm.async_get_apis(hass)]
    instance = await llm.async_get_api(hass, HOMEFLOW_LLM_API, llm_context())
    schemas = {s["function"]["name"]: s["function"] for s in TOOL_SCHEMAS}
    assert [tool.name for tool in instance.tools] == [n for n in schemas if n != "pyexec"]
    for tool in instance.tools:
        parameters = schemas[tool.name]["parameters"]
        assert tool.description == schemas[tool.name]["description"]
        for sample in SAMPLES:
            try:
                tool.parameters(sample)
                accepted = True
            except probatio.Invalid:
                accepted = False
            assert accepted == (argument_mismatch(sample, parameters, "") is None), (tool, sample)
        openapi = probatio.to_openapi(tool.parameters, openapi_version="3.1.0")
        assert set(openapi["properties"]) == set(parameters["properties"])
        assert set(openapi.get("required", ())) == set(parameters["required"])
    assert SHOWN in instance.api_prompt
    assert "list_entities" in instance.api_prompt
    arguments = {"domain": "light", "service": "turn_on", "target": {"entity_id": SHOWN}}
    result = await instance.async_call_tool(llm.ToolInput("call_service", arguments))
    assert not result.error
    assert result.data["changed"][0]["state"] == "on"
    assert hass.states.get(SHOWN).state == "on"
    arguments["target"] = {"entity_id": "light.nowhere"}
    result = await instance.async_call_tool(llm.ToolInput("call_service", arguments))
    assert result.error
    assert result.data["error"]["code"] == "entity_not_found"
