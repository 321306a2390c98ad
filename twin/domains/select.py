"""select: a device's setting with fixed options, such as a mower's headlight mode (SelectEntity).

Schemas, errors and their messages are Home Assistant's SelectEntity: select_option refuses an
option the entity lacks; select_first/last/next/previous refuse an entity without options;
next/previous from no current option go to the first/last option, and `cycle` (default true)
wraps around the ends, else they stop there. The state is the current option; Home Assistant
writes `unknown` for no option, or one that is not among the options.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import shown, string
from .descriptor import Carrying, Domain, FieldNotes
from .rules import ANY_ENTITY_STATES, EntityRules, names

ATTR_OPTION = "option"
ATTR_OPTIONS = "options"
ATTR_CYCLE = "cycle"


def _options(entity: EntityDraft) -> list[str]:
    """The entity's options; ServiceValidationError when it has none, as Home Assistant's."""
    options = list(entity.capabilities.get(ATTR_OPTIONS) or ())
    if not options:
        raise ServiceValidationError(f"Entity {entity.entity_id} has no options to select from.")
    return options


def select_option(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Select one of the options."""
    option = data[ATTR_OPTION]
    options = list(entity.capabilities.get(ATTR_OPTIONS) or ())
    if option not in options:
        raise ServiceValidationError(
            f"Option {option} is not valid for entity {entity.entity_id}, valid options are: "
            f"{', '.join(options)}."
        )
    entity.state = option


def select_first(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Select the first option."""
    entity.state = _options(entity)[0]


def select_last(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Select the last option."""
    entity.state = _options(entity)[-1]


def _offset(entity: EntityDraft, offset: int, cycle: bool) -> None:
    """Move `offset` options on from the current one (SelectEntity._async_offset_index); from
    no current option (`unknown`), go to the first or last."""
    options = _options(entity)
    if entity.state not in options:
        entity.state = options[0 if offset > 0 else -1]
        return
    index = options.index(entity.state) + offset
    if cycle:
        index %= len(options)
    entity.state = options[min(max(index, 0), len(options) - 1)]


def select_next(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Select the next option."""
    _offset(entity, 1, data[ATTR_CYCLE])


def select_previous(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Select the previous option."""
    _offset(entity, -1, data[ATTR_CYCLE])


# Home Assistant's `bool` validator for cycle: a real boolean, nothing coerced.
_CYCLE_SCHEMA = schema({vol.Optional(ATTR_CYCLE, default=True): bool})


def _consistent(entry: EntityEntry, state: State) -> None:
    """The state is one of the options, or unknown (Home Assistant's for any other)."""
    options = entry.capabilities.get(ATTR_OPTIONS) or ()
    if state.state not in options and state.state not in ANY_ENTITY_STATES:
        raise vol.Invalid(
            f"state: expected one of the options ({', '.join(options) or 'none'}) or unknown, "
            f"got {shown(state.state)}"
        )


# What a select may hold (twin.domains.rules).
RULES = EntityRules({ATTR_OPTIONS: names()}, consistent=_consistent)


DOMAIN = Domain.of(
    "select",
    [
        Service(
            "select_option",
            select_option,
            schema({vol.Required(ATTR_OPTION): string}),
            description="Selects an option.",
        ),
        Service("select_first", select_first, description="Selects the first option."),
        Service("select_last", select_last, description="Selects the last option."),
        Service("select_next", select_next, _CYCLE_SCHEMA, description="Selects the next option."),
        Service(
            "select_previous",
            select_previous,
            _CYCLE_SCHEMA,
            description="Selects the previous option.",
        ),
    ],
    rules=RULES,
    fields={ATTR_OPTION: FieldNotes(options_from=ATTR_OPTIONS)},
    carrying=Carrying(capabilities=frozenset({ATTR_OPTIONS}), state_attribute="current_option"),
    # Assist acts on an exposed one as on a device: an agent may set it by default.
    device=True,
    color="#7f5539",
)
