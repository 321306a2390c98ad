"""Config flow for HomeFlow: each config entry is one virtual home, generated or imported."""

from __future__ import annotations

from typing import Any

import voluptuous as vol
from homeassistant.config_entries import (
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    OptionsFlowWithReload,
)
from homeassistant.const import CONF_NAME
from homeassistant.core import callback
from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
)
from homeassistant.util import slugify

from twin.errors import TwinError
from twin.weather import cities

from .const import (
    CONF_CITY,
    CONF_HOME,
    CONF_HOME_TYPE,
    CONF_PHYSICS,
    CONF_SEED,
    CONF_SIZE,
    CONF_SOURCE,
    CONF_SPEED,
    CONF_TICK,
    DEFAULT_NAME,
    DEFAULT_PHYSICS,
    DEFAULT_SPEED,
    DEFAULT_TICK,
    DOMAIN,
    HOME_TYPES,
    SIZES,
    SOURCE_GENERATE,
    SOURCE_IMPORT,
)
from .virtual_home import build_home

GENERATE_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_NAME, default=DEFAULT_NAME): str,
        vol.Required(CONF_SEED, default=0): NumberSelector(
            NumberSelectorConfig(min=0, max=2**31 - 1, step=1, mode=NumberSelectorMode.BOX)
        ),
        vol.Optional(CONF_HOME_TYPE): SelectSelector(
            SelectSelectorConfig(options=HOME_TYPES, translation_key=CONF_HOME_TYPE)
        ),
        vol.Optional(CONF_SIZE): SelectSelector(
            SelectSelectorConfig(options=SIZES, translation_key=CONF_SIZE)
        ),
        vol.Optional(CONF_CITY): SelectSelector(
            SelectSelectorConfig(options=sorted(cities()), mode=SelectSelectorMode.DROPDOWN)
        ),
    }
)
IMPORT_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_NAME, default=DEFAULT_NAME): str,
        vol.Required(CONF_HOME): TextSelector(TextSelectorConfig(multiline=True)),
    }
)


class HomeFlowConfigFlow(ConfigFlow, domain=DOMAIN):
    """Create a virtual home."""

    VERSION = 1

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> HomeFlowOptionsFlow:
        """How the home's simulation runs."""
        return HomeFlowOptionsFlow()

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Generate a home or import one."""
        return self.async_show_menu(step_id="user", menu_options=[SOURCE_GENERATE, "import_home"])

    async def async_step_generate(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Generate a home with HomeMaker from a seed and optional type, size and city."""
        if user_input is not None:
            user_input = {**user_input, CONF_SEED: int(user_input[CONF_SEED])}
        return await self._async_create_home(SOURCE_GENERATE, GENERATE_SCHEMA, user_input)

    async def async_step_import_home(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Import a home file or a Home Assistant snapshot (pasted as text)."""
        return await self._async_create_home(SOURCE_IMPORT, IMPORT_SCHEMA, user_input)

    async def _async_create_home(
        self,
        source: str,
        schema: vol.Schema,
        user_input: dict[str, Any] | None,
    ) -> ConfigFlowResult:
        """Check the name and that the home builds, then create the entry."""
        errors: dict[str, str] = {}
        placeholders = {"error": ""}
        if user_input is not None:
            data = {CONF_SOURCE: source, **user_input}
            name = data.pop(CONF_NAME).strip()
            if not any(char.isalnum() for char in name):
                errors[CONF_NAME] = "invalid_name"
            else:
                await self.async_set_unique_id(slugify(name))
                self._abort_if_unique_id_configured()
                try:
                    await self.hass.async_add_executor_job(build_home, data)
                except TwinError as err:
                    errors["base"] = "invalid_home"
                    placeholders["error"] = str(err)
                else:
                    return self.async_create_entry(title=name, data=data)
        return self.async_show_form(
            step_id="import_home" if source == SOURCE_IMPORT else source,
            data_schema=self.add_suggested_values_to_schema(schema, user_input),
            errors=errors,
            description_placeholders=placeholders,
        )


class HomeFlowOptionsFlow(OptionsFlowWithReload):
    """Simulation options: physics on or off, its speed and its tick."""

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and save the options."""
        if user_input is not None:
            return self.async_create_entry(data=user_input)
        options = self.config_entry.options
        schema = vol.Schema(
            {
                vol.Required(
                    CONF_PHYSICS, default=options.get(CONF_PHYSICS, DEFAULT_PHYSICS)
                ): bool,
                vol.Required(CONF_SPEED, default=options.get(CONF_SPEED, DEFAULT_SPEED)): vol.All(
                    vol.Coerce(float), vol.Range(min=0.1, max=3600)
                ),
                vol.Required(CONF_TICK, default=options.get(CONF_TICK, DEFAULT_TICK)): vol.All(
                    vol.Coerce(int), vol.Range(min=1, max=3600)
                ),
            }
        )
        return self.async_show_form(step_id="init", data_schema=schema)
