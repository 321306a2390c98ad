"""A home: registries, entity states on a simulation clock, and Home Assistant's service layer."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import voluptuous as vol

from . import physics
from .domains import DOMAINS, check_entity, domain_of
from .errors import (
    HomeDefinitionError,
    InvalidEntityStateError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TwinError,
)
from .outdoor import ConstantWeather, OutdoorSource
from .registry import Area, Device, EntityEntry, Floor
from .room import RoomClimate
from .service import EntityDraft, Service
from .state import State
from .targets import Selection, entity_not_found, resolve, select
from .validation import ATTR_ENTITY_ID, TARGET_KEYS, entity_ids, valid_entity_id, validated

# 2026-01-01T00:00:00Z: a fixed default start keeps every run reproducible.
DEFAULT_START = 1767225600.0
# The attributes Home Assistant's entity layer adds to every state (_entity_attributes).
ENTITY_ATTRIBUTES = ("friendly_name", "supported_features", "device_class", "unit_of_measurement")
CROSS_DOMAIN = "homeassistant"
CROSS_DOMAIN_SERVICES = ("turn_on", "turn_off", "toggle")

# homeassistant.turn_on/turn_off/toggle's schema: entity ids (neither all nor none), anything else.
CROSS_DOMAIN_SCHEMA = vol.Schema({vol.Optional(ATTR_ENTITY_ID): entity_ids}, extra=vol.ALLOW_EXTRA)


@dataclass(frozen=True, slots=True)
class ServiceResult:
    """What a service call did: the entities it acted on and the new states of those it changed."""

    entity_ids: tuple[str, ...]
    changed: tuple[State, ...]


@dataclass(slots=True)
class ResolvedCall:
    """A service call with its target resolved: the call's fields (data and target keys
    together, as Home Assistant takes them), the entities they target, and the mode.

    Like Selection, Plan and Step, not frozen but never changed: every call builds them, calls
    are the inner loop of RL, and frozen dataclasses take several times longer to build."""

    domain: str
    service: str
    fields: dict[str, Any]
    selection: Selection
    strict: bool = True


@dataclass(slots=True)
class Step:
    """One domain's service, the entities it acts on in the order it reaches them, and its
    validated data; in a lenient cross-domain call, `error` is the error that this domain's call
    raised before reaching any entity, while the other domains go ahead."""

    service: Service
    entries: list[EntityEntry]
    data: dict[str, Any]
    error: TwinError | None = None


@dataclass(slots=True)
class Plan:
    """What a call does, step by step, and whether it is applied atomically (strict)."""

    steps: tuple[Step, ...]
    strict: bool


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A saved moment of a home. States and rooms are immutable, so saving copies references."""

    states: Mapping[str, State]
    rooms: Mapping[str, RoomClimate]
    now: float


class Home:
    """A home that behaves like Home Assistant: registries, states and entity services.

    A service call is resolved, planned, then applied. Strict (the default), it is validated
    completely before anything changes, and a call on several entities changes all of them or
    none; lenient (`strict=False`), the same path does what Home Assistant does: it skips what it
    cannot find and applies the call entity by entity.
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

    def rename(self, areas: Mapping[str, str], entities: Mapping[str, str]) -> None:
        """Give areas and entities new names, as Home Assistant's registries' updates do: an
        entity's state takes the new friendly_name (and a new last_updated, now). A name of
        an unknown area or entity is an error, and nothing is renamed."""
        for area_id in areas:
            self._check_known(self.areas, area_id, "area")
        for entity_id in entities:
            self._check_known(self.entities, entity_id, "entity")
        for area_id, name in areas.items():
            self.areas[area_id] = replace(self.areas[area_id], name=name)
        for entity_id, name in entities.items():
            self.entities[entity_id] = replace(self.entities[entity_id], name=name)
            state = self.states[entity_id]
            attributes = {**state.attributes, "friendly_name": name}
            self.states[entity_id] = replace(state, attributes=attributes, last_updated=self.now)

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
            raise entity_not_found(entity_id) from None

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
        """Call a Home Assistant entity service, e.g. `light.turn_on`: resolve, plan, apply.

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
        return self.apply(self.plan(self.resolve(domain, service, data, target, strict=strict)))

    def resolve(
        self,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        *,
        strict: bool = True,
    ) -> ResolvedCall:
        """A call with its target resolved to entities, once: what an auditor judges, by the
        entities it reaches, before `plan` checks the rest of it.

        Strict, the target comes first (its errors before the service's); lenient, the service
        is looked up first, as Home Assistant does.
        """
        fields = {**(data or {}), **(target or {})}
        if strict:
            selection = resolve(self, fields, domain, service)
            return ResolvedCall(domain, service, fields, selection, strict)
        domain, service = domain.lower(), service.lower()
        if domain != CROSS_DOMAIN:
            self._service(domain, service)
            selection = resolve(self, fields, domain, service, strict=False)
            return ResolvedCall(domain, service, fields, selection, strict)
        _check_cross_domain(service)
        fields = validated(CROSS_DOMAIN_SCHEMA, fields, CROSS_DOMAIN, service)
        return ResolvedCall(domain, service, fields, select(self, fields, strict=False), strict)

    def plan(self, call: ResolvedCall) -> Plan:
        """What a resolved call does: each service it runs, on which entities, with what data.

        Raises the TwinError that the call raises before any entity changes; changes nothing.
        """
        if not call.selection.named:
            raise InvalidServiceDataError(
                f"{call.domain}.{call.service} needs a target: entity_id, device_id, area_id or "
                "floor_id"
            )
        if call.domain == CROSS_DOMAIN:
            if call.strict:
                return self._plan_across_domains(call)
            return self._plan_across_domains_as_home_assistant(call)
        handler = self._service(call.domain, call.service)
        data = validated(handler.schema, _without_targets(call.fields), call.domain, call.service)
        if call.strict:
            entries = self._entries(call.domain, handler, call.selection)
        else:
            entries = self._entries_as_home_assistant(call.domain, handler, call.selection)
        return Plan((Step(handler, entries, data),), call.strict)

    def apply(self, plan: Plan) -> ServiceResult:
        """Carry out a plan. Strict, every entity's change is drafted first and all are committed
        only when every one succeeded; lenient, each entity changes on its own, as in Home
        Assistant, and the first error that Home Assistant would raise is raised afterwards."""
        if not plan.strict:
            return self._apply_as_home_assistant(plan)
        states = self.states
        drafts = []
        for step in plan.steps:
            for entry in step.entries:
                drafts.append(
                    _handle(step.service, entry, states[entry.entity_id], step.data, self.now)
                )
        changed = [new for draft in drafts if (new := self._commit(draft)) is not None]
        return ServiceResult(tuple([draft.entry.entity_id for draft in drafts]), tuple(changed))

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
            found = entity_domain.services[service]
        except KeyError:
            offered = ", ".join(entity_domain.services)
            raise ServiceNotFoundError(
                f"Action {domain}.{service} not found; {domain} offers: {offered}"
            ) from None
        if found.response_only:
            read = f": describe an entity to read its {entity_domain.contents}"
            raise ServiceValidationError(
                f"The action {domain}.{service} requires responses and must be called with "
                f"return_response=True, which the twin cannot answer"
                f"{read if entity_domain.contents else ''}"
            )
        return found

    def _entries(self, domain: str, handler: Service, selection: Selection) -> list[EntityEntry]:
        """The entities of `domain` that a strict call acts on.

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

    def _entries_as_home_assistant(
        self, domain: str, handler: Service, selection: Selection
    ) -> list[EntityEntry]:
        """The entities of `domain` that a lenient call acts on, in Home Assistant's order.

        Ids of no entity of the domain are skipped; a named entity must support the service.
        """
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
        return entries

    def _home_assistant_order(self, domain: str, referenced: set[str]) -> set[str]:
        """Home Assistant's list of the entities to call: `referenced.intersection(entities)`,
        which adds the domain's entities, in the order they were added, to a new set."""
        ordered: set[str] = set()
        for entity_id, entry in self.entities.items():
            if entry.domain == domain and entity_id in referenced:
                ordered.add(entity_id)
        return ordered

    def _plan_across_domains(self, call: ResolvedCall) -> Plan:
        """homeassistant.turn_on/turn_off/toggle, strict: the domain's own service for each
        entity, on every entity that supports it; domains without the service are skipped, as
        Home Assistant skips them."""
        _check_cross_domain(call.service)
        by_domain: dict[str, list[EntityEntry]] = {}
        for entity_id in call.selection.entity_ids(self):
            entry = self.entities[entity_id]
            by_domain.setdefault(entry.domain, []).append(entry)
        data = _without_targets(call.fields)
        steps = []
        for domain, entries in sorted(by_domain.items()):
            handler = domain_of(domain).services.get(call.service)
            if handler is None:
                continue
            supported = [entry for entry in entries if handler.supported_by(entry)]
            valid = validated(handler.schema, data, domain, call.service)
            steps.append(Step(handler, supported, valid))
        return Plan(tuple(steps), strict=True)

    def _plan_across_domains_as_home_assistant(self, call: ResolvedCall) -> Plan:
        """homeassistant.turn_on/turn_off/toggle, lenient: a call per domain with the service,
        naming its entities by id; a domain whose call fails before reaching an entity keeps its
        error as its step, for `apply` to weigh against the others'."""
        referenced = sorted({*call.selection.explicit, *call.selection.indirect})
        steps = []
        for domain, ids in itertools.groupby(referenced, lambda eid: eid.partition(".")[0]):
            handler = domain_of(domain).services.get(call.service)
            if handler is None:
                continue
            fields = {**call.fields, ATTR_ENTITY_ID: list(ids)}
            try:
                (step,) = self.plan(self.resolve(domain, call.service, fields, strict=False)).steps
            except TwinError as err:
                step = Step(handler, [], {}, err)
            steps.append(step)
        return Plan(tuple(steps), strict=False)

    def _apply_as_home_assistant(self, plan: Plan) -> ServiceResult:
        """Each entity takes the call on its own; then the first error to happen is raised: a
        step's that failed before reaching a second entity, else the first step's that failed."""
        applied: list[str] = []
        changed: list[State] = []
        errors: list[tuple[TwinError, bool]] = []
        for step in plan.steps:
            error = step.error
            if error is None:
                for entry in step.entries:
                    try:
                        draft = _handle(
                            step.service, entry, self.states[entry.entity_id], step.data, self.now
                        )
                    except TwinError as err:
                        error = error or err
                        continue
                    applied.append(entry.entity_id)
                    if (new := self._commit(draft)) is not None:
                        changed.append(new)
            if error is not None:
                errors.append((error, step.error is not None or len(step.entries) < 2))
        if errors:
            raise next((error for error, early in errors if early), errors[0][0])
        return ServiceResult(tuple(applied), tuple(changed))

    def _commit(self, draft: EntityDraft) -> State | None:
        """Write a draft as the entity's new state; None when nothing visible or hidden changed."""
        entity_id = draft.entry.entity_id
        old = self.states[entity_id]
        same_state = draft.state == old.state
        same_attributes = draft.attributes == old.attributes
        if same_state and same_attributes and draft.hidden == old.hidden:
            return None
        changed_at = old.last_changed if same_state else self.now
        updated_at = old.last_updated if same_state and same_attributes else self.now
        new = State(entity_id, draft.state, draft.attributes, changed_at, updated_at, draft.hidden)
        self.states[entity_id] = new
        return None if same_state and same_attributes else new


def _handle(
    service: Service, entry: EntityEntry, current: State, data: dict[str, Any], now: float
) -> EntityDraft:
    """The entity's draft after the service ran on it. A handler trusts the state it reads (the
    importers check it), so one that fails on an entity its domain cannot hold raises a typed
    InvalidEntityStateError naming the key instead; on a valid entity the failure is a bug, and
    propagates."""
    draft = EntityDraft.of(entry, current, now)
    try:
        service.handler(draft, data)
    except TwinError:
        raise
    except Exception as err:
        try:
            check_entity(entry, current)
        except HomeDefinitionError as problem:
            raise InvalidEntityStateError(
                f"{entry.entity_id} holds what no {entry.domain} can ({problem}), so "
                f"{entry.domain}.{service.name} cannot run on it; nothing changed. Fix its state "
                "in the home first"
            ) from err
        raise
    return draft


def _entity_attributes(entry: EntityEntry) -> dict[str, Any]:
    """The attributes Home Assistant's entity layer adds to every state."""
    attributes: dict[str, Any] = {}
    if entry.unit_of_measurement is not None:
        attributes["unit_of_measurement"] = entry.unit_of_measurement
    if entry.device_class is not None:
        attributes["device_class"] = entry.device_class
    attributes["friendly_name"] = entry.name  # these keys are ENTITY_ATTRIBUTES
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


def _check_cross_domain(service: str) -> None:
    if service not in CROSS_DOMAIN_SERVICES:
        offered = ", ".join(CROSS_DOMAIN_SERVICES)
        raise ServiceNotFoundError(
            f"Action {CROSS_DOMAIN}.{service} not found; the twin offers: {offered}"
        )
