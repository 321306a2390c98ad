"""siren: alarm sirens and chimes that sound a tone (Home Assistant's SirenEntity).

Schemas, required features and the tone rule are HA's (siren's process_turn_on_params): `tone`
is coerced to an int where it can be, else a string; `duration` is a whole number of seconds of at
least 0 and `volume_level` 0-1. Each is dropped for a siren without its feature. A tone must be one
of `available_tones` (a list, or a mapping whose values name its keys, as Z-Wave sirens give them),
else the call is refused in HA's words; HA raises a bare ValueError there, the twin its typed
ServiceValidationError. Home Assistant's siren shows neither tone, volume nor duration, so a siren
that sounds shows only `on`; the twin has no timer for a duration yet, so a siren sounds until
turned off.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..service import EntityDraft, Service, schema
from ..validation import Numeric, small_float, string
from .descriptor import ON_OFF_OUTCOMES, Carrying, Domain, FieldNotes, has_feature, toggle_state
from .rules import ON_OFF, EntityRules, optional, text

# SirenEntityFeature.
TURN_ON = 1
TURN_OFF = 2
TONES = 4
VOLUME_SET = 8
DURATION = 16

ATTR_TONE = "tone"
ATTR_DURATION = "duration"
ATTR_VOLUME_LEVEL = "volume_level"
ATTR_AVAILABLE_TONES = "available_tones"


def _check_tone(entity: EntityDraft, tone: int | str) -> None:
    """Refuse a tone that is neither one of available_tones nor a name in its mapping. A
    mapping's ids are matched as text: Home Assistant's JSON (a snapshot, the API) writes its
    int ids as strings, which the siren itself holds as ints."""
    tones = entity.capabilities.get(ATTR_AVAILABLE_TONES)
    if isinstance(tones, dict):
        known = tone in tones.values() or str(tone) in map(str, tones)
    else:
        known = tone in (tones or ())
    if not known:
        raise ServiceValidationError(
            f"Invalid tone specified for entity {entity.entity_id}: {tone}, "
            "check the available_tones attribute for valid tones to pass in"
        )


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Sound, with a tone the siren has where it offers tones."""
    if entity.supports(TONES) and (tone := data.get(ATTR_TONE)) is not None:
        _check_tone(entity, tone)
    entity.state = "on"


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Silence."""
    entity.state = "off"


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Silence if sounding, else sound (ToggleEntity.async_toggle, without tone or volume)."""
    entity.state = "off" if entity.state == "on" else "on"


def _tones(value: Any) -> Any:
    """A siren's available_tones: a list of tones, or a mapping of tone ids to names."""
    if isinstance(value, dict):
        for name in value.values():
            text(name)
    elif not isinstance(value, list | tuple) or not all(
        isinstance(tone, str | int) and not isinstance(tone, bool) for tone in value
    ):
        raise vol.Invalid(f"expected a list of tones or a mapping of tones to names, got {value!r}")
    return value


# HA's TURN_ON_SCHEMA: vol.Any(vol.Coerce(int), cv.string), cv.positive_int, cv.small_float.
_TURN_ON_SCHEMA = schema(
    {
        vol.Optional(ATTR_TONE): vol.Any(Numeric(int), string),
        vol.Optional(ATTR_DURATION): Numeric(int, 0),
        vol.Optional(ATTR_VOLUME_LEVEL): small_float,
    }
)


DOMAIN = Domain.of(
    "siren",
    [
        Service("turn_on", turn_on, _TURN_ON_SCHEMA, (TURN_ON,), "Turns the siren on."),
        Service(
            "turn_off", turn_off, required_features=(TURN_OFF,), description="Turns the siren off."
        ),
        Service(
            "toggle",
            toggle,
            required_features=(TURN_ON | TURN_OFF,),
            description="Toggles the siren on/off.",
        ),
    ],
    {
        "turn_on": TURN_ON,
        "turn_off": TURN_OFF,
        "tones": TONES,
        "volume_set": VOLUME_SET,
        "duration": DURATION,
    },
    rules=EntityRules({ATTR_AVAILABLE_TONES: optional(_tones)}, states=ON_OFF),
    device=True,
    fields={
        ATTR_TONE: FieldNotes(options_from=ATTR_AVAILABLE_TONES, applies=has_feature(TONES)),
        ATTR_DURATION: FieldNotes(applies=has_feature(DURATION)),
        ATTR_VOLUME_LEVEL: FieldNotes(applies=has_feature(VOLUME_SET)),
    },
    state_outcomes=ON_OFF_OUTCOMES,
    carrying=Carrying(capabilities=frozenset({ATTR_AVAILABLE_TONES}), arguments=toggle_state),
    color="#e63946",
)
