"""script: scripts as opaque actions that finish at once, and the auditor's say on them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.domains import script
from twin.errors import HomeDefinitionError, InvalidServiceDataError
from twin.home import Home
from twin.homefile import import_ha_snapshot
from twin.registry import EntityEntry

from .helpers import SCRIPT, add_helpers


@pytest.fixture
def home() -> Home:
    home = Home()
    add_helpers(home)
    return home


def call(home: Home, service: str, entity_id: str = SCRIPT, **data: Any) -> dict[str, Any]:
    home.call_service("script", service, data, {"entity_id": entity_id})
    return {"state": home.state(entity_id).state, **home.state(entity_id).attributes}


def when(home: Home) -> str:
    return datetime.fromtimestamp(home.now, UTC).isoformat()


def test_services_are_home_assistants() -> None:
    assert set(script.DOMAIN.services) == {"turn_on", "turn_off", "toggle"}


def test_a_run_ends_at_once_and_marks_the_time(home: Home) -> None:
    home.now += 90.5
    shown = call(home, "turn_on", variables={"volume": 3})
    assert shown == {
        "state": "off",
        "last_triggered": "2026-01-01T00:01:30.500000+00:00",
        "mode": "single",
        "current": 0,
        "friendly_name": "Movie night",
    }
    home.now += 60
    assert call(home, "toggle")["last_triggered"] == when(home)  # not running: runs it
    assert call(home, "turn_off")["last_triggered"] == when(home)  # nothing to stop


def add_running(home: Home, mode: str, runs: int, **extra: Any) -> str:
    entity_id = f"script.{mode}"
    attributes = {"last_triggered": None, "mode": mode, "current": runs, **extra}
    home.add_entity(EntityEntry(entity_id, mode), "on", attributes)
    return entity_id


@pytest.mark.parametrize(
    ("mode", "extra", "started", "after"),
    [
        ("single", {}, False, ("on", 1)),
        ("restart", {}, True, ("off", 0)),
        ("parallel", {"max": 10}, True, ("on", 1)),
        ("queued", {"max": 1}, False, ("on", 1)),
    ],
)
def test_runs_already_going_follow_the_mode(
    home: Home, mode: str, extra: dict[str, Any], started: bool, after: tuple[str, int]
) -> None:
    entity_id = add_running(home, mode, 1, last_action="Dim the lights", **extra)
    shown = call(home, "turn_on", entity_id)
    assert (shown["last_triggered"] is not None) == started
    assert (shown["state"], shown["current"]) == after


def test_turn_off_and_toggle_stop_every_run(home: Home) -> None:
    entity_id = add_running(home, "parallel", 3, max=10, last_action="Wait")
    shown = call(home, "toggle", entity_id)
    assert (shown["state"], shown["current"], shown["last_triggered"]) == ("off", 0, None)
    assert "last_action" not in shown
    add_running(home, "queued", 2, max=10)
    assert call(home, "turn_off", "script.queued")["state"] == "off"


def test_variables_must_be_a_mapping(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError, match="variables"):
        call(home, "turn_on", variables=[1, 2])
    assert home.state(SCRIPT).attributes["last_triggered"] is None


def test_scripts_run_only_under_a_policy_that_says_so(home: Home) -> None:
    turn_on = ("script", "turn_on", {"entity_id": SCRIPT})
    refused = DEFAULT_POLICY.check(home, *turn_on)
    assert (refused.code, refused.penalty) == ("forbidden_domain", -1.0)
    across = DEFAULT_POLICY.check(home, "homeassistant", "turn_on", {"entity_id": SCRIPT})
    assert across.code == "forbidden_domain"
    assert "runs script.turn_on on script.movie_night" in across.message
    scripts = ActionPolicy(scripts=True)
    assert scripts.check(home, *turn_on).allowed
    assert scripts.check(home, "homeassistant", "toggle", {"entity_id": SCRIPT}).allowed
    no_stop = ActionPolicy(scripts=True, denied=frozenset({"script.turn_off"}))
    assert no_stop.check(home, "script", "turn_off", {"entity_id": SCRIPT}).code == (
        "forbidden_service"
    )
    assert home.state(SCRIPT).attributes["last_triggered"] is None  # checks change nothing


@pytest.mark.parametrize(
    "kwargs", [{"domains": frozenset({"script"})}, {"services": frozenset({"script.turn_on"})}]
)
def test_scripts_are_not_allowed_by_name(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="scripts=True"):
        ActionPolicy(**kwargs)


def test_a_script_named_as_an_action_is_refused() -> None:
    snapshot = {"states": [{"entity_id": "script.turn_on", "state": "off"}]}
    with pytest.raises(HomeDefinitionError, match="object_id must not be one of reload, toggle"):
        import_ha_snapshot(snapshot)
