"""The triple filter, which checks every candidate against the home itself:

1. executability: each intent (agent.task.Intent) and answer (a question's) compiles, its
   conditions name entities the home has, and its service and fields are in the entity's
   manual (twin.manual.describe);
2. boundary validity: each value is within the manual's min/max and options;
3. logical consistency: the values agree with the profile, no intent is already done at the
   start, and the ground truth works jointly (Task.check on a copy).

A rejected candidate comes back as `Rejected`, naming the filter and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from twin.conditions import compile_condition
from twin.errors import TwinError
from twin.home import Home
from twin.manual import describe

from ...task import Answer, Intent, Task, TaskError
from ..profiles import Profile
from .model import Candidate, Rejected

FILTERS = ("executability", "boundary", "consistency")


def triple_filter(seed: int, home: Home, profile: Profile, candidate: Candidate) -> Task | Rejected:
    """The candidate's Task when it passes all three filters, else the first refusal."""

    def reject(name: str, check: str, reason: str) -> Rejected:
        return Rejected(seed, name, check, reason)

    intents = []
    for raw in candidate.intents:
        try:
            intent = Intent(**raw)
            for text in (intent.condition, intent.only_if):
                if text is not None:
                    compile_condition(text).validate(home)
        except (TaskError, TwinError, TypeError) as err:
            return reject("executability", "compile", str(err))
        services = describe(home, intent.entity_id)["services"]
        if intent.service not in services:
            return reject("executability", "service", f"{intent.entity_id} has no {intent.service}")
        fields = services[intent.service].get("fields", {})
        unknown = [key for key in intent.data if key not in fields]
        if unknown:
            return reject("executability", "attribute", f"{intent.service} has no field {unknown}")
        for key, value in intent.data.items():
            problem = _out_of_bounds(fields[key], value)
            if problem:
                return reject("boundary", "range", f"{intent.entity_id} {key}={value!r}: {problem}")
        intents.append(intent)
    answers = []
    for raw in candidate.answers:
        try:
            answer = Answer(**raw)
            compile_condition(answer.condition).validate(home)
        except (TaskError, TwinError, TypeError) as err:
            return reject("executability", "compile", str(err))
        answers.append(answer)
    try:
        task = Task(candidate.turns, tuple(intents), candidate.followups, tuple(answers))
    except TaskError as err:
        return reject("consistency", "task", str(err))
    goals = [intents[i] for i in task.goals()]  # a value taken back is neither wrong nor done
    for intent in goals:
        for problem in profile_conflicts(profile, intent):
            return reject("consistency", "profile", problem)
    start = home.snapshot().states
    for intent in goals:
        if intent.applies(home) and compile_condition(intent.condition).holds(home, start):
            return reject("consistency", "already_true", f"{intent.condition} holds at the start")
    if intents and not any(intent.applies(home) for intent in goals):
        return reject("consistency", "already_true", "no intent applies at the start")
    try:
        task.check(home)
    except TaskError as err:
        return reject("consistency", "unsatisfiable", str(err))
    return task


def _out_of_bounds(spec: Mapping[str, Any], value: Any) -> str | None:
    """What is wrong with `value` for a field of the manual, or None."""
    if "options" in spec and value not in spec["options"]:
        return f"not one of {spec['options']}"
    if spec.get("type") in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "not a number"
        if value < spec.get("min", value) or value > spec.get("max", value):
            return f"outside {spec.get('min')}-{spec.get('max')}"
    if spec.get("type") == "boolean" and not isinstance(value, bool):
        return "not true or false"
    return None


def profile_conflicts(profile: Profile, intent: Intent) -> list[str]:
    """How the intent's values go against what the profile says the user wants."""
    data, problems = intent.data, []
    temperature = data.get("temperature")
    if intent.domain == "climate" and temperature is not None:
        low, high = profile.night_temperature - 1.5, profile.day_temperature + 1.5
        if not low <= temperature <= high:
            problems.append(f"{temperature} °C, but {profile.name} likes {low:g}-{high:g} °C")
    if "humidity" in data:
        low, high = profile.humidity[0] - 5, profile.humidity[1] + 5
        if not low <= data["humidity"] <= high:
            problems.append(f"humidity {data['humidity']} %, but the profile wants {low}-{high}")
    brightness = data.get("brightness_pct")
    sensitive = profile.light == "sensitive"
    if sensitive and brightness is not None and brightness > profile.reading_brightness:
        problems.append(f"{brightness} % for a light-sensitive user")
    if sensitive and data.get("color_temp_kelvin", 0) > 4000:
        problems.append(f"{data['color_temp_kelvin']} K for a light-sensitive user")
    if (volume := data.get("volume_level")) is not None and volume > profile.volume + 0.3:
        problems.append(f"volume {volume} for a user who listens at {profile.volume}")
    return problems
