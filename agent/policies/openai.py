"""A policy served by any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama,
OpenAI itself), whole or streamed, with retries for the failures that pass and clear errors for
those that don't."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp

from . import AssistantMessage, ContextFull, Message, PolicyError, PolicyTimeout, ToolCall
from .toolcalls import parse_arguments, parse_tool_calls, settled_content

_LOGGER = logging.getLogger(__name__)
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# How servers say the conversation has outgrown the model's window: OpenAI (code
# context_length_exceeded, "maximum context length"), vLLM ("maximum context length", "longer than
# the maximum model length"), llama.cpp (exceed_context_size_error), Ollama ("exceeds the context
# length").
_CONTEXT_FULL = re.compile(
    r"context_length_exceeded|maximum context length|longer than the maximum model length"
    r"|exceed_context_size_error|exceeds the (available )?context (size|length)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Delta:
    """A piece of a streamed assistant message: text as it arrives, and at the end the rest of
    it with the tool calls, whole (servers send their arguments in fragments)."""

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    parse_errors: tuple[str, ...] = ()


class OpenAIPolicy:
    """Chat completions at `base_url` (".../v1"); the API key is sent, never logged or raised.

    Connection errors, 5xx and 429 are retried `retries` times with exponential backoff; a
    timeout is not (a slow server would only be asked again to be slow) and raises PolicyTimeout.
    A server's "context length exceeded" raises ContextFull, so an episode ends "context_full".
    A `session` given (Home Assistant's shared one) is used and left open; otherwise the policy
    opens its own: use it within one event loop and `await close()` (or `async with`) when done.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self._api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.temperature = temperature
        self.seed = seed  # with temperature > 0, a server that honours it samples reproducibly
        self.max_tokens = max_tokens
        self._session = session
        self._owns_session = session is None

    def __repr__(self) -> str:
        return f"OpenAIPolicy(url={self.url!r}, model={self.model!r})"

    async def __aenter__(self) -> OpenAIPolicy:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the HTTP session, if the policy opened it."""
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """Ask the server for the next message."""
        async with self._responding(self._payload(messages, tools)) as response:
            try:
                data = await response.json(content_type=None)
            except ValueError as exc:
                raise PolicyError(f"{self.url} answered with invalid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise PolicyError(f"{self.url} answered with {type(data).__name__}, not an object")
        return _message(data)

    async def stream(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AsyncIterator[Delta]:
        """The next message as the server generates it (`stream: true`): each piece of text as
        it comes, then the tool calls, assembled from their fragments or, from a server that
        leaves them in the text (no tool parser), read from it as `act` reads them; text that
        may start such a call is held back until the end."""
        fragments: dict[int, dict[str, Any]] = {}
        text = sent = ""
        payload = {**self._payload(messages, tools), "stream": True}
        async with self._responding(payload) as response:
            async for line in response.content:
                event = line.decode("utf-8", "replace").strip()
                if not event.startswith("data:"):
                    continue  # blank lines between events, comments, other fields
                data = event.removeprefix("data:").strip()
                if data == "[DONE]":
                    break
                for choice in self._event(data).get("choices") or ():
                    delta = choice.get("delta") or {}
                    text += delta.get("content") or ""
                    if len(said := settled_content(text)) > len(sent):
                        yield Delta(said[len(sent) :])
                        sent = said
                    for fragment in delta.get("tool_calls") or ():
                        _add_fragment(fragments, fragment)
        parsed = parse_tool_calls(text)
        rest, calls, errors = parsed.content[len(sent) :], parsed.tool_calls, parsed.errors
        if fragments:
            calls, errors = _tool_calls([fragments[index] for index in sorted(fragments)])
        if rest or calls or errors:
            yield Delta(rest, calls, errors)

    def _payload(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if tools:
            payload["tools"] = tools
        if self.seed is not None:
            payload["seed"] = self.seed
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return payload

    @asynccontextmanager
    async def _responding(self, payload: dict[str, Any]) -> AsyncIterator[aiohttp.ClientResponse]:
        """The server's successful response, after retries; a timeout or a broken connection
        while it is read raises PolicyError (part of it may have been used already)."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = await self._session.post(
                    self.url, json=payload, headers=headers, timeout=timeout
                )
                text = ""
                if response.status >= 400:
                    async with response:
                        text = self._redact(await response.text())
            except TimeoutError:
                raise self._too_slow() from None
            except aiohttp.ClientConnectionError as exc:
                problem = f"cannot connect ({exc})"
                _LOGGER.debug("%s: %s; retrying", self.url, problem)
                continue
            if response.status in _RETRY_STATUSES:
                problem = f"HTTP {response.status}: {text}"
                _LOGGER.debug("%s answered %s; retrying", self.url, problem)
                continue
            if response.status >= 400:
                self._check_context(text)
                raise PolicyError(
                    f"{self.url} refused the request with HTTP {response.status}: {text}"
                    + (" (check the API key)" if response.status in (401, 403) else "")
                )
            async with response:
                try:
                    yield response
                except TimeoutError:
                    raise self._too_slow() from None
                except aiohttp.ClientError as exc:
                    raise PolicyError(f"{self.url} broke off its answer: {exc}") from None
            return
        raise PolicyError(f"{self.url} failed {self.retries + 1} times; last: {problem}")

    def _event(self, data: str) -> dict[str, Any]:
        """One streamed chunk, from the JSON of its `data:` line."""
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise PolicyError(f"{self.url} streamed invalid JSON: {exc}") from None
        if not isinstance(event, dict) or "error" in event:
            self._check_context(data)
            raise PolicyError(f"{self.url} streamed an error: {self._redact(data)}")
        return event

    def _check_context(self, error: str) -> None:
        """ContextFull if a server's `error` says the conversation outgrew the model's window."""
        if _CONTEXT_FULL.search(error):
            raise ContextFull(
                f"{self.url} cannot read a conversation this long: {self._redact(error)}"
            )

    def _too_slow(self) -> PolicyTimeout:
        return PolicyTimeout(f"{self.url} did not answer within {self.timeout:g} s")

    def _redact(self, text: str) -> str:
        """A server's text without the API key (some servers echo it), shortened."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text[:500]


def _add_fragment(fragments: dict[int, dict[str, Any]], fragment: dict[str, Any]) -> None:
    """Adds a streamed piece of a tool call to the call at its index."""
    call = fragments.setdefault(
        int(fragment.get("index", len(fragments))), {"function": {"name": "", "arguments": ""}}
    )
    call["id"] = fragment.get("id") or call.get("id")
    function = fragment.get("function") or {}
    call["function"]["name"] += function.get("name") or ""
    call["function"]["arguments"] += function.get("arguments") or ""


def _message(data: dict[str, Any]) -> AssistantMessage:
    """An AssistantMessage from a chat-completions response."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise PolicyError(f"the response has no choices[0].message: {str(data)[:300]}") from None
    usage = data.get("usage") or {}
    tokens = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return read_message(message, *tokens)


def read_message(
    message: Mapping[str, Any], prompt_tokens: int = 0, completion_tokens: int = 0
) -> AssistantMessage:
    """An AssistantMessage from an OpenAI assistant message; calls written in its text are read."""
    content = message.get("content") or ""
    tokens = prompt_tokens, completion_tokens
    if not message.get("tool_calls"):
        parsed = parse_tool_calls(content)
        return AssistantMessage(parsed.content, parsed.tool_calls, parsed.errors, *tokens, content)
    calls, errors = _tool_calls(message["tool_calls"])
    return AssistantMessage(parse_tool_calls(content).content, calls, errors, *tokens)


def _tool_calls(raw: list[dict[str, Any]]) -> tuple[tuple[ToolCall, ...], tuple[str, ...]]:
    """The well-formed calls of an OpenAI `tool_calls` list, and one error per malformed one."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    for number, call in enumerate(raw, start=1):
        function = call.get("function") or {}
        name = function.get("name")
        try:
            if not isinstance(name, str) or not name:
                raise ValueError("it has no function name")
            calls.append(
                ToolCall(
                    str(call.get("id") or f"call_{number}"),
                    name,
                    parse_arguments(function.get("arguments")),
                )
            )
        except ValueError as exc:
            errors.append(f"tool call {number}: {exc}")
    return tuple(calls), tuple(errors)
