"""switch: on/off devices and outlets (Home Assistant's ToggleEntity)."""

from __future__ import annotations

from typing import Any

from ..service import EntityDraft, Service
from .descriptor import (
    ON_OFF_ASKED,
    ON_OFF_OUTCOMES,
    ON_OFF_SPOKEN,
    Carrying,
    Domain,
    toggle_state,
)
from .rules import ON_OFF, EntityRules


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch on."""
    entity.state = "on"


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch off."""
    entity.state = "off"


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch off if on, else on (ToggleEntity.async_toggle)."""
    entity.state = "off" if entity.state == "on" else "on"


DOMAIN = Domain.of(
    "switch",
    [
        Service("turn_on", turn_on, description="Turn the switch on."),
        Service("turn_off", turn_off, description="Turn the switch off."),
        Service("toggle", toggle, description="Toggle the switch."),
    ],
    rules=EntityRules(states=ON_OFF),
    device=True,
    state_outcomes=ON_OFF_OUTCOMES,
    carrying=Carrying(arguments=toggle_state),
    spoken=ON_OFF_SPOKEN,
    asked=ON_OFF_ASKED,
    color="#8d99ae",
)
