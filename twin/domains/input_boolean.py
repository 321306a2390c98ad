"""input_boolean: a user's on/off helper, as Home Assistant's input_boolean integration has it.

An InputBoolean is a ToggleEntity with no device behind it: `turn_on`, `turn_off` and `toggle`
take no data, and its state is `on` or `off`; `editable` (an attribute) says whether it lives in
Home Assistant's storage (made in the UI) rather than YAML.
"""

from __future__ import annotations

from typing import Any

from ..service import EntityDraft, Service
from .descriptor import ON_OFF_OUTCOMES, ON_OFF_SPOKEN, Domain
from .rules import ON_OFF, EntityRules, flag

ATTR_EDITABLE = "editable"


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set it on."""
    entity.state = "on"


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set it off."""
    entity.state = "off"


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Off if on, else on (ToggleEntity.async_toggle)."""
    entity.state = "off" if entity.state == "on" else "on"


DOMAIN = Domain.of(
    "input_boolean",
    [
        Service("turn_on", turn_on, description="Turns on an input boolean."),
        Service("turn_off", turn_off, description="Turns off an input boolean."),
        Service("toggle", toggle, description="Toggles an input boolean on/off."),
    ],
    rules=EntityRules({ATTR_EDITABLE: flag}, states=ON_OFF),
    state_outcomes=ON_OFF_OUTCOMES,
    # Assist acts on an exposed one as on a device: an agent may set it by default.
    device=True,
    spoken=ON_OFF_SPOKEN,
    color="#9d8189",
)
