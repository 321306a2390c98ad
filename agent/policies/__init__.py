"""What chooses the agent's next move: one protocol over a remote server and a local model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import AgentError

# An OpenAI-format chat message ({"role": ..., "content": ..., "tool_calls": ...}).
Message = dict[str, Any]


class PolicyError(AgentError):
    """The policy could not answer at all (server unreachable, refused, no model); not a bad
    answer, which comes back as an AssistantMessage with parse_errors."""


class ContextFull(PolicyError):
    """The conversation has grown past what the model can read: the episode cannot go on."""


class PolicyTimeout(PolicyError):
    """The model did not answer within the time it was given; each caller says how to give it
    more (Home Assistant's agent names its form's field)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool the model asked to run."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class AssistantMessage:
    """The model's turn: text, the tool calls read from it, and what could not be read."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    # One line per malformed tool call, saying what is wrong, for an error observation and retry.
    parse_errors: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # The model's output as written, where calls were read out of text ("" where they came whole).
    text: str = ""

    def to_openai(self) -> Message:
        """The message to append to the chat history, in the OpenAI format."""
        message: Message = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in self.tool_calls
            ]
        elif message["content"] is None:
            message["content"] = ""
        return message


class Policy(Protocol):
    """Given the conversation so far and the tools on offer, say or do the next thing."""

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The assistant's next message; raises PolicyError only when no answer could be had."""
        ...
