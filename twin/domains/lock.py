"""lock: door locks, with an optional code and an optional unlatch (`open`).

Schemas, the `open` feature and code checks follow Home Assistant's LockEntity: every service
takes an optional `code` (coerced to a string); when the lock shows a `code_format` (a regular
expression, matched from the start of the code as HA's `re.match` does), a missing or
non-matching code is a ServiceValidationError. Like HA, the twin checks only the code's format:
whether a code is right is the lock's business, and the well-behaved locks the twin models accept
any code of the right format. Locking, unlocking and unlatching complete within the call (the twin
has no motion time yet), so `locking`, `unlocking`, `opening` and `jammed` only come from a home's
initial state; any service takes a lock out of them, as a retry on a real lock does.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..service import EntityDraft, Service, schema
from ..validation import string
from .descriptor import (
    Asked,
    Carrying,
    Domain,
    FieldNotes,
    Spoken,
    flag_state,
)
from .rules import EntityRules, optional, pattern

OPEN = 1

STATE_LOCKED = "locked"
STATE_UNLOCKED = "unlocked"
STATE_OPEN = "open"

ATTR_CODE = "code"
ATTR_CODE_FORMAT = "code_format"

_CODE_SCHEMA = schema({vol.Optional(ATTR_CODE): string})


@cache
def _pattern(code_format: str) -> re.Pattern[str]:
    """A lock's code format, compiled once per format."""
    return re.compile(code_format)


def _check_code(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Refuse a code that does not match the lock's code_format (HA's add_default_code)."""
    code_format = entity.capabilities.get(ATTR_CODE_FORMAT)
    if code_format is not None and not _pattern(code_format).match(data.get(ATTR_CODE, "")):
        raise ServiceValidationError(
            f"The code for {entity.entity_id} doesn't match pattern {code_format}; "
            f"give a code that matches it"
        )


def lock(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Lock."""
    _check_code(entity, data)
    entity.state = STATE_LOCKED


def unlock(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Unlock."""
    _check_code(entity, data)
    entity.state = STATE_UNLOCKED


def open_lock(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Unlatch: unlock and pull the latch so that the door opens."""
    _check_code(entity, data)
    entity.state = STATE_OPEN


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """LockEntity.state from a synthetic-home lock's is_* arguments, which it does not show; its
    code_format shows only when it has one."""
    state = flag_state(
        arguments,
        {
            "is_jammed": "jammed",
            "is_opening": "opening",
            "is_locking": "locking",
            "is_open": STATE_OPEN,
            "is_unlocking": "unlocking",
        },
        ("is_locked", STATE_LOCKED, STATE_UNLOCKED),
    )
    arguments.pop("is_locked", None)
    if ATTR_CODE_FORMAT in arguments and arguments[ATTR_CODE_FORMAT] is None:
        del arguments[ATTR_CODE_FORMAT]
    return state


# What a lock may hold (twin.domains.rules): a code_format that compiles.
# LockState: every state a Home Assistant lock writes.
STATES = frozenset(
    (STATE_LOCKED, STATE_UNLOCKED, STATE_OPEN, "locking", "unlocking", "opening", "jammed")
)
RULES = EntityRules({ATTR_CODE_FORMAT: optional(pattern)}, states=STATES)


DOMAIN = Domain.of(
    "lock",
    [
        Service("lock", lock, _CODE_SCHEMA, description="Locks a lock."),
        Service("unlock", unlock, _CODE_SCHEMA, description="Unlocks a lock."),
        Service("open", open_lock, _CODE_SCHEMA, (OPEN,), "Opens a lock."),
    ],
    {"open": OPEN},
    rules=RULES,
    device=True,
    fields={ATTR_CODE: FieldNotes(pattern_from=ATTR_CODE_FORMAT)},
    state_outcomes={"lock": '== "locked"', "unlock": '== "unlocked"', "open": '== "open"'},
    # Home Assistant writes code_format in the state only; the twin keeps it with the entity.
    carrying=Carrying(capabilities=frozenset({ATTR_CODE_FORMAT}), arguments=from_arguments),
    spoken={"lock": (Spoken("HassTurnOn"),), "unlock": (Spoken("HassTurnOff"),)},
    asked=Asked(("locked", "unlocked")),
    color="#343a40",
)
