"""The twin backend: the tools run in-process on a twin Home (training, benchmarks, chat)."""

from __future__ import annotations

from typing import Any

from twin.auditor import DEFAULT_POLICY, Policy
from twin.home import Home
from twin.tools import TOOL_SCHEMAS, error, jsonable, run_tool

from . import AreaLayout, FloorLayout, Result

NO_AREA = "No area"
NO_FLOOR = "No floor"


class TwinBackend:
    """Runs tool calls on `home`, judged by the auditor's `policy`; `pyexec` can be left out."""

    def __init__(self, home: Home, policy: Policy = DEFAULT_POLICY, pyexec: bool = True) -> None:
        self.home = home
        self.policy = policy
        self._schemas = [
            schema for schema in TOOL_SCHEMAS if pyexec or schema["function"]["name"] != "pyexec"
        ]

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools, in the OpenAI tools format."""
        return list(self._schemas)

    async def run_tool(self, name: str, arguments: dict[str, Any]) -> Result:
        """Run one tool call on the twin."""
        names = [schema["function"]["name"] for schema in self._schemas]
        if name not in names:
            return error("unknown_tool", f"No tool {name!r}; the tools are: {', '.join(names)}")
        return run_tool(self.home, name, arguments, self.policy)

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every entity's state as Home Assistant's state dict."""
        return {eid: jsonable(state.as_dict()) for eid, state in self.home.states.items()}

    async def layout(self) -> tuple[FloorLayout, ...]:
        """Floors by level, areas by name, entities by id, from the home's registries."""
        home = self.home
        by_area: dict[str | None, list[tuple[str, str]]] = {}
        for entity_id in sorted(home.entities):
            name = home.entities[entity_id].name
            by_area.setdefault(home.area_of(entity_id), []).append((entity_id, name))
        by_floor: dict[str | None, list[AreaLayout]] = {}
        for area in sorted(home.areas.values(), key=lambda a: (a.name, a.area_id)):
            entities = tuple(by_area.get(area.area_id, ()))
            by_floor.setdefault(area.floor_id, []).append(
                AreaLayout(area.area_id, area.name, entities)
            )
        if None in by_area:
            by_floor.setdefault(None, []).append(AreaLayout(None, NO_AREA, tuple(by_area[None])))
        floors = sorted(home.floors.values(), key=lambda f: (f.level, f.name, f.floor_id))
        layout = [
            FloorLayout(floor.floor_id, floor.name, tuple(by_floor.get(floor.floor_id, ())))
            for floor in floors
        ]
        if None in by_floor:
            layout.append(FloorLayout(None, NO_FLOOR, tuple(by_floor[None])))
        return tuple(layout)
