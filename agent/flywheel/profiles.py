"""User profiles (paper B.1.1): who the user is, drawn consistently from profiles.yaml.

A profile has five parts, each mapping to something the home can do: basic facts, physiology
(comfort), health (HVAC and air), habits (timing) and preferences (scenes). Parts are drawn in
order, each conditioned on the ones before, so the consistency constraints hold by construction:
the occupation fits the age, conditions follow their prevalence by age, the working pattern and
chronotype set the day, and physiology and health shift the comfort preferences (someone who runs
cold or has arthritis wants it warmer; poor vision wants more light; migraine or light sensitivity
wants it dimmer and warmer; asthma and allergies want clean air and moderate humidity).
The name fits the gender and is of one origin ("Lena Becker", not "Fatima Schmidt, male"); in a
blueprint the user is one of the home's household (`living_in`). `inconsistencies` checks the
constraints on any profile, e.g. one read back from a file.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from twin.homemaker.household import Household

AGE_BANDS = ((16, 39), (40, 64), (65, 95))
NAMED = {"female": "women", "male": "men"}  # the genders whose first names profiles.yaml lists


@dataclass(frozen=True, slots=True)
class Profile:
    """One user: basic facts, physiology, health, habits and preferences."""

    seed: int
    # basic
    name: str
    age: int
    gender: str
    occupation: str
    pattern: str
    # physiology
    thermal: str
    vision: str
    hearing: str
    mobility: str
    light: str
    sleep: str
    # health
    conditions: tuple[str, ...]
    # habits (local hours; bed may be past midnight, e.g. 25.0 = 01:00)
    chronotype: str
    wake: float
    bed: float
    out: tuple[float, float] | None
    activities: tuple[str, ...]
    # preferences
    day_temperature: float
    night_temperature: float
    humidity: tuple[int, int]
    brightness: int
    reading_brightness: int
    evening_kelvin: int
    work_kelvin: int
    volume: float
    clean_air: bool

    def to_dict(self) -> dict[str, Any]:
        """The profile as JSON types."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        """The profile `to_dict` gave."""
        values = dict(data)
        for key in ("conditions", "activities", "humidity"):
            values[key] = tuple(values[key])
        values["out"] = tuple(values["out"]) if values["out"] is not None else None
        return cls(**values)

    def living_in(self, household: Household) -> Profile:
        """The profile as one of the household's adults: the family's surname, a first name of
        its origin and the user's gender."""
        rng = random.Random(f"homeflow-profile-name-{self.seed}")
        return replace(self, name=_name(rng, self.gender, household.surname))

    def memory(self) -> list[str]:
        """What an assistant that knows the user remembers (the prompt's user memory, QT5)."""
        lines = [
            f"{self.name} likes the home at {self.day_temperature:g} °C by day and "
            f"{self.night_temperature:g} °C at night.",
            f"Prefers humidity between {self.humidity[0]} and {self.humidity[1]} %.",
            f"Likes lights at about {self.brightness} %, and {self.reading_brightness} % for "
            "reading.",
            f"In the evening prefers warm light (about {self.evening_kelvin} K); for work, "
            f"cooler light (about {self.work_kelvin} K).",
            f"Usually listens at volume {round(self.volume * 100)} %.",
            f"Gets up around {_clock(self.wake)} and goes to bed around {_clock(self.bed)}.",
        ]
        if self.out is not None:
            lines.append(f"Is usually out from {_clock(self.out[0])} to {_clock(self.out[1])}.")
        if self.clean_air:
            lines.append("Wants the air purifier on and the windows shut when pollen is high.")
        if self.sleep == "light":
            lines.append("Sleeps lightly: no sounds or bright lights at night.")
        return lines


def make_profile(seed: int) -> Profile:
    """The profile of `seed`: the same seed always gives the same profile."""
    rng = random.Random(f"homeflow-profile-{seed}")
    priors = _priors()
    occupation = rng.choice(sorted(priors["occupations"]))
    spec = priors["occupations"][occupation]
    age = rng.randint(*spec["ages"])
    band = _band(age)
    patterns = spec["pattern"] if isinstance(spec["pattern"], list) else [spec["pattern"]]
    pattern = rng.choice(patterns)
    conditions = tuple(
        name for name, effect in priors["conditions"].items() if rng.random() < effect["p"][band]
    )
    effects = [priors["conditions"][name] for name in conditions]
    physiology = {
        key: _weighted(rng, {k: w[band] for k, w in priors[key].items()})
        for key in ("thermal", "vision", "hearing", "mobility")
    }
    for effect in effects:  # a condition decides what it implies
        physiology.update({k: effect[k] for k in ("vision", "hearing") if k in effect})
    light = "sensitive" if any("light" in e for e in effects) else _weighted(rng, priors["light"])
    sleep = "light" if any("sleep" in e for e in effects) else _weighted(rng, priors["sleep"])
    chronotype = _weighted(rng, priors["chronotype"])
    out = _out(priors["patterns"][pattern])
    wake, bed = _day(rng, pattern, chronotype)
    comfort = priors["comfort"]
    warmer = {"runs_cold": 1.5, "neutral": 0.0, "runs_warm": -1.5}[physiology["thermal"]]
    warmer += max((e.get("warmer", 0.0) for e in effects), default=0.0)
    day = _half(min(26.0, rng.uniform(*comfort["day_temperature"]) + warmer))
    night = _half(day - rng.uniform(*comfort["night_drop"]))
    needs = [effect["humidity"] for effect in effects if "humidity" in effect]
    humidity = _humidity(rng, comfort["humidity"], needs)
    brightness, reading = _brightness(rng, comfort, physiology["vision"], light)
    evening = _round(rng.uniform(*comfort["evening_kelvin"]), 100)
    work = _round(rng.uniform(*comfort["work_kelvin"]), 100)
    if light == "sensitive":
        evening, work = min(evening, 2700), min(work, 4000)
    volume = rng.uniform(*comfort["volume"]) + (0.2 if physiology["hearing"] == "reduced" else 0.0)
    gender = _weighted(rng, priors["genders"])
    activities = tuple(rng.sample(priors["activities"], rng.randint(2, 4)))
    return Profile(
        seed=seed,
        name=_name(rng, gender),
        age=age,
        gender=gender,
        occupation=occupation,
        pattern=pattern,
        light=light,
        sleep=sleep,
        conditions=conditions,
        chronotype=chronotype,
        wake=wake,
        bed=bed,
        out=out,
        activities=activities,
        day_temperature=day,
        night_temperature=night,
        humidity=humidity,
        brightness=brightness,
        reading_brightness=reading,
        evening_kelvin=evening,
        work_kelvin=work,
        volume=round(min(volume, 0.8), 2),
        clean_air=any(e.get("air") == "strict" for e in effects),
        **physiology,
    )


def inconsistencies(profile: Profile) -> list[str]:
    """The consistency constraints `profile` breaks (none for a drawn one)."""
    priors = _priors()
    problems = []
    low, high = priors["occupations"][profile.occupation]["ages"]
    if not low <= profile.age <= high:
        problems.append(f"a {profile.age}-year-old {profile.occupation}")
    band = _band(profile.age)
    problems += [
        f"{name} at {profile.age}"
        for name in profile.conditions
        if priors["conditions"][name]["p"][band] == 0
    ]
    if profile.thermal == "runs_cold" and profile.day_temperature < 21.0:
        problems.append(f"runs cold but wants {profile.day_temperature} °C")
    if profile.thermal == "runs_warm" and profile.day_temperature > 23.0:
        problems.append(f"runs warm but wants {profile.day_temperature} °C")
    if profile.vision == "poor" and profile.light != "sensitive" and profile.brightness < 80:
        problems.append(f"poor vision but lights at {profile.brightness} %")
    if profile.light == "sensitive" and (profile.brightness > 60 or profile.evening_kelvin > 2700):
        problems.append("light-sensitive but wants bright or cool light")
    if profile.night_temperature > profile.day_temperature:
        problems.append("warmer at night than by day")
    if profile.clean_air != any(
        priors["conditions"][name].get("air") == "strict" for name in profile.conditions
    ):
        problems.append("clean air does not follow the conditions")
    if profile.pattern == "night_shift" and profile.bed < 27:
        problems.append("works nights but sleeps at night")
    return problems


def age_band(age: int) -> str:
    """The age band's label, e.g. '40-64'."""
    low, high = AGE_BANDS[_band(age)]
    return f"{low}-{high}"


@cache
def _priors() -> dict[str, Any]:
    text = files("agent.flywheel").joinpath("profiles.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


@cache
def _name(rng: random.Random, gender: str, surname: str | None = None) -> str:
    """A first name of the surname's origin (profiles.yaml `names`; a drawn origin's surname
    when none is given) and of the gender: a nonbinary person's of either kind."""
    origins = [_priors()["names"][key] for key in sorted(_priors()["names"])]
    known = [origin for origin in origins if surname in origin["surnames"]]
    origin = known[0] if known else rng.choice(origins)
    first = origin[NAMED[gender]] if gender in NAMED else origin["women"] + origin["men"]
    return f"{rng.choice(first)} {surname or rng.choice(origin['surnames'])}"


def _band(age: int) -> int:
    return next(i for i, (low, high) in enumerate(AGE_BANDS) if age <= high)


def _weighted(rng: random.Random, weights: Mapping[str, float]) -> str:
    keys = sorted(weights)
    return rng.choices(keys, [weights[k] for k in keys])[0]


def _out(pattern: Mapping[str, Any]) -> tuple[float, float] | None:
    hours = pattern.get("out")
    return (float(hours[0]), float(hours[1])) if hours else None


def _day(rng: random.Random, pattern: str, chronotype: str) -> tuple[float, float]:
    """Wake and bed times, in quarter hours: night workers sleep by day, larks rise early."""
    if pattern == "night_shift":
        return _quarter(rng.uniform(14.0, 16.0)), _quarter(rng.uniform(31.5, 33.0))
    wake = {"early_bird": (5.5, 6.75), "neither": (6.5, 8.0), "night_owl": (8.0, 10.0)}[chronotype]
    bed = {"early_bird": (21.5, 22.75), "neither": (22.5, 24.0), "night_owl": (24.0, 26.0)}[
        chronotype
    ]
    if pattern == "evening_shift":
        bed = (24.5, 26.0)
    return _quarter(rng.uniform(*wake)), _quarter(rng.uniform(*bed))


def _humidity(
    rng: random.Random, comfort: Sequence[int], needs: Sequence[Sequence[int]]
) -> tuple[int, int]:
    """A band of ten points (narrower when the conditions leave less) inside what each needs."""
    low = max([comfort[0], *(need[0] for need in needs)])
    high = min([comfort[1], *(need[1] for need in needs)])
    width = min(10, high - low)
    start = rng.randint(low, high - width)
    return start, start + width


def _brightness(
    rng: random.Random, comfort: Mapping[str, Sequence[int]], vision: str, light: str
) -> tuple[int, int]:
    """Everyday and reading brightness: more for poor eyes, less for sensitive ones."""
    every = rng.randint(*comfort["brightness"])
    reading = rng.randint(*comfort["reading_brightness"])
    if vision == "poor":
        every, reading = max(every, 80), 100
    if light == "sensitive":
        every, reading = min(every, 60), min(reading, 75)
    return _round(every, 5), max(_round(reading, 5), _round(every, 5))


def _half(value: float) -> float:
    return round(value * 2) / 2


def _quarter(value: float) -> float:
    return round(value * 4) / 4


def _round(value: float, step: int) -> int:
    return int(round(value / step) * step)


def _clock(hours: float) -> str:
    minutes = round(hours * 60) % (24 * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
