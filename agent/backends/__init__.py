"""Where the agent's tools run: one protocol, three backends (twin, Home Assistant, inside HA)."""

from __future__ import annotations

from typing import Any, Protocol

from twin.confirmation import Confirmation
from twin.surface import FloorLayout, Result


class Backend(Protocol):
    """The five tools of DESIGN.md, with the same JSON schemas and results on every backend.

    `confirmation` is the conversation's confirmation of sensitive actions, which the backend's
    auditor reads and notes; the episode hands it each user message (twin.confirmation).
    """

    confirmation: Confirmation

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools this backend offers, in the OpenAI tools format."""
        ...

    async def run_tool(self, name: str, arguments: dict[str, Any]) -> Result:
        """Run one tool call; bad input gives an error result, never an exception."""
        ...

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every entity's state as Home Assistant's state dict, by entity id (for the prompt and
        the verifier's view)."""
        ...

    async def layout(self) -> tuple[FloorLayout, ...]:
        """The home's floors, lowest first, their areas and the entities in each (for the
        prompt); entities in no area, and areas on no floor, come last."""
        ...
