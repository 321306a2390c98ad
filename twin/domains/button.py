"""button: stateless push buttons (a device's restart or identify, a doorbell chime's test).

Home Assistant's ButtonEntity: `button.press` takes no data, and the state is the time of the
last press (ISO 8601, UTC), `unknown` before the first; the twin writes its own clock's time. What
a press does beyond that is the device's business, which the twin does not model.
"""

from __future__ import annotations

from typing import Any

from ..service import EntityDraft, Service
from .descriptor import Domain
from .rules import EntityRules, moment, moment_state


def press(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Press: the state becomes the time of this press."""
    entity.state = moment(entity.now)


DOMAIN = Domain.of(
    "button",
    [Service("press", press, description="Press the button entity.")],
    rules=EntityRules(state=moment_state),
    device=True,
    color="#6c757d",
)
