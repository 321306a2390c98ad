"""Generated entity shapes: a minimal Home Assistant entity and its imported twin agree.

For every domain the twin models, seeded random shapes (tests/integration/shapes.py) each give a
minimal entity, added through Home Assistant's own entity component, and the same entity imported
into the twin from a Home Assistant snapshot of it (with or without its registry entry) or from a
synthetic-home inventory of its arguments. Then the same random calls, valid and invalid, run on
both: after each, both must raise the same kind of error or none, and show the same state and
attributes, types included, but for the differences Home Assistant allows (DERIVED and
UNSEEN_WHILE_OFF) and the times each writes on its own clock (CLOCKED). A to-do list's items,
which no state shows, are compared through `todo.get_items`. Helpers and scripts are configured
(CONFIGS) and set up by Home Assistant's own components. `pytest -s` prints the agreement per
domain and those differences.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from datetime import date, datetime
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_component import DATA_INSTANCES, EntityComponent
from homeassistant.helpers.json import JSONEncoder
from homeassistant.setup import async_setup_component

from twin.domains import DOMAINS
from twin.errors import TwinError
from twin.home import Home
from twin.homefile import import_ha_snapshot
from twin.registry import object_id_words

from .shapes import CONFIGS, SHAPES, Minimal
from .test_fidelity import OPTIONS, VALUES, error_code, schema_keys, typed

SEED = 20261202
SHAPES_PER_DOMAIN = 40
CALLS_PER_SHAPE = 30
# Where an entity is imported from: a Home Assistant snapshot of its state, one with its registry
# entry (and so Home Assistant's capability_attributes), or a synthetic-home inventory, whose
# attributes are the entity's arguments (the `_attr_*` it was given).
SOURCES = ("snapshot", "registry", "inventory")
# Where a domain's entities are imported from, where not from all SOURCES: a configured helper
# or script has no arguments for an inventory, and a to-do list's items are in no snapshot (the
# twin keeps the count of the items it cannot see, and cannot find them by name).
SOURCES_OF = {"todo": ("inventory",), **dict.fromkeys(CONFIGS, ("snapshot", "registry"))}
# What each writes at the time of a call, on its own clock (Home Assistant's real time, the
# twin's simulated one): compared as "a time or none", not by value.
CLOCKED: dict[tuple[str, str], str] = {
    ("button", "state"): "the time of the last press",
    ("scene", "state"): "the time of the last activation",
    ("script", "last_triggered"): "the time of the last run",
}
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


class ArgumentEncoder(JSONEncoder):
    """HA's encoder, and a dataclass argument (a TodoItem) as its fields that are set."""

    def default(self, o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            fields = dataclasses.asdict(o)
            return {key: value for key, value in fields.items() if value is not None}
        if isinstance(o, date):
            return o.isoformat()
        return super().default(o)


# Errors Home Assistant raises untyped where the twin raises its typed one: (domain, HA's code,
# the twin's code) and why.
RETYPED: dict[tuple[str, str, str], str] = {
    ("siren", "crash (ValueError)", "validation_error"): "a tone the siren does not have",
}
# An entity with no name (a YAML helper without `name`) shows no friendly_name in Home Assistant;
# the twin names it by its object id's words, so that the agent and its user can speak of it.
UNNAMED = "friendly_name: the object id's words where Home Assistant shows no name"


def jsonable(value: Any) -> Any:
    """A value as Home Assistant's API writes it (enums as strings, tuples as lists)."""
    return json.loads(json.dumps(value, cls=ArgumentEncoder))


def imported(hass: HomeAssistant, entity: Entity, source: str) -> Home:
    """The entity imported into a twin from `source` (one of SOURCES)."""
    if source == "inventory":
        assert isinstance(entity, Minimal)
        attributes = {key: jsonable(value) for key, value in entity.values.items()}
        inventory = {"entities": [{"id": entity.entity_id, "attributes": attributes}]}
        home, _ = import_ha_snapshot(inventory)
    else:
        home, _ = import_ha_snapshot(snapshot(hass, entity, registry=source == "registry"))
    return home


def snapshot(hass: HomeAssistant, entity: Entity, registry: bool) -> dict[str, Any]:
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
    domain = entity_id.partition(".")[0]
    ha, tw = clocked(domain, "state", shown.state), clocked(domain, "state", mine.state)
    differ = [] if ha == tw else [f"state {shown.state!r} != {mine.state!r}"]
    for key in sorted({*shown.attributes, *mine.attributes} - unseen):
        if (domain, key) in DERIVED:
            continue
        ha, tw = shown.attributes.get(key, "<absent>"), mine.attributes.get(key, "<absent>")
        if key == "friendly_name" and ha == "<absent>" and tw == object_id_words(entity_id):
            continue  # UNNAMED
        if typed(clocked(domain, key, ha)) != typed(clocked(domain, key, tw)):
            differ.append(f"{key} {ha!r} != {tw!r}")
    return differ


def clocked(domain: str, key: str, value: Any) -> Any:
    """A CLOCKED value as "a time" when it is one; anything else as it is."""
    if (domain, key) not in CLOCKED or not isinstance(value, str | datetime):
        return value
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return value
    return "<a time>"


async def item_differences(hass: HomeAssistant, twin: Home, entity_id: str) -> list[str]:
    """What differs between a to-do list's items in Home Assistant (todo.get_items) and the
    twin's memory: summaries, statuses, descriptions and due times, in order (a due time as the
    moment it is: the twin keeps it in UTC, Home Assistant in its own time zone)."""
    response = await hass.services.async_call(
        "todo", "get_items", {"entity_id": entity_id}, blocking=True, return_response=True
    )
    assert response is not None
    shown = response[entity_id]["items"]  # type: ignore[index,call-overload]
    mine = twin.states[entity_id].hidden.get("items") or []
    ha, tw = [item_view(item) for item in shown], [item_view(item) for item in mine]
    return [] if ha == tw else [f"items {ha} != {tw}"]


def item_view(item: dict[str, Any]) -> tuple[Any, ...]:
    due = item.get("due")
    moment = due if due is None or len(due) == 10 else datetime.fromisoformat(due).timestamp()
    return (item["summary"], item["status"], item.get("description"), moment)


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
        if isinstance(options, dict):  # a siren's tones by id: an id or a name
            options = [*options, *options.values()]
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
    """Every domain the twin models that has services is generated here."""
    with_services = {name for name, domain in DOMAINS.items() if domain.services}
    assert set(SHAPES) | set(CONFIGS) <= set(DOMAINS)
    assert not set(SHAPES) & set(CONFIGS)
    missing = with_services - set(SHAPES) - set(CONFIGS)
    assert not missing, f"no shape generator (tests/integration/shapes.py) for {sorted(missing)}"


class Tally:
    """Checks (the import and each call) and agreements per domain, and the differences."""

    def __init__(self) -> None:
        self.checks: Counter[str] = Counter()
        self.agreed: Counter[str] = Counter()
        # Calls both carried out (neither refused): a domain with none would test only refusals.
        self.done: Counter[str] = Counter()
        self.failures: list[str] = []


async def test_generated_shapes_agree_with_home_assistant(hass: HomeAssistant) -> None:
    """Every domain's random shapes, imported, take random calls as Home Assistant does."""
    rng = random.Random(SEED)
    tally = Tally()
    for domain, shape in SHAPES.items():
        assert await async_setup_component(hass, domain, {})
        for number in range(SHAPES_PER_DOMAIN):
            kind, values = shape(rng)
            entity = kind(f"{domain}.shape_{number}", values)
            await component(hass, domain).async_add_entities([entity])
            await hass.async_block_till_done()
            await check_shape(hass, entity, jsonable(values), rng, tally)
    for domain, config in CONFIGS.items():
        configs = {f"shape_{number}": config(rng) for number in range(SHAPES_PER_DOMAIN)}
        assert await async_setup_component(hass, domain, {domain: configs})
        await hass.async_block_till_done()
        for object_id, given in configs.items():
            entity = component(hass, domain).get_entity(f"{domain}.{object_id}")
            assert entity is not None, f"{domain}.{object_id} was not set up from {given}"
            await check_shape(hass, entity, given, rng, tally)
    print_table(tally)
    idle = sorted((set(SHAPES) | set(CONFIGS)) - {d for d, n in tally.done.items() if n})
    assert not idle, f"no call was carried out on {idle}"
    assert not tally.failures, f"{len(tally.failures)} differences:\n" + "\n".join(
        tally.failures[:400]
    )


def component(hass: HomeAssistant, domain: str) -> EntityComponent[Any]:
    """The domain's entity component, as Home Assistant's setup made it."""
    found: EntityComponent[Any] = hass.data[DATA_INSTANCES][domain]
    return found


async def check_shape(
    hass: HomeAssistant, entity: Entity, given: Any, rng: random.Random, tally: Tally
) -> None:
    """Import the entity into a twin, then make random calls on both, comparing after each; a
    shape stops at its first difference (the calls after would start from different states)."""
    domain, entity_id = entity.entity_id.partition(".")[0], entity.entity_id
    caller = Caller(rng)
    source = rng.choice(SOURCES_OF.get(domain, SOURCES))
    twin = imported(hass, entity, source)
    off = twin.states[entity_id].state == "off"
    unseen = UNSEEN_WHILE_OFF.get(domain, (frozenset(), ""))[0] if off else frozenset()
    steps = [f"import from {source} {given}"]
    for call in range(CALLS_PER_SHAPE + 1):
        if call:
            service, data = caller.case(domain, dict(twin.states[entity_id].attributes))
            steps.append(f"{service} {data}")
            codes = await call_both(hass, twin, domain, entity_id, service, data)
        else:
            codes = (None, None)
        differ = differences(hass, twin, entity_id, unseen)
        if domain == "todo":
            differ += await item_differences(hass, twin, entity_id)
        if codes[0] != codes[1] and (domain, *codes) not in RETYPED:
            differ.insert(0, f"HA {codes[0]}, twin {codes[1]}")
        tally.checks[domain] += 1
        tally.done[domain] += call > 0 and codes == (None, None)
        if differ:
            tally.failures.append(f"{entity_id} {steps[0]} .. {steps[-1]}: {differ}")
            return
        tally.agreed[domain] += 1


def print_table(tally: Tally) -> None:
    """Checks (the import and each call), agreed ones and the rate per domain, for `pytest -s`."""
    checks, agreed = tally.checks, tally.agreed
    print(f"\n{'domain':<20}{'checks':>7}{'agreed':>8}{'rate':>9}{'carried out':>13}")
    for domain in sorted(checks):
        print(
            f"{domain:<20}{checks[domain]:>7}{agreed[domain]:>8}"
            f"{agreed[domain] / checks[domain]:>9.1%}{tally.done[domain]:>13}"
        )
    print(f"not compared: {UNNAMED}")
    for (domain, ha, twin), why in RETYPED.items():
        print(f"the same refusal: {domain} {why}, HA {ha}, the twin {twin}")
    for (domain, key), why in CLOCKED.items():
        print(f"compared as a time, not its value: {domain} {key} ({why})")
    for (domain, key), why in DERIVED.items():
        print(f"not compared: {domain} {key}, which the twin derives ({why})")
    for domain, (keys, assumed) in UNSEEN_WHILE_OFF.items():
        print(f"not compared after an import while off: {domain} {', '.join(sorted(keys))}")
        print(f"  (the twin assumes {assumed})")
