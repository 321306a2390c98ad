"""The OpenAI-compatible policy against a fake chat-completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from agent.policies import PolicyError
from agent.policies.openai import OpenAIPolicy

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

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append((body, request.headers.get("Authorization")))
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
