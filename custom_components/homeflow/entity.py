"""The base of every HomeFlow entity: a thin adapter over one twin entity."""

from __future__ import annotations

from typing import Any, override

from homeassistant.const import EntityCategory
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity

from twin.catalog import load_catalog, slugify
from twin.registry import Device, EntityEntry
from twin.state import State

from .const import DOMAIN
from .registry import area_ids, device_identifier, entity_unique_id
from .virtual_home import VirtualHome


def catalog_key(entry: EntityEntry, device: Device) -> str | None:
    """The catalog key of a device type's named entity ("power"), which names its translation;
    None for a device's main entity and for entities that are not the catalog's (imported ones)."""
    device_type = load_catalog().get(device.device_type or "")
    if device_type is None:
        return None
    for spec in device_type.entities:
        if (
            spec.key
            and f"{spec.domain}.{spec.object_id(slugify(device.name))}" == entry.entity_id
            and spec.friendly_name(device.name) == entry.name
        ):
            return spec.key
    return None


def time_shown(state: State) -> str | None:
    """A state that is a time (a button's last press), as Home Assistant writes it: None (its
    `unknown`) before the first."""
    return None if state.state == "unknown" else state.state


class HomeFlowEntity(Entity):
    """Reads its state from the twin and hands every action to it.

    Home Assistant's platform layer has validated and normalised a service call before the
    entity's method runs; the method passes the normalised data to the twin's own service, and the
    twin tells the entity (and any other entity it changed) to write its state.
    """

    _attr_should_poll = False
    _attr_has_entity_name = True

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror the twin entity `entry` of `virtual`."""
        self.virtual = virtual
        self.twin_id = entry.entity_id
        self._attr_unique_id = entity_unique_id(virtual.entry, entry.entity_id)
        # Only a new entity is placed in its area: later, where it is is the user's choice.
        self._new = (
            er.async_get(virtual.hass).async_get_entity_id(
                entry.domain, DOMAIN, self._attr_unique_id
            )
            is None
        )
        # The twin's id, so that an agent sees the same ids in both; a second home with the same
        # ids gets Home Assistant's usual "_2" suffix.
        self.entity_id = entry.entity_id
        self._attr_device_class = entry.device_class  # type: ignore[assignment]
        if entry.entity_category is not None:
            self._attr_entity_category = EntityCategory(entry.entity_category)
        device = virtual.home.devices.get(entry.device_id) if entry.device_id else None
        if device is None:
            self._attr_has_entity_name = False
            self._attr_name = entry.name
        else:
            self._attr_device_info = DeviceInfo(
                identifiers={device_identifier(virtual.entry, device.device_id)}
            )
            if key := catalog_key(entry, device):
                self._attr_translation_key = key
            else:
                self._attr_name = entry.name.removeprefix(device.name).strip() or None

    @property
    def twin(self) -> State:
        """The twin entity's current state."""
        return self.virtual.home.states[self.twin_id]

    @property
    def attribute(self) -> dict[str, Any]:
        """The twin entity's state attributes."""
        return self.twin.attributes

    @override
    async def async_added_to_hass(self) -> None:
        """Write the state whenever the twin changes this entity; place a new entity that has an
        area of its own (not its device's) there, so that area targets reach it as in the twin."""
        self.async_on_remove(self.virtual.listen(self.twin_id, self.async_write_ha_state))
        area_id = self.virtual.home.entities[self.twin_id].area_id
        if area_id is not None and self._new:
            er.async_get(self.hass).async_update_entity(
                self.entity_id, area_id=area_ids(self.virtual.registry_ids)[area_id]
            )

    def call(self, service: str, **data: Any) -> None:
        """Apply one of the domain's services to the twin entity."""
        self.virtual.call(self.twin_id.partition(".")[0], service, self.twin_id, data)
