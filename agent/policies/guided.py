"""Guided decoding for a local model: its text is either a reply or one Hermes `<tool_call>` whose
JSON fits one of the offered tools' schemas, with chosen arguments (entity ids...) held to the
values given. The model still picks every token, by its own scores, among those the grammar
allows; a small untrained model then writes calls that run instead of invented tools.

The grammar is xgrammar's (JSON Schema to a token mask); xgrammar is imported only here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from twin.domains import domain_of
from twin.home import Home

from . import PolicyError

CALL_OPEN = "<tool_call>\n"
CALL_CLOSE = "\n</tool_call>"
# A reply is any text that does not open like a call (a tag, JSON or a code fence, which the
# unguided reader would take for one); it ends where the model stops. A call may follow blank
# space; a guided text is read as a call only when it opens with CALL_OPEN (guided_reading).
# Blank is these four characters, the same to the reader and the grammar (BLANK, in escapes:
# xgrammar's character classes refuse a raw newline).
BLANK_CHARS = " \t\n\r"
_BLANK_CLASS = BLANK_CHARS.encode("unicode_escape").decode()
BLANK = f"[{_BLANK_CLASS}]*"
REPLY = BLANK + f"[^{_BLANK_CLASS}<{{\\[`][\\s\\S]*"

Choices = Mapping[str, Sequence[str]]
# The key of `choices` whose values are the actions ("light.turn_on") a call may name: a call
# with `domain` and `service` arguments then names one of them, on that domain's entities.
ACTION = "action"


def guided_reading(text: str) -> bool:
    """Whether a guided text is a call (read as one) rather than a reply (all text)."""
    return text.lstrip(BLANK_CHARS).startswith(CALL_OPEN.rstrip())


def call_schema(tools: Sequence[Mapping[str, Any]], choices: Choices) -> dict[str, Any]:
    """The JSON Schema of one call to any of `tools`, each argument named in `choices` held to
    its values (a string one, or every item of an array one). An argument with no values (a
    home without floors) cannot be given, and a tool that requires one is left out: `anyOf`
    is then empty when no tool can be called."""
    calls = []
    for tool in tools:
        function = tool.get("function", tool)
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        arguments = _arguments(parameters, choices)
        if arguments is None:
            continue
        calls.append(
            {
                "type": "object",
                "properties": {"name": {"const": function["name"]}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": calls}


def _arguments(parameters: Mapping[str, Any], choices: Choices) -> dict[str, Any] | None:
    """A tool's arguments as `choices` allow them, None when none do; a service call's domain,
    service and entities are chosen together (one branch per domain), so that none names
    another domain's."""
    properties = parameters.get("properties") or {}
    if ACTION not in choices or not {"domain", "service", "target"} <= properties.keys():
        return restrict(parameters, choices)
    by_domain: dict[str, list[str]] = {}
    for action in choices[ACTION]:
        domain, _, service = action.partition(".")
        by_domain.setdefault(domain, []).append(service)
    branches = [_on(d, names, parameters, choices) for d, names in by_domain.items()]
    allowed = [branch for branch in branches if branch is not None]
    return {"anyOf": allowed} if allowed else None


def _on(
    domain: str, services: Sequence[str], parameters: Mapping[str, Any], choices: Choices
) -> dict[str, Any] | None:
    """A service call's arguments on `domain` alone: one of its services, on its own entities,
    with a target that names something (a call without one fails); None when it can name
    nothing."""
    own = {**choices, "domain": [domain], "service": services}
    if "entity_id" in choices:
        own["entity_id"] = [e for e in choices["entity_id"] if e.partition(".")[0] == domain]
    schema = restrict(parameters, own)
    if schema is None or not schema["properties"]["target"].get("properties"):
        return None
    target = schema["properties"]["target"]
    schema["properties"]["target"] = {**target, "type": "object", "minProperties": 1}
    schema["required"] = [*schema.get("required", ()), "target"]
    return schema


def restrict(schema: Mapping[str, Any], choices: Choices) -> dict[str, Any] | None:
    """`schema` with each property named in `choices`, at any depth, limited to those values; a
    property with none is left out, and a schema that requires one is None (nothing fits)."""
    out = dict(schema)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return out
    kept = {}
    for key, value in properties.items():
        held = _one_of(value, choices[key]) if key in choices else restrict(value, choices)
        if held is not None:
            kept[key] = held
        elif key in schema.get("required", ()):
            return None
    out["properties"] = kept
    return out


def _one_of(schema: Mapping[str, Any], values: Sequence[str]) -> dict[str, Any] | None:
    """A string property held to `values` (None for none); one that may also be an array holds
    its items too."""
    if not values:
        return None
    allowed: dict[str, Any] = {"type": "string", "enum": list(values)}
    kinds = schema.get("type")
    if kinds == "array" or (isinstance(kinds, list) and "array" in kinds):
        return {"anyOf": [allowed, {"type": "array", "items": allowed, "minItems": 1}]}
    return allowed


def home_choices(home: Home) -> dict[str, list[str]]:
    """The values the home has for the tools' arguments that name something in it: entities,
    their domains, the actions some entity offers (`light.turn_on`: ACTION), areas, floors
    and devices (by id). A kind the home has none of is an empty list: no call names one."""
    entities = sorted(home.states)
    domains = sorted({entity_id.partition(".")[0] for entity_id in entities})
    actions = {
        f"{entry.domain}.{service.name}"
        for entry in home.entities.values()
        for service in domain_of(entry.domain).services.values()
        if service.supported_by(entry)
    }
    areas, floors = sorted(home.areas), sorted(home.floors)
    return {
        "entity_id": entities,
        "domain": domains,
        ACTION: sorted(actions),
        "area": areas,
        "area_id": areas,
        "floor": floors,
        "floor_id": floors,
        "device_id": sorted(home.devices),
    }


class Guide:
    """Builds, per set of tools and choices, a logits processor for `model.generate` that keeps
    the text to a reply or a valid call. The latest KEPT compiled grammars are cached: an
    episode asks for the same one every call, and each home's choices make a new one (about
    2 MB with SmolLM2's vocabulary), which a long benchmark run would otherwise pile up."""

    KEPT = 4

    def __init__(self, tokenizer: Any, vocab_size: int, stop_ids: Sequence[int]) -> None:
        try:
            import xgrammar
        except ImportError as err:
            raise PolicyError(
                "Guided decoding needs xgrammar: `pip install --no-deps xgrammar==0.2.9 "
                "apache-tvm-ffi==0.1.15.post2` (scripts/setup does), or turn guiding off"
            ) from err
        self._xgr = xgrammar
        info = xgrammar.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=vocab_size, stop_token_ids=list(stop_ids)
        )
        self._compiler = xgrammar.GrammarCompiler(info)
        self.compiled = functools.lru_cache(maxsize=self.KEPT)(self._compile)

    def processor(self, tools: Sequence[Mapping[str, Any]], choices: Choices) -> Any:
        """A fresh (stateful) logits processor for one generation."""
        schema = json.dumps(call_schema(tools, choices), sort_keys=True)
        return self._xgr.contrib.hf.LogitsProcessor(self.compiled(schema))

    def _compile(self, schema: str) -> Any:
        return self._compiler.compile_grammar(self.grammar(json.loads(schema)))

    def grammar(self, schema: Mapping[str, Any]) -> Any:
        """A reply, or a call as `schema` says inside the `<tool_call>` tags (compact JSON),
        after any blank space; a reply only when no tool can be called."""
        grammar = self._xgr.Grammar
        if not schema["anyOf"]:
            return grammar.from_regex(REPLY)
        call = grammar.concat(
            grammar.from_regex(BLANK),
            grammar.from_ebnf(f"root ::= {json.dumps(CALL_OPEN)}"),
            grammar.from_json_schema(dict(schema), any_whitespace=False),
            grammar.from_ebnf(f"root ::= {json.dumps(CALL_CLOSE)}"),
        )
        return grammar.union(grammar.from_regex(REPLY), call)
