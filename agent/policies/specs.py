"""Policies named by a spec string, `local[:PATH]` or `openai:URL#MODEL`: what the CLI takes and
what the flywheel's workers are configured with (data, not live objects, so a job pickles)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from . import Policy

if TYPE_CHECKING:
    from .openai import OpenAIPolicy


class SpecError(AgentError, ValueError):
    """A spec that names no policy."""


def policy_kind(spec: str) -> str:
    """The spec's kind, "local" or "openai", once it is known to be well formed."""
    kind, _, rest = spec.partition(":")
    if kind == "local":
        return kind
    if kind == "openai":
        url, _, model = rest.partition("#")
        if not url or not model:
            raise SpecError(f"openai needs a server and a model, as openai:URL#MODEL, got {spec!r}")
        return kind
    raise SpecError(f"use local[:PATH] or openai:URL#MODEL, got {spec!r}")


def openai_policy(spec: str, **options: Any) -> OpenAIPolicy:
    """The OpenAIPolicy of `openai:URL#MODEL` (key from OPENAI_API_KEY); options as for it."""
    if policy_kind(spec) != "openai":
        raise SpecError(f"expected openai:URL#MODEL, got {spec!r}")
    from .openai import OpenAIPolicy

    url, _, model = spec.removeprefix("openai:").partition("#")
    return OpenAIPolicy(url, model, os.environ.get("OPENAI_API_KEY"), **options)


def parse_policy(spec: str, choices: Mapping[str, Sequence[str]] | None = None) -> Policy:
    """The policy named by `local[:PATH]` or `openai:URL#MODEL` (key from OPENAI_API_KEY).

    With `choices`, a local model's decoding is guided (LocalPolicy's `guided`): it replies or
    writes a call that fits the tools, with those arguments held to those values. A local model
    is prompted as it was trained (agent.policies.local.prompt_settings).
    """
    if policy_kind(spec) == "openai":
        return openai_policy(spec)
    from .local import LocalPolicy

    path = spec.partition(":")[2]
    return LocalPolicy.from_pretrained(path or None, guided=choices is not None, choices=choices)
