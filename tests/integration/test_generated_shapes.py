"""Generated entity shapes: a minimal Home Assistant entity and its imported twin agree.

For every domain the twin models, seeded random shapes (tests/integration/shapes.py) each give a
minimal entity, added through Home Assistant's own entity component, and the same entity imported
into the twin from a Home Assistant snapshot of it (with or without its registry entry) or from a
synthetic-home inventory of its arguments. Then the same random calls, valid and invalid, run on
both: after each, both must raise the same kind of error or none, and show the same state and
attributes, types included, but for the differences Home Assistant allows (DERIVED and
UNSEEN_WHILE_OFF). `pytest -s` prints the agreement per domain and those differences.
"""

from __future__ import annotations

import importlib
import json
import random
from collections import Counter
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.json import JSONEncoder
from homeassistant.setup import async_setup_component

from twin.domains import DOMAINS
from twin.errors import TwinError
from twin.home import Home
from twin.homefile import import_ha_snapshot

from .shapes import PENDING, SHAPES, Minimal
from .test_fidelity import OPTIONS, VALUES, error_code, schema_keys, typed

SEED = 20261202
SHAPES_PER_DOMAIN = 40
CALLS_PER_SHAPE = 30
# Where an entity is imported from: a Home Assistant snapshot of its state, one with its registry
# entry (and so Home Assistant's capability_attributes), or a synthetic-home inventory, whose
# attributes are the entity's arguments (the `_attr_*` it was given).
SOURCES = ("snapshot", "registry", "inventory")
# What a device reports of its own work, which a minimal entity (holding only what it is told)
# leaves as it was and the twin derives from the mode, target and current reading: not compared.
DERIVED: dict[tuple[str, str], str] = {
    ("climate", "hvac_action"): "heating, cooling or idle, from the mode and temperatures",
    ("humidifier", "action"): "humidifying, drying or idle, from the state and humidities",
}
# Option keys of the services and the attribute listing an entity's options: test_fidelity's,
# and a cover's speeds.
SERVICE_OPTIONS = {**OPTIONS, "speed": "supported_speeds"}
# The differences Home Assistant allows between a minimal entity and its imported twin, by
# domain: what HA hides while an entity is off, which the twin cannot read from the state of an
# entity imported off (the entity itself still holds it), and what the twin assumes instead.
# For a shape imported off, these attributes are not compared.
UNSEEN_WHILE_OFF: dict[str, tuple[frozenset[str], str]] = {
    "light": (
        frozenset(
            {
                "brightness",
                "color_mode",
                "color_temp_kelvin",
                "hs_color",
                "rgb_color",
                "rgbw_color",
                "rgbww_color",
                "xy_color",
                "effect",
            }
        ),
        "full brightness, its first colour mode's default colour, no effect",
    ),
    "media_player": (
        frozenset({"volume_level", "is_volume_muted", "source", "sound_mode", "shuffle", "repeat"}),
        "volume 0.5, unmuted, its first source and sound mode, no shuffle, no repeat",
    ),
}


def jsonable(value: Any) -> Any:
    """A value as Home Assistant's API writes it (enums as strings, tuples as lists)."""
    return json.loads(json.dumps(value, cls=JSONEncoder))


def imported(hass: HomeAssistant, entity: Minimal, source: str) -> Home:
    """The entity imported into a twin from `source` (one of SOURCES)."""
    if source == "inventory":
        attributes = {key: jsonable(value) for key, value in entity.values.items()}
        inventory = {"entities": [{"id": entity.entity_id, "attributes": attributes}]}
        home, _ = import_ha_snapshot(inventory)
    else:
        home, _ = import_ha_snapshot(snapshot(hass, entity, registry=source == "registry"))
    return home


def snapshot(hass: HomeAssistant, entity: Minimal, registry: bool) -> dict[str, Any]:
    """A Home Assistant snapshot of one entity: its state, and its registry entry if `registry`."""
    state = hass.states.get(entity.entity_id)
    assert state is not None
    found: dict[str, Any] = {
        "states": [
            {
                "entity_id": state.entity_id,
                "state": state.state,
                "attributes": jsonable(dict(state.attributes)),
            }
        ]
    }
    if registry:
        found["entities"] = [
            {
                "entity_id": state.entity_id,
                "supported_features": int(entity.supported_features or 0),
                "capabilities": jsonable(entity.capability_attributes or {}),
            }
        ]
    return found


def differences(
    hass: HomeAssistant, twin: Home, entity_id: str, unseen: frozenset[str]
) -> list[str]:
    """What differs between Home Assistant's state of the entity and the twin's, but the
    `unseen` attributes."""
    shown, mine = hass.states.get(entity_id), twin.states[entity_id]
    assert shown is not None
    differ = [] if shown.state == mine.state else [f"state {shown.state!r} != {mine.state!r}"]
    domain = entity_id.partition(".")[0]
    for key in sorted({*shown.attributes, *mine.attributes} - unseen):
        if (domain, key) in DERIVED:
            continue
        ha, tw = shown.attributes.get(key, "<absent>"), mine.attributes.get(key, "<absent>")
        if typed(ha) != typed(tw):
            differ.append(f"{key} {ha!r} != {tw!r}")
    return differ


class Caller:
    """Seeded random calls of a domain's services, valid and invalid."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def case(self, domain: str, attributes: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A service of the domain and its data."""
        rng = self.rng
        service = rng.choice(list(DOMAINS[domain].services))
        data: dict[str, Any] = {}
        for key, required in schema_keys(DOMAINS[domain].services[service].schema).items():
            # fan.set_direction always gets a direction (see test_fidelity's Generator.data).
            chance = 1 if key == "direction" else 0.95 if required else 0.35
            if key in VALUES and rng.random() < chance:
                data[key] = self.value(key, attributes)
        return service, data

    def value(self, key: str, attributes: dict[str, Any]) -> Any:
        """One of the entity's own options, mostly, for an option key; else one of VALUES."""
        options = attributes.get(SERVICE_OPTIONS.get(key, ""))
        if options and self.rng.random() < 0.7:
            return self.rng.choice(options)
        return self.rng.choice(VALUES[key])


async def call_both(
    hass: HomeAssistant, twin: Home, domain: str, entity_id: str, service: str, data: dict[str, Any]
) -> tuple[str | None, str | None]:
    """The call through Home Assistant and on the twin: each one's error code, or None."""
    ha = direct = None
    try:
        await hass.services.async_call(
            domain, service, {**data, "entity_id": entity_id}, blocking=True
        )
    except Exception as err:  # a crash in Home Assistant is a difference too
        ha = error_code(err)
    await hass.async_block_till_done()
    try:
        twin.call_service(domain, service, target={"entity_id": entity_id}, data=dict(data))
    except TwinError as err:
        direct = err.code
    return ha, direct


def test_every_domain_with_services_has_a_shape_generator() -> None:
    """A domain the twin models is generated here, or named in PENDING until its shapes come."""
    with_services = {name for name, domain in DOMAINS.items() if domain.services}
    assert set(SHAPES) <= set(DOMAINS)
    assert not set(SHAPES) & PENDING
    missing = with_services - set(SHAPES) - PENDING
    assert not missing, f"no shape generator (tests/integration/shapes.py) for {sorted(missing)}"


async def test_generated_shapes_agree_with_home_assistant(hass: HomeAssistant) -> None:
    """Every domain's random shapes, imported, take random calls as Home Assistant does."""
    rng = random.Random(SEED)
    caller = Caller(rng)
    checks: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    failures: list[str] = []
    for domain, shape in SHAPES.items():
        assert await async_setup_component(hass, domain, {})
        component = importlib.import_module(f"homeassistant.components.{domain}").DATA_COMPONENT
        for number in range(SHAPES_PER_DOMAIN):
            kind, values = shape(rng)
            entity = kind(f"{domain}.shape_{number}", values)
            await hass.data[component].async_add_entities([entity])
            await hass.async_block_till_done()
            source = rng.choice(SOURCES)
            twin = imported(hass, entity, source)
            off = twin.states[entity.entity_id].state == "off"
            unseen = UNSEEN_WHILE_OFF.get(domain, (frozenset(), ""))[0] if off else frozenset()
            steps = [f"import from {source} {jsonable(values)}"]
            for call in range(CALLS_PER_SHAPE + 1):
                if call:
                    shown = twin.states[entity.entity_id].attributes
                    service, data = caller.case(domain, dict(shown))
                    steps.append(f"{service} {data}")
                    codes = await call_both(hass, twin, domain, entity.entity_id, service, data)
                else:
                    codes = (None, None)
                differ = differences(hass, twin, entity.entity_id, unseen)
                if codes[0] != codes[1]:
                    differ.insert(0, f"HA {codes[0]}, twin {codes[1]}")
                checks[domain] += 1
                if not differ:
                    agreed[domain] += 1
                    continue
                failures.append(f"{entity.entity_id} {steps[0]} .. {steps[-1]}: {differ}")
                break  # the rest of this shape's calls would start from different states
    print_table(checks, agreed)
    assert not failures, f"{len(failures)} differences:\n" + "\n".join(failures[:400])


def print_table(checks: Counter[str], agreed: Counter[str]) -> None:
    """Checks (the import and each call), agreed ones and the rate per domain, for `pytest -s`."""
    print(f"\n{'domain':<16}{'checks':>7}{'agreed':>8}{'rate':>9}")
    for domain in sorted(checks):
        print(
            f"{domain:<16}{checks[domain]:>7}{agreed[domain]:>8}"
            f"{agreed[domain] / checks[domain]:>9.1%}"
        )
    print(f"pending (no minimal entity yet): {', '.join(sorted(PENDING)) or 'none'}")
    for (domain, key), why in DERIVED.items():
        print(f"not compared: {domain} {key}, which the twin derives ({why})")
    for domain, (keys, assumed) in UNSEEN_WHILE_OFF.items():
        print(f"not compared after an import while off: {domain} {', '.join(sorted(keys))}")
        print(f"  (the twin assumes {assumed})")
