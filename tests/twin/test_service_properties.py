"""Property: any service call, however hostile, is a success that leaves only valid states, or a
typed error that leaves the home exactly as it was, on the twin's API and through the agent's tool.

bench/fuzz.py runs the same contract over 100,000 calls; this is its quick form for `make test`.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twin.domains import DOMAINS, check_entity
from twin.errors import TwinError
from twin.home import Home
from twin.homemaker import make_home
from twin.manual import FIELDS
from twin.tools import run_tool

HOMES = [make_home(seed, kind) for seed, kind in ((6, "house"), (11, "studio"), (3, "apartment"))]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["on", "off", "auto", "heat", "red", "1e999", "nan", "-5", "255"]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def calls(draw: st.DrawFn) -> tuple[Home, str, str, dict[str, Any], dict[str, Any]]:
    """A home, and a call mostly aimed at one of its entities with its domain's fields."""
    home = draw(st.sampled_from(HOMES)).copy()
    entity_id = draw(st.sampled_from(sorted(home.states)))
    domain = entity_id.partition(".")[0]
    if draw(st.integers(0, 19)) == 0 or not DOMAINS.get(domain, DOMAINS["light"]).services:
        domain = draw(st.sampled_from([*DOMAINS, "homeassistant"]))
    services = list(DOMAINS[domain].services) if domain in DOMAINS else ["turn_on", "toggle"]
    service = draw(st.sampled_from(services or ["turn_on"]))
    names = [spec.name for spec in FIELDS.get((domain, service), ())]
    keys = st.sampled_from(names) | st.text(max_size=6) if names else st.text(max_size=6)
    data = draw(st.dictionaries(keys, values, max_size=4))
    target = draw(
        st.one_of(
            st.just({"entity_id": entity_id}),
            st.lists(st.sampled_from(sorted(home.states)), max_size=3).map(
                lambda ids: {"entity_id": ids}
            ),
            st.sampled_from(sorted(home.areas) or ["none"]).map(lambda area: {"area_id": area}),
            st.dictionaries(
                st.sampled_from(["entity_id", "area_id", "floor_id", "device_id", "label_id"]),
                values,
                max_size=2,
            ),
        )
    )
    return home, domain, service, data, target


def holds_the_contract(home: Home, call: Any) -> None:
    """Run `call`; a TwinError must leave every state as it was, a success only valid states."""
    before = dict(home.states)
    try:
        call()
    except TwinError:
        assert home.states.keys() == before.keys()
        assert all(home.states[key] is state for key, state in before.items())
        return
    for entity_id, state in home.states.items():
        if before[entity_id] is not state:
            check_entity(home.entities[entity_id], state)
            json.dumps(state.as_dict(), allow_nan=False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_a_strict_call_is_all_or_nothing(call: Any) -> None:
    home, domain, service, data, target = call
    holds_the_contract(home, lambda: home.call_service(domain, service, data, target))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_a_lenient_call_leaves_only_valid_states(call: Any) -> None:
    """strict=False applies entity by entity, as Home Assistant does: no all-or-nothing to check,
    but nothing it writes may be invalid and nothing but a TwinError may come out."""
    home, domain, service, data, target = call
    before = dict(home.states)
    with contextlib.suppress(TwinError):
        home.call_service(domain, service, data, target, strict=False)
    for entity_id, state in home.states.items():
        if before[entity_id] is not state:
            check_entity(home.entities[entity_id], state)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_the_tool_answers_every_call_written_as_json(call: Any) -> None:
    """A model's call as JSON text (inf written 1e999, as JSON has no infinity): a result, never an
    exception, an internal error never, and the home unchanged when it failed."""
    home, domain, service, data, target = call
    arguments = {"domain": domain, "service": service, "data": data, "target": target}
    text = json.dumps(arguments).replace("-Infinity", "-1e999").replace("Infinity", "1e999")
    before = dict(home.states)
    result = run_tool(home, "call_service", text.replace("NaN", "null"))
    if result.get("success") is False:
        assert result["error"]["code"] != "internal_error", result
        assert all(home.states[key] is state for key, state in before.items())


def test_the_strategy_reaches_successes_and_errors() -> None:
    """A guard that the properties above test something: both outcomes occur."""
    outcomes = set()

    @settings(max_examples=150, deadline=None, database=None)
    @given(calls())
    def sample(call: Any) -> None:
        home, domain, service, data, target = call
        try:
            home.call_service(domain, service, data, target)
            outcomes.add("ok")
        except TwinError:
            outcomes.add("error")

    sample()
    assert outcomes == {"ok", "error"}
