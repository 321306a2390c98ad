"""The action auditor: policy verdicts before execution, and feedback for errors after it."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from twin import auditor, targets, tools
from twin import home as home_module
from twin.auditor import (
    ALLOWED,
    CONFIRMING_POLICY,
    DEFAULT_POLICY,
    FEEDBACK_CODES,
    PENALTIES,
    ActionDeniedError,
    ActionPolicy,
    SensitiveAction,
    Verdict,
)
from twin.catalog import load_catalog
from twin.confirmation import Confirmation, request
from twin.errors import (
    EntityNotFoundError,
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TargetNotFoundError,
    TwinError,
)
from twin.home import Home
from twin.pyexec import run
from twin.registry import Area, EntityEntry


@pytest.fixture
def home() -> Home:
    """A kitchen with a kettle plug, a hall with a front door lock, a garage door and a blind."""
    home = Home("Audited home")
    home.add_area(Area("kitchen", "Kitchen"))
    home.add_area(Area("hall", "Hall"))
    load_catalog()["smart_plug"].install(home, "kettle", "Kettle", "kitchen")
    home.add_entity(EntityEntry("lock.front_door", "Front door", area_id="hall"), "locked")
    home.add_entity(
        EntityEntry("cover.garage_door", "Garage door", area_id="hall", device_class="garage"),
        "closed",
    )
    home.add_entity(
        EntityEntry("cover.gate", "Gate", device_class="gate"),
        "closed",
    )
    home.add_entity(
        EntityEntry("cover.kitchen_blind", "Blind", area_id="kitchen", device_class="blind"),
        "closed",
    )
    return home


def kettle(**data: Any) -> dict[str, Any]:
    return {"entity_id": "switch.kettle", **data}


def test_allowed_call_passes_and_changes_nothing(home: Home) -> None:
    before = dict(home.states)
    assert DEFAULT_POLICY.check(home, "switch", "turn_on", kettle()) is ALLOWED
    assert DEFAULT_POLICY.check(home, "homeassistant", "toggle", target={"area_id": "kitchen"}) == (
        Verdict(True, "ok", "", 0.0)
    )
    assert home.states == before


@pytest.mark.parametrize(
    ("domain", "service", "code"),
    [
        ("shell_command", "wipe_disk", "forbidden_domain"),
        ("python_script", "run", "forbidden_domain"),
        ("script", "turn_on", "forbidden_domain"),
        ("automation", "trigger", "forbidden_domain"),
        ("hassio", "host_reboot", "forbidden_domain"),
        ("recorder", "purge", "forbidden_domain"),
        ("notify", "notify", "forbidden_domain"),
        ("sensor", "anything", "forbidden_domain"),
        ("homeassistant", "restart", "forbidden_service"),
        ("homeassistant", "stop", "forbidden_service"),
        ("homeassistant", "reload_all", "forbidden_service"),
        ("homeassistant", "update_entity", "forbidden_service"),
    ],
)
def test_forbidden_actions(home: Home, domain: str, service: str, code: str) -> None:
    verdict = DEFAULT_POLICY.check(home, domain, service, kettle())
    assert verdict == Verdict(False, code, verdict.message, -1.0)
    if code == "forbidden_domain":
        assert verdict.message.startswith(f"Domain {domain} is not allowed; allowed domains: ")
        assert "light" in verdict.message
    else:
        assert verdict.message == (
            f"Action homeassistant.{service} is not allowed; allowed here: "
            "homeassistant.toggle, homeassistant.turn_off, homeassistant.turn_on"
        )


@pytest.mark.parametrize(
    ("domain", "service", "target", "action"),
    [
        ("lock", "unlock", {"entity_id": "lock.front_door"}, "lock.unlock on lock.front_door"),
        ("lock", "open", {"entity_id": "lock.front_door"}, "lock.open on lock.front_door"),
        ("lock", "unlock", {"area_id": "hall"}, "lock.unlock on lock.front_door"),
        ("lock", "unlock", {"entity_id": "all"}, "lock.unlock on lock.front_door"),
        (
            "cover",
            "open_cover",
            {"entity_id": "cover.garage_door"},
            "cover.open_cover on cover.garage_door",
        ),
        ("cover", "toggle", {"entity_id": "cover.gate"}, "cover.toggle on cover.gate"),
        (
            "cover",
            "set_cover_position",
            {"area_id": "hall"},
            "cover.set_cover_position on cover.garage_door",
        ),
    ],
)
def test_sensitive_actions_need_confirmation(
    home: Home, domain: str, service: str, target: dict[str, Any], action: str
) -> None:
    assert DEFAULT_POLICY.screen(home, domain, service, target=target) is ALLOWED  # as in HA
    confirmation = Confirmation()
    verdict = CONFIRMING_POLICY.check(
        home, domain, service, target=target, confirmation=confirmation
    )
    assert verdict == Verdict(
        False,
        "confirmation_required",
        f"{action} needs the user's confirmation: ask the user whether to do it, and make the "
        "same call again once they say yes",
        0.0,
    )
    held = frozenset({tuple(action.split(" on "))})
    assert confirmation.pending == held
    assert CONFIRMING_POLICY.screen(home, domain, service, target=target) == verdict
    confirmation.hear("Yes, please")
    assert confirmation.confirmed == held
    screened = CONFIRMING_POLICY.screen(
        home, domain, service, target=target, confirmation=confirmation
    )
    assert screened is ALLOWED


def test_one_call_asks_for_every_sensitive_action_it_makes(home: Home) -> None:
    """Opening the hall's and the gate's covers asks for both at once, and one yes does."""
    covers = {"entity_id": ["cover.garage_door", "cover.gate", "cover.kitchen_blind"]}
    confirmation = Confirmation()
    with pytest.raises(ActionDeniedError) as caught:
        CONFIRMING_POLICY.call(home, "cover", "open_cover", None, covers, confirmation)
    held = {("cover.open_cover", "cover.garage_door"), ("cover.open_cover", "cover.gate")}
    assert str(caught.value) == request(held)
    assert confirmation.pending == held
    assert home.states["cover.gate"].state == "closed"
    confirmation.hear("oui")
    assert CONFIRMING_POLICY.screen(home, "cover", "open_cover", None, covers, confirmation).allowed


@pytest.mark.parametrize(
    ("domain", "service", "target"),
    [
        ("lock", "lock", {"entity_id": "lock.front_door"}),
        ("cover", "open_cover", {"entity_id": "cover.kitchen_blind"}),
        ("cover", "close_cover", {"entity_id": "cover.garage_door"}),
        ("cover", "open_cover", {"area_id": "kitchen"}),
        # The kitchen holds no lock, so a lock action there unlocks nothing.
        ("lock", "unlock", {"area_id": "kitchen"}),
    ],
)
def test_ordinary_actions_on_the_same_devices_are_not_sensitive(
    home: Home, domain: str, service: str, target: dict[str, Any]
) -> None:
    assert DEFAULT_POLICY.screen(home, domain, service, target=target) is ALLOWED


def test_cross_domain_actions_are_judged_per_entity(home: Home) -> None:
    outlets = ActionPolicy(sensitive=frozenset({SensitiveAction("switch.turn_on", "outlet")}))
    verdict = outlets.check(home, "homeassistant", "turn_on", target={"area_id": "kitchen"})
    assert verdict.code == "confirmation_required"
    assert verdict.message.startswith("switch.turn_on on switch.kettle needs the user's")
    assert outlets.check(home, "homeassistant", "turn_off", target={"area_id": "kitchen"}).allowed

    lights_only = ActionPolicy(domains=frozenset({"light"}))
    verdict = lights_only.check(home, "homeassistant", "turn_on", kettle())
    assert verdict == Verdict(
        False,
        "forbidden_domain",
        "homeassistant.turn_on runs switch.turn_on on switch.kettle: "
        "Domain switch is not allowed; allowed domains: homeassistant, light",
        -1.0,
    )
    # The sensor has no turn_on, so homeassistant.turn_on skips it, as Home Assistant does.
    power = {"entity_id": "sensor.kettle_power"}
    assert lights_only.check(home, "homeassistant", "turn_on", target=power) is ALLOWED


@pytest.mark.parametrize(
    ("domain", "service", "data", "code", "message"),
    [
        ("switch", "turn_on", {"entity_id": "switch.nope"}, "unknown_entity", "switch.nope"),
        ("lock", "unlock", {"entity_id": "lock.back_door"}, "unknown_entity", "lock.back_door"),
        ("switch", "turn_on", {"area_id": "attic"}, "unknown_target", "No area with id 'attic'"),
        ("switch", "turn_on", {"device_id": "x"}, "unknown_target", "No device"),
        ("switch", "fly", kettle(), "unknown_service", "switch offers: turn_on"),
        ("switch", "turn_on", {"entity_id": "sensor.kettle_power"}, "unsupported_feature", ""),
        ("switch", "turn_on", kettle(speed=3), "invalid_data", "speed"),
        ("switch", "turn_on", {}, "invalid_data", "needs a target"),
        ("switch", "turn_on", {"entity_id": "not an id"}, "invalid_data", "entity_id"),
        ("switch", "turn_on", ["switch.kettle"], "invalid_data", "data and target must be dicts"),
    ],
)
def test_impossible_actions(
    home: Home, domain: str, service: str, data: dict[str, Any], code: str, message: str
) -> None:
    before = dict(home.states)
    verdict = DEFAULT_POLICY.check(home, domain, service, data)
    assert (verdict.allowed, verdict.code, verdict.penalty) == (False, code, PENALTIES[code])
    assert message in verdict.message
    assert home.states == before
    assert DEFAULT_POLICY.check(home, domain, service, data) == verdict


def test_policy_order_forbidden_before_impossible(home: Home) -> None:
    verdict = DEFAULT_POLICY.check(home, "shell_command", "x", {"entity_id": "switch.nope"})
    assert verdict.code == "forbidden_domain"
    unlock = {"entity_id": "lock.front_door", "x": 1}
    assert CONFIRMING_POLICY.check(home, "lock", "unlock", unlock).code == "confirmation_required"


def test_custom_policies(home: Home) -> None:
    switches = ActionPolicy(
        domains=frozenset({"switch"}),
        services=frozenset({"lock.lock"}),
        denied=frozenset({"switch.toggle"}),
    )
    assert switches.check(home, "switch", "turn_on", kettle()).allowed
    assert switches.check(home, "switch", "toggle", kettle()).code == "forbidden_service"
    assert switches.screen(home, "lock", "lock", {"entity_id": "lock.front_door"}).allowed
    verdict = switches.check(home, "lock", "unlock", {"entity_id": "lock.front_door"})
    assert verdict.code == "forbidden_service"
    assert verdict.message == "Action lock.unlock is not allowed; allowed here: lock.lock"
    assert switches.check(home, "cover", "open_cover", {"entity_id": "cover.gate"}).code == (
        "forbidden_domain"
    )
    assert ActionPolicy().screen(home, "lock", "unlock", {"entity_id": "lock.front_door"}).allowed


@pytest.mark.parametrize(
    "kwargs",
    [
        {"domains": frozenset({"light", "shell_command"})},
        {"services": frozenset({"homeassistant.restart"})},
        {"penalties": MappingProxyType({"invalid_data": -1.0})},
    ],
)
def test_policies_that_could_harm_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"never allow|penalties lacks"):
        ActionPolicy(**kwargs)


def test_enforce_raises_the_verdict(home: Home) -> None:
    DEFAULT_POLICY.enforce(home, "switch", "turn_on", kettle())
    with pytest.raises(ActionDeniedError) as caught:
        DEFAULT_POLICY.enforce(home, "shell_command", "rm")
    assert isinstance(caught.value, TwinError)
    assert caught.value.code == "forbidden_domain"
    assert caught.value.verdict.penalty == -1.0
    assert str(caught.value) == caught.value.verdict.message


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (EntityNotFoundError, "unknown_entity"),
        (TargetNotFoundError, "unknown_target"),
        (ServiceNotFoundError, "unknown_service"),
        (ServiceNotSupportedError, "unsupported_feature"),
        (InvalidServiceDataError, "invalid_data"),
        (ServiceValidationError, "invalid_data"),
        (HomeDefinitionError, "invalid_action"),
        (TwinError, "invalid_action"),
    ],
)
def test_errors_after_execution_become_feedback(error: type[TwinError], code: str) -> None:
    verdict = DEFAULT_POLICY.verdict_for(error.code, "what went wrong")
    assert verdict == Verdict(False, code, "what went wrong", PENALTIES[code])


def test_sandbox_results_become_feedback(home: Home) -> None:
    for code, feedback in [
        ("import os", "restricted_code"),
        ("while True:\n    pass", "step_limit"),
        ("'a' * 10**10", "memory_limit"),
        ("1 / 0", "code_error"),
        ("for", "syntax_error"),
        ('call_service("switch", "turn_on", entity_id="switch.nope")', "unknown_entity"),
    ]:
        result = run(code, home, auditor=DEFAULT_POLICY)
        verdict = DEFAULT_POLICY.verdict_for(result.error_code or "", result.error or "")
        assert (verdict.code, verdict.penalty) == (feedback, PENALTIES[feedback]), code


def test_penalty_table_ranks_forbidden_over_impossible_and_asking_costs_nothing() -> None:
    asking = {"confirmation_required"}
    assert all(penalty < 0 for code, penalty in PENALTIES.items() if code not in asking)
    assert PENALTIES["confirmation_required"] == 0.0  # the way to a sensitive action
    assert PENALTIES["forbidden_domain"] < PENALTIES["unknown_entity"]
    assert PENALTIES["unknown_entity"] <= PENALTIES["invalid_data"]
    assert set(FEEDBACK_CODES.values()) <= set(PENALTIES)
    harsh = ActionPolicy(penalties=MappingProxyType({**PENALTIES, "invalid_data": -5.0}))
    assert harsh.verdict_for("invalid_data", "x").penalty == -5.0
    assert isinstance(hash(harsh), int)


def test_an_audited_call_resolves_its_target_once(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The auditor judges the call as the home resolves it: the tool, pyexec and `check` walk the
    registries for a target once, not once to judge and again to act."""
    selected: list[dict[str, Any]] = []
    select = targets.select

    def counted(*args: Any, **kwargs: Any) -> Any:
        selected.append(args[1])
        return select(*args, **kwargs)

    for module in (targets, home_module, auditor):
        monkeypatch.setattr(module, "select", counted, raising=False)
    kitchen = {"area_id": "kitchen"}
    for make_call in (
        lambda: tools.call_service(home, "switch", "toggle", kitchen, policy=DEFAULT_POLICY),
        lambda: run(
            'call_service("switch", "toggle", area_id="kitchen")', home, auditor=DEFAULT_POLICY
        ),
        lambda: DEFAULT_POLICY.check(home, "switch", "toggle", target=kitchen),
    ):
        selected.clear()
        make_call()
        assert selected == [{"area_id": ["kitchen"]}]
