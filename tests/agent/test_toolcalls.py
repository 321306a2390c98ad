"""Reading tool calls from a model's text, well-formed and not."""

from __future__ import annotations

import itertools
import json

import pytest

from agent.policies import AssistantMessage, ToolCall
from agent.policies.toolcalls import parse_arguments, parse_tool_calls, repair, settled_content

CALL = {"name": "call_service", "arguments": {"domain": "light", "service": "turn_on"}}


def calls(text: str) -> list[tuple[str, dict[str, object]]]:
    parsed = parse_tool_calls(text)
    assert parsed.errors == ()
    return [(call.name, call.arguments) for call in parsed.tool_calls]


@pytest.mark.parametrize(
    "text",
    [
        f"<tool_call>{json.dumps(CALL)}</tool_call>",
        f"<tool_call>\n{json.dumps(CALL, indent=2)}\n</tool_call>",
        f"<tool_call>\n```json\n{json.dumps(CALL)}\n```\n</tool_call>",
        f"```json\n{json.dumps(CALL)}\n```",
        f"```\n{json.dumps(CALL)}\n```",
        json.dumps(CALL),
        f"  {json.dumps(CALL)}\n",
        json.dumps({"name": CALL["name"], "arguments": json.dumps(CALL["arguments"])}),
        json.dumps({"name": CALL["name"], "parameters": CALL["arguments"]}),
        json.dumps({"type": "function", "function": CALL}),
        "<tool_call>{'name': 'call_service', 'arguments': {'domain': 'light', "
        "'service': 'turn_on'}}</tool_call>",
        '<tool_call>{"name": "call_service", "arguments": {"domain": "light", '
        '"service": "turn_on",},}</tool_call>',
        '<tool_call>{"name": "call_service", "arguments": "{\'domain\': \'light\', '
        "'service': 'turn_on',}\"}</tool_call>",
        f"<tool_call>{json.dumps(CALL)}",  # cut off before the closing tag
    ],
)
def test_one_call_in_many_shapes(text: str) -> None:
    assert calls(text) == [(CALL["name"], CALL["arguments"])]


def test_text_around_blocks_is_the_content() -> None:
    parsed = parse_tool_calls(
        f"I'll turn it on.\n<tool_call>{json.dumps(CALL)}</tool_call>\nDone soon."
    )
    assert parsed.content == "I'll turn it on.\n\nDone soon."
    assert [c.name for c in parsed.tool_calls] == ["call_service"]


def test_several_blocks_and_a_list_give_every_call_with_distinct_ids() -> None:
    other = {"name": "list_entities", "arguments": {}}
    text = (
        f"<tool_call>{json.dumps(CALL)}</tool_call>"
        f"<tool_call>{json.dumps([other, other])}</tool_call>"
    )
    parsed = parse_tool_calls(text)
    assert [c.name for c in parsed.tool_calls] == ["call_service", "list_entities", "list_entities"]
    assert len({c.id for c in parsed.tool_calls}) == 3


def test_block_without_arguments_means_no_arguments() -> None:
    assert calls('<tool_call>{"name": "list_entities"}</tool_call>') == [("list_entities", {})]


def test_python_literals_outside_strings_are_repaired_but_not_inside() -> None:
    text = "<tool_call>{'name': 'x', 'arguments': {'on': True, 'v': None, 's': 'True, None,]'}}"
    assert calls(text) == [("x", {"on": True, "v": None, "s": "True, None,]"})]


def test_repair_keeps_quotes_inside_strings() -> None:
    assert json.loads(repair("""{'say': "it's", 'q': 'a \\'b\\' "c"',}""")) == {
        "say": "it's",
        "q": "a 'b' \"c\"",
    }


@pytest.mark.parametrize(
    "text",
    [
        "The kitchen light is on.",
        "",
        "```python\nprint('hi')\n```",
    ],
)
def test_plain_answers_are_content(text: str) -> None:
    parsed = parse_tool_calls(text)
    assert (parsed.content, parsed.tool_calls, parsed.errors) == (text.strip(), (), ())


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('<tool_call>{"name": "x", "arguments": {"a": 1}</tool_call>', "not valid JSON"),
        ("<tool_call>call_service(domain='light')</tool_call>", "not valid JSON"),
        ("<tool_call></tool_call>", "not valid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', '"name"'),
        ('<tool_call>{"name": 3, "arguments": {}}</tool_call>', '"name"'),
        ('<tool_call>{"name": "x", "arguments": [1]}</tool_call>', "must be a JSON object"),
        ('<tool_call>{"name": "x", "arguments": "{oops"}</tool_call>', "not valid JSON"),
        ('<tool_call>"just a string"</tool_call>', "expected a JSON object"),
        ('{"name": "x", "arguments": {"a": }', "not valid JSON"),
        ('```json\n{"name": "x", "arguments": {"a" 1}}\n```', "not valid JSON"),
    ],
)
def test_malformed_calls_are_reported_with_the_format(text: str, problem: str) -> None:
    parsed = parse_tool_calls(text)
    assert parsed.tool_calls == ()
    assert len(parsed.errors) == 1
    assert problem in parsed.errors[0]
    assert parsed.errors[0].startswith("tool call 1:")
    assert "<tool_call>" in parsed.errors[0]


def test_a_bad_block_does_not_hide_a_good_one() -> None:
    parsed = parse_tool_calls(f"<tool_call>{{nope</tool_call><tool_call>{json.dumps(CALL)}")
    assert [c.name for c in parsed.tool_calls] == ["call_service"]
    assert len(parsed.errors) == 1
    assert parsed.errors[0].startswith("tool call 1:")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, {}), ("", {}), ("{}", {}), ({"a": 1}, {"a": 1}), ('{"a": [1,]}', {"a": [1]})],
)
def test_parse_arguments(value: object, expected: dict[str, object]) -> None:
    assert parse_arguments(value) == expected


def test_assistant_message_round_trips_to_openai_format() -> None:
    message = AssistantMessage("", (ToolCall("call_1", "x", {"a": 1}),))
    assert message.to_openai() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "x", "arguments": '{"a": 1}'}}
        ],
    }
    assert AssistantMessage("").to_openai() == {"role": "assistant", "content": ""}
    assert AssistantMessage("hi").to_openai() == {"role": "assistant", "content": "hi"}


@pytest.mark.parametrize(
    ("text", "content", "names"),
    [
        ('<tool_response>{"success": true}</tool_response>', "", []),
        ("system_system_system_system", "", []),
        ("assistant: user:", "", []),
        ('{"success": true, "state": "on"}', "", []),
        ('{"name": "Kitchen", "state": "on"}', "", []),  # mentions a name but calls nothing
        ("The light is on.<|im_end|><|im_start|>user\nthanks", "The light is on.", []),
        ("Done.<|endoftext|>system_system", "Done.", []),
        (f"<tool_call>{json.dumps(CALL)}</tool_call><tool_response>{{}}</tool_response>", "", [1]),
        (f"<tool_response>{{}}</tool_response><tool_call>{json.dumps(CALL)}</tool_call>", "", []),
        ("On it.</tool_call>", "On it.", []),
        ("The user asked for the system status: all is well.", None, []),
    ],
)
def test_markup_is_never_content(text: str, content: str | None, names: list[int]) -> None:
    """What the model wrote past its turn (template tokens, an invented tool result) is neither
    speech nor calls; role names alone or a JSON value are not speech."""
    parsed = parse_tool_calls(text)
    assert parsed.content == (text if content is None else content)
    assert len(parsed.tool_calls) == len(names)


@pytest.mark.parametrize(
    "text",
    [
        "It is off.<|im_end|><|im_start|>user",
        "system_system_system",
        "User settings stay. <tool_response>{}</tool_response>",
        f"Sure. <tool_call>{json.dumps(CALL)}</tool_call> Done.",
        "Hi </tool_call> there",
    ],
)
def test_streamed_content_adds_up_to_the_parsed_content(text: str) -> None:
    """Every prefix's settled content extends the one before and begins the parsed content, so
    a stream never says what the parsed reply takes back."""
    settled = [settled_content(text[:end]) for end in range(len(text) + 1)]
    content = parse_tool_calls(text).content
    for before, after in itertools.pairwise(settled):
        assert after.startswith(before)
    assert content.startswith(settled[-1])
