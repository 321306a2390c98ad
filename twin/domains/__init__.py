"""One module per Home Assistant entity domain: its services and what they do to an entity."""

from __future__ import annotations

from functools import cache

from ..service import Domain
from . import (
    climate,
    cover,
    fan,
    humidifier,
    light,
    lock,
    media_player,
    sensor,
    switch,
    vacuum,
    valve,
    water_heater,
)

DOMAINS: dict[str, Domain] = {
    domain.name: domain
    for domain in (
        light.DOMAIN,
        switch.DOMAIN,
        fan.DOMAIN,
        climate.DOMAIN,
        cover.DOMAIN,
        media_player.DOMAIN,
        humidifier.DOMAIN,
        lock.DOMAIN,
        vacuum.DOMAIN,
        water_heater.DOMAIN,
        valve.DOMAIN,
        sensor.SENSOR,
        sensor.BINARY_SENSOR,
    )
}


@cache
def domain_of(name: str) -> Domain:
    """The domain's behaviour; one the twin does not simulate (`person`, `sun`, a mirrored
    home's `automation`...) offers no services: its entities are read-only, as sensors are."""
    return DOMAINS.get(name) or Domain.of(name, [])
