"""The HomeFlow integration: a virtual home as real Home Assistant entities."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import entity_platform
from homeassistant.helpers.entity_component import DATA_INSTANCES
from homeassistant.helpers.typing import ConfigType

from .const import DOMAIN, HELPER_DOMAINS, PLATFORMS, SUBENTRY_CONVERSATION
from .package import INSTALL_URL, MISSING  # before homeflow: puts the archive's copy on sys.path

if not MISSING:  # else only the config flow runs, to say what to install (package.py)
    from twin.errors import TwinError

    from .llm_api import async_register_llm_api
    from .registry import register_home, unregister_home
    from .services import async_setup_services
    from .virtual_home import VirtualHome, home_store

type HomeFlowConfigEntry = ConfigEntry[VirtualHome]

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the integration's actions and its LLM API, once for all homes."""
    if MISSING:  # its homes say why they cannot load (async_setup_entry)
        return True
    async_setup_services(hass)
    async_register_llm_api(hass)
    return True


async def async_setup_entry(hass: HomeAssistant, entry: HomeFlowConfigEntry) -> bool:
    """Set up a virtual home: its twin, its floors, areas and devices, then its entities."""
    if MISSING:
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="package_missing",
            translation_placeholders={"missing": ", ".join(MISSING), "url": INSTALL_URL},
        )
    try:
        virtual = await VirtualHome.async_load(hass, entry)
    except TwinError as err:
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="home_not_built",
            translation_placeholders={"error": str(err)},
        ) from err
    virtual.registry_ids = register_home(hass, entry, virtual.home, virtual.registry_ids)
    # Stored soon, not only at unload: Home Assistant stops without unloading (writing what is
    # due), and a setup that does not know these floors and areas would make them again.
    virtual.save_soon()
    entry.runtime_data = virtual
    agents = any(sub.subentry_type == SUBENTRY_CONVERSATION for sub in entry.subentries.values())
    await hass.config_entries.async_forward_entry_setups(
        entry, [*PLATFORMS, Platform.CONVERSATION] if agents else PLATFORMS
    )
    # Helpers and scripts join their own components, which have no config-entry platforms
    # (helper.py); the manifest's dependencies have set those up.
    for domain in HELPER_DOMAINS:
        await hass.data[DATA_INSTANCES][domain].async_setup_entry(entry)
    virtual.start_clock()
    return True


async def async_unload_entry(hass: HomeAssistant, entry: HomeFlowConfigEntry) -> bool:
    """Unload a virtual home, saving its state first; the clock stops before, or a tick would
    save it again later, even after the entry is removed."""
    entry.runtime_data.stop_clock()
    await entry.runtime_data.async_save_now()
    # The agents' platform as it was set up: agents added since then are not loaded yet.
    agents = any(
        platform.domain == Platform.CONVERSATION and platform.config_entry is entry
        for platform in entity_platform.async_get_platforms(hass, DOMAIN)
    )
    for domain in HELPER_DOMAINS:
        await hass.data[DATA_INSTANCES][domain].async_unload_entry(entry)
    return await hass.config_entries.async_unload_platforms(
        entry, [*PLATFORMS, Platform.CONVERSATION] if agents else PLATFORMS
    )


async def async_remove_entry(hass: HomeAssistant, entry: HomeFlowConfigEntry) -> None:
    """Forget a removed home: its stored state, and the floors and areas nothing else uses."""
    if MISSING:  # what it registered is read through the package; both stay until it is back
        return
    store = home_store(hass, entry.entry_id)
    if stored := await store.async_load():
        unregister_home(hass, entry.entry_id, stored["registry"])
    await store.async_remove()
