"""One virtual home in Home Assistant: the twin, who listens to it, its clock and storage."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import probatio
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from twin.errors import TwinError
from twin.home import Home
from twin.homefile import dump_home, import_ha_snapshot, load_home
from twin.homemaker import make_home
from twin.registry import EntityEntry
from twin.verifier import Verifier

from .const import (
    CONF_CITY,
    CONF_HOME,
    CONF_HOME_TYPE,
    CONF_PHYSICS,
    CONF_SEED,
    CONF_SEED_TIME,
    CONF_SIZE,
    CONF_SOURCE,
    CONF_SPEED,
    CONF_TICK,
    DEFAULT_PHYSICS,
    DEFAULT_SPEED,
    DEFAULT_TICK,
    DOMAIN,
    MAX_SIMULATED_PER_TICK,
    SOURCE_GENERATE,
)
from .registry import RegistryIds

STORAGE_VERSION = 1
SAVE_DELAY = 10  # seconds: changes coalesce into one write


def build_home(data: Mapping[str, Any], now: datetime) -> Home:
    """The home a config entry describes, in its initial state (raises TwinError if malformed).

    A generated home starts at `now`'s wall-clock time (Home Assistant's, in its time zone) as its
    city's local time, so that its daylight, weather and household fit the user's hour and date;
    unless the entry keeps the seed's moment. The seed draws the same home either way.
    """
    if data[CONF_SOURCE] == SOURCE_GENERATE:
        when = None if data.get(CONF_SEED_TIME) else now.replace(tzinfo=None)
        return make_home(
            data[CONF_SEED],
            data.get(CONF_HOME_TYPE),
            data.get(CONF_SIZE),
            data.get(CONF_CITY),
            when,
        )
    # The twin reads a string without a line break as a file name; an entry holds the text itself.
    text = f"{data[CONF_HOME]}\n"
    if text.lstrip().startswith("{"):
        return import_ha_snapshot(text)[0]
    return load_home(text)


def hass_now(hass: HomeAssistant) -> datetime:
    """Home Assistant's time now, in its time zone."""
    return dt_util.utcnow().astimezone(dt_util.get_time_zone(hass.config.time_zone))


def home_store(hass: HomeAssistant, entry_id: str) -> Store[dict[str, Any]]:
    """Where a home's state lives between restarts: {"home": home file, "registry": ids,
    "goal": {"conditions": [...], "start": home file of the task's start} or None,
    "saved_at": Unix time of the write}."""
    return Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}")


class VirtualHome:
    """The twin of one config entry, shared by all its entities.

    Entities act through `call`, which applies a service to the twin and tells every entity whose
    state changed to write it. The twin's state is stored with Home Assistant's storage helper, so a
    restart loses nothing.
    """

    def __init__(self, hass: HomeAssistant, entry: ConfigEntry, home: Home) -> None:
        self.hass = hass
        self.entry = entry
        self.home = home
        self.store = home_store(hass, entry.entry_id)
        # The Home Assistant floors and areas made for the twin's, kept across restarts.
        self.registry_ids: RegistryIds = {}
        # The task set with homeflow.set_goal, and what of it is stored.
        self.goal: Verifier | None = None
        self._goal_data: dict[str, Any] | None = None
        self._listeners: dict[str, CALLBACK_TYPE] = {}
        self._stop_clock: CALLBACK_TYPE | None = None

    @classmethod
    async def async_load(cls, hass: HomeAssistant, entry: ConfigEntry) -> VirtualHome:
        """The stored home of `entry` if there is one, else a new one from its description."""
        virtual = cls(hass, entry, Home())
        stored = await virtual.store.async_load()
        if stored is None:
            virtual.home = await hass.async_add_executor_job(build_home, entry.data, hass_now(hass))
            return virtual
        virtual.home = await hass.async_add_executor_job(load_home, stored["home"])
        virtual.registry_ids = stored["registry"]
        if (behind := virtual.downtime(stored.get("saved_at"))) > 0:
            await hass.async_add_executor_job(virtual.home.advance, behind)
        if goal := stored.get("goal"):
            start = await hass.async_add_executor_job(load_home, goal["start"])
            virtual.goal = Verifier(start, goal["conditions"])
            virtual._goal_data = goal
        return virtual

    def entities_of(self, domain: str) -> list[EntityEntry]:
        """The twin's entities of one domain."""
        return [e for e in self.home.entities.values() if e.domain == domain]

    # --- entities ------------------------------------------------------------------------------

    @callback
    def listen(self, entity_id: str, write_state: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Call `write_state` whenever the twin entity changes; returns the unsubscribe."""
        self._listeners[entity_id] = write_state
        return lambda: self._listeners.pop(entity_id, None)

    def call(self, domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> None:
        """Apply a service to one twin entity; Home Assistant has already validated the call."""
        try:
            result = self.home.call_service(domain, service, dict(data), {"entity_id": entity_id})
        except TwinError as err:
            raise as_home_assistant_error(err) from err
        self._publish(state.entity_id for state in result.changed)

    @callback
    def _publish(self, entity_ids: Iterable[str]) -> None:
        """Let the entities of changed twin states write them, and save soon."""
        for entity_id in entity_ids:
            if (write_state := self._listeners.get(entity_id)) is not None:
                write_state()
        self.save_soon()

    @callback
    def save_soon(self) -> None:
        """Store the home after SAVE_DELAY, with whatever else changes until then."""
        self.store.async_delay_save(self._data_to_save, SAVE_DELAY)

    def _data_to_save(self) -> dict[str, Any]:
        return {
            "home": dump_home(self.home),
            "registry": self.registry_ids,
            "goal": self._goal_data,
            "saved_at": dt_util.utcnow().timestamp(),
        }

    # --- the task ------------------------------------------------------------------------------

    @callback
    def set_goal(self, conditions: Sequence[str]) -> None:
        """Hold the home to `conditions` from now on, replacing any goal (raises ConditionError)."""
        self.goal = Verifier(self.home, conditions)
        self._goal_data = {"conditions": list(conditions), "start": dump_home(self.home)}
        self.save_soon()

    def verify(self) -> dict[str, Any] | None:
        """The goal's status now: each condition, whether all hold, and the entities changed
        since it was set that no condition covers; None without a goal."""
        if self.goal is None:
            return None
        report = self.goal.step(self.home)
        return {
            "done": report.done,
            "conditions": [
                {"condition": status.text, "satisfied": status.satisfied, "error": status.error}
                for status in report.conditions
            ],
            "collateral": list(report.collateral),
        }

    async def async_reset(self) -> None:
        """Go back to the home's initial state, as its config entry describes it; drop the goal."""
        home = await self.hass.async_add_executor_job(
            build_home, self.entry.data, hass_now(self.hass)
        )
        self.goal = None
        self._goal_data = None
        self.replace(home)

    # --- time ----------------------------------------------------------------------------------

    @callback
    def start_clock(self) -> None:
        """Run the room physics on Home Assistant's clock, as the entry's options say."""
        options = self.entry.options
        if not options.get(CONF_PHYSICS, DEFAULT_PHYSICS):
            return
        tick = options.get(CONF_TICK, DEFAULT_TICK)
        speed = options.get(CONF_SPEED, DEFAULT_SPEED)
        seconds = min(tick * speed, MAX_SIMULATED_PER_TICK)  # options saved before the limit

        @callback
        def _tick(now: datetime) -> None:
            self.advance(seconds)

        self._stop_clock = async_track_time_interval(
            self.hass, _tick, timedelta(seconds=tick), name=f"{DOMAIN} clock {self.entry.title}"
        )

    def downtime(self, saved_at: float | None) -> float:
        """The simulated seconds the clock would have run since the home was saved at
        `saved_at` (a Unix time), so that time Home Assistant was down passes in the home too;
        0 when physics is off, nothing was recorded, or less than a tick has passed."""
        options = self.entry.options
        if saved_at is None or not options.get(CONF_PHYSICS, DEFAULT_PHYSICS):
            return 0.0
        elapsed = dt_util.utcnow().timestamp() - saved_at
        if elapsed < options.get(CONF_TICK, DEFAULT_TICK):
            return 0.0
        return elapsed * options.get(CONF_SPEED, DEFAULT_SPEED)

    @callback
    def stop_clock(self) -> None:
        """Stop the physics clock."""
        if self._stop_clock is not None:
            self._stop_clock()
            self._stop_clock = None

    @callback
    def advance(self, seconds: float) -> None:
        """Move the twin's clock and physics, then publish what changed."""
        before = dict(self.home.states)
        self.home.advance(seconds)
        self._publish(eid for eid, state in self.home.states.items() if before[eid] is not state)

    @callback
    def replace(self, home: Home) -> None:
        """Put a whole new state of the home in place (reset), keeping the registries' entities."""
        before = self.home.states
        self.home.restore(home.snapshot())
        self._publish(eid for eid, state in self.home.states.items() if before[eid] != state)

    async def async_save_now(self) -> None:
        """Write the twin to storage at once (on unload)."""
        await self.store.async_save(self._data_to_save())


def as_home_assistant_error(err: TwinError) -> Exception:
    """The Home Assistant error that carries a twin error's message to the caller: the caller's
    mistake (ServiceValidationError), or the home's; invalid data is the vol.Invalid an entity
    raises in Home Assistant for a value its schema let through (an input_number's value out of
    range, which InputNumber refuses so)."""
    if err.code == "invalid_data":
        return probatio.Invalid(str(err))
    kind = ServiceValidationError if err.code != "error" else HomeAssistantError
    return kind(
        translation_domain=DOMAIN,
        translation_key="twin_error",
        translation_placeholders={"error": str(err)},
    )
