"""The base of the entities a virtual home adds to Home Assistant's helper components.

input_boolean, input_number, input_select and script have no config-entry platforms: their
components make entities from YAML and storage collections, and register the domain's actions on
their EntityComponent. A home's helpers join that component as entity platforms join theirs
(EntityComponent.async_setup_entry, what forwarding a config entry calls for light or switch):
a `homeflow` platform per domain (HELPER_DOMAINS), tied to the config entry, so that the domain's
own actions, schemas and checks reach them, their registry entries go with the entry, and
unloading the entry takes them away; nothing is written to the helpers' storage. The manifest's
`dependencies` set those components up first, with the user's own configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, override

from .entity import HomeFlowEntity


class HomeFlowHelper(HomeFlowEntity):
    """A twin helper or script: no device; it shows the twin's icon and the attributes of its
    domain's entity (`EXTRA`) that the twin holds."""

    EXTRA: tuple[str, ...] = ()

    @property
    @override
    def icon(self) -> str | None:
        """The twin's icon, if it has one."""
        return self.attribute.get("icon")

    @property
    @override
    def extra_state_attributes(self) -> Mapping[str, Any]:
        """What the domain's entity adds to its state (editable, initial...), as the twin has it."""
        return {key: self.attribute[key] for key in self.EXTRA if key in self.attribute}
