"""One place per domain: each is declared in its own module (and its device types' YAML), and
everything else reads the registry; a new domain is one module plus YAML."""

from __future__ import annotations

import ast
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import fields
from pathlib import Path

import pytest

from agent import task
from twin import auditor, homefile, manual, plots
from twin.catalog import load_catalog
from twin.domains import DEVICE_DOMAINS, DOMAINS, KEY_ATTRIBUTES, RULES
from twin.domains.descriptor import Domain

ROOT = Path(__file__).resolve().parents[2]
# Where the project's Python lives; twin/domains/ is where domains are declared.
SOURCES = ("twin", "agent", "custom_components")
DECLARED = ROOT / "twin" / "domains"
# Source files that name three domains or more in one literal, each for a reason that is not a
# domain's declaration: the room physics' model of devices that move by themselves and of rooms'
# readings, the home generator's choice of each device's initial state, and the agent side's
# wording, deliberate mistakes and chosen requests.
ALLOWED = {
    "twin/physics.py": "timed transitions (covers, valves, vacuums) and rooms' readings",
    "twin/homemaker/initial_state.py": "the home generator's initial state of each device kind",
    "agent/policies/teacher.py": "the teacher's wording and its deliberate mistakes",
    "agent/flywheel/blueprints/scripter.py": "the scripter's requests that a device can serve",
}


def test_every_domain_is_declared_in_its_own_module() -> None:
    for name, domain in DOMAINS.items():
        module = importlib.import_module(f"twin.domains.{name}")
        assert module.DOMAIN is domain
        assert (DECLARED / f"{name}.py").is_file()


# Domains an agent acts on whose entities no device carries (a scene, a to-do list, a helper).
DEVICELESS = {"scene", "todo", "input_boolean", "input_number", "input_select"}


def test_every_device_domain_has_device_types_in_the_catalog() -> None:
    catalogued = {spec.domain for kind in load_catalog().values() for spec in kind.entities}
    assert DEVICE_DOMAINS - DEVICELESS <= catalogued <= set(DOMAINS)
    assert DEVICE_DOMAINS - catalogued >= DEVICELESS


def test_the_places_that_read_a_domain_derive_from_the_registry() -> None:
    """Each place a domain's knowledge is used reads it from its declaration."""
    assert {name: domain.rules for name, domain in DOMAINS.items()} == RULES
    assert {name for name, domain in DOMAINS.items() if domain.device} == DEVICE_DOMAINS
    assert auditor.DEFAULT_POLICY.domains == DEVICE_DOMAINS
    assert dict(KEY_ATTRIBUTES) == {
        name: domain.key_attributes for name, domain in DOMAINS.items() if domain.key_attributes
    }
    assert set(manual.FIELDS) == {
        (name, service) for name, domain in DOMAINS.items() for service in domain.services
    }
    assert {
        key for domain in DOMAINS.values() for key in domain.carrying.tuples
    } == homefile.TUPLE_ATTRIBUTES
    for name, domain in DOMAINS.items():
        for service, test in domain.state_outcomes.items():
            assert f"state({json.dumps(f'{name}.x')}) {test}" in task.intent_condition(
                name, service, f"{name}.x", {}
            )
    assert plots.DOMAINS is DOMAINS


def test_each_domain_declares_notes_only_on_fields_its_services_have() -> None:
    for name, domain in DOMAINS.items():
        service_fields = {
            spec.name for service in domain.services for spec in manual.FIELDS[name, service]
        }
        assert set(domain.fields) <= service_fields, name


def test_an_outcome_of_a_service_the_domain_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="turn_on"):
        Domain("switch", {}, state_outcomes={"turn_on": '== "on"'})


def _literal_groups(path: Path) -> list[tuple[int, list[str]]]:
    """Each bracketed literal's string items (a nested tuple counts as its first item), by line.

    Read by tokens, not by parsing, so that any Python version's syntax can be scanned."""
    groups: list[tuple[int, list[str]]] = []
    stack: list[tuple[int, list[str]]] = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.OP and token.string in "([{":
            stack.append((token.start[0], []))
        elif token.type == tokenize.OP and token.string in ")]}" and stack:
            line, items = stack.pop()
            groups.append((line, items))
            if stack and items:
                stack[-1][1].append(items[0])
        elif token.type == tokenize.STRING and stack:
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str):
                stack[-1][1].append(value)
    return groups


def test_no_hand_kept_table_names_several_domains_outside_their_modules() -> None:
    """A literal naming three domains or more is a per-domain table kept by hand."""
    found = []
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if path.is_relative_to(DECLARED) or where in ALLOWED:
                continue
            for line, items in _literal_groups(path):
                named = set(items) & set(DOMAINS)
                if len(named) >= 3:
                    found.append(f"{where}:{line}: {sorted(named)}")
    assert found == []


def test_the_descriptor_holds_every_kind_of_domain_knowledge() -> None:
    """What a domain module declares, by field (the README's layout section lists them)."""
    assert [field.name for field in fields(Domain)] == [
        "name",
        "services",
        "features",
        "rules",
        "device",
        "key_attributes",
        "fields",
        "state_outcomes",
        "attribute_outcomes",
        "relative_outcomes",
        "carrying",
        "contents",
        "spoken",
        "asked",
        "color",
    ]


# A domain the twin does not simulate (a door chime; Home Assistant has no such domain), as a
# module of twin.domains.
CHIME_MODULE = '''
"""chime: a door chime that sounds one of its tones."""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..service import EntityDraft, Service, schema
from ..validation import string
from .descriptor import Carrying, Domain, FieldNotes, has_feature
from .rules import EntityRules, names, optional, text

TURN_ON = 1
TURN_OFF = 2
TONES = 4


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    entity.state = "on"
    if "tone" in data:
        entity.attributes["tone"] = data["tone"]


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    entity.state = "off"


DOMAIN = Domain.of(
    "chime",
    [
        Service(
            "turn_on", turn_on, schema({vol.Optional("tone"): string}), (TURN_ON,), "Sound it."
        ),
        Service("turn_off", turn_off, required_features=(TURN_OFF,), description="Silence it."),
    ],
    {"turn_on": TURN_ON, "turn_off": TURN_OFF, "tones": TONES},
    rules=EntityRules({"available_tones": optional(names()), "tone": optional(text)}),
    device=True,
    key_attributes=("tone",),
    fields={"tone": FieldNotes(options_from="available_tones", applies=has_feature(TONES))},
    state_outcomes={"turn_on": '== "on"', "turn_off": '== "off"'},
    carrying=Carrying(capabilities=frozenset({"available_tones"})),
)
'''
CHIME_TYPES = """
door_chime:
  category: security
  description: A door chime.
  models:
    - [Aqara, Smart Hub M2]
  entities:
    - domain: chime
      features: [turn_on, turn_off, tones]
      capabilities: {available_tones: [alarm, chime]}
      state: "off"
      attributes: {tone: null}
"""
# Everything a chime takes part in, run where the twin has the chime's module and YAML.
CHIME_ROUND_TRIP = """
import json
import twin
from agent.task import intent_condition
from twin.auditor import DEFAULT_POLICY
from twin.catalog import load_catalog
from twin.home import Home
from twin.homefile import dump_home, export_ha_snapshot, import_ha_snapshot, load_home
from twin.registry import Area
from twin.tools import run_tool

home = Home("Chime Home")
home.add_area(Area("hall", "Hall"))
load_catalog()["door_chime"].install(home, "hall_chime", "Hall Chime", "hall")
target = {"entity_id": "chime.hall_chime"}
print(json.dumps({
    "twin": twin.__file__,
    "listed": run_tool(home, "list_entities", {"domain": "chime"}),
    "manual": run_tool(home, "describe", target),
    "allowed": DEFAULT_POLICY.screen(home, "chime", "turn_on", {"tone": "chime"}, target).code,
    "called": run_tool(home, "call_service", {
        "domain": "chime", "service": "turn_on", "data": {"tone": "chime"}, "target": target}),
    "state": home.states["chime.hall_chime"].as_dict(),
    "home_file": load_home(dump_home(home)).states == home.states,
    "snapshot": import_ha_snapshot(export_ha_snapshot(home))[0].states == home.states,
    "condition": intent_condition("chime", "turn_on", "chime.hall_chime", {}),
}))
"""


def test_a_new_domain_is_one_module_and_its_yaml(tmp_path: Path) -> None:
    """Add a chime domain to a copy of the twin by writing its module and device type only."""
    shutil.copytree(ROOT / "twin", tmp_path / "twin", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "twin" / "domains" / "chime.py").write_text(textwrap.dedent(CHIME_MODULE))
    (tmp_path / "twin" / "device_types" / "chimes.yaml").write_text(CHIME_TYPES)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", CHIME_ROUND_TRIP],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["twin"] == str(tmp_path / "twin" / "__init__.py")
    [listed] = seen["listed"]["entities"]
    assert listed["entity_id"] == "chime.hall_chime"
    assert listed["state"] == "off"
    tone = seen["manual"]["services"]["turn_on"]["fields"]["tone"]
    assert tone["options"] == ["alarm", "chime"]
    assert set(seen["manual"]["services"]) == {"turn_on", "turn_off"}
    assert seen["allowed"] == "ok"
    assert seen["called"]["success"] is True
    assert seen["state"]["state"] == "on"
    assert seen["state"]["attributes"]["tone"] == "chime"
    assert seen["home_file"] is True
    assert seen["snapshot"] is True
    assert seen["condition"] == 'state("chime.hall_chime") == "on"'
