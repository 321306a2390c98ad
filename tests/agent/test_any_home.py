"""Guided decoding and the prompt on homes HomeFlow did not make (tests/twin/any_home.py): no
floors, no areas, one entity or 500, names and ids in any Unicode. The grammar compiles with
xgrammar for every home, a tiny model's guided calls run through the tools as typed results,
and the prompt lists every entity on a line of its own within its budget."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from agent.cli import main
from agent.policies.guided import ACTION, Guide, call_schema, home_choices
from agent.policies.local import LocalPolicy
from agent.prompt import DEFAULT_MAX_CHARS, WORKFLOW, build_prompt
from tests.twin.any_home import build_home, homes, many_entities, with_broken_light
from twin.home import Home
from twin.homefile import save_home
from twin.surface import TwinView, all_states, layout
from twin.tools import TOOL_SCHEMAS, argument_mismatch, run_tool

torch = pytest.importorskip("torch")

CHAT = [
    {"role": "system", "content": "You run a home."},
    {"role": "user", "content": "Turn on the lights."},
]
PARAMETERS = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SCHEMAS}


def without_free_text() -> list[dict[str, Any]]:
    """The tools but pyexec, call_service without its free `data`: every string a call holds is
    then a name the home has, so a random model's call stays short."""
    tools = copy.deepcopy([s for s in TOOL_SCHEMAS if s["function"]["name"] != "pyexec"])
    for tool in tools:
        tool["function"]["parameters"]["properties"].pop("data", None)
    return tools


@pytest.fixture(scope="module")
def guide(tiny: tuple[Any, Any]) -> Guide:
    model, tokenizer = tiny
    return Guide(tokenizer, model.config.vocab_size, [tokenizer.eos_token_id])


def offered(home: Home) -> set[str]:
    """The tools the guided grammar lets a model call on `home`."""
    schema = call_schema(TOOL_SCHEMAS, home_choices(home))
    return {call["properties"]["name"]["const"] for call in schema["anyOf"]}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homes(max_devices=4))
def test_the_grammar_compiles_for_any_home(guide: Guide, home: Home) -> None:
    schema = json.dumps(call_schema(TOOL_SCHEMAS, home_choices(home)), sort_keys=True)
    assert guide.compiled(schema) is not None
    assert {"list_entities", "get_state", "describe", "pyexec"} <= offered(home)


def test_a_tool_that_must_name_what_the_home_lacks_is_not_offered(guide: Guide) -> None:
    """A home of one sensor has no action to call and no floor or area to name: list_entities
    is offered without them, call_service not at all; an empty home offers no entity tools."""
    sensor = build_home([("temperature_sensor", "🌡️")], [], [], [])
    schema = call_schema(TOOL_SCHEMAS, home_choices(sensor))
    assert offered(sensor) == {"list_entities", "get_state", "describe", "pyexec"}
    listing = next(
        c for c in schema["anyOf"] if c["properties"]["name"]["const"] == "list_entities"
    )
    assert set(listing["properties"]["arguments"]["properties"]) == {"domain"}
    assert offered(Home()) == {"list_entities", "pyexec"}
    empty = call_schema(
        [s for s in TOOL_SCHEMAS if s["function"]["name"] == "get_state"], {"entity_id": []}
    )
    assert empty == {"anyOf": []}
    assert guide.compiled(json.dumps(empty)) is not None  # a reply alone


@pytest.mark.parametrize(
    "home",
    [
        build_home([("color_bulb", "💡 ضوء"), ("smart_plug", "e\u0301\u0301")], [], [], []),
        build_home([("dimmable_bulb", "x" * 300)], ["🛋️ ליווינג"], [], []),
        with_broken_light(Home()),
    ],
    ids=["no-floors-no-areas", "an-area-on-no-floor", "one-broken-light"],
)
def test_guided_calls_run_on_a_home_without_floors(eager: tuple[Any, Any], home: Home) -> None:
    """The tiny model, pushed to call, writes calls that fit the tools and name only what the
    home has; each runs through run_tool to a success or a typed error."""
    torch.manual_seed(0)
    choices = home_choices(home)
    # Room for a call that names the 300-character entity id letter by letter.
    policy = LocalPolicy(*eager, max_new_tokens=800, guided=True, choices=choices)
    tools = without_free_text()
    for temperature in (0.0, *[1.0] * 6):
        message = policy.generate(CHAT, tools, temperature=temperature)
        assert message.parse_errors == (), message.text
        assert len(message.tool_calls) == 1, message
        call = message.tool_calls[0]
        assert argument_mismatch(call.arguments, PARAMETERS[call.name], "") is None
        for key in {"area", "floor"} & call.arguments.keys():  # none in a home without them
            assert call.arguments[key] in choices[key]
        if call.name == "call_service":
            action = f"{call.arguments['domain']}.{call.arguments['service']}"
            assert action in choices[ACTION]
        result = run_tool(home, call.name, call.arguments)
        assert result.get("error", {}).get("code") != "internal_error", result


def test_guided_decoding_on_500_entities(eager: tuple[Any, Any]) -> None:
    home = many_entities(500)
    choices = home_choices(home)
    policy = LocalPolicy(*eager, max_new_tokens=200, guided=True, choices=choices)
    tools = without_free_text()
    torch.manual_seed(1)
    for temperature in (0.0, 1.0, 1.0):
        (call,) = policy.generate(CHAT, tools, temperature=temperature).tool_calls
        assert argument_mismatch(call.arguments, PARAMETERS[call.name], "") is None
        result = run_tool(home, call.name, call.arguments)
        assert result.get("error", {}).get("code") != "internal_error", result


def prompt_of(home: Home, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    return build_prompt(layout(TwinView(home)), all_states(TwinView(home)), max_chars=max_chars)


@settings(max_examples=60, deadline=None)
@given(homes())
def test_the_prompt_lists_every_entity_on_a_line_of_its_own(home: Home) -> None:
    """Whatever the names hold (a line break, a `#` heading), each entity has one line and the
    prompt's own sections are not repeated."""
    prompt = prompt_of(home, max_chars=10**6)
    lines = prompt.splitlines()
    for entity_id in home.entities:
        assert sum(line.startswith(f"- {entity_id}: ") for line in lines) == 1
    assert lines.count(WORKFLOW.splitlines()[0]) == 1
    assert len(lines) == len(prompt.split("\n"))  # no Unicode line break inside a line


@pytest.mark.parametrize("home", [Home(), with_broken_light(Home()), many_entities(500)])
def test_the_prompt_fits_its_budget_on_any_home(home: Home) -> None:
    prompt = prompt_of(home)
    assert len(prompt) <= DEFAULT_MAX_CHARS
    assert "floors: )" not in prompt
    assert prompt == prompt_of(home)


def test_homeflow_chat_runs_a_guided_local_model_on_a_home_without_floors(
    tiny: tuple[Any, Any], tmp_path: Path
) -> None:
    """The path the issue found broken: `homeflow chat --policy local:DIR` (guided by default)
    on a home file with no floors and no areas compiles its grammar and answers."""
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    home = build_home([("color_bulb", "💡 ضوء"), ("smart_plug", "Plug")], [], [], [])
    save_home(home, tmp_path / "home.yaml")
    result = CliRunner().invoke(
        main,
        ["chat", "--policy", f"local:{tmp_path / 'model'}", "--home", str(tmp_path / "home.yaml")],
        input="turn on the light\n",
    )
    assert result.exit_code == 0, result.output
    assert "agent> " in result.output
