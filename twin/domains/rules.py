"""What an entity of a domain may hold, checked when a home is loaded (twin.homefile).

Each domain module declares its `RULES`: a validator for every capability, state attribute and
memory (`hidden`) key its services, the device manual and the room physics read, and the rules
that tie keys together (a light's colour mode is one of its supported_color_modes). A home file or
snapshot that breaks one is refused whole, with the key at fault, instead of failing later inside
a service call. Keys a domain does not read may hold any value.

A validator takes the value as it is (it coerces nothing: a home file says what it means) and
returns it, or raises vol.Invalid saying what it expected and what came.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import voluptuous as vol

from ..registry import EntityEntry
from ..state import State
from ..validation import shown

Validator = Callable[[Any], Any]
Consistency = Callable[[EntityEntry, State], None]

# The temperatures (°C) an entity or a room may show: far past any home, and within what the
# room physics' vapour formula holds (it breaks down towards -243 °C).
MIN_TEMPERATURE = -100.0
MAX_TEMPERATURE = 200.0


@dataclass(frozen=True, slots=True)
class EntityRules:
    """What a domain's entities may hold.

    `values` checks a key wherever the entity holds it: in its capabilities, its state attributes
    and its memory. `consistent` checks what ties keys together (raising vol.Invalid).
    `unmodelled_features` are Home Assistant's feature bits of the domain that the twin offers no
    service for: an entity may have them (a real media player that can seek), but they do nothing.
    `states` are the states the domain's Home Assistant entity can write (None: any text, as a
    sensor's); `unavailable` and `unknown`, which HA writes for any entity, are always allowed.
    `state` checks the form of a state that is no name from a list (a time, a count).
    """

    values: Mapping[str, Validator] = field(default_factory=dict)
    consistent: Consistency | None = None
    unmodelled_features: int = 0
    states: frozenset[str] | None = None
    state: Validator | None = None


def number(low: float | None = None, high: float | None = None) -> Validator:
    """A finite int or float within low..high (True and False are no numbers)."""
    if low is not None and high is not None:
        wanted = f"a number {low:g}-{high:g}"
    elif low is not None:
        wanted = f"a number of at least {low:g}"
    else:
        wanted = "a finite number"

    def check(value: Any) -> Any:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            raise vol.Invalid(f"expected {wanted}, got {shown(value)}")
        return value

    return check


def index(value: Any) -> int:
    """A position in a list: an int of at least 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise vol.Invalid(f"expected an integer of at least 0, got {shown(value)}")
    return value


def text(value: Any) -> str:
    """A string."""
    if not isinstance(value, str):
        raise vol.Invalid(f"expected a string, got {shown(value)}")
    return value


def flag(value: Any) -> bool:
    """True or false."""
    if not isinstance(value, bool):
        raise vol.Invalid(f"expected true or false, got {shown(value)}")
    return value


def one_of(options: Iterable[str]) -> Validator:
    """One of a fixed set of names."""
    allowed = frozenset(options)
    listed = ", ".join(sorted(allowed))

    def check(value: Any) -> Any:
        if not isinstance(value, str) or value not in allowed:
            raise vol.Invalid(f"expected one of {listed}, got {shown(value)}")
        return value

    return check


def optional(validator: Validator) -> Validator:
    """None (Home Assistant's value when there is none, as a light's brightness while off), or
    what `validator` accepts."""

    def check(value: Any) -> Any:
        return None if value is None else validator(value)

    return check


def names(item: Validator = text) -> Validator:
    """A list of names such as a capability's options, each passing `item`."""

    def check(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise vol.Invalid(f"expected a list of names, got {shown(value)}")
        for part in value:
            item(part)
        return value

    return check


def sequence(*channels: Validator) -> Validator:
    """A list or tuple of exactly these items, such as a colour's channels."""

    def check(value: Any) -> Any:
        if not isinstance(value, list | tuple) or len(value) != len(channels):
            raise vol.Invalid(f"expected a list of {len(channels)} values, got {shown(value)}")
        for channel, part in zip(channels, value, strict=True):
            channel(part)
        return value

    return check


def pattern(value: Any) -> str:
    """A regular expression of at most 255 characters, as a lock's code_format."""
    if not isinstance(value, str) or len(value) > 255:
        raise vol.Invalid(f"expected a regular expression (a string), got {shown(value)}")
    try:
        re.compile(value)
    except re.error as err:
        raise vol.Invalid(f"expected a regular expression, got {shown(value)}: {err}") from None
    return value


def ordered(
    caps: Mapping[str, Any], low: str, high: str, default_low: float, default_high: float
) -> None:
    """A range's ends in order, with the domain's default for an end the entity lacks."""
    first, last = caps.get(low, default_low), caps.get(high, default_high)
    if first > last:
        raise vol.Invalid(f"capabilities: {low} ({first}) is above {high} ({last})")


# The states of Home Assistant's ToggleEntity (light, fan, switch, humidifier...).
ON_OFF = frozenset(("on", "off"))
# What HA writes for any entity it cannot read or has not read yet: a snapshot holds them.
ANY_ENTITY_STATES = frozenset(("unavailable", "unknown"))


def check_state(domain_rules: EntityRules, state: str) -> None:
    """Refuse a state the domain's Home Assistant entity never writes (a vacuum that is `off`)."""
    allowed = domain_rules.states
    if allowed is not None and state not in allowed | ANY_ENTITY_STATES:
        listed = ", ".join(sorted(allowed | ANY_ENTITY_STATES))
        raise vol.Invalid(f"state: expected one of {listed}, got {shown(state)}")
    if domain_rules.state is not None and state not in ANY_ENTITY_STATES:
        try:
            domain_rules.state(state)
        except vol.Invalid as err:
            raise vol.Invalid(f"state: {err.msg}") from None


def moment(timestamp: float, timespec: str = "auto") -> str:
    """A time on the home's clock as Home Assistant writes a state that is one (a button's last
    press): ISO 8601 in UTC, `datetime.isoformat` of `dt_util.utcnow()`."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec=timespec)


def moment_state(value: str) -> str:
    """A state that is a time (a button's, a scene's, an event's): ISO 8601 with its offset, as
    `moment` writes it."""
    try:
        aware = datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        aware = False
    if not aware:
        raise vol.Invalid(
            "expected a time such as 2026-01-01T08:00:00+00:00 (the last time it happened), or "
            f"unknown, got {shown(value)}"
        )
    return value


TEMPERATURE = number(MIN_TEMPERATURE, MAX_TEMPERATURE)
PERCENT = number(0, 100)
STEP = number(0, 100)
