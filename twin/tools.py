"""The agent's five tools over a twin Home, as JSON-able dicts.

list_entities, get_state, describe, call_service and pyexec give the results a Home Assistant
backend gives, so that an agent sees one API in training and in a real home: the reads are
twin.surface's over the home's TwinView. No tool raises for bad input: a failure is
`{"success": False, "error": {"code": ..., "message": ...}}`, with a TwinError's code
(entity_not_found, invalid_data...), an auditor's (forbidden_domain, confirmation_required...), a
pyexec sandbox's (syntax_error, step_limit...), or unknown_tool / invalid_arguments from run_tool.
`TOOL_SCHEMAS` describes the tools in the OpenAI tools format; `run_tool` checks arguments against
them and calls the tool.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import surface
from .errors import ServiceNotFoundError, TwinError
from .home import Home
from .pyexec import DEFAULT_LIMITS, SandboxLimits, run
from .surface import Result, TwinView, compact, error, jsonable, payload_error

if TYPE_CHECKING:
    from .auditor import ActionPolicy
    from .confirmation import Confirmation

# Auditor codes that refuse a call by policy; the auditor's other verdicts are the home's errors,
# which the call itself reports with the home's codes.
POLICY_CODES = frozenset({"forbidden_domain", "forbidden_service", "confirmation_required"})

_LOGGER = logging.getLogger(__name__)


def list_entities(
    home: Home, area: str | None = None, floor: str | None = None, domain: str | None = None
) -> Result:
    """twin.surface.list_entities of the home: its entities, sorted by id, in compact form."""
    return surface.list_entities(TwinView(home), area, floor, domain)


def get_state(home: Home, entity_id: str) -> Result:
    """twin.surface.get_state of the home: the state as Home Assistant's REST API gives it."""
    return surface.get_state(TwinView(home), entity_id)


def describe(home: Home, entity_id: str) -> Result:
    """twin.surface.describe of the home: the entity's device manual."""
    return surface.describe(TwinView(home), entity_id)


def call_service(
    home: Home,
    domain: str,
    service: str,
    target: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
    policy: ActionPolicy | None = None,
    confirmation: Confirmation | None = None,
) -> Result:
    """Call a Home Assistant action; the result lists the states it changed, in compact form.

    With a `policy`, the auditor refuses forbidden actions first, and sensitive ones the
    conversation's `confirmation` has not confirmed (twin.confirmation).
    """
    if not isinstance(domain, str) or not isinstance(service, str):
        return error(
            ServiceNotFoundError.code,
            'domain and service must be strings, e.g. domain "light" and service "turn_on"',
        )
    if (mistyped := payload_error(target, data)) is not None:
        return mistyped
    try:
        if policy is None:
            result = home.call_service(domain, service, data, target)
        else:
            result = policy.call(home, domain, service, data, target, confirmation)
    except TwinError as err:
        return error(err.code, str(err))
    view = TwinView(home)
    return {"success": True, "changed": [compact(view, state) for state in result.changed]}


def pyexec(
    home: Home,
    code: str,
    policy: ActionPolicy | None = None,
    limits: SandboxLimits = DEFAULT_LIMITS,
    confirmation: Confirmation | None = None,
) -> Result:
    """Run Python against the home in the sandbox (twin.pyexec): its output, its calls, and the
    error that stopped it, if any, in which case none of its calls took effect."""
    if not isinstance(code, str):
        return error("code_error", f"code must be a string of Python, got {type(code).__name__}")
    outcome = run(code, home, limits, policy, confirmation)
    result: Result = {
        "success": outcome.ok,
        "output": outcome.output,
        "calls": [
            {
                "domain": call.domain,
                "service": call.service,
                "target": jsonable(call.target),
                "data": jsonable(call.data),
            }
            for call in outcome.calls
        ],
    }
    if not outcome.ok:
        result["error"] = {"code": outcome.error_code, "message": outcome.error}
    return result


# --- schemas and dispatch ----------------------------------------------------------------------

_OPTIONAL_TEXT = ("string", "null")
_IDS = {"type": ["string", "array"], "items": {"type": "string"}}


def _tool(name: str, description: str, properties: dict[str, Any], *required: str) -> Result:
    """One tool in the OpenAI tools format."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(required),
                "additionalProperties": False,
            },
        },
    }


TOOL_SCHEMAS: tuple[Result, ...] = (
    _tool(
        "list_entities",
        "List the home's entities with their names, areas, states and key attributes. "
        "Filter by area, floor (id or name) and domain.",
        {
            "area": {"type": list(_OPTIONAL_TEXT), "description": "Area id or name."},
            "floor": {"type": list(_OPTIONAL_TEXT), "description": "Floor id or name."},
            "domain": {
                "type": list(_OPTIONAL_TEXT),
                "description": "Entity domain, e.g. light, climate, cover.",
            },
        },
    ),
    _tool(
        "get_state",
        "Get an entity's state and all its attributes.",
        {"entity_id": {"type": "string", "description": "Entity id, e.g. light.kitchen."}},
        "entity_id",
    ),
    _tool(
        "describe",
        "Read an entity's manual: the services it supports and their fields, with types, "
        "ranges, options and units.",
        {"entity_id": {"type": "string", "description": "Entity id, e.g. climate.bedroom."}},
        "entity_id",
    ),
    _tool(
        "call_service",
        "Call a Home Assistant action on entities, e.g. light.turn_on with data "
        '{"brightness_pct": 50}. Returns the states it changed.',
        {
            "domain": {"type": "string", "description": "Action domain, e.g. light."},
            "service": {"type": "string", "description": "Action name, e.g. turn_on."},
            "target": {
                "type": ["object", "null"],
                "description": "What to act on: entity_id, area_id, floor_id or device_id.",
                "properties": {
                    "entity_id": _IDS,
                    "area_id": _IDS,
                    "floor_id": _IDS,
                    "device_id": _IDS,
                },
                "additionalProperties": False,
            },
            "data": {
                "type": ["object", "null"],
                "description": "The action's fields, as describe lists them.",
            },
        },
        "domain",
        "service",
    ),
    _tool(
        "pyexec",
        "Run Python against the home: call_service(domain, service, data=None, target=None, "
        "**fields), state(id), attr(id, name), entity(id), list_entities(domain=None, "
        "area=None) and print. No imports. All calls are undone if the code fails.",
        {"code": {"type": "string", "description": "The Python code."}},
        "code",
    ),
)
TOOL_NAMES = tuple(schema["function"]["name"] for schema in TOOL_SCHEMAS)
_PARAMETERS: Mapping[str, Result] = MappingProxyType(
    {schema["function"]["name"]: schema["function"]["parameters"] for schema in TOOL_SCHEMAS}
)
_JSON_TYPES: Mapping[str, Callable[[Any], bool]] = MappingProxyType(
    {
        "string": lambda value: isinstance(value, str),
        "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": lambda value: isinstance(value, bool),
        "object": lambda value: isinstance(value, Mapping),
        "array": lambda value: isinstance(value, list | tuple),
        "null": lambda value: value is None,
    }
)


class ToolCallError(Exception):
    """A tool call that cannot run as given: an unknown tool, or arguments that do not fit."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.result = error(code, message)


def tool_arguments(
    name: Any, arguments: Any, parameters: Mapping[str, Mapping[str, Any]] = _PARAMETERS
) -> dict[str, Any]:
    """The arguments of a call to the tool `name` (a dict, or its JSON text as LLMs give it),
    checked against its schema in `parameters` (the tools on offer); ToolCallError if they do
    not fit or there is no such tool."""
    if not isinstance(name, str) or name not in parameters:
        raise ToolCallError(
            "unknown_tool", f"No tool {name!r}; the tools are: {', '.join(parameters)}"
        )
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as err:  # ValueError: also a >4,300-digit integer
            raise ToolCallError(
                "invalid_arguments", f"{name}: the arguments are not JSON: {str(err)[:200]}"
            ) from None
    if not isinstance(arguments, Mapping):
        raise ToolCallError(
            "invalid_arguments",
            f"{name}: the arguments must be an object, got {type(arguments).__name__}",
        )
    if (problem := argument_mismatch(arguments, parameters[name], "")) is not None:
        raise ToolCallError("invalid_arguments", f"{name}: {problem}")
    return dict(arguments)


def run_tool(
    home: Home,
    name: Any,
    arguments: Any = None,
    policy: ActionPolicy | None = None,
    confirmation: Confirmation | None = None,
) -> Result:
    """Call the tool `name` with `arguments` (a dict, or its JSON text as LLMs give it), judged by
    the auditor's `policy` and the conversation's `confirmation`, if given.

    Unknown tools and arguments that do not fit the tool's schema give an error result. A tool
    never raises on what a model wrote: a failure the twin did not foresee is undone, logged and
    returned as an `internal_error` result (a bug to report; bench/fuzz.py counts it a crash).
    """
    try:
        kwargs = tool_arguments(name, arguments)
    except ToolCallError as err:
        return err.result
    saved = home.snapshot()
    try:
        return _dispatch(home, name, kwargs, policy, confirmation)
    except Exception as err:  # the tool boundary: model output must not crash a run
        home.restore(saved)
        _LOGGER.exception("Tool %s failed on %.200r", name, arguments)
        return error(
            "internal_error",
            f"{name} failed inside the twin ({type(err).__name__}); nothing changed. "
            "Please report this as a HomeFlow bug",
        )


def _dispatch(
    home: Home,
    name: str,
    kwargs: dict[str, Any],
    policy: ActionPolicy | None,
    confirmation: Confirmation | None,
) -> Result:
    if name == "list_entities":
        return list_entities(home, **kwargs)
    if name == "get_state":
        return get_state(home, **kwargs)
    if name == "describe":
        return describe(home, **kwargs)
    if name == "call_service":
        return call_service(home, **kwargs, policy=policy, confirmation=confirmation)
    return pyexec(home, **kwargs, policy=policy, confirmation=confirmation)


def argument_mismatch(value: Any, schema: Mapping[str, Any], path: str) -> str | None:
    """Why `value` does not fit `schema` (the JSON Schema subset of TOOL_SCHEMAS), or None."""
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_JSON_TYPES[kind](value) for kind in kinds):
            where = f"{path} " if path else "the arguments "
            return f"{where}must be {' or '.join(kinds)}, got {_json_type(value)}"
    if isinstance(value, Mapping):
        properties = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                return f"{_join(path, key)} is required"
        if schema.get("additionalProperties", True) is False:
            for key in value:
                if key not in properties:
                    allowed = ", ".join(properties) or "none"
                    return f"unknown argument {_join(path, str(key))}; allowed: {allowed}"
        for key, item in value.items():
            if key not in properties:
                continue
            if (problem := argument_mismatch(item, properties[key], _join(path, key))) is not None:
                return problem
    elif isinstance(value, list | tuple) and "items" in schema:
        for index, item in enumerate(value):
            problem = argument_mismatch(item, schema["items"], f"{path}[{index}]")
            if problem is not None:
                return problem
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _JSON_TYPES[kind](value):
            return kind
    return type(value).__name__
