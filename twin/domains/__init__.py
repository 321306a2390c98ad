"""One module per Home Assistant entity domain: its services and what they do to an entity."""

from __future__ import annotations

from ..service import Domain
from . import sensor, switch

DOMAINS: dict[str, Domain] = {
    domain.name: domain for domain in (switch.DOMAIN, sensor.SENSOR, sensor.BINARY_SENSOR)
}
