"""Numbers in service data, on every numeric field of every domain: what cannot be a quantity (inf,
nan, a number too large for a float) is invalid data, the home unchanged, on each way in (the
twin's API, Home Assistant's lenient path, and the agent's tool with the JSON a model writes)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from twin.domains import DOMAINS
from twin.errors import InvalidServiceDataError
from twin.home import Home
from twin.homemaker import make_home
from twin.manual import FIELDS
from twin.registry import EntityEntry
from twin.tools import run_tool

NOT_QUANTITIES: tuple[Any, ...] = (math.inf, -math.inf, math.nan, 10**400, -(10**400), "1e999")


def _homes() -> list[Home]:
    return [make_home(seed, kind) for seed, kind in ((6, "house"), (8, "villa"), (11, "studio"))]


HOMES = _homes()


def _numeric_fields() -> list[tuple[str, str, str]]:
    """(domain, service, field) for every numeric field, with an entity of HOMES that offers it."""
    found = []
    for (domain, service), specs in FIELDS.items():
        if _offering(domain, service) is None:
            continue
        for spec in specs:
            kinds = spec.accepts.get("type")
            kinds = kinds if isinstance(kinds, list) else [kinds]
            if {"integer", "number"} & set(kinds):
                found.append((domain, service, spec.name))
    return found


def _offering(domain: str, service: str) -> tuple[Home, EntityEntry] | None:
    handler = DOMAINS[domain].services[service]
    for home in HOMES:
        for entry in home.entities.values():
            if entry.domain == domain and handler.supported_by(entry):
                return home, entry
    return None


NUMERIC_FIELDS = _numeric_fields()


def test_the_fields_cover_every_numeric_kind_of_service() -> None:
    """The sweep below reaches the domains that take numbers (a guard against an empty sweep)."""
    domains = {domain for domain, _, _ in NUMERIC_FIELDS}
    assert {"light", "climate", "fan", "cover", "media_player", "humidifier"} <= domains
    assert len(NUMERIC_FIELDS) >= 20


@pytest.mark.parametrize(("domain", "service", "field"), NUMERIC_FIELDS)
@pytest.mark.parametrize(
    "value", NOT_QUANTITIES, ids=["inf", "-inf", "nan", "1e400", "-1e400", "str 1e999"]
)
def test_what_is_no_quantity_is_invalid_data(
    domain: str, service: str, field: str, value: Any
) -> None:
    found = _offering(domain, service)
    assert found is not None
    home, entry = found
    data = dict.fromkeys(_together(domain, service, field), value)
    before = dict(home.states)
    for strict in (True, False):
        with pytest.raises(
            InvalidServiceDataError, match=r"finite number|not a valid value|expected int"
        ):
            home.call_service(domain, service, data, {"entity_id": entry.entity_id}, strict=strict)
        assert home.states == before


def _together(domain: str, service: str, field: str) -> list[str]:
    """The field and those it must come with (vol.Inclusive: target_temp_low with _high)."""
    specs = FIELDS[(domain, service)]
    group = next(spec.inclusive for spec in specs if spec.name == field)
    return [
        spec.name for spec in specs if spec.name == field or (group and spec.inclusive == group)
    ]


@pytest.mark.parametrize(
    ("number", "fragment"),
    [("1e999", "finite number"), ("-1e999", "finite number"), ("9" * 5000, "not JSON")],
)
def test_the_tool_answers_json_numbers_beyond_a_float_with_an_error(
    number: str, fragment: str
) -> None:
    """JSON carries 1e999 (inf in Python) and 5,000-digit integers (a ValueError in json)."""
    home = make_home(11, "studio")
    before = dict(home.states)
    light = next(entity_id for entity_id in home.states if entity_id.startswith("light."))
    target = json.dumps({"entity_id": light})
    text = (
        f'{{"domain": "light", "service": "turn_on", "target": {target}, '
        f'"data": {{"brightness": {number}}}}}'
    )
    result = run_tool(home, "call_service", text)
    assert result["success"] is False
    assert fragment in result["error"]["message"]
    assert home.states == before


def test_the_issues_examples_are_invalid_data() -> None:
    home = make_home(11, "studio")
    before = dict(home.states)
    calls = [
        ("fan", "set_percentage", {"percentage": math.inf}, "fan.bathroom_exhaust_fan"),
        ("climate", "set_temperature", {"temperature": 10**400}, "climate.thermostat"),
        ("light", "turn_on", {"brightness_step_pct": math.nan}, "light.studio_lamp"),
    ]
    for domain, service, data, entity_id in calls:
        with pytest.raises(InvalidServiceDataError, match="must be a finite number"):
            home.call_service(domain, service, data, {"entity_id": entity_id})
        arguments = {"domain": domain, "service": service, "data": data}
        arguments["target"] = {"entity_id": entity_id}
        result = run_tool(home, "call_service", json.dumps(arguments))
        assert result["error"]["code"] == "invalid_data"
    assert home.states == before


def test_an_error_message_repeats_a_long_value_cut_short() -> None:
    home = make_home(11, "studio")
    with pytest.raises(InvalidServiceDataError) as caught:
        home.call_service(
            "climate",
            "set_temperature",
            {"temperature": 10**4000},
            {"entity_id": "climate.thermostat"},
        )
    assert len(str(caught.value)) < 200


def test_clamped_fields_still_clamp_finite_numbers() -> None:
    """Home Assistant clamps brightness_step_pct and brightness; only non-numbers are refused."""
    home = make_home(11, "studio")
    home.call_service(
        "light", "turn_on", {"brightness": 10**300}, {"entity_id": "light.studio_lamp"}
    )
    assert home.state("light.studio_lamp").attributes["brightness"] == 255
    home.call_service(
        "light", "turn_on", {"brightness_step_pct": -1e300}, {"entity_id": "light.studio_lamp"}
    )
    assert home.state("light.studio_lamp").state == "off"
