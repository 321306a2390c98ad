"""The OpenAI-compatible policy against a fake chat-completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from agent.policies import ContextFull, PolicyError
from agent.policies.openai import Delta, OpenAIPolicy

KEY = "sk-secret-123"
TOOLS = [{"type": "function", "function": {"name": "list_entities", "parameters": {}}}]
MESSAGES = [{"role": "user", "content": "Turn on the light"}]
Reply = Callable[[dict[str, Any]], web.StreamResponse]


class FakeServer:
    """Answers POST /v1/chat/completions with the next of `replies`, recording each request."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[tuple[dict[str, Any], str | None]] = []
        self.delay = 0.0
        self.url = ""
        self.connections: list[Any] = []  # each request's transport

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append((body, request.headers.get("Authorization")))
        self.connections.append(request.transport)
        await asyncio.sleep(self.delay)
        return self.replies.pop(0)(body)


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    fake = FakeServer()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    fake.url = f"http://127.0.0.1:{port}/v1"
    yield fake
    await runner.cleanup()


def completion(message: dict[str, Any]) -> Reply:
    return lambda body: web.json_response(
        {
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", **message}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7},
        }
    )


def sse(*deltas: dict[str, Any], done: bool = True) -> Reply:
    """A streamed completion: one server-sent event per delta, then [DONE]."""
    events = [json.dumps({"choices": [{"index": 0, "delta": delta}]}) for delta in deltas]
    body = "".join(f"data: {event}\n\n" for event in events + ["[DONE]"] * done)
    return lambda _: web.Response(text=body, content_type="text/event-stream")


def status(code: int, text: str = "") -> Reply:
    return lambda body: web.Response(status=code, text=text or f"status {code}")


async def test_tool_calls_from_the_response(server: FakeServer) -> None:
    server.replies.append(
        completion(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "list_entities", "arguments": '{"domain": "light"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "x", "arguments": "{"},
                    },
                ],
            }
        )
    )
    async with OpenAIPolicy(server.url, "m", KEY) as policy:
        message = await policy.act(MESSAGES, TOOLS)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_a", "list_entities", {"domain": "light"})
    ]
    assert len(message.parse_errors) == 1
    assert message.parse_errors[0].startswith("tool call 2:")
    assert (message.content, message.prompt_tokens, message.completion_tokens) == ("", 11, 7)
    body, authorization = server.requests[0]
    assert body["messages"] == MESSAGES
    assert body["tools"] == TOOLS
    assert body["model"] == "m"
    assert authorization == f"Bearer {KEY}"


async def test_tool_calls_from_text(server: FakeServer) -> None:
    text = 'Sure.<tool_call>{"name": "list_entities", "arguments": {}}</tool_call>'
    server.replies.append(completion({"content": text}))
    async with OpenAIPolicy(server.url + "/", "m") as policy:
        message = await policy.act(MESSAGES, [])
    assert message.content == "Sure."
    assert [c.name for c in message.tool_calls] == ["list_entities"]
    body, authorization = server.requests[0]
    assert "tools" not in body
    assert authorization is None


async def test_server_errors_and_rate_limits_are_retried(server: FakeServer) -> None:
    server.replies += [status(500), status(429), completion({"content": "hello"})]
    async with OpenAIPolicy(server.url, "m", retries=2, backoff=0.01) as policy:
        message = await policy.act(MESSAGES, TOOLS)
    assert message.content == "hello"
    assert len(server.requests) == 3


async def test_retries_run_out(server: FakeServer) -> None:
    server.replies += [status(503, "overloaded")] * 2
    async with OpenAIPolicy(server.url, "m", retries=1, backoff=0.01) as policy:
        with pytest.raises(PolicyError, match=r"failed 2 times; last: HTTP 503: overloaded"):
            await policy.act(MESSAGES, TOOLS)


async def test_connection_errors_are_retried_then_reported() -> None:
    async with OpenAIPolicy("http://127.0.0.1:9/v1", "m", retries=1, backoff=0.01) as policy:
        with pytest.raises(PolicyError, match="cannot connect"):
            await policy.act(MESSAGES, TOOLS)


async def test_timeout(server: FakeServer) -> None:
    server.delay = 1.0
    server.replies.append(completion({"content": "late"}))
    async with OpenAIPolicy(server.url, "m", timeout=0.2) as policy:
        with pytest.raises(PolicyError, match=r"did not answer within 0.2 s"):
            await policy.act(MESSAGES, TOOLS)
    assert len(server.requests) == 1


async def test_unauthorised_names_the_problem_not_the_key(
    server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.replies.append(status(401, json.dumps({"error": f"Incorrect API key {KEY}"})))
    async with OpenAIPolicy(server.url, "m", KEY) as policy:
        with pytest.raises(PolicyError) as raised:
            await policy.act(MESSAGES, TOOLS)
        assert KEY not in repr(policy)
    assert "HTTP 401" in str(raised.value)
    assert "check the API key" in str(raised.value)
    assert KEY not in str(raised.value)
    assert KEY not in caplog.text
    assert len(server.requests) == 1


async def test_a_response_without_choices_is_an_error(server: FakeServer) -> None:
    server.replies.append(lambda body: web.json_response({"error": "nope"}))
    async with OpenAIPolicy(server.url, "m") as policy:
        with pytest.raises(PolicyError, match=r"no choices\[0\].message"):
            await policy.act(MESSAGES, TOOLS)


@pytest.mark.parametrize(
    "body",
    [
        # OpenAI
        '{"error": {"message": "This model\'s maximum context length is 8192 tokens.", '
        '"code": "context_length_exceeded"}}',
        # vLLM
        '{"object": "error", "message": "The decoder prompt (length 9000) is longer than the '
        'maximum model length of 8192."}',
        # llama.cpp
        '{"error": {"code": 400, "message": "request (9000 tokens) exceeds the available context '
        'size (8192 tokens)", "type": "exceed_context_size_error"}}',
    ],
)
async def test_a_conversation_too_long_for_the_server_is_context_full(
    server: FakeServer, body: str
) -> None:
    server.replies.append(status(400, body))
    async with OpenAIPolicy(server.url, "m") as policy:
        with pytest.raises(ContextFull, match="cannot read a conversation this long"):
            await policy.act(MESSAGES, TOOLS)
    assert len(server.requests) == 1  # not retried: the same request would fail the same way


async def test_another_bad_request_is_not_context_full(server: FakeServer) -> None:
    server.replies.append(status(400, '{"error": {"message": "unknown model m"}}'))
    async with OpenAIPolicy(server.url, "m") as policy:
        with pytest.raises(PolicyError, match="HTTP 400") as raised:
            await policy.act(MESSAGES, TOOLS)
    assert not isinstance(raised.value, ContextFull)


async def collect(policy: OpenAIPolicy) -> list[Delta]:
    return [delta async for delta in policy.stream(MESSAGES, TOOLS)]


async def test_stream_yields_text_then_tool_calls_assembled_from_fragments(
    server: FakeServer,
) -> None:
    def call(index: int, **fields: Any) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, **fields}]}

    server.replies.append(
        sse(
            {"role": "assistant", "content": ""},
            {"content": "On "},
            {"content": "it."},
            call(0, id="call_a", type="function", function={"name": "get_state", "arguments": ""}),
            call(1, id="call_b", type="function", function={"name": "call_service"}),
            call(0, function={"arguments": '{"entity_id": '}),
            call(1, function={"arguments": '{"domain": "light"}'}),
            call(0, function={"arguments": '"light.a"}'}),
            call(2, function={"name": "", "arguments": "{}"}),
        )
    )
    async with OpenAIPolicy(server.url, "m", KEY) as policy:
        deltas = await collect(policy)
    assert [d.content for d in deltas[:2]] == ["On", " it."]  # a space once more text follows
    last = deltas[-1]
    assert [(c.id, c.name, c.arguments) for c in last.tool_calls] == [
        ("call_a", "get_state", {"entity_id": "light.a"}),
        ("call_b", "call_service", {"domain": "light"}),
    ]
    assert last.parse_errors == ("tool call 3: it has no function name",)
    body, authorization = server.requests[0]
    assert body["stream"] is True
    assert body["tools"] == TOOLS
    assert body["messages"] == MESSAGES
    assert authorization == f"Bearer {KEY}"


async def test_stream_reads_tool_calls_a_server_left_in_the_text(server: FakeServer) -> None:
    """As act() reads them, from a server without a tool parser (llama.cpp without --jinja, a
    model Ollama has no tool template for); the call's text is never shown as content."""
    call = '{"name": "get_state", "arguments": {"entity_id": "light.a"}}'
    server.replies.append(
        sse({"content": "Checking. <tool"}, {"content": f"_call>{call}</tool_call>"})
    )
    async with OpenAIPolicy(server.url, "m") as policy:
        deltas = await collect(policy)
    assert "".join(d.content for d in deltas) == "Checking."
    assert [(c.name, c.arguments) for c in deltas[-1].tool_calls] == [
        ("get_state", {"entity_id": "light.a"})
    ]


async def test_stream_is_retried_before_it_starts(server: FakeServer) -> None:
    server.replies += [status(502), sse({"content": "hi"})]
    async with OpenAIPolicy(server.url, "m", retries=1, backoff=0.01) as policy:
        assert await collect(policy) == [Delta("hi")]
    assert len(server.requests) == 2


def raw(body: str) -> Reply:
    return lambda _: web.Response(text=body, content_type="text/event-stream")


async def test_a_streamed_error_is_a_policy_error_without_the_key(server: FakeServer) -> None:
    server.replies += [
        raw(f'data: {{"choices": []}}\n\ndata: {{"error": "bad key {KEY}"}}\n\n'),
        sse({"content": "a"}, done=False),
        raw("data: {no"),
    ]
    async with OpenAIPolicy(server.url, "m", KEY) as policy:
        with pytest.raises(PolicyError, match=r"streamed an error") as raised:
            await collect(policy)
        assert KEY not in str(raised.value)
        # A stream that ends without [DONE] is complete; one that is not JSON is an error.
        assert await collect(policy) == [Delta("a")]
        with pytest.raises(PolicyError, match="streamed invalid JSON"):
            await collect(policy)


async def test_a_streamed_context_error_is_context_full(server: FakeServer) -> None:
    error = {"error": {"message": "maximum context length is 8192 tokens", "code": 400}}
    server.replies.append(raw(f"data: {json.dumps(error)}\n\n"))
    async with OpenAIPolicy(server.url, "m") as policy:
        with pytest.raises(ContextFull, match="maximum context length"):
            await collect(policy)


async def test_a_stream_too_slow_is_a_timeout(server: FakeServer) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"choices": [{"delta": {"content": "Hi"}}]}\n\n')
        await asyncio.sleep(1.0)
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    try:
        deltas: list[Delta] = []

        async def read(policy: OpenAIPolicy) -> None:
            async for delta in policy.stream(MESSAGES, TOOLS):
                deltas.append(delta)

        async with OpenAIPolicy(url, "m", timeout=0.3) as policy:
            with pytest.raises(PolicyError, match=r"did not answer within 0.3 s"):
                await read(policy)
        assert deltas == [Delta("Hi")]
    finally:
        await runner.cleanup()


async def test_a_session_given_is_used_and_left_open(server: FakeServer) -> None:
    server.replies += [completion({"content": "one"}), sse({"content": "two"})]
    async with aiohttp.ClientSession() as session:
        async with OpenAIPolicy(server.url, "m", KEY, session=session) as policy:
            assert (await policy.act(MESSAGES, TOOLS)).content == "one"
            assert await collect(policy) == [Delta("two")]
        assert not session.closed
    assert [authorization for _, authorization in server.requests] == [f"Bearer {KEY}"] * 2
