"""input_select: a user's choice among options, as Home Assistant's input_select integration has it.

An InputSelect is a SelectEntity with no device behind it: its state is the current option, its
`options` attribute the list it picks from (a state attribute here, not a capability, since
`set_options` changes it), and `editable` says whether it lives in Home Assistant's storage.
`select_option` refuses an option it lacks with HA's plain HomeAssistantError (EntityRefusedError,
in InputSelect's words), as `set_options` refuses duplicates; when the new options lack the
current one, the first becomes current. `select_next` and `select_previous` wrap around unless
`cycle` is false (SelectEntity's rules); a state that is no option counts as the first, and
these four refuse a select without options (ServiceValidationError, in SelectEntity's words).
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import EntityRefusedError, ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import ensure_list, shown, string
from .descriptor import Domain
from .rules import ANY_ENTITY_STATES, EntityRules, flag, names

ATTR_OPTION = "option"
ATTR_OPTIONS = "options"
ATTR_CYCLE = "cycle"
ATTR_EDITABLE = "editable"


def _options(entity: EntityDraft) -> list[str]:
    return list(entity.attributes.get(ATTR_OPTIONS) or ())


def select_option(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Make an option current (InputSelect.async_select_option)."""
    option = data[ATTR_OPTION]
    options = _options(entity)
    if option not in options:
        raise EntityRefusedError(
            f"Invalid option: {option} (possible options: {', '.join(options)})"
        )
    entity.state = option


def _options_or_raise(entity: EntityDraft) -> list[str]:
    """The options, for the services that pick by place (SelectEntity._options_or_raise)."""
    if not (options := _options(entity)):
        raise ServiceValidationError(f"Entity {entity.entity_id} has no options to select from.")
    return options


def _select_index(entity: EntityDraft, index: int) -> None:
    options = _options_or_raise(entity)
    select_option(entity, {ATTR_OPTION: options[index % len(options)]})


def select_first(entity: EntityDraft, data: dict[str, Any]) -> None:
    """The first option."""
    _select_index(entity, 0)


def select_last(entity: EntityDraft, data: dict[str, Any]) -> None:
    """The last option."""
    _select_index(entity, -1)


def _offset(entity: EntityDraft, offset: int, cycle: bool) -> None:
    """SelectEntity._async_offset_index: from the current option (the first if none is)."""
    options = _options_or_raise(entity)
    current = options.index(entity.state) if entity.state in options else 0
    index = current + offset
    if cycle:
        index %= len(options)
    else:
        index = min(max(index, 0), len(options) - 1)
    select_option(entity, {ATTR_OPTION: options[index]})


def select_next(entity: EntityDraft, data: dict[str, Any]) -> None:
    """The next option; after the last, the first unless `cycle` is false."""
    _offset(entity, 1, data[ATTR_CYCLE])


def select_previous(entity: EntityDraft, data: dict[str, Any]) -> None:
    """The previous option; before the first, the last unless `cycle` is false."""
    _offset(entity, -1, data[ATTR_CYCLE])


def set_options(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Replace the options (InputSelect.async_set_options)."""
    options = data[ATTR_OPTIONS]
    if len(set(options)) != len(options):
        raise EntityRefusedError(f"Duplicated options: {options}")
    entity.attributes[ATTR_OPTIONS] = options
    if entity.state not in options:
        entity.state = options[0]


def _consistent(entry: EntityEntry, state: State) -> None:
    """Home Assistant's input_select config check (options, at least one, none twice), and its
    state: an option, or unknown (SelectEntity's state for any other). Without options, it has
    none to pick from, as a SelectEntity can be."""
    if (options := state.attributes.get(ATTR_OPTIONS)) is None:
        return
    if not options or len(set(options)) != len(options):
        raise vol.Invalid(f"attributes.options: expected distinct options, got {shown(options)}")
    if state.state not in options and state.state not in ANY_ENTITY_STATES:
        raise vol.Invalid(f"state: expected one of the options, got {shown(state.state)}")


_CYCLE_SCHEMA = schema({vol.Optional(ATTR_CYCLE, default=True): bool})

DOMAIN = Domain.of(
    "input_select",
    [
        Service(
            "select_first", select_first, description="Selects the first option of an input select."
        ),
        Service(
            "select_last", select_last, description="Selects the last option of an input select."
        ),
        Service(
            "select_next",
            select_next,
            _CYCLE_SCHEMA,
            description="Selects the next option of an input select.",
        ),
        Service(
            "select_option",
            select_option,
            schema({vol.Required(ATTR_OPTION): string}),
            description="Selects an option of an input select.",
        ),
        Service(
            "select_previous",
            select_previous,
            _CYCLE_SCHEMA,
            description="Selects the previous option of an input select.",
        ),
        Service(
            "set_options",
            set_options,
            schema({vol.Required(ATTR_OPTIONS): vol.All(ensure_list, vol.Length(min=1), [string])}),
            description="Sets the options of an input select.",
        ),
    ],
    rules=EntityRules({ATTR_OPTIONS: names(), ATTR_EDITABLE: flag}, consistent=_consistent),
    key_attributes=(ATTR_OPTIONS,),
    # Assist acts on an exposed one as on a device: an agent may set it by default.
    device=True,
    color="#6d597a",
)
