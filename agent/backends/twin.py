"""The twin backend: the tools run in-process on a twin Home (training, benchmarks, chat)."""

from __future__ import annotations

from typing import Any

from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.confirmation import Confirmation
from twin.home import Home
from twin.surface import FloorLayout, Result, TwinView, all_states, error, layout
from twin.tools import TOOL_SCHEMAS, run_tool


class TwinBackend:
    """Runs tool calls on `home`, judged by the auditor's `policy` and the conversation's
    `confirmation` of sensitive actions; `pyexec` can be left out."""

    def __init__(
        self, home: Home, policy: ActionPolicy = DEFAULT_POLICY, pyexec: bool = True
    ) -> None:
        self.home = home
        self.policy = policy
        self.confirmation = Confirmation()
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
        return run_tool(self.home, name, arguments, self.policy, self.confirmation)

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every entity's state as Home Assistant's state dict."""
        return all_states(TwinView(self.home))

    async def layout(self) -> tuple[FloorLayout, ...]:
        """The home's floors, areas and entities (twin.surface.layout)."""
        return layout(TwinView(self.home))
