"""What the project knows about an entity domain, declared once in the domain's own module.

A `Domain` is Home Assistant's domain as the twin simulates it (its services and feature flags),
with what the rest of the project reads of it: what its entities may hold (twin.domains.rules),
whether the auditor treats it as a device, the attributes list_entities shows first, what the
device manual says of its fields, the state or attribute each service leaves as a goal's
condition, how home files, snapshots and inventories carry its entities, what of an entity's
memory the manual shows (a to-do list's items), and its colour in pictures. The registry
(twin.domains) collects every module's `DOMAIN`; the other modules derive their tables from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..registry import EntityEntry
from ..service import EntityDraft, Service
from .rules import EntityRules

# A services.yaml `filter`: whether an optional field applies to the entity.
FieldFilter = Callable[[EntityEntry], bool]


@dataclass(frozen=True, slots=True)
class CapabilityRange:
    """Capabilities that bound a field, with the domain's defaults when the entity lacks them."""

    low: str | None = None
    high: str | None = None
    default_low: float | None = None
    default_high: float | None = None
    step: str | None = None


@dataclass(frozen=True, slots=True)
class FieldNotes:
    """What the device manual tells of one service field beyond its schema.

    `bounds` narrows its range to the entity's capabilities; `options_from` names the capability
    listing its options, `options` are fixed ones its handler checks; `applies` leaves it out for
    entities that Home Assistant's services.yaml filters it out for; `pattern_from` names a
    capability holding a regular expression the field must match, which makes it required.
    """

    bounds: CapabilityRange | None = None
    options_from: str | None = None
    options: tuple[str, ...] = ()
    applies: FieldFilter | None = None
    pattern_from: str | None = None


@dataclass(frozen=True, slots=True)
class Carrying:
    """How home files, Home Assistant snapshots and synthetic-home inventories carry entities.

    `capabilities` are the static attributes the twin keeps with the entity: Home Assistant's
    capability_attributes (kept in the registry too) and the static ones HA writes only in the
    state (a lock's code_format, a fan's percentage_step); `arguments` turns a synthetic-home
    entity's arguments (its `_attr_*` names) that Home Assistant shows under another name or
    form into those (a fan's speed_count into its percentage_step, a cover's
    current_cover_position into current_position), in place, and returns the state they give
    (from is_on, is_closed, is_locked...) or None; `tuples` are attributes Home
    Assistant keeps as tuples, which JSON makes lists; `boolean_states` are what an inventory's
    true and false states stand for;
    `state_attribute` is an inventory attribute that holds the state when it has none, and
    `on_attribute` one whose value turns a state-less inventory entity on; `temperature_unit`
    says an inventory's unit_of_measurement is the entity's temperature unit, not an attribute;
    `enums` are inventory attributes given as enum names (`alarm_control_panel.CodeFormat.NUMBER`).
    `shows` turns an inventory entity's arguments (its `_attr_*`) into the state Home Assistant
    writes from them, for a domain whose state hides some of them (a light that is off) or
    formats them (an input_number's value, a float);
    `holds` marks what an entity of a real home (an inventory, or a snapshot HomeFlow did not
    export, as the mirror's) keeps as its own where the twin would make it up (a player's track).
    """

    capabilities: frozenset[str] = frozenset()
    arguments: Callable[[dict[str, Any]], str | None] | None = None
    tuples: frozenset[str] = frozenset()
    boolean_states: tuple[str, str] = ("on", "off")
    state_attribute: str | None = None
    on_attribute: str | None = None
    temperature_unit: bool = False
    enums: frozenset[str] = frozenset()
    shows: Callable[[EntityDraft], None] | None = None
    holds: Callable[[EntityDraft], None] | None = None


@dataclass(frozen=True, slots=True)
class Spoken:
    """An Assist intent (Home Assistant's intent sentences, home-assistant-intents) that asks
    for a service call with exactly these fields: the intent's name, the slot each field is
    said in, and the factor from the field's value to the slot's (a volume level of 0.3 is
    said as 30 %)."""

    intent: str
    slots: Mapping[str, str] = field(default_factory=dict)
    scale: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Asked:
    """How users ask about a domain's devices: the `states` a yes/no question names (the steady
    values of Home Assistant's state list for the domain: "is the blind open?"), of devices of
    `device_classes` only where given; the `nouns` that name such a device (a room with a
    device so named has one, whatever its domain); the service call (`request`: service,
    data) a user asks of one, for a request a room without one cannot carry out; and the calls
    of one field each that need a feature not every such device has (`feature_requests`: a
    colour of a white-only bulb), for a request the device cannot carry out."""

    states: tuple[str, ...] = ()
    device_classes: frozenset[str] | None = None
    nouns: tuple[str, ...] = ()
    request: tuple[str, Mapping[str, Any]] | None = None
    feature_requests: tuple[tuple[str, Mapping[str, Any]], ...] = ()


@dataclass(frozen=True, slots=True)
class Domain:
    """An entity domain: its services and feature flags (named as in Home Assistant), and what
    the project reads of it (see the module's docstring).

    `state_outcomes` are the state each service leaves, as a test on state(id) such as
    `== "on"`; `attribute_outcomes` the (attribute, value) a service leaves; `relative_outcomes`
    the attribute a service moves and which way (1 up, -1 down: volume_up), which a goal compares
    with its value at the task's start. `color` is what
    twin.plots draws its devices in, so that the same kind of device looks the same everywhere.
    `contents` names the memory (`hidden`) key of what an entity holds that Home Assistant gives
    only through a response (a to-do list's items): the manual shows it, and goal conditions read
    it with `item(id, name)`. `spoken` are the Assist intents a user says to ask for a service,
    as Home Assistant's intent handlers map them (HassTurnOn opens a cover, locks a lock);
    `asked` how users ask about its devices (status questions, requests for a missing one).
    """

    name: str
    services: Mapping[str, Service]
    features: Mapping[str, int] = field(default_factory=dict)
    rules: EntityRules = field(default_factory=EntityRules)
    device: bool = False
    key_attributes: tuple[str, ...] = ()
    fields: Mapping[str, FieldNotes] = field(default_factory=dict)
    state_outcomes: Mapping[str, str] = field(default_factory=dict)
    attribute_outcomes: Mapping[str, tuple[str, Any]] = field(default_factory=dict)
    relative_outcomes: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    carrying: Carrying = field(default_factory=Carrying)
    contents: str | None = None
    spoken: Mapping[str, tuple[Spoken, ...]] = field(default_factory=dict)
    asked: Asked = field(default_factory=Asked)
    color: str = "black"

    def __post_init__(self) -> None:
        """Refuse outcomes or words for services the domain does not have (a typo would go
        unseen)."""
        outcomes = (*self.state_outcomes, *self.attribute_outcomes, *self.relative_outcomes)
        requested = [service for service, _ in self.asked.feature_requests]
        for service in (*outcomes, *self.spoken, *requested):
            if service not in self.services:
                raise ValueError(
                    f"{self.name}: an outcome or intent for {service!r}, which is no service of "
                    f"the domain; its services: {', '.join(self.services) or 'none'}"
                )
        if any(len(data) != 1 for _, data in self.asked.feature_requests):
            raise ValueError(f"{self.name}: a feature request sets exactly one field")

    @classmethod
    def of(
        cls,
        name: str,
        services: Iterable[Service],
        features: Mapping[str, int] | None = None,
        **details: Any,
    ) -> Domain:
        """A domain from a list of its services; `details` are the other fields."""
        return cls(
            name, {service.name: service for service in services}, dict(features or {}), **details
        )

    def feature_flags(self, names: Iterable[str]) -> int:
        """The supported_features bit mask for feature names such as `set_position`."""
        mask = 0
        for name in names:
            if name not in self.features:
                known = ", ".join(sorted(self.features)) or "none"
                raise KeyError(f"{self.name} has no feature {name!r}; known: {known}")
            mask |= self.features[name]
        return mask


def has_feature(feature: int) -> FieldFilter:
    """A feature filter of services.yaml: the entity has every bit of `feature`."""
    return lambda entry: entry.supported_features & feature == feature


def renamed(arguments: dict[str, Any], names: Mapping[str, str]) -> None:
    """Give synthetic-home arguments Home Assistant's attribute names (argument -> attribute)."""
    for argument, attribute in names.items():
        if argument in arguments:
            arguments[attribute] = arguments.pop(argument)


def flag_state(
    arguments: dict[str, Any], flags: Mapping[str, str], settled: tuple[str, str, str]
) -> str | None:
    """An entity's state from its `is_*` arguments, as its Home Assistant class writes it: the
    state of the first true of `flags` (argument -> state), else by the `settled` (argument,
    state if true, state if false); None when none is given. The flags are taken out."""
    moving = [state for argument, state in flags.items() if arguments.pop(argument, None)]
    argument, true, false = settled
    value = arguments.get(argument)
    if moving:
        return moving[0]
    return None if value is None else true if value else false


def toggle_state(arguments: dict[str, Any]) -> str | None:
    """A ToggleEntity's state from its is_on argument (taken out): on, off, or None."""
    is_on = arguments.pop("is_on", None)
    return None if is_on is None else "on" if is_on else "off"


def shows_closed(entity: EntityDraft) -> None:
    """An inventory's cover or valve shows whether it is closed, as synthetic-home's entity does
    from its state (the integration reads `is_closed`: without it Home Assistant says unknown)."""
    if entity.state in ("open", "closed"):
        entity.attributes.setdefault("is_closed", entity.state == "closed")


# The outcomes of the on/off services most domains have, and the intents that ask for them.
ON_OFF_OUTCOMES: Mapping[str, str] = {"turn_on": '== "on"', "turn_off": '== "off"'}
ON_OFF_ASKED = Asked(("on", "off"))
ON_OFF_SPOKEN: Mapping[str, tuple[Spoken, ...]] = {
    "turn_on": (Spoken("HassTurnOn"),),
    "turn_off": (Spoken("HassTurnOff"),),
}
