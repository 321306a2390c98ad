"""A home: registries, entity states on a simulation clock, and Home Assistant's service layer."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import voluptuous as vol

from . import physics
from .domains import DOMAINS, domain_of
from .errors import (
    EntityNotFoundError,
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    TwinError,
)
from .outdoor import ConstantWeather, OutdoorSource
from .registry import Area, Device, EntityEntry, Floor
from .room import RoomClimate
from .service import EntityDraft, Service
from .state import State
from .targets import Selection, select
from .validation import (
    ATTR_ENTITY_ID,
    ENTITY_MATCH_NONE,
    TARGET_KEYS,
    TARGET_SCHEMA,
    entity_ids,
    valid_entity_id,
)

# 2026-01-01T00:00:00Z: a fixed default start keeps every run reproducible.
DEFAULT_START = 1767225600.0
CROSS_DOMAIN = "homeassistant"
CROSS_DOMAIN_SERVICES = ("turn_on", "turn_off", "toggle")

# A service, the entities it acts on, and its validated data.
Call = tuple[Service, list[EntityEntry], dict[str, Any]]
# homeassistant.turn_on/turn_off/toggle's schema: entity ids (neither all nor none), anything else.
CROSS_DOMAIN_SCHEMA = vol.Schema({vol.Optional(ATTR_ENTITY_ID): entity_ids}, extra=vol.ALLOW_EXTRA)


@dataclass(frozen=True, slots=True)
class ServiceResult:
    """What a service call did: the entities it acted on and the new states of those it changed."""

    entity_ids: tuple[str, ...]
    changed: tuple[State, ...]


@dataclass(frozen=True, slots=True)
class _Outcome:
    """A call applied entity by entity: what it did, the error to raise, and whether that error
    came before Home Assistant could wait on anything (no entity, or a single one, was reached)."""

    result: ServiceResult
    error: TwinError | None = None
    early: bool = True


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A saved moment of a home. States and rooms are immutable, so saving copies references."""

    states: Mapping[str, State]
    rooms: Mapping[str, RoomClimate]
    now: float


class Home:
    """A home that behaves like Home Assistant: registries, states and entity services.

    A service call is validated completely before anything changes; a call on several entities
    changes all of them or none (`call_service(strict=False)` acts entity by entity, as Home
    Assistant does).
    """

    def __init__(
        self,
        name: str = "Home",
        now: float = DEFAULT_START,
        weather: OutdoorSource | None = None,
    ) -> None:
        self.name = name
        self.now = now
        self.weather: OutdoorSource = weather or ConstantWeather()
        self.floors: dict[str, Floor] = {}
        self.areas: dict[str, Area] = {}
        self.devices: dict[str, Device] = {}
        self.entities: dict[str, EntityEntry] = {}
        self.states: dict[str, State] = {}
        # The indoor climate of each area, moved by the room physics.
        self.rooms: dict[str, RoomClimate] = {}

    # --- building ------------------------------------------------------------------------------

    def add_floor(self, floor: Floor) -> Floor:
        """Add a floor."""
        self._check_new(self.floors, floor.floor_id, "floor")
        self.floors[floor.floor_id] = floor
        return floor

    def add_area(self, area: Area) -> Area:
        """Add an area; its floor and parent area must exist."""
        self._check_new(self.areas, area.area_id, "area")
        self._check_known(self.floors, area.floor_id, "floor")
        self._check_known(self.areas, area.parent_id, "area")
        self.areas[area.area_id] = area
        self.rooms[area.area_id] = RoomClimate()
        return area

    def add_device(self, device: Device) -> Device:
        """Add a device; its area must exist."""
        self._check_new(self.devices, device.device_id, "device")
        self._check_known(self.areas, device.area_id, "area")
        self.devices[device.device_id] = device
        return device

    def add_entity(
        self,
        entry: EntityEntry,
        state: str,
        attributes: Mapping[str, Any] | None = None,
        *,
        any_domain: bool = False,
    ) -> State:
        """Add an entity with its initial state and state attributes.

        The state's attributes are the entry's capabilities, the given attributes and the
        entity-level ones Home Assistant adds (friendly_name, supported_features, device_class,
        unit_of_measurement). `any_domain` also takes a domain the twin does not simulate (a
        mirrored home's `person`, `sun`...): such an entity is read-only, for conditions to read.
        """
        if not valid_entity_id(entry.entity_id):
            raise HomeDefinitionError(f"{entry.entity_id!r} is not a valid entity id")
        if entry.domain not in DOMAINS and not any_domain:
            known = ", ".join(sorted(DOMAINS))
            raise HomeDefinitionError(f"Domain {entry.domain!r} is not modelled; known: {known}")
        self._check_new(self.entities, entry.entity_id, "entity")
        self._check_known(self.devices, entry.device_id, "device")
        self._check_known(self.areas, entry.area_id, "area")
        self.entities[entry.entity_id] = entry
        full = {**entry.capabilities, **(attributes or {}), **_entity_attributes(entry)}
        new = State(entry.entity_id, state, full, self.now, self.now)
        self.states[entry.entity_id] = new
        return new

    @staticmethod
    def _check_new(known: Mapping[str, Any], item_id: str, kind: str) -> None:
        if item_id in known:
            raise HomeDefinitionError(f"There is already a {kind} with id {item_id!r}")

    @staticmethod
    def _check_known(known: Mapping[str, Any], item_id: str | None, kind: str) -> None:
        if item_id is not None and item_id not in known:
            raise HomeDefinitionError(f"No {kind} with id {item_id!r}; add it first")

    # --- reading -------------------------------------------------------------------------------

    def state(self, entity_id: str) -> State:
        """The current state of an entity."""
        try:
            return self.states[entity_id]
        except KeyError:
            raise EntityNotFoundError(_unknown_entity(entity_id)) from None

    def area_of(self, entity_id: str) -> str | None:
        """The area an entity is in: its own, else its device's."""
        entry = self.entities[entity_id]
        if entry.area_id is None and entry.device_id is not None:
            return self.devices[entry.device_id].area_id
        return entry.area_id

    # --- saving --------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Save the current states, rooms and time (cheap: they are shared, not copied)."""
        return Snapshot(dict(self.states), dict(self.rooms), self.now)

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to a saved moment."""
        self.states = dict(snapshot.states)
        self.rooms = dict(snapshot.rooms)
        self.now = snapshot.now

    def copy(self) -> Home:
        """An independent home with the same registries and current states and rooms."""
        twin = Home.__new__(Home)
        twin.__dict__.update(self.__dict__)
        twin.states = dict(self.states)
        twin.rooms = dict(self.rooms)
        return twin

    # --- time ----------------------------------------------------------------------------------

    def advance(self, seconds: float, step: float = 60.0) -> None:
        """Move the simulation clock by `seconds` in steps of at most `step`, running the room
        physics; `advance(0)` only brings sensors and readings in line with the rooms."""
        physics.advance(self, seconds, step)

    def write(self, draft: EntityDraft) -> State | None:
        """Write a change the home makes by itself, such as a sensor reading or a robot reaching
        its dock, at the current time; None when nothing visible changed."""
        return self._commit(draft)

    # --- acting --------------------------------------------------------------------------------

    def call_service(
        self,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        *,
        strict: bool = True,
    ) -> ServiceResult:
        """Call a Home Assistant entity service, e.g. `light.turn_on`.

        Target keys (entity_id, device_id, area_id, floor_id) may be in `target` or in `data`, as
        Home Assistant allows. Strict (the default), the call is atomic: it raises a TwinError
        subclass, and changes nothing, on any bad input, an unknown target id included.

        With `strict=False` the twin does what Home Assistant does, step by step:

        - domain and service are lower-cased; an unknown one raises ServiceNotFoundError;
        - bad data, or no target key at all, raise InvalidServiceDataError;
        - unknown entity, device, area and floor ids, labels, and entities of another domain are
          skipped (Home Assistant logs them); a target that reaches no entity does nothing;
        - an entity named by id that lacks the service raises ServiceNotSupportedError, and
          nothing changes (one reached through a device, area or floor is skipped);
        - then each entity applies the call on its own: every one that accepts it changes, and
          then the first error is raised. Home Assistant's entity_service_call gathers the
          entities' calls (asyncio.gather with return_exceptions) and raises the exception of the
          first entity of its list that failed. That list is the domain's entities in the order
          they were added for `entity_id: all`, else `referenced.intersection(<the domain's
          entities>)` in that set's iteration order (it follows the ids' hashes, so it varies
          between processes); the twin builds the same set the same way, so within one process
          it raises the same entity's error.

        `homeassistant.turn_on/turn_off/toggle` (Home Assistant's homeassistant integration):
        entity_id must be entity ids (`all` and `none` are invalid data), other keys are passed
        on unchecked; no entity reached does nothing. The entities are grouped by domain, in
        domain order, and each domain with the service gets its own call as above, with its
        entities named by id (so one that lacks the service raises ServiceNotSupportedError);
        other domains are skipped. Every domain's call is made (Home Assistant gathers them) and
        the error raised is the first to happen: that of the first domain (in name order) whose
        call failed before reaching a second entity, else that of the first domain whose several
        entities failed.
        """
        fields = {**(data or {}), **(target or {})}
        if not strict:
            return self._call_as_home_assistant(domain.lower(), service.lower(), fields)
        selection = self._selection(domain, service, fields)
        if domain == CROSS_DOMAIN:
            return self._call_across_domains(service, fields, selection)
        handler = self._service(domain, service)
        service_data = _validate(handler.schema, _without_targets(fields), domain, service)
        entries = self._entries(domain, handler, selection)
        return self._apply([(handler, entries, service_data)])

    def _service(self, domain: str, service: str) -> Service:
        entity_domain = DOMAINS.get(domain)
        if entity_domain is None:
            if any(entry.domain == domain for entry in self.entities.values()):
                raise ServiceNotSupportedError(
                    f"{domain} entities are read-only here: the twin mirrors them but does not "
                    f"simulate {domain}.{service}; call it on Home Assistant itself"
                )
            known = ", ".join(sorted([*DOMAINS, CROSS_DOMAIN]))
            raise ServiceNotFoundError(
                f"Action {domain}.{service} not found: no domain {domain!r}; domains: {known}"
            )
        try:
            return entity_domain.services[service]
        except KeyError:
            offered = ", ".join(entity_domain.services)
            raise ServiceNotFoundError(
                f"Action {domain}.{service} not found; {domain} offers: {offered}"
            ) from None

    def _selection(self, domain: str, service: str, fields: dict[str, Any]) -> Selection:
        target = {key: fields[key] for key in TARGET_KEYS if key in fields}
        if known := self._known_entity_ids(target):
            return Selection(known)
        target = _validate(TARGET_SCHEMA, target, domain, service)
        if all(ids in (ENTITY_MATCH_NONE, []) for ids in target.values()):
            raise InvalidServiceDataError(
                f"{domain}.{service} needs a target: entity_id, device_id, area_id or floor_id"
            )
        selection = select(self, target)
        for entity_id in selection.explicit:
            if entity_id not in self.entities:
                raise EntityNotFoundError(_unknown_entity(entity_id))
        return selection

    def _known_entity_ids(self, target: dict[str, Any]) -> tuple[str, ...]:
        """The common case, decided without the schema: a target of existing entity ids only.

        Existing ids are valid, lower-case and comma-free, so the schema would return them as given.
        """
        if len(target) != 1 or ATTR_ENTITY_ID not in target:
            return ()
        ids = target[ATTR_ENTITY_ID]
        if isinstance(ids, str):
            return (ids,) if ids in self.entities else ()
        if (
            isinstance(ids, list)
            and ids
            and all(isinstance(item, str) and item in self.entities for item in ids)
        ):
            return tuple(dict.fromkeys(ids))
        return ()

    def _entries(self, domain: str, handler: Service, selection: Selection) -> list[EntityEntry]:
        """The entities of `domain` that the call acts on.

        As in Home Assistant, an entity named by id must support the service, while those reached
        through an area, floor or device are skipped when they do not.
        """
        entries = []
        for entity_id in selection.explicit:
            entry = self.entities[entity_id]
            if entry.domain != domain:
                raise ServiceNotSupportedError(
                    f"{entity_id} is not a {domain} entity; use {entry.domain} actions for it"
                )
            if not handler.supported_by(entry):
                raise ServiceNotSupportedError(
                    f"Entity {entity_id} does not support action {domain}.{handler.name}"
                )
            entries.append(entry)
        candidates = self.entities if selection.everything else selection.indirect
        for entity_id in candidates:
            entry = self.entities[entity_id]
            if entry.domain == domain and handler.supported_by(entry):
                entries.append(entry)
        return entries

    def _call_across_domains(
        self, service: str, fields: dict[str, Any], selection: Selection
    ) -> ServiceResult:
        """homeassistant.turn_on/turn_off/toggle: the domain's own service for each entity.

        Entities whose domain lacks the service are skipped, as Home Assistant skips them.
        """
        if service not in CROSS_DOMAIN_SERVICES:
            offered = ", ".join(CROSS_DOMAIN_SERVICES)
            raise ServiceNotFoundError(
                f"Action {CROSS_DOMAIN}.{service} not found; the twin offers: {offered}"
            )
        entity_ids = (
            list(self.entities)
            if selection.everything
            else [
                *selection.explicit,
                *selection.indirect,
            ]
        )
        by_domain: dict[str, list[EntityEntry]] = {}
        for entity_id in entity_ids:
            entry = self.entities[entity_id]
            by_domain.setdefault(entry.domain, []).append(entry)
        data = _without_targets(fields)
        calls = []
        for domain, entries in sorted(by_domain.items()):
            handler = domain_of(domain).services.get(service)
            if handler is None:
                continue
            supported = [entry for entry in entries if handler.supported_by(entry)]
            calls.append((handler, supported, _validate(handler.schema, data, domain, service)))
        return self._apply(calls)

    # --- acting as Home Assistant does (strict=False) ------------------------------------------

    def _call_as_home_assistant(
        self, domain: str, service: str, fields: dict[str, Any]
    ) -> ServiceResult:
        if domain == CROSS_DOMAIN:
            return self._call_across_domains_as_home_assistant(service, fields)
        outcome = self._entity_call_as_home_assistant(domain, service, fields)
        if outcome.error is not None:
            raise outcome.error
        return outcome.result

    def _entity_call_as_home_assistant(
        self, domain: str, service: str, fields: dict[str, Any]
    ) -> _Outcome:
        """One domain's service, entity by entity, as Home Assistant's entity_service_call.

        Raises what Home Assistant raises before any entity is reached.
        """
        handler = self._service(domain, service)
        target = {key: fields[key] for key in TARGET_KEYS if key in fields}
        if not target:
            raise InvalidServiceDataError(
                f"{domain}.{service} needs a target: entity_id, device_id, area_id or floor_id"
            )
        target = _validate(TARGET_SCHEMA, target, domain, service)
        service_data = _validate(handler.schema, _without_targets(fields), domain, service)
        selection = select(self, target, strict=False)
        if selection.everything:
            candidates: Iterable[str] = [
                entity_id for entity_id, entry in self.entities.items() if entry.domain == domain
            ]
        else:
            candidates = self._home_assistant_order(
                domain, {*selection.explicit, *selection.indirect}
            )
        entries = []
        for entity_id in candidates:
            entry = self.entities[entity_id]
            if handler.supported_by(entry):
                entries.append(entry)
            elif entity_id in selection.explicit:
                raise ServiceNotSupportedError(
                    f"Entity {entity_id} does not support action {domain}.{handler.name}"
                )
        applied: list[str] = []
        changed: list[State] = []
        error: TwinError | None = None
        for entry in entries:
            draft = EntityDraft.of(entry, self.states[entry.entity_id])
            try:
                handler.handler(draft, service_data)
            except TwinError as err:
                error = error or err
                continue
            applied.append(entry.entity_id)
            if (new := self._commit(draft)) is not None:
                changed.append(new)
        return _Outcome(ServiceResult(tuple(applied), tuple(changed)), error, len(entries) < 2)

    def _home_assistant_order(self, domain: str, referenced: set[str]) -> set[str]:
        """Home Assistant's list of the entities to call: `referenced.intersection(entities)`,
        which adds the domain's entities, in the order they were added, to a new set."""
        ordered: set[str] = set()
        for entity_id, entry in self.entities.items():
            if entry.domain == domain and entity_id in referenced:
                ordered.add(entity_id)
        return ordered

    def _call_across_domains_as_home_assistant(
        self, service: str, fields: dict[str, Any]
    ) -> ServiceResult:
        """homeassistant.turn_on/turn_off/toggle as Home Assistant's homeassistant integration."""
        if service not in CROSS_DOMAIN_SERVICES:
            offered = ", ".join(CROSS_DOMAIN_SERVICES)
            raise ServiceNotFoundError(
                f"Action {CROSS_DOMAIN}.{service} not found; the twin offers: {offered}"
            )
        fields = _validate(CROSS_DOMAIN_SCHEMA, fields, CROSS_DOMAIN, service)
        selection = select(self, fields, strict=False)
        referenced = sorted({*selection.explicit, *selection.indirect})
        outcomes = []
        for domain, ids in itertools.groupby(referenced, lambda eid: eid.partition(".")[0]):
            entity_domain = DOMAINS.get(domain)
            if entity_domain is None or service not in entity_domain.services:
                continue
            try:
                outcome = self._entity_call_as_home_assistant(
                    domain, service, {**fields, ATTR_ENTITY_ID: list(ids)}
                )
            except TwinError as err:
                outcome = _Outcome(ServiceResult((), ()), err)
            outcomes.append(outcome)
        errors = [(outcome.error, outcome.early) for outcome in outcomes if outcome.error]
        if errors:
            raise next((error for error, early in errors if early), errors[0][0])
        return ServiceResult(
            tuple(eid for outcome in outcomes for eid in outcome.result.entity_ids),
            tuple(state for outcome in outcomes for state in outcome.result.changed),
        )

    def _apply(
        self, calls: Iterable[tuple[Service, list[EntityEntry], dict[str, Any]]]
    ) -> ServiceResult:
        """Apply every call to drafts first; commit only when all of them succeeded."""
        drafts = []
        for handler, entries, data in calls:
            for entry in entries:
                draft = EntityDraft.of(entry, self.states[entry.entity_id])
                handler.handler(draft, data)
                drafts.append(draft)
        changed = tuple(new for draft in drafts if (new := self._commit(draft)) is not None)
        return ServiceResult(tuple(draft.entity_id for draft in drafts), changed)

    def _commit(self, draft: EntityDraft) -> State | None:
        """Write a draft as the entity's new state; None when nothing visible or hidden changed."""
        old = self.states[draft.entity_id]
        same_state = draft.state == old.state
        same_attributes = draft.attributes == old.attributes
        if same_state and same_attributes and draft.hidden == old.hidden:
            return None
        changed_at = old.last_changed if same_state else self.now
        updated_at = old.last_updated if same_state and same_attributes else self.now
        new = State(
            draft.entity_id, draft.state, draft.attributes, changed_at, updated_at, draft.hidden
        )
        self.states[draft.entity_id] = new
        return None if same_state and same_attributes else new


def _entity_attributes(entry: EntityEntry) -> dict[str, Any]:
    """The attributes Home Assistant's entity layer adds to every state."""
    attributes: dict[str, Any] = {}
    if entry.unit_of_measurement is not None:
        attributes["unit_of_measurement"] = entry.unit_of_measurement
    if entry.device_class is not None:
        attributes["device_class"] = entry.device_class
    attributes["friendly_name"] = entry.name
    # Domains with feature flags show them even when none is set, as their HA entity classes do.
    if entry.supported_features or domain_of(entry.domain).features:
        attributes["supported_features"] = entry.supported_features
    return attributes


def _without_targets(fields: dict[str, Any]) -> dict[str, Any]:
    data = {key: value for key, value in fields.items() if key not in TARGET_KEYS}
    # Home Assistant's entity services drop the frontend's `metadata` dict (any other is invalid).
    if "metadata" in data and isinstance(data["metadata"], dict):
        del data["metadata"]
    return data


def _validate(schema: Any, data: dict[str, Any], domain: str, service: str) -> dict[str, Any]:
    try:
        validated: dict[str, Any] = schema(data)
    except vol.Invalid as err:
        raise InvalidServiceDataError(f"Invalid data for {domain}.{service}: {err}") from None
    return validated


def _unknown_entity(entity_id: str) -> str:
    return f"Entity {entity_id} not found; list the home's entities to find its id"
