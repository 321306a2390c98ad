"""scene: saved moods a user calls up ("movie night"), as Home Assistant's Scene entities.

`scene.turn_on` takes an optional `transition` (seconds, clamped to 0-6553 as Home Assistant
does) and the state is the time of the last activation (ISO 8601, UTC, on the twin's clock),
`unknown` before the first. A scene is opaque to the twin: Home Assistant's scene platforms (a
Hue scene, a scene.yaml one) set their members from what the scene keeps in its integration, which
neither a snapshot nor a home file shows, so activating one changes only its own state.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..service import EntityDraft, Service, schema
from ..validation import Numeric
from .descriptor import Domain, Spoken
from .rules import EntityRules, moment, moment_state

ATTR_TRANSITION = "transition"


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Activate: the state becomes the time of this activation."""
    entity.state = moment(entity.now)


DOMAIN = Domain.of(
    "scene",
    [
        Service(
            "turn_on",
            turn_on,
            schema({vol.Optional(ATTR_TRANSITION): Numeric(float, 0, 6553, clamp=True)}),
            description="Activates a scene.",
        )
    ],
    rules=EntityRules(state=moment_state),
    device=True,
    spoken={"turn_on": (Spoken("HassTurnOn"),)},
    color="#b5838d",
)
