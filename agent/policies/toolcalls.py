"""Reads tool calls out of a model's text: Qwen/Hermes `<tool_call>` blocks, code-fenced or bare
JSON, with the slips small models make (trailing commas, single quotes, Python literals) repaired
where the meaning is unambiguous. What is left is the reply's speech, without markup: small models
run on past their turn (chat-template tokens, a `<tool_response>` they invent, role names over and
over), and none of that may be spoken."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from . import ToolCall

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL)
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_LITERAL = re.compile(r"\b(True|False|None)\b")
_PY_TO_JSON = {"True": "true", "False": "false", "None": "null"}
_KEY = re.compile(r"[\"'](name|arguments|parameters)[\"']\s*:")
FORMAT = '<tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>'
# Where the model's turn has surely ended: a chat template's special token (<|im_end|>,
# <|im_start|>, <|endoftext|>...) or a tool result it writes itself. The rest is a turn it
# invented, neither speech nor calls.
_TURN_ENDS = ("<|", "<tool_response>", "</tool_response>", "<tool_result>")
_TURN_END = re.compile("|".join(map(re.escape, _TURN_ENDS)))
_STRAY_TAG = re.compile(r"</?tool_call>")
# Text that may begin a tool call (parse_tool_calls also reads fenced JSON) or end the turn; held
# back when streaming until the reply is parsed.
_CALL_OPENERS = ("<tool_call>", "</tool_call>", "```", *_TURN_ENDS)
# A reply of nothing but role names and punctuation ("system_system...", "assistant:") is markup.
_ROLES = ("system", "user", "assistant", "tool")
_ROLES_ONLY = re.compile(rf"(?:{'|'.join(_ROLES)}|[\W_])*", re.IGNORECASE)
# The same, possibly cut inside a role name: streamed text is held back while it may be that.
_ROLES_SO_FAR = re.compile(
    _ROLES_ONLY.pattern + "(?:" + "|".join(r[:k] for r in _ROLES for k in range(1, len(r))) + ")?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedText:
    """A model's text split into what it said and the calls it made."""

    content: str
    tool_calls: tuple[ToolCall, ...]
    errors: tuple[str, ...]


def parse_tool_calls(text: str) -> ParsedText:
    """Every tool call in `text` up to where its turn ends; `<tool_call>` blocks win, then code
    fences, then bare JSON. The content is what is left, as speech (see `speech`)."""
    parsed = _parse(_TURN_END.split(text, maxsplit=1)[0])
    return ParsedText(speech(parsed.content), parsed.tool_calls, parsed.errors)


def speech(content: str) -> str:
    """`content` less stray tool-call tags; "" where it is only role names or a JSON value (a
    tool result the model echoed), which are never an answer to speak."""
    content = _STRAY_TAG.sub("", content).strip()
    if _ROLES_ONLY.fullmatch(content) or _is_json(content):
        return ""
    return content


def _is_json(text: str) -> bool:
    """Whether text is wholly a JSON object or list."""
    if text[:1] not in ("{", "["):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _parse(text: str) -> ParsedText:
    """The calls in `text` and the text around them."""
    blocks = list(_BLOCK.finditer(text))
    if blocks:
        content = _BLOCK.sub("", text).strip()
        return _parse_bodies(content, [m.group(1) for m in blocks])
    fences = [m for m in _FENCE.finditer(text) if _looks_like_call(m.group(1))]
    if fences:
        content = text
        for fence in fences:
            content = content.replace(fence.group(0), "")
        return _parse_bodies(content.strip(), [m.group(1) for m in fences])
    if _looks_like_call(text):
        return _parse_bodies("", [text])
    return ParsedText(text.strip(), (), ())


def settled_content(text: str) -> str:
    """The part of a reply's text so far that is surely content, as parse_tool_calls will give
    it: what comes before anything that may start a tool call, trimmed as parse_tool_calls trims.

    Each value extends the one before as the text grows, and the parsed content of the whole text
    extends it too, so a stream of the differences adds up to the parsed content.
    """
    text = text.lstrip()
    if text[:1] in ("{", "["):
        return ""
    end = min((i for i in map(text.find, _CALL_OPENERS) if i >= 0), default=len(text))
    for opener in _CALL_OPENERS:
        partial = next(
            (k for k in range(len(opener) - 1, 0, -1) if text.endswith(opener[:k], 0, end)), 0
        )
        end -= partial
    settled = text[:end].rstrip()
    return "" if _ROLES_SO_FAR.fullmatch(settled) else settled


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as a dict, from a dict or a JSON string (repaired); ValueError if not."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        arguments = loads(arguments)
    if not isinstance(arguments, dict):
        raise ValueError(f"arguments must be a JSON object, got {type(arguments).__name__}")
    return arguments


def loads(text: str) -> Any:
    """JSON, or failing that JSON with its unambiguous slips repaired; ValueError if neither."""
    # ValueError is also what JSON with an integer of more than 4,300 digits raises.
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        try:
            return json.loads(repair(text))
        except (ValueError, RecursionError):
            raise ValueError(f"not valid JSON ({str(exc)[:200]})") from None


def repair(text: str) -> str:
    """`text` with single-quoted strings, trailing commas and True/False/None made JSON."""
    parts: list[str] = []
    end = 0
    for match in _STRING.finditer(text):
        parts.append(_repair_outside(text[end : match.start()]))
        string = match.group(0)
        if string.startswith("'"):
            string = json.dumps(string[1:-1].replace("\\'", "'"))
        parts.append(string)
        end = match.end()
    parts.append(_repair_outside(text[end:]))
    return "".join(parts)


def _repair_outside(text: str) -> str:
    """Repairs for text between strings, where no quote can change their meaning."""
    text = _TRAILING_COMMA.sub(r"\1", text)
    return _PY_LITERAL.sub(lambda m: _PY_TO_JSON[m.group(1)], text)


def _looks_like_call(text: str) -> bool:
    """Whether text is wholly a JSON object or list shaped like a call (not a JSON answer)."""
    text = text.strip()
    keys = set(_KEY.findall(text))
    return text[:1] in "{[" and text[-1:] in "}]" and "name" in keys and len(keys) > 1


def _parse_bodies(content: str, bodies: list[str]) -> ParsedText:
    """The calls in each body, and an error for each body or item that is not one."""
    calls: list[ToolCall] = []
    errors: list[str] = []
    for number, body in enumerate(bodies, start=1):
        body = body.strip()
        fence = _FENCE.fullmatch(body)
        if fence:
            body = fence.group(1).strip()
        try:
            value = loads(body)
        except ValueError as exc:
            errors.append(f"tool call {number}: {exc}; write {FORMAT}")
            continue
        for item in value if isinstance(value, list) else [value]:
            try:
                calls.append(_call(item))
            except ValueError as exc:
                errors.append(f"tool call {number}: {exc}; write {FORMAT}")
    return ParsedText(content, tuple(calls), tuple(errors))


def _call(value: Any) -> ToolCall:
    """One call from its decoded JSON; accepts OpenAI's {"function": {...}} and "parameters"."""
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError('"name" must be the tool\'s name as a string')
    key = "arguments" if "arguments" in value else "parameters"
    try:
        arguments = parse_arguments(value.get(key))
    except ValueError as exc:
        raise ValueError(f"call to {name!r}: {exc}") from None
    return ToolCall(f"call_{uuid.uuid4().hex[:16]}", name, arguments)
