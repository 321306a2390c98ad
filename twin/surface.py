"""The agent's read tools, written once for every backend: over a read-only view of a home.

list_entities, get_state, describe and the layout of the prompt read a `HomeView`: a home's
states, floors and areas, each entity's name and area, and its device manual. `TwinView` reads a
twin Home; `HomeAssistantView` reads Home Assistant's states and registries as its REST and
WebSocket APIs list them (which the in-Home Assistant backend builds from `hass` in the same
shape). The backends only fetch what a view holds, so a tool gives the same result on each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Protocol

from . import manual
from .domains import KEY_ATTRIBUTES
from .errors import EntityNotFoundError, InvalidServiceDataError, TargetNotFoundError, TwinError
from .home import ENTITY_ATTRIBUTES, Home
from .registry import Area, Device, EntityEntry, Floor
from .targets import entity_not_found

# A tool result, as JSON gives it: `{"success": False, "error": {...}}` on failure.
Result = dict[str, Any]
NO_AREA = "No area"
NO_FLOOR = "No floor"
# The keys of a state the tools give (Home Assistant's also has context, last_reported).
STATE_KEYS = ("entity_id", "state", "attributes", "last_changed", "last_updated")
# Home Assistant's registries as HomeAssistantView reads them: config/<kind>_registry/list.
REGISTRIES = ("floor", "area", "device", "entity")
NO_REGISTRIES: Mapping[str, Sequence[Mapping[str, Any]]] = MappingProxyType(
    dict.fromkeys(REGISTRIES, ())
)


@dataclass(frozen=True, slots=True)
class AreaLayout:
    """A room and its entities as (entity id, name) pairs; `area_id` None holds the entities
    that are in no area."""

    area_id: str | None
    name: str
    entities: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class FloorLayout:
    """A floor and its rooms; `floor_id` None holds the rooms that are on no floor."""

    floor_id: str | None
    name: str
    areas: tuple[AreaLayout, ...]


class StateView(Protocol):
    """An entity's state as the tools read it (a twin State has these)."""

    @property
    def entity_id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, Any]: ...

    def as_dict(self) -> Mapping[str, Any]:
        """The state as Home Assistant's REST API gives it, with ISO timestamps."""
        ...


class HomeView(Protocol):
    """What the read tools need of a home: its states, floors and areas, by id."""

    @property
    def states(self) -> Mapping[str, StateView]: ...

    @property
    def floors(self) -> Mapping[str, Floor]: ...

    @property
    def areas(self) -> Mapping[str, Area]: ...

    def name_of(self, state: StateView) -> str:
        """The entity's name, as list_entities shows it."""
        ...

    def area_of(self, entity_id: str) -> str | None:
        """The entity's area: its own, else its device's; None for none."""
        ...

    def manual(self, entity_id: str) -> Mapping[str, Any]:
        """The entity's device manual (twin.manual); a TwinError when there is none."""
        ...


def error(code: str, message: str) -> Result:
    """A failed tool call's result."""
    return {"success": False, "error": {"code": code, "message": message}}


def jsonable(value: Any) -> Any:
    """`value` as JSON gives it back: tuples become lists, unknown objects their repr."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item) for item in value]
    return repr(value)


# --- the read tools -----------------------------------------------------------------------------


def list_entities(
    home: HomeView, area: str | None = None, floor: str | None = None, domain: str | None = None
) -> Result:
    """The home's entities, sorted by id, each with its name, area, state and key attributes.

    `area` and `floor` take an id or a name (any case); an area holds only its own entities, not
    those of rooms nested in it, as in Home Assistant.
    """
    states, areas, area_of = home.states, home.areas, home.area_of
    try:
        area_id = resolve(areas, area, "area")
        floor_id = resolve(home.floors, floor, "floor")
    except TwinError as err:
        return error(err.code, str(err))
    entities = []
    for entity_id in sorted(states):
        if domain is not None and entity_id.partition(".")[0] != domain:
            continue
        in_area = area_of(entity_id)
        if area_id is not None and in_area != area_id:
            continue
        if floor_id is not None and (in_area is None or areas[in_area].floor_id != floor_id):
            continue
        entities.append(_compact(home, states[entity_id], in_area))
    return {"entities": entities}


def get_state(home: HomeView, entity_id: Any) -> Result:
    """An entity's state as Home Assistant's REST API gives it, with ISO timestamps."""
    try:
        state = _state(home, entity_id)
    except TwinError as err:
        return error(err.code, str(err))
    result: Result = jsonable(state.as_dict())
    return result


def describe(home: HomeView, entity_id: Any) -> Result:
    """The entity's device manual: the services it supports, their fields, ranges and options."""
    try:
        _state(home, entity_id)
        result: Result = jsonable(home.manual(entity_id))
    except TwinError as err:
        return error(err.code, str(err))
    return result


def all_states(home: HomeView) -> dict[str, Result]:
    """Every entity's state as get_state gives it, by entity id."""
    return {entity_id: jsonable(state.as_dict()) for entity_id, state in home.states.items()}


def compact(home: HomeView, state: StateView) -> Result:
    """An entity in a few words: id, name, area, state and its domain's key attributes."""
    return _compact(home, state, home.area_of(state.entity_id))


def resolve(items: Mapping[str, Area] | Mapping[str, Floor], wanted: Any, kind: str) -> str | None:
    """The id of the area or floor `wanted` names by id or by name (any case); None when not
    given, TargetNotFoundError when it names none."""
    if wanted is None:
        return None
    if isinstance(wanted, str):
        if wanted in items:
            return wanted
        for item_id, item in items.items():
            if item.name.casefold() == wanted.casefold():
                return item_id
    known = ", ".join(sorted(items)) or "none"
    raise TargetNotFoundError(f"No {kind} {wanted!r}; the home's {kind}s: {known}")


def layout(home: HomeView) -> tuple[FloorLayout, ...]:
    """The home's floors by level, their areas by name and the entities in each by id (for the
    prompt); entities in no area, and areas on no floor, come last."""
    states = home.states
    by_area: dict[str | None, list[tuple[str, str]]] = {}
    for entity_id in sorted(states):
        name = home.name_of(states[entity_id])
        by_area.setdefault(home.area_of(entity_id), []).append((entity_id, name))
    by_floor: dict[str | None, list[AreaLayout]] = {}
    for area in sorted(home.areas.values(), key=lambda a: (a.name, a.area_id)):
        entities = tuple(by_area.get(area.area_id, ()))
        by_floor.setdefault(area.floor_id, []).append(AreaLayout(area.area_id, area.name, entities))
    if None in by_area:
        by_floor.setdefault(None, []).append(AreaLayout(None, NO_AREA, tuple(by_area[None])))
    floors = sorted(home.floors.values(), key=lambda f: (f.level, f.name, f.floor_id))
    result = [
        FloorLayout(floor.floor_id, floor.name, tuple(by_floor.get(floor.floor_id, ())))
        for floor in floors
    ]
    if None in by_floor:
        result.append(FloorLayout(None, NO_FLOOR, tuple(by_floor[None])))
    return tuple(result)


def payload_error(target: Any, data: Any) -> Result | None:
    """The error for a call_service target or data that is no object; None when both are."""
    for name, value in (("target", target), ("data", data)):
        if value is not None and not isinstance(value, Mapping):
            return error(
                InvalidServiceDataError.code,
                f"{name} must be an object, got {type(value).__name__}",
            )
    return None


def _compact(home: HomeView, state: StateView, area: str | None) -> Result:
    entity_id = state.entity_id
    item: Result = {
        "entity_id": entity_id,
        "name": home.name_of(state),
        "area": area,
        "state": state.state,
    }
    attributes = state.attributes
    for key in KEY_ATTRIBUTES.get(entity_id.partition(".")[0], ()):
        if (value := attributes.get(key)) is not None:
            item[key] = jsonable(value)
    return item


def _state(home: HomeView, entity_id: Any) -> StateView:
    if not isinstance(entity_id, str):
        raise EntityNotFoundError(f"entity_id must be a string, got {type(entity_id).__name__}")
    state = home.states.get(entity_id)
    if state is None:
        raise entity_not_found(entity_id)
    return state


# --- the views ----------------------------------------------------------------------------------


class TwinView:
    """A twin Home as the read tools see it: its own registries, states and manuals."""

    __slots__ = ("_home", "area_of")

    def __init__(self, home: Home) -> None:
        self._home = home
        # The entity's area, or its device's: the home's own method, called once per entity.
        self.area_of: Callable[[str], str | None] = home.area_of

    @property
    def states(self) -> Mapping[str, StateView]:
        """The home's current states (a restore replaces the dict, so read it each time)."""
        return self._home.states

    @property
    def floors(self) -> Mapping[str, Floor]:
        """The floor registry."""
        return self._home.floors

    @property
    def areas(self) -> Mapping[str, Area]:
        """The area registry."""
        return self._home.areas

    def name_of(self, state: StateView) -> str:
        """The entity registry's name."""
        return self._home.entities[state.entity_id].name

    def manual(self, entity_id: str) -> Mapping[str, Any]:
        """twin.manual's description of the entity."""
        return manual.describe(self._home, entity_id)


class HomeAssistantState:
    """A state dict as Home Assistant's REST API gives it, read as a twin State is."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._raw = raw

    @property
    def entity_id(self) -> str:
        """The entity's id."""
        entity_id: str = self._raw["entity_id"]
        return entity_id

    @property
    def state(self) -> str:
        """The state's value."""
        state: str = self._raw["state"]
        return state

    @property
    def attributes(self) -> Mapping[str, Any]:
        """The state's attributes."""
        attributes: Mapping[str, Any] = self._raw["attributes"]
        return attributes

    def as_dict(self) -> dict[str, Any]:
        """The state with the keys a twin State gives."""
        return {key: self._raw[key] for key in STATE_KEYS}


class HomeAssistantView:
    """Home Assistant's `states` and `registries` (REGISTRIES, as the WebSocket API lists them;
    only the fields the tools read are needed) as the read tools see them; `held` is what some
    entities hold that their state does not show, by entity id, as the twin keeps it in memory
    (a to-do list's {"items": [...]}, from the service twin.domains.responder names)."""

    def __init__(
        self,
        states: Iterable[Mapping[str, Any]],
        registries: Mapping[str, Sequence[Mapping[str, Any]]] = NO_REGISTRIES,
        held: Mapping[str, Mapping[str, Any]] = MappingProxyType({}),
    ) -> None:
        self.states: dict[str, HomeAssistantState] = {
            raw["entity_id"]: HomeAssistantState(raw) for raw in states
        }
        self.floors = {
            f["floor_id"]: Floor(f["floor_id"], f["name"], f["level"] or 0)
            for f in registries["floor"]
        }
        self.areas = {
            a["area_id"]: Area(a["area_id"], a["name"], a["floor_id"]) for a in registries["area"]
        }
        self.devices = {
            d["id"]: Device(
                d["id"], d["name"] or d["id"], d["manufacturer"], d["model"], d["area_id"]
            )
            for d in registries["device"]
        }
        self._entries = {entry["entity_id"]: entry for entry in registries["entity"]}
        self.held = held

    def name_of(self, state: StateView) -> str:
        """The state's friendly name, else its id."""
        name: str = state.attributes.get("friendly_name", state.entity_id)
        return name

    def area_of(self, entity_id: str) -> str | None:
        """The registered entity's own area, else its device's; None for an unregistered one."""
        entry = self._entries.get(entity_id)
        if entry is None:
            return None
        device = self.devices.get(entry["device_id"]) if entry["device_id"] else None
        area: str | None = entry["area_id"] or (device.area_id if device else None)
        return area

    def device_of(self, entity_id: str) -> str | None:
        """The registered entity's device id; None for an unregistered entity or none."""
        device: str | None = self._entries.get(entity_id, {}).get("device_id")
        return device

    def manual(self, entity_id: str) -> Mapping[str, Any]:
        """twin.manual's description of a twin of the entity (twin_of)."""
        try:
            home = self.twin_of(entity_id)
        except TwinError as err:  # a domain the twin does not model
            raise type(err)(f"No manual for {entity_id}: {err}") from None
        return manual.describe(home, entity_id)

    def twin_of(self, entity_id: str) -> Home:
        """A twin home of one entity, its device and area (for the manual, and for the auditor to
        judge a call on it); a TwinError for a domain the twin does not model."""
        state = self.states[entity_id]
        entry: Mapping[str, Any] = self._entries.get(entity_id, {})
        device = self.devices.get(entry.get("device_id") or "")
        attributes = dict(state.attributes)
        # The manual reads only static attributes (ranges, option lists) from the capabilities.
        own = {key: value for key, value in attributes.items() if key not in ENTITY_ATTRIBUTES}
        area_id = entry.get("area_id") or (device.area_id if device else None)
        home = Home()
        if area_id is not None:
            home.add_area(Area(area_id, area_id))
        if device is not None:
            home.add_device(
                Device(
                    device.device_id,
                    device.name,
                    device.manufacturer,
                    device.model,
                    device.area_id if device.area_id == area_id else None,
                )
            )
        home.add_entity(
            EntityEntry(
                entity_id=entity_id,
                name=attributes.get("friendly_name", entity_id),
                device_id=device.device_id if device else None,
                area_id=entry.get("area_id"),
                device_class=attributes.get("device_class"),
                unit_of_measurement=attributes.get("unit_of_measurement"),
                supported_features=attributes.get("supported_features") or 0,
                capabilities=own,
            ),
            state.state,
            own,
        )
        if entity_id in self.held:
            home.states[entity_id] = replace(home.states[entity_id], hidden=self.held[entity_id])
        return home
