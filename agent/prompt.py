"""The agent's system prompt: the smart home agent prompt of the paper's appendix B.3, grounded in
one home's devices by floor and area, with the user's memory and scene context when known.

Large homes are fitted to a character budget: when the full device list does not fit, the prompt
shows entity counts by domain per area, then per floor, then for the whole home (the first that
fits; the last if none does), and tells the agent to list the ids with `list_entities`. The same
inputs always give the same prompt.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from twin.surface import FloorLayout

from .backends import Backend

DEFAULT_MAX_CHARS = 16_000

ROLE = """\
You are an intelligent smart home agent with strong reasoning and device control capabilities. \
You operate inside the user's home: understand what the user wants (a question or a command), \
act on the devices through your tools, and answer with the correct result."""

WORKFLOW = """\
# How to work
1. Intent: decide whether the user asks about a state, wants a device controlled, is ambiguous, \
or is just chatting.
2. Look before acting: find the devices with list_entities, read their current state with \
get_state, and read a device's manual with describe before you control it.
3. Clarify only when needed (see below).
4. Act: call_service with a domain, a service, a target (entity_id, area_id or floor_id) and \
data; use only services, fields and values the device's manual allows.
5. Verify: read each tool result; if it failed or the goal is not met, fix the call and try again.
6. Reply to the user."""

PYEXEC = """\
pyexec runs short Python against the home (call_service(...), state(...), entity(...)) when a \
request needs a loop or a condition over many devices; no imports."""

CLARIFY = """\
# When to ask
- Do not ask when the device and the function are uniquely identifiable: act.
- Ask one short question only when several valid interpretations exist (e.g. two lamps match \
"the lamp" and nothing says which).
- "All devices" means all only when the user says so (e.g. "all lights"); otherwise act on the \
room or the device the user means."""

REPLY = """\
# Replying
- Answer in one or two short, spoken-style sentences (about 30 words at most) in the user's \
language: say what you did or what you found.
- Never show tool calls, entity ids, JSON or your reasoning to the user.
- Check a device's capabilities and the values' ranges before a call; never invent devices, \
services or attributes."""


def build_prompt(
    layout: Sequence[FloorLayout],
    states: Mapping[str, Mapping[str, Any]],
    *,
    tools: Iterable[str] = (),
    memory: Sequence[str] = (),
    scene: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> str:
    """The system prompt for a home, with its device list as detailed as `max_chars` allows.

    `states` gives each entity's device class (shown beside its name); `tools` names the tools
    offered (pyexec gets its own guidance); `memory` holds what is known about the user and
    `scene` the situation now (time, weather, who is home).
    """
    head = [ROLE]
    tail = [WORKFLOW]
    if "pyexec" in tools:
        tail.append(PYEXEC)
    tail += [CLARIFY, REPLY]
    if memory:
        tail.append("# What you know about the user\n" + "\n".join(f"- {m}" for m in memory))
    if scene:
        tail.append("# The situation now\n" + scene.strip())
    fixed = len("\n\n".join(head + tail)) + 2
    views = (
        _full_list(layout, states),
        _counts_by_area(layout),
        _counts_by_floor(layout),
        _counts_for_home(layout),
    )
    devices = next((view for view in views if fixed + len(view) <= max_chars), views[-1])
    return "\n\n".join([*head, devices, *tail])


async def system_prompt(
    backend: Backend,
    *,
    memory: Sequence[str] = (),
    scene: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> str:
    """The system prompt for the home behind `backend`."""
    tools = [schema["function"]["name"] for schema in backend.tool_schemas]
    return build_prompt(
        await backend.layout(),
        await backend.states(),
        tools=tools,
        memory=memory,
        scene=scene,
        max_chars=max_chars,
    )


def _full_list(layout: Sequence[FloorLayout], states: Mapping[str, Mapping[str, Any]]) -> str:
    lines = [_FULL_HEAD]
    for floor in layout:
        lines.append(f"## {_one_line(floor.name)}")
        for area in floor.areas:
            lines.append(f"### {_one_line(area.name)}" + _area_id(area.area_id))
            for entity_id, name in area.entities:
                device_class = states.get(entity_id, {}).get("attributes", {}).get("device_class")
                kind = f" [{_one_line(str(device_class))}]" if device_class else ""
                lines.append(f"- {entity_id}: {_one_line(name)}{kind}")
    return "\n".join(lines)


def compact_devices(devices: str) -> str:
    """A full device list (`_full_list`) in under half the tokens, for small models (whose
    tokenizers split ids at every "_"): areas by name (list_entities takes names), an area's
    entities of one domain on one line, each by its id's words ("desk lamp" for
    light.desk_lamp, the raw object id where words cannot say it), with its name where the
    words are not its name and its device class where they do not say it. Other views are
    returned as they are."""
    if not devices.startswith(_FULL_HEAD):
        return devices
    lines = [_COMPACT_HEAD]
    by_domain: dict[str, list[str]] = {}
    for line in [*devices.splitlines()[1:], ""]:
        area, entity = _AREA_LINE.match(line), _ENTITY_LINE.match(line)
        if entity is None and by_domain:
            lines += [f"- {domain}: {', '.join(said)}" for domain, said in by_domain.items()]
            by_domain = {}
        if entity is not None:
            domain, said = _compact_entity(*entity.groups())
            by_domain.setdefault(domain, []).append(said)
        elif area is not None:
            lines.append(f"### {area.group(1)}")
        elif line:
            lines.append(line)
    return "\n".join(lines)


def _compact_entity(entity_id: str, name: str, device_class: str | None) -> tuple[str, str]:
    """An entity's domain and how compact_devices says it."""
    domain, _, object_id = entity_id.partition(".")
    words = object_id.split("_")
    said = " ".join(words) if all(words) and _words(object_id) == words else object_id
    if _words(name) != words:
        said += f" ({name})"
    if device_class and not set(_words(device_class)) <= set(words):
        said += f" [{device_class}]"
    return domain, said


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold())


def _counts_by_area(layout: Sequence[FloorLayout]) -> str:
    lines = [_SUMMARY_HEAD]
    for floor in layout:
        lines.append(f"## {_one_line(floor.name)}")
        lines += [
            f"- {_one_line(area.name)}{_area_id(area.area_id)}: "
            f"{_counts(e for e, _ in area.entities)}"
            for area in floor.areas
        ]
    return "\n".join(lines)


def _counts_by_floor(layout: Sequence[FloorLayout]) -> str:
    lines = [_SUMMARY_HEAD]
    for floor in layout:
        rooms = ", ".join(_one_line(area.name) for area in floor.areas)
        entities = (e for area in floor.areas for e, _ in area.entities)
        lines.append(f"- {_one_line(floor.name)} ({rooms}): {_counts(entities)}")
    return "\n".join(lines)


def _counts_for_home(layout: Sequence[FloorLayout]) -> str:
    entities = (e for floor in layout for area in floor.areas for e, _ in area.entities)
    floors = ", ".join(_one_line(floor.name) for floor in layout if floor.floor_id is not None)
    named = f" (floors: {floors})" if floors else ""
    return f"{_SUMMARY_HEAD}\n- The whole home{named}: {_counts(entities)}"


_FULL_HEAD = "# Home devices (entity id: name)"
_COMPACT_HEAD = (
    "# Home devices (by area and domain; an entity's id is its domain, a dot and its words "
    "joined by _: light: desk lamp is light.desk_lamp)"
)
_AREA_LINE = re.compile(r"^### (.*?)(?: \(area_id .*\))?$")
_ENTITY_LINE = re.compile(r"^- ([^:\s]+): (.*?)(?: \[([^\]]*)\])?$")
_SUMMARY_HEAD = (
    "# Home devices (counts by domain; call list_entities with an area, floor or domain "
    "for the entity ids)"
)


def _area_id(area_id: str | None) -> str:
    """The id to copy into a call; one that holds blank other than spaces is quoted as JSON,
    so that it stays on its line and exact."""
    if not area_id:
        return ""
    shown = area_id if _one_line(area_id) == area_id else json.dumps(area_id)
    return f" (area_id {shown})"


def _one_line(name: str) -> str:
    """A name on one line: an imported home's names may hold line breaks (any of Unicode's),
    which would open a heading or a rule of their own in the prompt."""
    return " ".join(name.split())


def _counts(entity_ids: Iterable[str]) -> str:
    counts = Counter(entity_id.partition(".")[0] for entity_id in entity_ids)
    if not counts:
        return "no devices"
    return ", ".join(f"{n} {domain}" for domain, n in sorted(counts.items()))
