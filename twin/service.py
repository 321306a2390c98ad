"""What a domain's service is: its data schema, the features it needs, and what it does
(the domain itself is twin.domains.descriptor's)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import voluptuous as vol

from .errors import ServiceValidationError
from .registry import EntityEntry
from .state import State


@dataclass(slots=True)
class EntityDraft:
    """A mutable working copy of one entity's state while a service call is applied.

    Services change `state`, `attributes` and `hidden`; the home turns drafts into new States
    only when every targeted entity accepted the call. `now` is the home's clock (epoch seconds)
    when the call is applied, for the states and attributes that are a time (a button's last
    press, a script's last_triggered).
    """

    entry: EntityEntry
    state: str
    attributes: dict[str, Any]
    hidden: dict[str, Any]
    now: float = 0.0

    @classmethod
    def of(cls, entry: EntityEntry, current: State, now: float = 0.0) -> EntityDraft:
        """A draft of `current`, safe to change."""
        return cls(entry, current.state, dict(current.attributes), dict(current.hidden), now)

    @property
    def entity_id(self) -> str:
        """The entity's id."""
        return self.entry.entity_id

    @property
    def capabilities(self) -> Mapping[str, Any]:
        """The entity's static attributes: limits and options."""
        return self.entry.capabilities

    def supports(self, feature: int) -> bool:
        """Whether the entity has every bit of `feature`."""
        return self.entry.supported_features & feature == feature


Handler = Callable[[EntityDraft, dict[str, Any]], None]
Validator = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Service:
    """One entity service of a domain, as Home Assistant registers it.

    `required_features` lists feature sets; the entity must have all bits of at least one of them
    (Home Assistant's `required_features`). `schema` validates the data without the target keys.
    `response_only` is Home Assistant's SupportsResponse.ONLY: the service only answers a caller
    that asks for a response, which the twin's callers cannot, so every call is refused first.
    """

    name: str
    handler: Handler
    schema: Validator = field(default_factory=lambda: vol.Schema({}, extra=vol.PREVENT_EXTRA))
    required_features: tuple[int, ...] = ()
    description: str = ""
    response_only: bool = False

    def __post_init__(self) -> None:
        # A bare vol.All recompiles its parts on every call; inside a Schema it is compiled once.
        if not isinstance(self.schema, vol.Schema):
            object.__setattr__(self, "schema", vol.Schema(self.schema))

    def supported_by(self, entry: EntityEntry) -> bool:
        """Whether the entity offers this service."""
        if not self.required_features:
            return True
        features = entry.supported_features
        return any(features & needed == needed for needed in self.required_features)


def check_range(entity: EntityDraft, quantity: str, value: float, low: float, high: float) -> None:
    """Refuse a value outside the entity's limits, in Home Assistant's words."""
    if not low <= value <= high:
        raise ServiceValidationError(
            f"Provided {quantity} {value} is not valid for {entity.entity_id}. "
            f"Accepted range is {low} to {high}"
        )


def schema(fields: dict[Any, Any]) -> vol.Schema:
    """A service data schema that rejects unknown keys, as Home Assistant's entity services do."""
    return vol.Schema(fields, extra=vol.PREVENT_EXTRA)
