"""`homeflow serve` on 127.0.0.1 over real HTTP: the tiny Qwen3 of conftest.py end to end, and a
scripted stand-in model for the exact replies that tool calls and streaming need."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from click.testing import CliRunner

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from agent.cli import main  # noqa: E402
from agent.policies import ContextFull  # noqa: E402
from agent.policies.local import LocalPolicy  # noqa: E402
from agent.policies.openai import OpenAIPolicy  # noqa: E402
from agent.serve import ChatServer  # noqa: E402

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
    (`token_delay` seconds a token)."""

    device = "cpu"
    config = SimpleNamespace(max_position_embeddings=8192)  # SmolLM2's context window

    def __init__(
        self, tokenizer: Any, reply: str, *, delay: float = 0.0, token_delay: float = 0.0
    ) -> None:
        self.tokens = tokenizer(reply, add_special_tokens=False)["input_ids"]
        self.tokens.append(tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.delay = delay
        self.token_delay = token_delay
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
    model = Scripted(tiny[1], "Done.", delay=0.3)
    async with serving(LocalPolicy(model, tiny[1])) as (url, session):
        replies = [asyncio.create_task(complete(session, url)) for _ in range(3)]
        await asyncio.sleep(0.1)
        started = time.monotonic()
        async with session.get(f"{url}/models") as response:
            assert response.status == 200
        assert time.monotonic() - started < 0.2
        results = await asyncio.gather(*replies)
    assert [whole(r)[0]["content"] for _, r in results] == ["Done."] * 3
    assert model.most_running == 1


@pytest.mark.parametrize(
    ("body", "status", "param", "words"),
    [
        (b"{not json", 400, None, "not valid JSON"),
        (b"[]", 400, None, "must be a JSON object"),
        ({"model": NAME}, 400, "messages", "non-empty list"),
        ({"model": NAME, "messages": []}, 400, "messages", "non-empty list"),
        ({"model": "gpt-9", "messages": MESSAGES}, 404, "model", "does not exist"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, 400, "messages", "messages[0]"),
        ({"messages": [{"role": "user", "content": 3}]}, 400, "messages", "content"),
        ({"messages": MESSAGES, "tools": [{"name": "x"}]}, 400, "tools", "tools must be"),
        ({"messages": MESSAGES, "tool_choice": "required"}, 400, "tool_choice", '"auto"'),
        ({"messages": MESSAGES, "temperature": 5}, 400, "temperature", "from 0 to 2"),
        ({"messages": MESSAGES, "max_tokens": 0}, 400, "max_tokens", "at least 1"),
        ({"messages": MESSAGES, "stream": "yes"}, 400, "stream", "true or false"),
        ({"messages": MESSAGES, "n": 2}, 400, "n", "n must be 1"),
    ],
)
async def test_bad_requests_get_openai_errors(
    tiny: tuple[Any, Any], body: Any, status: int, param: str | None, words: str
) -> None:
    model = Scripted(tiny[1], "never")
    async with serving(LocalPolicy(model, tiny[1])) as (url, session):
        options = {"data": body} if isinstance(body, bytes) else {"json": body}
        async with session.post(f"{url}/chat/completions", **options) as response:
            assert response.status == status
            error = (await response.json())["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert words in error["message"]
    assert "Traceback" not in error["message"]
    assert model.most_running == 0


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
        started = time.monotonic()
        status, response = await complete(session, url, max_tokens=3)
        waited = time.monotonic() - started
    assert (status, response["usage"]["completion_tokens"]) == (200, 3)
    assert waited < 1.0
    assert model.generated[0] < 50
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


def test_a_folder_without_a_model_is_a_clear_error(tmp_path: Any) -> None:
    result = CliRunner().invoke(main, ["serve", "--model", str(tmp_path)])
    assert result.exit_code == 1
    assert "Cannot load a causal LM" in result.output
