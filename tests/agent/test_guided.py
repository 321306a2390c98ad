"""Guided decoding: a random tiny model (conftest.py) pushed to start a tool call writes one that
fits the tools and the allowed entity ids, and writes garbage without the guide."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from agent.policies.guided import ACTION, REPLY, Guide, call_schema, guided_reading
from agent.policies.local import LocalPolicy
from twin.tools import TOOL_SCHEMAS, argument_mismatch

torch = pytest.importorskip("torch")

ENTITIES = ["light.kitchen", "light.porch", "cover.blinds"]
# The tools whose every string argument is a named thing, so a call has no free text.
TOOLS = [s for s in TOOL_SCHEMAS if s["function"]["name"] in {"list_entities", "get_state"}]
CHOICES = {
    "entity_id": ENTITIES,
    "domain": ["light", "cover"],
    "area": ["kitchen"],
    "floor": ["ground"],
}
CHAT = [
    {"role": "system", "content": "You run a home."},
    {"role": "user", "content": "Which lights are there?"},
]


def test_call_schema_holds_named_arguments_to_their_values() -> None:
    schema = call_schema(TOOL_SCHEMAS, {"entity_id": ENTITIES})
    names = [call["properties"]["name"]["const"] for call in schema["anyOf"]]
    assert names == [s["function"]["name"] for s in TOOL_SCHEMAS]
    get_state = schema["anyOf"][names.index("get_state")]["properties"]["arguments"]
    assert get_state["properties"]["entity_id"] == {"type": "string", "enum": ENTITIES}
    assert get_state["required"] == ["entity_id"]
    call_service = schema["anyOf"][names.index("call_service")]["properties"]["arguments"]
    target = call_service["properties"]["target"]["properties"]
    one = {"type": "string", "enum": ENTITIES}
    assert target["entity_id"] == {"anyOf": [one, {"type": "array", "items": one, "minItems": 1}]}
    assert (
        target["area_id"]
        == TOOL_SCHEMAS[3]["function"]["parameters"]["properties"]["target"]["properties"][
            "area_id"
        ]
    )


def test_guided_calls_fit_the_tools_and_the_entities(eager: tuple[Any, Any]) -> None:
    torch.manual_seed(0)  # the sampled calls, whatever ran before
    # Room for a sampled call (a list of entity ids can be long); one cut short is no call.
    policy = LocalPolicy(*eager, max_new_tokens=200, guided=True, choices=CHOICES)
    parameters = {s["function"]["name"]: s["function"]["parameters"] for s in TOOLS}
    for temperature in (0.0, 1.0, 1.0, 1.0):
        message = policy.generate(CHAT, TOOLS, temperature=temperature)
        assert message.parse_errors == ()
        assert len(message.tool_calls) == 1, message
        call = message.tool_calls[0]
        assert argument_mismatch(call.arguments, parameters[call.name], "") is None
        assert all(value in CHOICES[key] for key, value in call.arguments.items())


def test_guided_service_calls_name_an_action_on_its_own_domain(eager: tuple[Any, Any]) -> None:
    torch.manual_seed(0)
    actions = ["light.turn_on", "light.turn_off", "cover.open_cover", "lock.lock"]
    entities = [*ENTITIES, "lock.door"]
    # Every string held to a few values, so a sampled call stays short.
    ids = {"area_id": ["kitchen"], "floor_id": ["ground"], "device_id": ["hub"]}
    choices = {**CHOICES, **ids, "entity_id": entities, ACTION: actions}
    tools = [s for s in TOOL_SCHEMAS if s["function"]["name"] == "call_service"]
    policy = LocalPolicy(*eager, max_new_tokens=200, guided=True, choices=choices)
    domains = set()
    for temperature in (0.0, *[1.0] * 10):
        message = policy.generate(CHAT, tools, temperature=temperature)
        assert message.parse_errors == ()
        assert len(message.tool_calls) == 1, message
        arguments = message.tool_calls[0].arguments
        domain = arguments["domain"]
        assert f"{domain}.{arguments['service']}" in actions
        assert arguments["target"]  # a call that names nothing fails
        named = arguments["target"].get("entity_id", [])
        for entity_id in [named] if isinstance(named, str) else named:
            assert entity_id.startswith(f"{domain}.")
        domains.add(domain)
    assert len(domains) > 1  # the calls differ, not one branch every time


def test_a_guided_call_may_follow_blank_space(eager: tuple[Any, Any]) -> None:
    """A model that opens with a space (then `<`, as a call would) still writes a checked call."""
    model, tokenizer = copy.deepcopy(eager[0]), eager[1]
    space = tokenizer.convert_tokens_to_ids("Ġ")
    model.generation_config.sequence_bias = {(space,): 100.0, (space, space): -200.0}
    model.generation_config.sequence_bias |= eager[0].generation_config.sequence_bias
    message = LocalPolicy(model, tokenizer, max_new_tokens=200, guided=True, choices=CHOICES)
    said = message.generate(CHAT, TOOLS)
    assert said.text.startswith(" <tool_call>"), said.text
    assert len(said.tool_calls) == 1
    assert said.parse_errors == ()


def test_the_reader_and_the_grammar_agree_on_blank_space() -> None:
    """The four blank characters may precede a call; any other (a control character) opens a
    reply, and a reply is all text, whatever follows it."""
    call = '<tool_call>\n{"name": "x", "arguments": {}}\n</tool_call>'
    assert guided_reading(call)
    assert guided_reading(" \t\n\r" + call)
    assert not guided_reading("\x1c" + call)
    assert not guided_reading("\ufeff" + call)
    assert re.fullmatch(REPLY, "\x1c" + call)
    assert not re.fullmatch(REPLY, " \n" + call)


def test_without_the_guide_the_same_model_writes_no_call(eager: tuple[Any, Any]) -> None:
    message = LocalPolicy(*eager, max_new_tokens=16).generate(CHAT, TOOLS)
    assert message.tool_calls == ()
    assert not message.content.startswith("<tool_call>")


def test_a_guided_model_may_still_reply(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny, max_new_tokens=8, guided=True, choices=CHOICES)
    message = policy.generate(CHAT, TOOLS)
    assert message.tool_calls == ()
    assert message.parse_errors == ()
    assert message.content
    assert not message.content.startswith("<")


@pytest.mark.parametrize("opener", ["{", "[", "```"])
def test_a_guided_reply_never_opens_like_a_call(tiny: tuple[Any, Any], opener: str) -> None:
    """A model pushed to open with JSON or a code fence, which the unguided reader would take
    for a call the grammar never checked, writes a checked call or a plain reply instead."""
    model, tokenizer = copy.deepcopy(tiny[0]), tiny[1]
    pushed = tuple(tokenizer(opener, add_special_tokens=False)["input_ids"][:1])
    model.generation_config.sequence_bias = {pushed: 50.0}
    assert (
        LocalPolicy(model, tokenizer, max_new_tokens=4)
        .generate(CHAT, TOOLS)
        .text.startswith(tokenizer.decode(pushed))
    )
    policy = LocalPolicy(model, tokenizer, max_new_tokens=200, guided=True, choices=CHOICES)
    for temperature in (0.0, 1.0, 1.0):
        message = policy.generate(CHAT, TOOLS, temperature=temperature)
        assert not message.text.lstrip().startswith(("{", "[", "`")), message


def test_a_guided_reply_is_all_text(tiny: tuple[Any, Any]) -> None:
    """Text after a guided reply's start is the grammar's to let through unchecked, so a call
    written there is not read as one; the same text unguided is."""
    text = (
        'Sure.\n<tool_call>\n{"name": "get_state", "arguments": {"entity_id": "x.y"}}\n</tool_call>'
    )
    ids = tiny[1](text, add_special_tokens=False)["input_ids"]
    assert LocalPolicy(*tiny).reply(ids).tool_calls
    guided = LocalPolicy(*tiny, guided=True).reply(ids)
    assert (guided.content, guided.tool_calls, guided.parse_errors) == (text, (), ())


def test_the_guide_keeps_only_the_latest_grammars(tiny: tuple[Any, Any]) -> None:
    """Each home's choices compile a grammar of their own; a benchmark run of many homes keeps
    only the latest few, and an episode's repeated calls reuse its own."""
    policy = LocalPolicy(*tiny, max_new_tokens=2, guided=True)
    for home in range(Guide.KEPT + 3):
        policy.choices = CHOICES | {"area": [f"room_{home}"]}
        policy.generate(CHAT, TOOLS)
        policy.generate(CHAT, TOOLS)
    assert policy._guide is not None
    cached = policy._guide.compiled.cache_info()
    assert (cached.currsize, cached.misses, cached.hits) == (
        Guide.KEPT,
        Guide.KEPT + 3,
        Guide.KEPT + 3,
    )
