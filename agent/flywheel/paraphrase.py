"""Requests rewritten by a chat model (paper 3.3.1: an LLM may phrase what the scripter drafts).

The paraphrase only changes the user's words: the ground truth is the candidate's intents, which
the triple filter still checks. What the words must keep is said in the prompt, and numbers are
checked: a paraphrase that drops a number of the request (a brightness, a temperature, a time)
would ask for something else, so it is refused with UnfaithfulParaphrase and the seed is counted
as rejected by "paraphrase". A server that fails or answers nothing usable raises PolicyError;
nothing falls back to the scripter's wording.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter

from ..errors import AgentError
from ..policies import Message, PolicyError
from ..policies.specs import SpecError, openai_policy, policy_kind

PROMPT = """\
You rewrite a smart-home user's request so that it sounds like something that user would \
naturally say to their home assistant. Keep every device, every room and every value exactly: \
each number as digits with its unit, each mode, colour, time and name. Add nothing, drop \
nothing, and do not answer or carry out the request. Reply with the rewritten request only: one \
line, no quotes, no explanation."""
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


class UnfaithfulParaphrase(AgentError):
    """A paraphrase that lost part of the request; its seed is rejected."""


class LLMParaphraser:
    """`paraphrase(request) -> str` for make_blueprint, by the server of `openai:URL#MODEL`.

    Called synchronously (make_blueprint is), so each call runs its own event loop and HTTP
    session: call it where no loop runs, such as a runner's worker. `seed` (with a temperature
    above 0) makes the server's sampling repeatable where it honours seeds."""

    def __init__(self, spec: str, *, temperature: float = 0.7, seed: int | None = None) -> None:
        if policy_kind(spec) != "openai":
            raise SpecError(f"a paraphraser needs openai:URL#MODEL, got {spec!r}")
        self.spec = spec
        self.temperature = temperature
        self.seed = seed

    def __call__(self, request: str) -> str:
        return asyncio.run(self.rewrite(request))

    async def rewrite(self, request: str) -> str:
        """The server's rewrite of `request`, checked to keep its numbers."""
        messages: list[Message] = [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": request},
        ]
        async with openai_policy(self.spec, temperature=self.temperature, seed=self.seed) as llm:
            reply = await llm.act(messages, [])
        text = reply.content.strip().strip('"').strip()
        if not text or reply.tool_calls:
            raise PolicyError(
                f"{llm.url} gave no paraphrase of {request!r}: it answered {reply.content[:200]!r}"
                f" with {len(reply.tool_calls)} tool calls"
            )
        missing = Counter(NUMBER.findall(request)) - Counter(NUMBER.findall(text))
        if missing:
            raise UnfaithfulParaphrase(
                f"the paraphrase {text!r} of {request!r} drops {', '.join(sorted(missing))}"
            )
        return text
