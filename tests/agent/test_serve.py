"""`homeflow serve` on 127.0.0.1 over real HTTP: the tiny Qwen3 of conftest.py end to end, and a
scripted stand-in model for the exact replies that tool calls and streaming need."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.client
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp import web
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from agent.cli import main  # noqa: E402
from agent.policies import ContextFull  # noqa: E402
from agent.policies.local import LocalPolicy  # noqa: E402
from agent.policies.openai import OpenAIPolicy  # noqa: E402
from agent.serve import (  # noqa: E402
    MAX_BODY,
    MAX_DEPTH,
    MAX_MESSAGES,
    MAX_TOOLS,
    ChatServer,
)

NAME = "tiny"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} in the home",
            "parameters": {"type": "object", "properties": {"entity_id": {"type": "string"}}},
        },
    }
    for name in ("list_entities", "get_state")
]
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You run a home."},
    {"role": "user", "content": "Which lights are there?"},
]
CALL = '{"name": "get_state", "arguments": {"entity_id": "light.kitchen"}}'


class Scripted:
    """A stand-in model that continues any prompt with `reply` and then <|im_end|>, feeding the
    streamer token by token and checking the stopping criteria as transformers' generate does
    (`token_delay` seconds a token; a generation first waits for `hold` to be set, if given)."""

    device = "cpu"
    config = SimpleNamespace(max_position_embeddings=8192)  # SmolLM2's context window

    def __init__(
        self,
        tokenizer: Any,
        reply: str,
        *,
        delay: float = 0.0,
        token_delay: float = 0.0,
        hold: threading.Event | None = None,
    ) -> None:
        self.tokens = tokenizer(reply, add_special_tokens=False)["input_ids"]
        self.tokens.append(tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.delay = delay
        self.token_delay = token_delay
        self.hold = hold
        self.running = self.most_running = 0
        self.prompts: list[list[int]] = []
        self.generated: list[int] = []  # tokens per generation

    def generate(
        self,
        input_ids: Any,
        max_new_tokens: int,
        streamer: Any = None,
        stopping_criteria: Any = None,
        **options: Any,
    ) -> Any:
        self.prompts.append(input_ids[0].tolist())
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        time.sleep(self.delay)
        if self.hold is not None:
            self.hold.wait(timeout=300)
        if streamer is not None:
            streamer.put(input_ids)
        new: list[int] = []
        for token in self.tokens[:max_new_tokens]:
            time.sleep(self.token_delay)
            new.append(token)
            if streamer is not None:
                streamer.put(torch.tensor([token]))
            if stopping_criteria is not None and stopping_criteria(input_ids, None).all():
                break
        if streamer is not None:
            streamer.end()
        self.generated.append(len(new))
        self.running -= 1
        sequences = torch.cat([input_ids, torch.tensor([new])], dim=1)
        return transformers.generation.GenerateDecoderOnlyOutput(sequences=sequences)


class Broken(Scripted):
    def generate(self, *args: Any, **options: Any) -> Any:
        raise RuntimeError("out of memory")


@contextlib.asynccontextmanager
async def serving(
    policy: LocalPolicy, api_key: str | None = None
) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    """The server's base URL and a client session."""
    runner = web.AppRunner(ChatServer(policy, NAME, api_key=api_key).app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        async with aiohttp.ClientSession() as session:
            yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1", session
    finally:
        await runner.cleanup()


async def complete(
    session: aiohttp.ClientSession, url: str, **body: Any
) -> tuple[int, dict[str, Any]]:
    """The status and JSON of a chat completion."""
    body = {"model": NAME, "messages": MESSAGES, **body}
    async with session.post(f"{url}/chat/completions", json=body) as response:
        return response.status, await response.json()


async def stream(session: aiohttp.ClientSession, url: str, **body: Any) -> list[Any]:
    """The `data:` events of a streamed completion, [DONE] as the string."""
    body = {"model": NAME, "messages": MESSAGES, "stream": True, **body}
    events: list[Any] = []
    async with session.post(f"{url}/chat/completions", json=body) as response:
        assert response.status == 200
        assert response.content_type == "text/event-stream"
        async for line in response.content:
            if line.startswith(b"data: "):
                data = line[6:].decode().strip()
                events.append(data if data == "[DONE]" else json.loads(data))
    assert events[-1] == "[DONE]"
    return events


def reassemble(events: list[Any]) -> tuple[dict[str, Any], str]:
    """The message and finish reason that a client builds from the chunks."""
    content, finish = "", ""
    calls: dict[int, dict[str, str]] = {}
    for event in events[:-1]:
        assert event["object"] == "chat.completion.chunk"
        assert event["id"] == events[0]["id"]
        for choice in event["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            for call in delta.get("tool_calls", []):
                built = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                built["id"] += call.get("id", "")
                built["name"] += call["function"].get("name", "")
                built["arguments"] += call["function"].get("arguments", "")
            finish = choice["finish_reason"] or finish
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    return {"content": content, "tool_calls": [calls[i] for i in sorted(calls)]}, finish


def whole(response: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The same view of a non-streamed response."""
    choice = response["choices"][0]
    calls = [{"id": c["id"], **c["function"]} for c in choice["message"].get("tool_calls") or []]
    return {"content": choice["message"]["content"] or "", "tool_calls": calls}, choice[
        "finish_reason"
    ]


def same(message: dict[str, Any]) -> dict[str, Any]:
    """A message without its random call ids, with arguments decoded."""
    calls = [(c["name"], json.loads(c["arguments"])) for c in message["tool_calls"]]
    assert all(c["id"].startswith("call_") for c in message["tool_calls"])
    return {"content": message["content"], "tool_calls": calls}


async def test_models_and_a_completion_from_the_tiny_model(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny, max_new_tokens=6)
    async with serving(policy) as (url, session):
        async with session.get(f"{url}/models") as response:
            models = await response.json()
        status, first = await complete(session, url, tools=TOOLS)
        _, second = await complete(session, url, tools=TOOLS)
    assert [(m["id"], m["object"]) for m in models["data"]] == [(NAME, "model")]
    assert status == 200
    assert first["object"] == "chat.completion"
    assert first["model"] == NAME
    assert first["id"].startswith("chatcmpl-")
    choice = first["choices"][0]
    assert choice["message"]["role"] == "assistant"
    assert choice["finish_reason"] in ("stop", "length", "tool_calls")
    usage = first["usage"]
    assert usage["prompt_tokens"] == len(tiny[1](policy.prompt(MESSAGES, TOOLS))["input_ids"])
    assert 0 < usage["completion_tokens"] <= 6
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert whole(first)[0]["content"] == whole(second)[0]["content"]  # greedy


async def test_max_tokens_and_streaming_with_the_tiny_model(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny, max_new_tokens=64)
    async with serving(policy) as (url, session):
        _, response = await complete(session, url, max_tokens=3)
        events = await stream(session, url, max_tokens=3, stream_options={"include_usage": True})
        _, capped = await complete(session, url, max_completion_tokens=1000)
    assert response["usage"]["completion_tokens"] == 3
    assert whole(response)[1] == "length"
    assert reassemble(events) == whole(response)
    assert events[-2]["choices"] == []
    assert events[-2]["usage"] == response["usage"]
    assert capped["usage"]["completion_tokens"] <= 64


async def test_sampling_follows_the_seed(tiny: tuple[Any, Any]) -> None:
    async with serving(LocalPolicy(*tiny, max_new_tokens=8)) as (url, session):
        texts = [
            whole((await complete(session, url, temperature=2, seed=seed))[1])[0]["content"]
            for seed in (1, 1, 2, 3)
        ]
    assert texts[0] == texts[1]
    assert len(set(texts)) > 1


@pytest.mark.parametrize(
    ("reply", "content", "calls"),
    [
        (
            "Let me look. <tool_call>\n"
            '{"name": "list_entities", "arguments": {"domain": "light"}}\n</tool_call>'
            f"<tool_call>{CALL}</tool_call>",
            "Let me look.",
            [("list_entities", {"domain": "light"}), ("get_state", {"entity_id": "light.kitchen"})],
        ),
        (f"  {CALL}", "", [("get_state", {"entity_id": "light.kitchen"})]),
        (
            f"Checking.\n```json\n{CALL}\n```",
            "Checking.",
            [("get_state", {"entity_id": "light.kitchen"})],
        ),
        (
            "The `kitchen` light is on, the fan is off. ",
            "The `kitchen` light is on, the fan is off.",
            [],
        ),
    ],
)
async def test_tool_calls_and_streaming_match(
    tiny: tuple[Any, Any], reply: str, content: str, calls: list[Any]
) -> None:
    policy = LocalPolicy(Scripted(tiny[1], reply), tiny[1])
    async with serving(policy) as (url, session):
        status, response = await complete(session, url, tools=TOOLS)
        events = await stream(session, url, tools=TOOLS)
    assert status == 200
    message, finish = whole(response)
    assert same(message) == {"content": content, "tool_calls": calls}
    assert finish == ("tool_calls" if calls else "stop")
    assert response["choices"][0]["message"]["content"] == (content or None)
    streamed, streamed_finish = reassemble(events)
    assert (same(streamed), streamed_finish) == (same(message), finish)
    pieces = [e["choices"][0]["delta"].get("content") for e in events[1:-1]]
    pieces = [piece for piece in pieces if piece]
    if " " in content:
        assert len(pieces) > 1  # word by word, not all at the end
    assert not any(mark in piece for piece in pieces for mark in ("<", "{", "```"))


async def test_tool_choice_none_leaves_the_tools_out(tiny: tuple[Any, Any]) -> None:
    """Neither offered nor read: a reply that looks like a call is text."""
    model = Scripted(tiny[1], CALL)
    async with serving(LocalPolicy(model, tiny[1])) as (url, session):
        _, response = await complete(session, url, tools=TOOLS, tool_choice="none")
        events = await stream(session, url, tools=TOOLS, tool_choice="none")
        await complete(session, url, tools=TOOLS, tool_choice="auto")
    without, _, with_tools = (tiny[1].decode(prompt) for prompt in model.prompts)
    assert "get_state" not in without
    assert "get_state" in with_tools
    assert whole(response) == ({"content": CALL, "tool_calls": []}, "stop")
    assert reassemble(events) == whole(response)


async def test_a_call_that_cannot_be_read_comes_as_written(tiny: tuple[Any, Any]) -> None:
    """As from vLLM's tool parsers: the text the model wrote, so that the client sees the
    mistake (OpenAIPolicy then reads the same error as a local model gives)."""
    bad = 'Sure. <tool_call>{"name": "get_state", "arguments": {"entity_id": light.x}</tool_call>'
    async with serving(LocalPolicy(Scripted(tiny[1], bad), tiny[1])) as (url, session):
        _, response = await complete(session, url, tools=TOOLS)
        events = await stream(session, url, tools=TOOLS)
        async with OpenAIPolicy(url, NAME) as client:
            relayed = await client.act(MESSAGES, TOOLS)
    assert whole(response) == ({"content": bad, "tool_calls": []}, "stop")
    assert reassemble(events) == whole(response)
    assert relayed.parse_errors
    assert (
        relayed.parse_errors
        == LocalPolicy(Scripted(tiny[1], bad), tiny[1]).generate(MESSAGES, TOOLS).parse_errors
    )


async def test_a_reply_cut_off_by_the_window_ends_with_length(tiny: tuple[Any, Any]) -> None:
    model = Scripted(tiny[1], "A longer answer than the window leaves room for.")
    policy = LocalPolicy(model, tiny[1])
    size = len(tiny[1](policy.prompt(MESSAGES, []), add_special_tokens=False)["input_ids"])
    model.config = SimpleNamespace(max_position_embeddings=size + 2)
    async with serving(policy) as (url, session):
        _, response = await complete(session, url)
    assert response["usage"]["completion_tokens"] == 2
    assert whole(response)[1] == "length"


async def test_one_generation_at_a_time_while_the_server_answers(tiny: tuple[Any, Any]) -> None:
    """/models is answered while a generation holds the model (it runs off the event loop)."""
    hold = threading.Event()
    model = Scripted(tiny[1], "Done.", hold=hold)
    async with serving(LocalPolicy(model, tiny[1])) as (url, session):
        replies = [asyncio.create_task(complete(session, url)) for _ in range(3)]
        async with asyncio.timeout(300):  # a generation has started
            while model.running == 0:
                await asyncio.sleep(0.01)
        async with session.get(f"{url}/models") as response:
            assert response.status == 200
        assert model.running == 1  # still generating, held
        hold.set()
        results = await asyncio.gather(*replies)
    assert [whole(r)[0]["content"] for _, r in results] == ["Done."] * 3
    assert model.most_running == 1


def deep(depth: int, inner: str = "0") -> str:
    """JSON text of `inner` within `depth` objects and arrays, built as text (json.dumps would
    recurse)."""
    return (
        '{"x": [' * (depth // 2)
        + "[" * (depth % 2)
        + inner
        + "]" * (depth % 2)
        + "]}" * (depth // 2)
    )


def with_tool(**function: Any) -> dict[str, Any]:
    return {"messages": MESSAGES, "tools": [{"type": "function", "function": function}]}


def calling(*calls: Any) -> dict[str, Any]:
    return {"messages": [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": calls}]}


GOOD_CALL = {"id": "c", "type": "function", "function": {"name": "get_state", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("body", "status", "param", "words"),
    [
        (b"{not json", 400, None, "not valid JSON"),
        (b"\xff{}", 400, None, "not valid JSON"),  # not UTF-8
        (b'{"messages": [], "temperature": NaN}', 400, None, "NaN is not a JSON value"),
        (b"[]", 400, None, "must be a JSON object, got a list"),
        # Nesting deeper than the decoder recurses (a RecursionError was a plain-text 500).
        (deep(100_000).encode(), 400, None, f"more than {MAX_DEPTH} deep"),
        # 800 deep inside a message (rendering it overflowed the stack: a plain-text 500).
        (
            f'{{"messages": [{{"role": "user", "content": "hi", "x": {deep(800)}}}]}}'.encode(),
            400,
            None,
            f"more than {MAX_DEPTH} deep",
        ),
        (f'{{"x": {deep(MAX_DEPTH)}}}'.encode(), 400, None, f"more than {MAX_DEPTH} deep"),
        (b'{"messages": [{"role": "user", "content": "\\ud800"}]}', 400, None, "lone surrogate"),
        (b'{"messages": "' + b"x" * MAX_BODY + b'"}', 413, None, f"over {MAX_BODY} bytes"),
        ({"model": NAME}, 400, "messages", "non-empty list"),
        ({"model": NAME, "messages": []}, 400, "messages", "non-empty list"),
        ({"model": "gpt-9", "messages": MESSAGES}, 404, "model", "does not exist"),
        ({"model": ["tiny"], "messages": MESSAGES}, 400, "model", "model must be a string"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, 400, "messages", "messages[0]"),
        ({"messages": [{"role": "user", "content": 3}]}, 400, "messages", "content"),
        (
            {"messages": [{"role": "user", "content": "hi", "name": 3}]},
            400,
            "messages",
            "messages[0].name must be a string, got a number",
        ),
        (
            {"messages": [MESSAGES[1]] * (MAX_MESSAGES + 1)},
            400,
            "messages",
            f"at most {MAX_MESSAGES} items, got {MAX_MESSAGES + 1}",
        ),
        (calling({"name": "x"}), 400, "messages", "tool_calls[0] must be a tool call"),
        (
            calling({"function": {"name": "x", "arguments": [1]}}),
            400,
            "messages",
            "tool_calls[0].function.arguments must be JSON text or an object, got a list",
        ),
        (
            calling(*[GOOD_CALL] * (MAX_TOOLS + 1)),
            400,
            "messages",
            f"messages[2].tool_calls is too long: at most {MAX_TOOLS}",
        ),
        ({"messages": MESSAGES, "tools": [{"name": "x"}]}, 400, "tools", "tools[0] must be a tool"),
        ({"messages": MESSAGES, "tools": {}}, 400, "tools", "tools must be a list"),
        (
            {"messages": MESSAGES, "tools": TOOLS * (MAX_TOOLS // 2 + 1)},
            400,
            "tools",
            f"tools is too long: at most {MAX_TOOLS}",
        ),
        # A tool's parameters, or their properties, as lists (the compact prompt read them as
        # objects: a plain-text 500).
        (
            with_tool(name="x", parameters=[{"type": "string"}]),
            400,
            "tools",
            "tools[0].function.parameters must be a JSON Schema, got a list",
        ),
        (
            with_tool(name="x", parameters={"type": "object", "properties": [{"id": {}}]}),
            400,
            "tools",
            "tools[0].function.parameters.properties must be an object of schemas, got a list",
        ),
        (
            with_tool(name="x", parameters={"type": "object", "properties": {"id": "string"}}),
            400,
            "tools",
            "parameters.properties.id must be a JSON Schema object, got a string",
        ),
        (
            with_tool(name="x", parameters={"type": "string"}),
            400,
            "tools",
            "parameters must be the schema of an object",
        ),
        (
            with_tool(name="x", parameters={"properties": {"a": {"items": {"type": 3}}}}),
            400,
            "tools",
            "parameters.properties.a.items.type must be a type's name",
        ),
        (
            with_tool(name="x", parameters={"required": "a"}),
            400,
            "tools",
            "parameters.required must be a list of property names",
        ),
        (with_tool(name="x", description=5), 400, "tools", "description must be a string"),
        ({"messages": MESSAGES, "tool_choice": "required"}, 400, "tool_choice", '"auto"'),
        ({"messages": MESSAGES, "temperature": 5}, 400, "temperature", "from 0 to 2"),
        ({"messages": MESSAGES, "max_tokens": 0}, 400, "max_tokens", "at least 1"),
        ({"messages": MESSAGES, "stream": "yes"}, 400, "stream", "true or false"),
        (
            {"messages": MESSAGES, "stream_options": {"include_usage": "yes"}},
            400,
            "stream_options",
            "stream_options.include_usage must be true or false, got a string",
        ),
        ({"messages": MESSAGES, "n": 2}, 400, "n", "n must be 1"),
        ({"messages": MESSAGES, "n": True}, 400, "n", "n must be 1"),
    ],
)
async def test_bad_requests_get_openai_errors(
    tiny: tuple[Any, Any], body: Any, status: int, param: str | None, words: str
) -> None:
    """Each a JSON error in OpenAI's shape, before anything is rendered, and the server answers
    the next request; on the compact prompt, which reads the tools' schemas itself."""
    model = Scripted(tiny[1], "Hi.")
    async with serving(LocalPolicy(model, tiny[1], compact=True)) as (url, session):
        options = {"data": body} if isinstance(body, bytes) else {"json": body}
        async with session.post(f"{url}/chat/completions", **options) as response:
            assert (response.status, response.content_type) == (status, "application/json")
            error = (await response.json())["error"]
        assert model.prompts == []
        assert (await complete(session, url, tools=TOOLS))[0] == 200
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert words in error["message"]
    assert "Traceback" not in error["message"]


def post(url: str, body: bytes, headers: dict[str, Any] | None = None) -> tuple[int, str, bytes]:
    """A chat completion over a connection of its own, from a thread that is not the server's:
    the status, content type and body."""
    address = urlsplit(url)
    assert address.hostname is not None
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=300)
    try:
        headers = {"Content-Type": "application/json", **(headers or {})}
        connection.request("POST", f"{address.path}/chat/completions", body, headers)
        response = connection.getresponse()
        return response.status, response.headers.get_content_type(), response.read()
    finally:
        connection.close()


async def test_the_body_is_read_as_utf8_whatever_charset_its_header_names(
    tiny: tuple[Any, Any],
) -> None:
    """JSON is UTF-8 (RFC 8259); an unknown charset was a plain-text 500."""
    async with serving(LocalPolicy(Scripted(tiny[1], "Hi."), tiny[1])) as (url, _):
        headers = {"Content-Type": "application/json; charset=no-such-charset"}
        body = json.dumps({"messages": MESSAGES}).encode()
        status, kind, reply = await asyncio.to_thread(post, url, body, headers)
    assert (status, kind) == (200, "application/json")
    assert json.loads(reply)["choices"][0]["message"]["content"] == "Hi."


async def test_an_api_key_header_that_is_not_utf8_is_refused(tiny: tuple[Any, Any]) -> None:
    """As any wrong key (it was a plain-text 500)."""
    async with serving(LocalPolicy(Scripted(tiny[1], "Hi."), tiny[1]), "sk-local") as (url, _):
        body = json.dumps({"messages": MESSAGES}).encode()
        status, kind, reply = await asyncio.to_thread(
            post, url, body, {"Authorization": b"Bearer sk-\xff"}
        )
    assert (status, kind) == (401, "application/json")
    assert json.loads(reply)["error"]["code"] == "invalid_api_key"


async def test_a_failure_of_the_server_itself_is_a_json_500_and_logged(
    tiny: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The last resort for a bug: a JSON 500 in OpenAI's shape (in a stream that has begun, its
    last event), never a plain-text page, with the traceback in the log."""

    def broken(*args: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(ChatServer, "_reply", broken)
    async with serving(LocalPolicy(Scripted(tiny[1], "Hi."), tiny[1])) as (url, session):
        with caplog.at_level(logging.ERROR, logger="agent.serve"):
            status, response = await complete(session, url)
            events = await stream(session, url)
        async with session.get(f"{url}/models") as models:
            assert models.status == 200
    assert status == 500
    assert response["error"] == {
        "message": "POST /v1/chat/completions failed: a bug",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert events[-2]["error"]["message"] == "The stream failed: a bug"
    logged = [record.exc_info[0] for record in caplog.records if record.exc_info]
    assert logged == [ZeroDivisionError, ZeroDivisionError]


async def test_a_body_nested_as_deep_as_allowed_is_answered(tiny: tuple[Any, Any]) -> None:
    body = f'{{"messages": {json.dumps(MESSAGES)}, "x": {deep(MAX_DEPTH - 1)}}}'.encode()
    async with serving(LocalPolicy(Scripted(tiny[1], "Hi."), tiny[1])) as (url, _):
        assert (await asyncio.to_thread(post, url, body))[0] == 200


# A valid request with every kind of field, for the property test to break.
VALID: dict[str, Any] = {
    "model": NAME,
    "messages": [
        MESSAGES[0],
        {"role": "user", "content": [{"type": "text", "text": "Which lights are there?"}]},
        {"role": "assistant", "content": None, "tool_calls": [GOOD_CALL]},
        {"role": "tool", "tool_call_id": "c", "content": "on"},
    ],
    "tools": TOOLS,
    "tool_choice": "auto",
    "max_tokens": 8,
    "temperature": 0,
    "seed": 1,
    "n": 1,
    "stream": False,
    "stream_options": {"include_usage": True},
}
VALID_TEXT = json.dumps(VALID)
KEYS = ["role", "content", "type", "function", "name", "parameters", "properties", "items"]


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every item in `value`, and of a new key in each of its objects."""
    if isinstance(value, dict):
        items = [*value.items(), *((key, None) for key in ("x", *KEYS) if key not in value)]
    else:
        items = list(enumerate(value)) if isinstance(value, list) else []
    return [path] + [place for key, item in items for place in places(item, (*path, key))]


DELETE = object()


def changed(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """`value` with the item at `path` set to `new` (or deleted); as it was if there is none."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    try:
        copy = value.copy()
        if rest:
            copy[key] = changed(value[key], rest, new)
        elif new is DELETE:
            del copy[key]
        else:
            copy[key] = new
    except (AttributeError, KeyError, IndexError, TypeError):
        return value
    return copy


@dataclass(frozen=True)
class Deep:
    """A value nested `depth` deep, for `dumps` to write out as text."""

    depth: int


def dumps(value: Any) -> bytes:
    """`value` as JSON, each Deep in it nested as deep (json.dumps would recurse)."""
    text = json.dumps(value, default=lambda marker: f"\0{marker.depth}")
    return re.sub(r'"\\u0000(\d+)"', lambda found: deep(int(found[1])), text).encode()


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["auto", "none", "user", "assistant", "function", "object", "\ud800"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
MALFORMED = st.one_of(
    JSON,  # a wrong type
    # Nested about the limit, or deeper than Python's decoder recurses.
    (st.integers(MAX_DEPTH - 4, MAX_DEPTH + 4) | st.integers(900, 5000)).map(Deep),
    st.builds(  # huge arrays, about the limits
        lambda size, item: [item] * size,
        st.sampled_from([MAX_TOOLS, MAX_TOOLS + 1, MAX_MESSAGES + 1, 20_000]),
        JSON | st.sampled_from([MESSAGES[1], TOOLS[0], GOOD_CALL]),
    ),
    st.just(DELETE),
)
PLACES = places(VALID)[1:]


def changes(most: int) -> st.SearchStrategy[bytes]:
    """VALID with from 1 to `most` items changed to MALFORMED ones."""
    change = st.tuples(st.sampled_from(PLACES), MALFORMED)
    return st.lists(change, min_size=1, max_size=most).map(
        lambda made: dumps(functools.reduce(lambda body, one: changed(body, *one), made, VALID))
    )


BODIES = st.one_of(
    changes(1),
    changes(4),
    JSON.map(lambda value: json.dumps(value).encode()),
    # Not JSON: a valid request cut short, or any bytes.
    st.integers(0, len(VALID_TEXT) - 1).map(lambda end: VALID_TEXT[:end].encode()),
    st.binary(max_size=32),
)


def answered(status: int, kind: str, body: bytes) -> None:
    """A completion (whole or streamed) for a valid request; else a JSON error, a 4xx."""
    if status == 200 and kind == "text/event-stream":
        assert body.endswith(b"data: [DONE]\n\n")
    elif status == 200:
        assert json.loads(body)["object"] == "chat.completion"
    else:
        assert 400 <= status < 500, body[:500]
        assert kind == "application/json"
        error = json.loads(body)["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error"


async def test_malformed_bodies_get_4xx_json_errors_and_the_server_stays_up(
    tiny: tuple[Any, Any],
) -> None:
    """Random JSON values, random changes to a valid request (wrong types, deep nesting, huge
    arrays, fields left out or added), valid requests cut short, random bytes: each gets a JSON
    error with a 4xx status (or a completion, where the request is valid after all), and a valid
    request is answered after it."""
    valid = VALID_TEXT.encode()
    policy = LocalPolicy(Scripted(tiny[1], "Hi."), tiny[1], compact=True)
    async with serving(policy) as (url, _):

        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(BODIES)
        def each(body: bytes) -> None:
            answered(*post(url, body))
            assert post(url, valid)[0] == 200

        await asyncio.to_thread(each)


async def test_a_chat_the_template_refuses_is_a_bad_request(tiny: tuple[Any, Any]) -> None:
    tokenizer = tiny[1]
    strict = tokenizer.__class__(
        tokenizer_object=tokenizer.backend_tokenizer, eos_token="<|im_end|>"
    )
    strict.chat_template = (
        "{% if messages[-1].role != 'user' %}{{ raise_exception('End with a user turn') }}"
        "{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}"
    )
    policy = LocalPolicy(Scripted(strict, "Hi."), strict)
    async with serving(policy) as (url, session):
        status, response = await complete(session, url, messages=MESSAGES[:1])
        assert (await complete(session, url))[0] == 200
    assert status == 400
    assert response["error"]["param"] == "messages"
    assert "cannot render these messages: End with a user turn" in response["error"]["message"]


async def test_unknown_paths_and_the_api_key(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(Scripted(tiny[1], "Hi."), tiny[1])
    async with serving(policy, api_key="sk-local") as (url, session):
        async with session.get(f"{url}/models") as response:
            assert response.status == 401
            assert (await response.json())["error"]["code"] == "invalid_api_key"
        headers = {"Authorization": "Bearer wrong"}
        async with session.post(f"{url}/chat/completions", headers=headers) as response:
            assert response.status == 401
        headers = {"Authorization": "Bearer sk-local"}
        async with session.get(f"{url}/models", headers=headers) as response:
            assert response.status == 200
        async with session.get(f"{url}/embeddings", headers=headers) as response:
            assert response.status == 404
            assert "Not Found" in (await response.json())["error"]["message"]
        async with OpenAIPolicy(url, NAME, "sk-local") as client:
            assert (await client.act(MESSAGES, TOOLS)).content == "Hi."


async def test_a_client_that_goes_away_holds_up_no_one(tiny: tuple[Any, Any]) -> None:
    """Its generation stops, as does one that was waiting in line (after its first token), so
    the next client is answered at once."""
    model = Scripted(tiny[1], "word " * 100, token_delay=0.02)  # 2 s whole
    async with serving(LocalPolicy(model, tiny[1])) as (url, session):
        quick = aiohttp.ClientTimeout(total=0.2)
        async with aiohttp.ClientSession(timeout=quick) as impatient:
            gave_up = [complete(impatient, url), complete(impatient, url)]  # one runs, one waits
            results = await asyncio.gather(*gave_up, return_exceptions=True)
        assert all(isinstance(result, TimeoutError) for result in results)
        status, response = await complete(session, url, max_tokens=3)
    assert (status, response["usage"]["completion_tokens"]) == (200, 3)
    assert model.generated[0] < 50  # of 100: stopped, not run to the end
    assert model.generated[1] == 1


async def test_a_failed_generation_is_a_server_error(tiny: tuple[Any, Any]) -> None:
    async with serving(LocalPolicy(Broken(tiny[1], ""), tiny[1])) as (url, session):
        status, response = await complete(session, url)
        events = await stream(session, url)
        async with session.get(f"{url}/models") as models:
            assert models.status == 200  # the lock was released
    assert status == 500
    assert response["error"]["type"] == "server_error"
    assert "out of memory" in response["error"]["message"]
    assert events[-2]["error"]["type"] == "server_error"


async def test_a_conversation_longer_than_the_window_is_refused_as_openai_does(
    tiny: tuple[Any, Any],
) -> None:
    model = Scripted(tiny[1], "Hi.")
    model.config = SimpleNamespace(max_position_embeddings=10)
    async with serving(LocalPolicy(model, tiny[1])) as (url, session):
        whole = await complete(session, url)
        streamed = await complete(session, url, stream=True)  # refused before the stream starts
        async with OpenAIPolicy(url, NAME) as client:
            with pytest.raises(ContextFull, match="the model reads 10"):
                await client.act(MESSAGES, TOOLS)
            with pytest.raises(ContextFull, match="the model reads 10"):
                [delta async for delta in client.stream(MESSAGES, TOOLS)]
    for status, response in (whole, streamed):
        assert status == 400
        assert response["error"]["code"] == "context_length_exceeded"
    assert model.prompts == []  # refused before generating


async def test_openai_policy_through_the_server(tiny: tuple[Any, Any]) -> None:
    scripted = LocalPolicy(Scripted(tiny[1], f"On it.<tool_call>{CALL}</tool_call>"), tiny[1])
    async with serving(scripted) as (url, _), OpenAIPolicy(url, NAME) as client:
        message = await client.act(MESSAGES, TOOLS)
    assert message.content == "On it."
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_state", {"entity_id": "light.kitchen"})
    ]
    local = LocalPolicy(*tiny, max_new_tokens=8)
    history = [
        *MESSAGES,
        message.to_openai(),
        {"role": "tool", "tool_call_id": "x", "content": "{}"},
    ]
    async with serving(local) as (url, _), OpenAIPolicy(url, NAME) as client:
        served = await client.act(history, TOOLS)
    direct = local.generate(history, TOOLS)
    assert (served.content, served.prompt_tokens, served.completion_tokens) == (
        direct.content,
        direct.prompt_tokens,
        direct.completion_tokens,
    )


def test_help_says_where_to_point_clients() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    assert "http://HOST:PORT/v1" in result.output
    assert "--api-key" in result.output
    limits = [
        f"at most {MAX_BODY // 2**20} MiB ({MAX_BODY} bytes)",
        f"at most {MAX_DEPTH} deep",
        f"messages    at most {MAX_MESSAGES}",
        f"tools       at most {MAX_TOOLS}, and at most {MAX_TOOLS} tool calls",
    ]
    assert all(limit in result.output for limit in limits)


def test_a_folder_without_a_model_is_a_clear_error(tmp_path: Any) -> None:
    result = CliRunner().invoke(main, ["serve", "--model", str(tmp_path)])
    assert result.exit_code == 1
    assert "Cannot load a causal LM" in result.output


@pytest.mark.parametrize(("flag", "guided"), [([], False), (["--guided"], True)])
def test_guided_decoding_is_the_servers_choice(
    tiny: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch, flag: list[str], guided: bool
) -> None:
    """--guided serves the model with guided decoding (a reply, or a call that fits the tools)."""
    policies: list[LocalPolicy] = []

    def load(path: str | None, **options: Any) -> LocalPolicy:
        policies.append(LocalPolicy(*tiny, **options))
        return policies[-1]

    monkeypatch.setattr(LocalPolicy, "from_pretrained", load)
    monkeypatch.setattr(web, "run_app", lambda app, **_: None)  # not served: only built
    result = CliRunner().invoke(main, ["serve", *flag])
    assert result.exit_code == 0, result.output
    assert [policy.guided for policy in policies] == [guided]
