"""Config flow for HomeFlow: each config entry is one virtual home."""

from __future__ import annotations

from typing import Any

import voluptuous as vol
from homeassistant.config_entries import ConfigFlow, ConfigFlowResult
from homeassistant.const import CONF_NAME
from homeassistant.util import slugify

from .const import DEFAULT_NAME, DOMAIN

STEP_USER_DATA_SCHEMA = vol.Schema({vol.Required(CONF_NAME, default=DEFAULT_NAME): str})


class HomeFlowConfigFlow(ConfigFlow, domain=DOMAIN):
    """Create a virtual home."""

    VERSION = 1

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for the home's name; the name identifies the home."""
        errors: dict[str, str] = {}
        if user_input is not None:
            name = user_input[CONF_NAME].strip()
            if any(char.isalnum() for char in name):
                await self.async_set_unique_id(slugify(name))
                self._abort_if_unique_id_configured()
                return self.async_create_entry(title=name, data={CONF_NAME: name})
            errors["base"] = "invalid_name"
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(STEP_USER_DATA_SCHEMA, user_input),
            errors=errors,
        )
