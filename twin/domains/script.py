"""script: Home Assistant's scripts, as opaque actions that finish at once.

A script's sequence is whatever its author wrote; the twin does not run it. `turn_on` starts a run
that ends within the call: the script stays (or goes back to) `off`, `current` (its runs) is what
it was, and `last_triggered` becomes the twin's clock time, as ISO 8601 text (Home Assistant's
JSON for its datetime). Runs an imported script had going (state `on`, `current` above 0) follow
its `mode` as in Home Assistant's Script.async_run: `single` starts nothing while one runs,
`queued` and `parallel` start nothing at `max` runs, and `restart` stops them first. `turn_off`
stops every run; `toggle` stops a running script, else starts it. `variables` (a mapping) are
passed to the run, so they change nothing.

Home Assistant also offers each script as its own action, `script.<object_id>` with its fields as
data; the twin's service layer has a fixed set of entity services per domain, each with a target,
so it offers `script.turn_on` with `variables` instead, which runs the same script.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import voluptuous as vol

from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from .descriptor import Domain, Spoken
from .rules import ON_OFF, EntityRules, index, one_of, optional, text

ATTR_VARIABLES = "variables"
ATTR_LAST_TRIGGERED = "last_triggered"
ATTR_MODE = "mode"
ATTR_CURRENT = "current"
ATTR_MAX = "max"
ATTR_LAST_ACTION = "last_action"
MODES = ("single", "restart", "queued", "parallel")
# Home Assistant's default max runs for queued and parallel scripts.
DEFAULT_MAX = 10


def _runs(entity: EntityDraft) -> int:
    return int(entity.attributes.get(ATTR_CURRENT, 0))


def _stop(entity: EntityDraft) -> None:
    """No run left: off, and no last action (Home Assistant's _ScriptRun._finish)."""
    entity.state = "off"
    entity.attributes[ATTR_CURRENT] = 0
    entity.attributes.pop(ATTR_LAST_ACTION, None)


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Run the script, if its mode lets a run start now."""
    mode = entity.attributes.get(ATTR_MODE, "single")
    runs = _runs(entity)
    if runs and mode == "single":
        return  # Home Assistant logs "Already running"
    if mode in ("queued", "parallel") and runs >= entity.attributes.get(ATTR_MAX, DEFAULT_MAX):
        return  # "Maximum number of runs exceeded"
    if mode == "restart":
        _stop(entity)
    entity.attributes[ATTR_LAST_TRIGGERED] = datetime.fromtimestamp(entity.now, UTC).isoformat()


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop every run."""
    if _runs(entity) or entity.state == "on":
        _stop(entity)


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop a running script, else run it (ToggleEntity.async_toggle)."""
    if entity.state == "on":
        turn_off(entity, data)
    else:
        turn_on(entity, data)


_SCHEMA = schema({vol.Optional(ATTR_VARIABLES): {str: object}})

# What no script may be called: the domain's own actions (Home Assistant's script config refuses
# them as object ids).
RESERVED = frozenset(("turn_on", "turn_off", "toggle", "reload"))


def _consistent(entry: EntityEntry, state: State) -> None:
    """A script's object id is none of the domain's actions."""
    object_id = entry.entity_id.partition(".")[2]
    if object_id in RESERVED:
        raise vol.Invalid(
            f"entity_id: a script's object_id must not be one of {', '.join(sorted(RESERVED))}"
        )


RULES = EntityRules(
    {
        ATTR_LAST_TRIGGERED: optional(text),
        ATTR_MODE: one_of(MODES),
        ATTR_CURRENT: index,
        ATTR_MAX: index,
        ATTR_LAST_ACTION: optional(text),
    },
    consistent=_consistent,
    states=ON_OFF,
)

DOMAIN = Domain.of(
    "script",
    [
        Service(
            "turn_on",
            turn_on,
            _SCHEMA,
            description="Runs the sequence of actions defined in a script.",
        ),
        Service("turn_off", turn_off, _SCHEMA, description="Stops a running script."),
        Service(
            "toggle",
            toggle,
            _SCHEMA,
            description="Starts a script if it isn't running, stops it otherwise.",
        ),
    ],
    rules=RULES,
    key_attributes=(ATTR_LAST_TRIGGERED,),
    spoken={"turn_on": (Spoken("HassTurnOn"),)},
    color="#355070",
)
