"""Fidelity: thousands of random service calls through Home Assistant and on the twin agree.

Each call, valid or not, on every domain and service the twin models and with every kind of
target, goes to the loaded home through `hass.services.async_call` and, unchanged, to a twin that
Home Assistant never touches, through `call_service(strict=False)` (the twin acting as Home
Assistant does: unknown targets skipped, each entity on its own). After each call both must raise
the same kind of error, or none, and every entity must have the same state and attributes, types
included. `pytest -s` shows the agreement per domain.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import probatio
import voluptuous as vol
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.registry import device_identifier
from custom_components.homeflow.virtual_home import VirtualHome
from twin.domains import DOMAINS
from twin.errors import TwinError
from twin.home import CROSS_DOMAIN, CROSS_DOMAIN_SERVICES, Home

from .parity import ha_error_code, independent_twin

SEED = 20260101
CALLS = 4000
UNKNOWN_SERVICE = "fly"
UNKNOWN_DOMAIN = "garage"
# A service the twin models on entity domains: (domain, service).
SERVICES = [(domain, name) for domain, d in DOMAINS.items() for name in d.services]
# Lights have the most to get right (colour modes, conversions, effects): they get more calls.
SERVICE_WEIGHTS = [6 if domain == "light" else 1 for domain, _ in SERVICES]

# Values for each data key, valid and invalid ones mixed. Keys whose valid values are an entity's
# options (preset modes, sources...) also get that entity's options, from OPTIONS.
VALUES: dict[str, list[Any]] = {
    "transition": [0, 1.5, "2", 10000, -1, "slow", None],
    "brightness": [0, 1, 77, 77.6, 255, 300, -5, "128", "bright", None, [5]],
    "brightness_pct": [0, 0.1, 33.3, "50", 100, 140, -1],
    "brightness_step": [-300, -1, 40, 300, "up"],
    "brightness_step_pct": [-100, -25, -0.4, 10, 150],
    "color_name": ["red", "Dark Orange", "navy", "white", "no such colour"],
    # Not 0: Home Assistant's colour maths divides by it for a light that has rgbww but no
    # color_temp mode (ZeroDivisionError in color_temperature_to_rgbww).
    "color_temp_kelvin": [1000, 1500, 2700, 2700.5, "4000", 6535, 9000, 12000, -5, "warm"],
    "hs_color": [(30, 80), [200, 60], ["30", "80"], (359.99, 100), [400, 10], [10], "red"],
    "rgb_color": [(255, 60, 0), [1, 2, 3], (0, 0, 0), [256, 0, 0], [1, 2]],
    "rgbw_color": [(10, 20, 30, 200), [0, 0, 0, 255], [1, 2, 3]],
    "rgbww_color": [(0, 0, 0, 255, 10), [255, 0, 40, 0, 0], [1, 2, 3, 4, 300]],
    "xy_color": [(0.3, 0.3), [0.7, 0.29], (0.5, 0.19), (0.2, 0.7), [1.2, 0.3], [0.5]],
    "white": [True, False, 0, 1, 180, 255, 300, "yes"],
    "profile": ["relax", "concentrate", "energize", "none", "no such profile"],
    "flash": ["short", "long", "medium"],
    "effect": ["off", "colorloop", "nonsense", None],
    "percentage": [0, 1, 33, 33.3, 50, 67, 100, 101, -1, "50", "fast", None],
    "percentage_step": [1, 10, 25, 100, 0, 120, "big"],
    "preset_mode": ["turbo", "SLEEP", "", 3, None],
    "oscillating": [True, False, 1, 0, "yes", "off", "maybe"],
    "direction": ["forward", "reverse", "sideways", 1],
    "hvac_mode": ["warm", "HEAT", 7],
    "temperature": [16, 21.5, "22", 22.25, 5, 35, 50, 60, 80, -300, "hot", None, [20]],
    "target_temp_high": [24, 26.5, "hot"],
    "target_temp_low": [18, 19.5, 30],
    "humidity": [0, 30, 45, 50.5, "55", 100, 101, -1, "damp", None],
    "fan_mode": ["turbo", "", 2],
    "swing_mode": ["sideways"],
    "swing_horizontal_mode": ["sideways"],
    "speed": ["fast", 3],
    "position": [0, 30, 30.7, 50, 100, "70", 101, -1, "half", None],
    "tilt_position": [0, 45, 45.5, 100, "20", 101, -3],
    "volume_level": [0, 0.3, 1, "0.5", 0.333, 1.5, -0.1, "loud", None],
    "is_volume_muted": [True, False, 1, "on", "maybe"],
    "source": ["Cassette", "", 1],
    "sound_mode": ["Concert"],
    "shuffle": [True, False, 0, "yes", "maybe"],
    "repeat": ["off", "all", "one", "twice"],
    "media_content_type": ["music", "video", "playlist", 5],
    "media_content_id": ["spotify:track:1", "http://example.com/a.mp3", 42],
    "enqueue": ["add", "play", "next", "replace", "later"],
    "announce": [True, False, "maybe"],
    "extra": [{}, {"volume": 3}, "x"],
    "mode": ["turbo", 2],
    "code": ["1234", "12", 1234, "abcd"],
    "fan_speed": ["ludicrous", 2],
    "command": ["spot_clean", "beep", 3],
    "params": [{"area": "kitchen"}, [1, 2], "x"],
    "operation_mode": ["boost", 3],
    "away_mode": [True, False, "on", "maybe"],
    # input_number's and number's values, input_select's and select's options.
    "value": [0, 1, 4.5, "7", 9, 10, 30, 45.5, "50", 60, 61, -1, 100, "high", None],
    "option": ["Home", "Party", "always_on", "evening_only", "nonsense", "", 3, None],
    "cycle": [True, False, 1, "yes", None],
    "options": [["Home", "Away"], ["Away", "Away"], [], "Solo", [None], ["x", 1]],
    "variables": [{}, {"volume": 3}, "x", [1]],
    # todo: items by summary or uid, new or not; due times with an offset (the twin's clock is
    # UTC, Home Assistant reads one without an offset in its own time zone).
    "item": ["Milk", "Eggs", "a3", "c1", "Vacuum", " Tea ", "", "nope", 7, None, ["Milk", "a2"]],
    "rename": ["Oat milk", " Rye ", "", 3],
    "status": ["needs_action", "completed", "done", ["completed"]],
    "due_date": ["2026-02-01", "2026-13-01", "tomorrow", None, 20260201],
    "due_datetime": ["2026-02-01T09:30:00+00:00", "2026-02-01T09:30:00+02:00", "soon", None],
    "description": ["Two litres", "", None, 5, ["x"]],
    # Only tones a siren has: Home Assistant refuses another with a bare ValueError (a crash
    # here), which tests/integration/test_siren.py compares with the twin's typed error.
    "tone": ["Chime", "Fire alarm"],
    "duration": [0, 5, "10", 2.5, -1, "long"],
}
# A data key and the state attribute that lists an entity's valid values for it.
OPTIONS = {
    "effect": "effect_list",
    "preset_mode": "preset_modes",
    "hvac_mode": "hvac_modes",
    "fan_mode": "fan_modes",
    "swing_mode": "swing_modes",
    "swing_horizontal_mode": "swing_horizontal_modes",
    "source": "source_list",
    "sound_mode": "sound_mode_list",
    "mode": "available_modes",
    "fan_speed": "fan_speed_list",
    "operation_mode": "operation_list",
    "option": "options",
    "tone": "available_tones",
}
# Keys that are valid for no twin service, to add to a call; Home Assistant drops a `metadata`
# dict (the frontend's).
EXTRA_KEYS = [("speed_x", 1), ("colour", "red"), ("metadata", {}), ("metadata", "x")]
# Target kinds, each with its weight.
TARGET_KINDS = {
    "entity": 30,
    "list": 10,
    "comma string": 6,
    "area": 8,
    "floor": 5,
    "device": 6,
    "all": 5,
    "none": 2,
    "mixed": 4,
    "unknown entity": 4,
    "unknown area": 2,
    "unknown floor": 2,
    "unknown device": 2,
    "label": 2,
    "invalid": 2,
    "no target": 2,
}


@dataclass(frozen=True, slots=True)
class Case:
    """One random call: target keys in the twin's ids, in `target` or among the `data`."""

    domain: str
    service: str
    data: dict[str, Any]
    target: dict[str, Any]
    kind: str


def schema_keys(validator: Any) -> dict[str, bool]:
    """The data keys of a twin service schema, each with whether it is required."""
    keys: dict[str, bool] = {}
    if isinstance(validator, vol.Schema):
        keys.update(schema_keys(validator.schema))
    elif isinstance(validator, dict):
        for key in validator:
            keys[str(key)] = isinstance(key, vol.Required)
    elif isinstance(validator, vol.All | vol.Any):
        for part in validator.validators:
            keys.update(schema_keys(part))
    return keys


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a call did: Home Assistant's error code, the twin's, the differences after it, and
    whether any entity changed."""

    through_ha: str | None
    direct: str | None
    differences: list[str]
    changed: bool


class Generator:
    """Seeded random calls on a home: every domain, service and target kind, valid or not."""

    def __init__(self, home: Home, seed: int) -> None:
        self.home = home
        self.rng = random.Random(seed)
        self.by_domain: dict[str, list[str]] = {}
        for entity_id, entry in home.entities.items():
            self.by_domain.setdefault(entry.domain, []).append(entity_id)
        self.keys = {
            (domain, name): schema_keys(DOMAINS[domain].services[name].schema)
            for domain, name in SERVICES
        }
        self.options = {
            key: sorted(
                {
                    option
                    for state in home.states.values()
                    for option in state.attributes.get(attribute) or ()
                }
            )
            for key, attribute in OPTIONS.items()
        }

    def case(self) -> Case:
        """One random call."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.84:
            domain, service = rng.choices(SERVICES, SERVICE_WEIGHTS)[0]
        elif roll < 0.95:
            domain, service = CROSS_DOMAIN, rng.choice(CROSS_DOMAIN_SERVICES)
        elif roll < 0.96:
            domain, service = (
                rng.choice([d for d in DOMAINS if DOMAINS[d].services]),
                UNKNOWN_SERVICE,
            )
        elif roll < 0.97:
            # Sensors and binary sensors have no services.
            domain = rng.choice([d for d in DOMAINS if not DOMAINS[d].services])
            service = rng.choice(["turn_on", "toggle"])
        elif roll < 0.98:
            domain, service = rng.choice(
                [(UNKNOWN_DOMAIN, "open"), (CROSS_DOMAIN, UNKNOWN_SERVICE)]
            )
        else:
            domain, service = rng.choice(SERVICES)
            domain, service = domain.upper(), service.title()
        kind = rng.choices(list(TARGET_KINDS), list(TARGET_KINDS.values()))[0]
        own = self.by_domain.get(domain.lower()) or self.by_domain["switch"]
        target = self.target(kind, own)
        data = self.data(domain.lower(), service.lower(), target)
        if rng.random() < 0.3:
            return Case(domain, service, {**data, **target}, {}, kind)
        if target and rng.random() < 0.1:
            # The same key in the data too: the target's wins, in both.
            data[rng.choice(list(target))] = "switch.nope"
        return Case(domain, service, data, target, kind)

    def entity(self, own: list[str]) -> str:
        """An entity of the call's domain, mostly; else any entity."""
        return self.rng.choice(own if self.rng.random() < 0.85 else list(self.home.entities))

    def target(self, kind: str, own: list[str]) -> dict[str, Any]:
        """A target of the given kind."""
        rng = self.rng
        one = self.entity(own)
        several = list(dict.fromkeys(self.entity(own) for _ in range(rng.randint(2, 4))))
        area = rng.choice(list(self.home.areas))
        floor = rng.choice(list(self.home.floors))
        device = self.home.entities[one].device_id or "nodevice"
        match kind:
            case "entity":
                return {"entity_id": one.upper() if rng.random() < 0.05 else one}
            case "list":
                return {"entity_id": several if rng.random() < 0.9 else [one, one.upper(), one]}
            case "comma string":
                return {"entity_id": ", ".join(several)}
            case "area":
                return {"area_id": area if rng.random() < 0.7 else [area, "garden"]}
            case "floor":
                return {"floor_id": floor}
            case "device":
                return {"device_id": device if rng.random() < 0.7 else [device, "d0"]}
            case "all":
                return {"entity_id": rng.choice(["all", "ALL"])}
            case "none":
                return rng.choice([{"entity_id": "none"}, {"entity_id": []}, {"area_id": "none"}])
            case "mixed":
                return {"entity_id": several, "area_id": area, "device_id": [device]}
            case "unknown entity":
                return {"entity_id": [one, f"{one.partition('.')[0]}.nope"]}
            case "unknown area":
                return {"area_id": ["attic", area]}
            case "unknown floor":
                return {"floor_id": "roof"}
            case "unknown device":
                return {"device_id": "nodevice"}
            case "label":
                return rng.choice([{"label_id": "cosy"}, {"label_id": ["cosy"], "entity_id": one}])
            case "invalid":
                # Not `entity_id: 5`: Home Assistant's cv.entity_ids fails on it with a TypeError.
                return rng.choice(
                    [
                        {"entity_id": "not an id"},
                        {"entity_id": ""},
                        {"entity_id": [one, 1]},
                        {"area_id": 5},
                        {"floor_id": [3]},
                        {"device_id": None},
                    ]
                )
        return {}

    def data(self, domain: str, service: str, target: dict[str, Any]) -> dict[str, Any]:
        """Service data: each key of the service's schema, most with valid values."""
        rng = self.rng
        if domain == CROSS_DOMAIN:
            # Mostly nothing; else a light's or a fan's data, which other domains refuse.
            keys = (
                self.keys[(rng.choice(["light", "fan"]), "turn_on")] if rng.random() < 0.3 else {}
            )
        else:
            keys = self.keys.get((domain, service), {})
        data: dict[str, Any] = {}
        for key, required in keys.items():
            # fan.set_direction always gets a direction: Home Assistant's schema lets a call
            # without one through, and its FanEntity then fails with a TypeError.
            always = key == "direction"
            if always or rng.random() < (0.95 if required else 0.3):
                data[key] = self.value(key, target)
        if rng.random() < 0.06:
            key, value = rng.choice(EXTRA_KEYS)
            data[key] = value
        return data

    def value(self, key: str, target: dict[str, Any]) -> Any:
        """A value for a data key: an option of the targeted entity, another option, or one of
        the key's values."""
        rng = self.rng
        entity_id = target.get("entity_id")
        if key in OPTIONS and rng.random() < 0.7:
            state = self.home.states.get(entity_id) if isinstance(entity_id, str) else None
            options = state.attributes.get(OPTIONS[key]) if state is not None else None
            return rng.choice(options or self.options[key] or VALUES[key])
        if key == "hs_color" and rng.random() < 0.5:
            return (rng.uniform(0, 360), rng.uniform(0, 100))
        if key == "xy_color" and rng.random() < 0.5:
            return (rng.uniform(0.05, 0.7), rng.uniform(0.05, 0.7))
        if key == "color_temp_kelvin" and rng.random() < 0.3:
            return rng.randint(1000, 12000)
        return rng.choice(VALUES[key])


# --- Home Assistant and the twin --------------------------------------------------------------


def typed(value: Any) -> Any:
    """A value with the type of each part in it: 50 is not 50.0, a tuple is not a list."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)  # a StrEnum is its string
    if isinstance(value, datetime):
        return value.isoformat()  # a script's last_triggered: the twin holds its JSON
    if isinstance(value, int | float):
        return ("int" if isinstance(value, int) else "float", value)
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(item) for item in value])
    if isinstance(value, Mapping):
        return ("dict", sorted((str(k), typed(v)) for k, v in value.items()))
    return (type(value).__name__, repr(value))


def error_code(err: Exception) -> str:
    """The twin's error code for a Home Assistant error; a crash is named by its type."""
    if isinstance(err, HomeAssistantError | probatio.Invalid):
        return ha_error_code(err)
    return f"crash ({type(err).__name__})"


def raised_by_the_integration(err: Exception) -> bool:
    """Whether an entity of the integration raised `err` for a twin error (Home Assistant drops
    the cause when it raises one of several entities' errors, but keeps the traceback)."""
    trace = err.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code is VirtualHome.call.__code__:
            return True
        trace = trace.tb_next
    return False


class Fidelity:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.twin: Home = entry.runtime_data.home
        self.other = independent_twin(entry)
        ids = entry.runtime_data.registry_ids
        devices = dr.async_get(hass)
        self.ha_ids: dict[str, dict[Any, str]] = {
            "floor_id": ids["floors"],
            "area_id": ids["areas"],
            "device_id": {},
        }
        for device_id in self.twin.devices:
            device = devices.async_get_device_by_identifier(
                device_identifier(entry, device_id), entry.entry_id
            )
            assert device is not None
            self.ha_ids["device_id"][device_id] = device.id

    def for_ha(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Fields with the twin's floor, area and device ids as Home Assistant's."""
        translated = dict(fields)
        for key, ids in self.ha_ids.items():
            if key in fields:
                value = fields[key]
                if isinstance(value, list):
                    translated[key] = [ids.get(item, item) for item in value]
                else:
                    translated[key] = ids.get(value, value)
        return translated

    async def call(self, case: Case) -> Outcome:
        """The call both ways, and what differs after it."""
        ha_error: Exception | None = None
        try:
            await self.hass.services.async_call(
                case.domain,
                case.service,
                self.for_ha(case.data),
                blocking=True,
                target=self.for_ha(case.target) or None,
            )
        except Exception as err:  # a crash in Home Assistant is a difference too
            ha_error = err
        await self.hass.async_block_till_done()
        before = dict(self.other.states)
        twin_error: TwinError | None = None
        try:
            self.other.call_service(
                case.domain, case.service, dict(case.data), case.target, strict=False
            )
        except TwinError as err:
            twin_error = err
        differ = self.differences()
        # An error of the integration's twin is the independent twin's: for the same entity.
        if (
            ha_error is not None
            and raised_by_the_integration(ha_error)
            and str(ha_error) != str(twin_error)
        ):
            differ.append(f"HA says {ha_error!r}, the twin {twin_error!r}")
        return Outcome(
            None if ha_error is None else error_code(ha_error),
            None if twin_error is None else twin_error.code,
            differ,
            changed=self.other.states != before,
        )

    def differences(self) -> list[str]:
        """The entities whose state differs between Home Assistant, its twin and the other twin."""
        differ = []
        for entity_id, other in self.other.states.items():
            shown = self.hass.states.get(entity_id)
            mine = self.twin.states[entity_id]
            if shown is None:
                differ.append(f"{entity_id}: not in Home Assistant")
            elif shown.state != other.state or typed(shown.attributes) != typed(other.attributes):
                differ.append(
                    f"{entity_id}: HA {shown.state} {dict(shown.attributes)}"
                    f" != twin {other.state} {dict(other.attributes)}"
                )
            elif mine.hidden != other.hidden:
                differ.append(f"{entity_id}: memory {mine.hidden} != {other.hidden}")
        return differ

    def resync(self) -> None:
        """Carry on from Home Assistant's twin after a difference, so that one stays one."""
        self.other.restore(self.twin.snapshot())


async def test_random_calls_agree_with_home_assistant(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """4,000 random calls; every domain agrees with Home Assistant on every call."""
    assert await async_setup_component(hass, "homeassistant", {})
    fidelity = Fidelity(hass, loaded_home)
    for domain, entity_domain in DOMAINS.items():
        offered = hass.services.async_services_for_domain(domain)
        assert set(entity_domain.services) <= set(offered), domain
        for service in CROSS_DOMAIN_SERVICES:
            # homeassistant.turn_on skips the domains without the service: the same ones.
            assert (service in offered) == (service in entity_domain.services), (domain, service)
    generator = Generator(fidelity.other, SEED)
    calls: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    covered: set[tuple[str, str]] = set()
    kinds: Counter[str] = Counter()
    outcomes: Counter[str | None] = Counter()
    # Calls that raised after some of their entities accepted them.
    partial: Counter[str] = Counter()
    failures: list[str] = []
    for number in range(CALLS):
        case = generator.case()
        outcome = await fidelity.call(case)
        domain = case.domain.lower()
        calls[domain] += 1
        covered.add((domain, case.service.lower()))
        kinds[case.kind] += 1
        outcomes[outcome.through_ha] += 1
        if outcome.through_ha is not None and outcome.changed:
            partial[domain] += 1
        if outcome.through_ha == outcome.direct and not outcome.differences:
            agreed[domain] += 1
            continue
        failures.append(
            f"#{number} {case}: HA {outcome.through_ha}, twin {outcome.direct};"
            f" {outcome.differences[:3]}"
        )
        fidelity.resync()
    print_table(calls, agreed, outcomes)
    assert set(calls) >= {*DOMAINS, CROSS_DOMAIN, UNKNOWN_DOMAIN}
    assert covered >= set(SERVICES)
    assert set(kinds) == set(TARGET_KINDS)
    assert outcomes[None] > CALLS / 3, outcomes
    assert {"invalid_data", "validation_error", "service_not_supported"} <= set(outcomes)
    assert sum(partial.values()) >= 10, partial
    assert not failures, "\n".join(failures[:20])


def print_table(calls: Counter[str], agreed: Counter[str], outcomes: Counter[str | None]) -> None:
    """Calls, agreed calls and the rate per domain, and how the calls ended, for `pytest -s`."""
    print(f"\n{'domain':<16}{'calls':>7}{'agreed':>8}{'rate':>9}")
    for domain in sorted(calls):
        rate = agreed[domain] / calls[domain]
        print(f"{domain:<16}{calls[domain]:>7}{agreed[domain]:>8}{rate:>9.1%}")
    total, total_agreed = sum(calls.values()), sum(agreed.values())
    print(f"{'all':<16}{total:>7}{total_agreed:>8}{total_agreed / total:>9.1%}")
    ended = ", ".join(f"{code or 'no error'} {count}" for code, count in outcomes.most_common())
    print(f"Home Assistant: {ended}")


# Calls whose entities fail in different ways, and what Home Assistant raises for them.
ORDERED_CASES = [
    # The light refuses preset_mode at once; each fan refuses the preset later, on its own.
    (
        Case(
            "homeassistant",
            "turn_on",
            {"preset_mode": "turbo"},
            {"entity_id": ["fan.tower_fan", "fan.pedestal_fan", "light.dimmable_bulb"]},
            "list",
        ),
        "invalid_data",
    ),
    # A single fan refuses it at once too, and fan comes before humidifier.
    (
        Case(
            "homeassistant",
            "turn_on",
            {"preset_mode": "turbo"},
            {"entity_id": ["fan.tower_fan", "humidifier.humidifier"]},
            "list",
        ),
        "validation_error",
    ),
    # The fans take the percentage; the switch refuses it.
    (
        Case(
            "homeassistant",
            "turn_on",
            {"percentage": 50},
            {"entity_id": ["fan.tower_fan", "fan.pedestal_fan", "switch.smart_plug"]},
            "list",
        ),
        "invalid_data",
    ),
    # Both humidifiers refuse the mode: the message says whose error Home Assistant raised.
    (
        Case(
            "humidifier",
            "set_mode",
            {"mode": "turbo"},
            {"entity_id": ["humidifier.dehumidifier", "humidifier.humidifier"]},
            "list",
        ),
        "validation_error",
    ),
    (
        Case("humidifier", "set_mode", {"mode": "sleep"}, {"entity_id": "all"}, "all"),
        "validation_error",
    ),
    (Case("homeassistant", "toggle", {}, {}, "no target"), None),
    # The first floor's devices all toggle (on the ground floor a speaker cannot).
    (Case("homeassistant", "toggle", {}, {"floor_id": "first"}, "floor"), None),
]


async def test_several_errors_agree_with_home_assistant(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """Home Assistant raises the first error to happen; the twin raises the same one."""
    assert await async_setup_component(hass, "homeassistant", {})
    fidelity = Fidelity(hass, loaded_home)
    for case, code in ORDERED_CASES:
        outcome = await fidelity.call(case)
        assert (outcome.through_ha, outcome.direct, outcome.differences) == (code, code, []), case
