"""The conversation agent in Home Assistant, against a fake OpenAI-compatible server on 127.0.0.1.

The server streams what a model would (tool calls in fragments, then text) over real HTTP; Home
Assistant runs the tools through the agent's LLM API on the loaded home, so the assertions are on
real entity states and on what the server was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_socket
from aiohttp import web
from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.config_entries import SOURCE_RECONFIGURE, SOURCE_USER, ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
from homeassistant.helpers import intent, llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from agent.prompt import ROLE
from custom_components.homeflow.const import (
    CONF_HOME,
    CONF_SOURCE,
    DEFAULT_MAX_TOOL_ROUNDS,
    DEFAULT_TIMEOUT,
    DOMAIN,
    HOMEFLOW_LLM_API,
    SOURCE_IMPORT,
)
from custom_components.homeflow.llm_api import DEFAULT_PROMPT
from twin.homefile import dump_home

from .conftest import every_device_home

AGENT = "conversation.homeflow_agent"
STRINGS = Path(__file__).parents[2] / "custom_components" / "homeflow" / "strings.json"
FORM_LABELS = json.loads(STRINGS.read_text())["config_subentries"]["conversation"]["step"]["user"][
    "data"
]


class FakeModelServer:
    """Streams the next of `replies` to each chat completion and records every request; lists
    one model at GET /v1/models."""

    def __init__(self) -> None:
        # A list of deltas is streamed; a status is answered with `error_text`.
        self.replies: list[list[dict[str, Any]] | int] = []
        self.error_text = "the model is not loaded"
        self.delay = 0.0  # seconds before each chat completion is answered
        self.requests: list[dict[str, Any]] = []
        self.url = ""

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(await request.json())
        await asyncio.sleep(self.delay)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, int):
            return web.Response(status=reply, text=self.error_text)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for delta in reply:
            chunk = {"choices": [{"index": 0, "delta": delta}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response


def tool_call(
    name: str, arguments: dict[str, Any], call_id: str = "call_1"
) -> list[dict[str, Any]]:
    """A tool call streamed as a model server does: name first, then the arguments in pieces."""
    text = json.dumps(arguments)
    head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name}}
    pieces = [text[: len(text) // 2], text[len(text) // 2 :]]
    return [
        {"role": "assistant", "tool_calls": [head]},
        *({"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces),
    ]


def said(*pieces: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": ""}, *({"content": p} for p in pieces)]


@pytest.fixture
async def server() -> AsyncIterator[FakeModelServer]:
    """The fake server, listening on 127.0.0.1 (the test plugin blocks other sockets)."""
    pytest_socket.enable_socket()
    pytest_socket.socket_allow_hosts(["127.0.0.1"])
    fake = FakeModelServer()
    app = web.Application()
    app.router.add_get("/v1/models", fake.models)
    app.router.add_post("/v1/chat/completions", fake.chat)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    fake.url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    yield fake
    await runner.cleanup()


async def load_home_with_agent(
    hass: HomeAssistant,
    server: FakeModelServer,
    llm_api: str = llm.LLM_API_ASSIST,
    **settings: int,
) -> MockConfigEntry:
    """The test home with one agent on `server` using `llm_api` (and its form's other
    `settings`), set up with Assist's exposure."""
    assert await async_setup_component(hass, "homeassistant", {})
    agent = ConfigSubentryData(
        data={"url": server.url, "model": "fake", "llm_hass_api": [llm_api], **settings},
        subentry_type="conversation",
        title="HomeFlow agent",
        unique_id=None,
    )
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Test Home",
        unique_id="test_home",
        data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(every_device_home())},
        options={"physics": False},
        subentries_data=[agent],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


def a_light_that_is_off(hass: HomeAssistant) -> tuple[str, str]:
    """(entity id, name) of a light that is off."""
    state = next(s for s in hass.states.async_all("light") if s.state == "off")
    return state.entity_id, state.attributes["friendly_name"]


async def converse(hass: HomeAssistant, text: str) -> conversation.ConversationResult:
    return await conversation.async_converse(hass, text, None, Context(), agent_id=AGENT)


def assist_turn_on(light: str, name: str) -> tuple[str, dict[str, Any]]:
    return "intent__HassTurnOn", {"name": name, "domain": ["light"]}


def homeflow_turn_on(light: str, name: str) -> tuple[str, dict[str, Any]]:
    target = {"entity_id": light}
    return "call_service", {"domain": "light", "service": "turn_on", "target": target}


@pytest.mark.parametrize(
    ("llm_api", "turn_on"),
    [(llm.LLM_API_ASSIST, assist_turn_on), (HOMEFLOW_LLM_API, homeflow_turn_on)],
)
async def test_the_agent_turns_on_a_light(
    hass: HomeAssistant,
    server: FakeModelServer,
    llm_api: str,
    turn_on: Callable[[str, str], tuple[str, dict[str, Any]]],
) -> None:
    await load_home_with_agent(hass, server, llm_api)
    light, name = a_light_that_is_off(hass)
    tool, arguments = turn_on(light, name)
    server.replies += [tool_call(tool, arguments), said("The light ", "is on.")]

    result = await converse(hass, f"Turn on the {name}")

    assert hass.states.get(light).state == "on"
    assert result.response.speech["plain"]["speech"] == "The light is on."
    first, second = server.requests
    assert first["model"] == "fake"
    assert first["stream"] is True
    system, user = first["messages"]
    assert system["role"] == "system"
    assert system["content"].startswith(DEFAULT_PROMPT)
    assert ROLE in system["content"]
    assert user == {"role": "user", "content": f"Turn on the {name}"}
    tools = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
    assert set(arguments) <= set(tools[tool]["parameters"]["properties"])
    # The second turn carries the call and its result, in the OpenAI format.
    call, result_message = second["messages"][2:]
    assert call["tool_calls"][0]["id"] == "call_1"
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == arguments
    assert result_message["role"] == "tool"
    assert result_message["tool_call_id"] == "call_1"
    assert result_message["name"] == tool
    assert light in result_message["content"]
    if llm_api == HOMEFLOW_LLM_API:  # the twin's own result, as in a training episode
        assert json.loads(result_message["content"])["success"] is True


def an_exposed_locked_door(hass: HomeAssistant) -> str:
    """A lock that is locked and takes no code, exposed to Assist (locks are not by default)."""
    state = next(
        s
        for s in hass.states.async_all("lock")
        if s.state == "locked" and not s.attributes.get("code_format")
    )
    async_expose_entity(hass, "conversation", state.entity_id, True)
    return state.entity_id


def results_sent(server: FakeModelServer) -> list[dict[str, Any]]:
    """The tool results the agent sent the model, in order (each request repeats the earlier)."""
    messages = server.requests[-1]["messages"]
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("answer", "state", "codes"),
    [
        ("Yes, please.", "unlocked", ["confirmation_required", None]),
        ("Oui", "unlocked", ["confirmation_required", None]),
        ("No, leave it locked.", "locked", ["confirmation_required", "confirmation_required"]),
    ],
)
async def test_an_agent_that_confirms_asks_before_it_unlocks(
    hass: HomeAssistant, server: FakeModelServer, answer: str, state: str, codes: list[Any]
) -> None:
    """Two turns of one conversation: the model's unlock is held back and it asks; the user's
    answer in the next turn decides whether its second call goes through."""
    await load_home_with_agent(hass, server, HOMEFLOW_LLM_API, confirm_sensitive=True)
    door = an_exposed_locked_door(hass)
    unlock = {"domain": "lock", "service": "unlock", "target": {"entity_id": door}}
    server.replies += [
        tool_call("call_service", unlock, "call_1"),
        said("Shall I unlock the door?"),
        tool_call("call_service", unlock, "call_2"),
        said("Done."),
    ]

    asked = await converse(hass, "Unlock the door")

    assert asked.response.speech["plain"]["speech"] == "Shall I unlock the door?"
    assert hass.states.get(door).state == "locked"
    (refused,) = results_sent(server)
    assert refused["error"]["message"].startswith(f"lock.unlock on {door} needs the user's")
    await conversation.async_converse(
        hass, answer, asked.conversation_id, Context(), agent_id=AGENT
    )

    assert hass.states.get(door).state == state
    found = [r["error"]["code"] if r["success"] is False else None for r in results_sent(server)]
    assert found == codes


async def test_a_yes_confirms_only_its_own_conversation(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server, HOMEFLOW_LLM_API, confirm_sensitive=True)
    door = an_exposed_locked_door(hass)
    unlock = {"domain": "lock", "service": "unlock", "target": {"entity_id": door}}
    server.replies += [
        tool_call("call_service", unlock, "call_1"),
        said("Shall I unlock the door?"),
        tool_call("call_service", unlock, "call_2"),
        said("Done."),
    ]
    await converse(hass, "Unlock the door")
    await converse(hass, "Yes")  # a new conversation: nothing was asked in it

    assert hass.states.get(door).state == "locked"
    assert [r["error"]["code"] for r in results_sent(server)] == ["confirmation_required"]


async def test_an_agent_that_does_not_confirm_unlocks_as_assist_would(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server, HOMEFLOW_LLM_API)
    door = an_exposed_locked_door(hass)
    unlock = {"domain": "lock", "service": "unlock", "target": {"entity_id": door}}
    server.replies += [tool_call("call_service", unlock), said("Unlocked.")]

    result = await converse(hass, "Unlock the door")

    assert hass.states.get(door).state == "unlocked"
    assert result.response.response_type is intent.IntentResponseType.ACTION_DONE


async def test_the_tool_loop_is_bounded(hass: HomeAssistant, server: FakeModelServer) -> None:
    await load_home_with_agent(hass, server)
    _, name = a_light_that_is_off(hass)
    server.replies.append(tool_call(*assist_turn_on("", name)))  # every time

    result = await converse(hass, "Keep turning it on")

    assert len(server.requests) == DEFAULT_MAX_TOOL_ROUNDS
    assert result.response.response_type is intent.IntentResponseType.ERROR
    assert f"after {DEFAULT_MAX_TOOL_ROUNDS} rounds" in result.response.speech["plain"]["speech"]


async def test_a_server_error_is_a_clear_conversation_error(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server)
    light, _ = a_light_that_is_off(hass)
    server.replies.append(400)

    result = await converse(hass, "Turn on the light")

    assert result.response.response_type is intent.IntentResponseType.ERROR
    speech = result.response.speech["plain"]["speech"]
    assert "problem talking to the model" in speech
    assert "HTTP 400: the model is not loaded" in speech
    assert hass.states.get(light).state == "off"


async def test_a_conversation_too_long_for_the_model_asks_for_a_new_one(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server)
    server.replies.append(400)
    server.error_text = json.dumps(
        {"error": {"message": "maximum context length is 8192 tokens", "code": 400}}
    )

    result = await converse(hass, "Turn on the light")

    assert result.response.response_type is intent.IntentResponseType.ERROR
    speech = result.response.speech["plain"]["speech"]
    assert "longer than the model can read; please start a new one" in speech
    assert "maximum context length is 8192 tokens" in speech
    assert len(server.requests) == 1


async def start_agent_flow(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "conversation"), context={"source": SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    return result


async def test_adding_an_agent(
    hass: HomeAssistant, server: FakeModelServer, loaded_home: MockConfigEntry
) -> None:
    assert await async_setup_component(hass, "homeassistant", {})  # always there in a real HA
    result = await start_agent_flow(hass, loaded_home)
    suggested = {
        str(key): key.description["suggested_value"]
        for key in result["data_schema"].schema
        if key.description and "suggested_value" in key.description
    }
    assert suggested["prompt"] == DEFAULT_PROMPT
    assert suggested["llm_hass_api"] == [HOMEFLOW_LLM_API]
    assert suggested["timeout"] == DEFAULT_TIMEOUT
    assert suggested["max_tool_rounds"] == DEFAULT_MAX_TOOL_ROUNDS
    assert suggested["confirm_sensitive"] is False

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {"name": "Kitchen agent", "url": server.url + "/", "model": "fake", "llm_hass_api": []},
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        "url": server.url,
        "model": "fake",
        "timeout": DEFAULT_TIMEOUT,
        "max_tool_rounds": DEFAULT_MAX_TOOL_ROUNDS,
        "confirm_sensitive": False,
    }
    await hass.async_block_till_done()
    # The home reloaded with the new agent, which answers without tools (no LLM API chosen).
    server.replies.append(said("Hello."))
    agent = "conversation.kitchen_agent"
    answer = await conversation.async_converse(hass, "Hi", None, Context(), agent_id=agent)
    assert answer.response.speech["plain"]["speech"] == "Hello."
    assert "tools" not in server.requests[0]

    subentry_id = next(iter(loaded_home.subentries))
    result = await hass.config_entries.subentries.async_init(
        (loaded_home.entry_id, "conversation"),
        context={"source": SOURCE_RECONFIGURE, "subentry_id": subentry_id},
    )
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            "url": server.url,
            "model": "fake",
            "prompt": "Be brief.",
            "timeout": 300.0,
            "confirm_sensitive": True,
        },
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert loaded_home.subentries[subentry_id].data == {
        "url": server.url,
        "model": "fake",
        "prompt": "Be brief.",
        "timeout": 300,
        "max_tool_rounds": DEFAULT_MAX_TOOL_ROUNDS,
        "confirm_sensitive": True,
    }


@pytest.mark.parametrize(
    ("fields", "errors"),
    [
        ({}, {"base": "url_or_path"}),
        ({"url": "URL", "model_path": "/models/qwen"}, {"base": "url_or_path"}),
        ({"url": "URL"}, {"model": "model_required"}),
        ({"url": "not a url", "model": "m"}, {"url": "invalid_url"}),
        ({"url": "http://127.0.0.1:9/v1", "model": "m"}, {"url": "cannot_connect"}),
        ({"url": "URL/nowhere", "model": "m"}, {"url": "cannot_connect"}),
        ({"url": "URL", "model": "qwen"}, {"model": "unknown_model"}),
        # This Python has no torch: a local model cannot run inside Home Assistant.
        ({"model_path": "/models/qwen"}, {"model_path": "local_model_unavailable"}),
    ],
)
async def test_an_agent_that_cannot_work_is_refused(
    hass: HomeAssistant,
    server: FakeModelServer,
    loaded_home: MockConfigEntry,
    fields: dict[str, str],
    errors: dict[str, str],
) -> None:
    result = await start_agent_flow(hass, loaded_home)
    fields = {key: value.replace("URL", server.url) for key, value in fields.items()}
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {"name": "Agent", **fields}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == errors
    if errors.get("url") == "cannot_connect":
        assert "/models" in result["description_placeholders"]["error"]
    if errors.get("model") == "unknown_model":  # what the server lists instead
        assert result["description_placeholders"]["error"] == f"{server.url} serves: fake"
    assert not loaded_home.subentries
    assert not server.requests


async def test_the_form_limits_the_timeout_and_the_tool_rounds(
    hass: HomeAssistant, server: FakeModelServer, loaded_home: MockConfigEntry
) -> None:
    result = await start_agent_flow(hass, loaded_home)
    fields = {"name": "Agent", "url": server.url, "model": "fake"}
    for bad in ({"timeout": 1}, {"timeout": 601}, {"max_tool_rounds": 0}):
        with pytest.raises(InvalidData):
            await hass.config_entries.subentries.async_configure(
                result["flow_id"], {**fields, **bad}
            )
    assert not loaded_home.subentries


async def test_the_agents_tool_rounds_are_its_own(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server, max_tool_rounds=3)
    _, name = a_light_that_is_off(hass)
    server.replies.append(tool_call(*assist_turn_on("", name)))  # every time

    result = await converse(hass, "Keep turning it on")

    assert len(server.requests) == 3
    speech = result.response.speech["plain"]["speech"]
    assert "after 3 rounds" in speech
    assert f"raise “{FORM_LABELS['max_tool_rounds']}”" in speech  # the form's field


async def test_a_model_too_slow_names_the_forms_timeout(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server, timeout=1)
    server.delay = 2
    server.replies.append(said("Too late."))

    result = await converse(hass, "Turn on the light")

    assert result.response.response_type is intent.IntentResponseType.ERROR
    speech = result.response.speech["plain"]["speech"]
    assert "did not answer within 1 s" in speech
    assert f"raise “{FORM_LABELS['timeout']}”" in speech


@pytest.mark.parametrize(
    "reply",
    [
        '<tool_response>{"success": true, "state": "on"}</tool_response>',
        "system_system_system_system",
        '{"success": true, "entity_id": "light.kitchen"}',
        "<|im_start|>user\nturn on the porch light<|im_end|>",
        "",
    ],
)
async def test_a_reply_of_only_markup_is_a_clear_error(
    hass: HomeAssistant, server: FakeModelServer, reply: str
) -> None:
    await load_home_with_agent(hass, server)
    server.replies.append(said(reply[: len(reply) // 2], reply[len(reply) // 2 :]))

    result = await converse(hass, "Turn on the porch light")

    assert result.response.response_type is intent.IntentResponseType.ERROR
    assert result.response.speech["plain"]["speech"].startswith(
        "Sorry, the model gave no answer I can say"
    )


async def test_markup_after_the_answer_is_not_spoken(
    hass: HomeAssistant, server: FakeModelServer
) -> None:
    await load_home_with_agent(hass, server)
    server.replies.append(
        said("It is ", "off.<|im_", "end|><|im_start|>user\nthanks<tool_response>{}")
    )

    result = await converse(hass, "Is the porch light on?")

    assert result.response.speech["plain"]["speech"] == "It is off."
    assert result.response.response_type is intent.IntentResponseType.QUERY_ANSWER


def homeflow_get_state(light: str, name: str) -> tuple[str, dict[str, Any]]:
    return "get_state", {"entity_id": light}


def homeflow_turn_on_nothing(light: str, name: str) -> tuple[str, dict[str, Any]]:
    return "call_service", {
        "domain": "light",
        "service": "turn_on",
        "target": {"entity_id": "light.nowhere"},
    }


@pytest.mark.parametrize(
    ("llm_api", "call", "expected"),
    [
        (HOMEFLOW_LLM_API, homeflow_turn_on, intent.IntentResponseType.ACTION_DONE),
        (llm.LLM_API_ASSIST, assist_turn_on, intent.IntentResponseType.ACTION_DONE),
        (HOMEFLOW_LLM_API, homeflow_get_state, intent.IntentResponseType.QUERY_ANSWER),
        (HOMEFLOW_LLM_API, homeflow_turn_on_nothing, intent.IntentResponseType.QUERY_ANSWER),
        (HOMEFLOW_LLM_API, None, intent.IntentResponseType.QUERY_ANSWER),
    ],
)
async def test_the_response_type_says_whether_the_home_changed(
    hass: HomeAssistant,
    server: FakeModelServer,
    llm_api: str,
    call: Callable[[str, str], tuple[str, dict[str, Any]]] | None,
    expected: intent.IntentResponseType,
) -> None:
    await load_home_with_agent(hass, server, llm_api)
    light, name = a_light_that_is_off(hass)
    if call is not None:
        server.replies.append(tool_call(*call(light, name)))
    server.replies.append(said("Done."))

    result = await converse(hass, f"Turn on the {name}")

    assert result.response.response_type is expected
    changed = hass.states.get(light).state == "on"
    assert changed == (expected is intent.IntentResponseType.ACTION_DONE)
