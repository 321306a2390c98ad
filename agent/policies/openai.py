"""A policy served by any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama,
OpenAI itself), with retries for the failures that pass and clear errors for those that don't."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp

from . import AssistantMessage, Message, PolicyError, ToolCall
from .toolcalls import parse_arguments, parse_tool_calls

_LOGGER = logging.getLogger(__name__)
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class OpenAIPolicy:
    """Chat completions at `base_url` (".../v1"); the API key is sent, never logged or raised.

    Connection errors, 5xx and 429 are retried `retries` times with exponential backoff; a
    timeout is not (a slow server would only be asked again to be slow) and raises PolicyError.
    Use it within one event loop and `await close()` (or `async with`) when done.
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
        max_tokens: int | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self._api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"OpenAIPolicy(url={self.url!r}, model={self.model!r})"

    async def __aenter__(self) -> OpenAIPolicy:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """Ask the server for the next message."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if tools:
            payload["tools"] = tools
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        return _message(await self._post(payload))

    async def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The response's JSON, after retries."""
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._session = aiohttp.ClientSession(
                headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout)
            )
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                async with self._session.post(self.url, json=payload) as response:
                    if response.status in _RETRY_STATUSES:
                        problem = f"HTTP {response.status}: {self._redact(await response.text())}"
                        _LOGGER.debug("%s answered %s; retrying", self.url, problem)
                        continue
                    if response.status >= 400:
                        raise PolicyError(
                            f"{self.url} refused the request with HTTP {response.status}: "
                            f"{self._redact(await response.text())}"
                            + (" (check the API key)" if response.status in (401, 403) else "")
                        )
                    data = await response.json(content_type=None)
            except TimeoutError:
                raise PolicyError(
                    f"{self.url} did not answer within {self.timeout} s; raise the timeout"
                ) from None
            except aiohttp.ClientConnectionError as exc:
                problem = f"cannot connect ({exc})"
                _LOGGER.debug("%s: %s; retrying", self.url, problem)
                continue
            except ValueError as exc:
                raise PolicyError(f"{self.url} answered with invalid JSON: {exc}") from None
            if not isinstance(data, dict):
                raise PolicyError(f"{self.url} answered with {type(data).__name__}, not an object")
            return data
        raise PolicyError(f"{self.url} failed {self.retries + 1} times; last: {problem}")

    def _redact(self, text: str) -> str:
        """A server's text without the API key (some servers echo it), shortened."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text[:500]


def _message(data: dict[str, Any]) -> AssistantMessage:
    """An AssistantMessage from a chat-completions response."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise PolicyError(f"the response has no choices[0].message: {str(data)[:300]}") from None
    usage = data.get("usage") or {}
    tokens = {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
    }
    content = message.get("content") or ""
    if not message.get("tool_calls"):
        parsed = parse_tool_calls(content)
        return AssistantMessage(parsed.content, parsed.tool_calls, parsed.errors, **tokens)
    calls: list[ToolCall] = []
    errors: list[str] = []
    for number, call in enumerate(message["tool_calls"], start=1):
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
    return AssistantMessage(content, tuple(calls), tuple(errors), **tokens)
