"""Config flow for HomeFlow: each config entry is one virtual home, generated or imported."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, override

import aiohttp
import probatio
from homeassistant.config_entries import (
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    ConfigSubentryFlow,
    OptionsFlowWithReload,
    SubentryFlowResult,
)
from homeassistant.const import (
    CONF_API_KEY,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_NAME,
    CONF_PROMPT,
    CONF_URL,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import llm
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TemplateSelector,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.util import slugify

from .const import (
    CONF_AREAS,
    CONF_CITY,
    CONF_CONFIRM,
    CONF_FLOORS,
    CONF_HOME,
    CONF_HOME_TYPE,
    CONF_MAX_TOOL_ROUNDS,
    CONF_MODEL_PATH,
    CONF_PHYSICS,
    CONF_SEED,
    CONF_SEED_TIME,
    CONF_SIZE,
    CONF_SOURCE,
    CONF_SPEED,
    CONF_TICK,
    CONF_TIMEOUT,
    DEFAULT_CONFIRM,
    DEFAULT_CONVERSATION_NAME,
    DEFAULT_MAX_TOOL_ROUNDS,
    DEFAULT_NAME,
    DEFAULT_PHYSICS,
    DEFAULT_SPEED,
    DEFAULT_TICK,
    DEFAULT_TIMEOUT,
    DOMAIN,
    HOME_TYPES,
    HOMEFLOW_LLM_API,
    MAX_SIMULATED_PER_TICK,
    SIZES,
    SOURCE_GENERATE,
    SOURCE_IMPORT,
    SUBENTRY_CONVERSATION,
)
from .package import INSTALL_URL, MISSING

if not MISSING:  # else the flow only says what to install (package.py)
    from twin.errors import TwinError
    from twin.home import Home
    from twin.weather import cities

    from .llm_api import DEFAULT_PROMPT
    from .registry import same_named
    from .virtual_home import build_home, hass_now

GENERATE_SCHEMA = probatio.Schema(
    {
        probatio.Required(CONF_NAME, default=DEFAULT_NAME): str,
        probatio.Required(CONF_SEED, default=0): NumberSelector(
            NumberSelectorConfig(min=0, max=2**31 - 1, step=1, mode=NumberSelectorMode.BOX)
        ),
        probatio.Optional(CONF_HOME_TYPE): SelectSelector(
            SelectSelectorConfig(options=HOME_TYPES, translation_key=CONF_HOME_TYPE)
        ),
        probatio.Optional(CONF_SIZE): SelectSelector(
            SelectSelectorConfig(options=SIZES, translation_key=CONF_SIZE)
        ),
        probatio.Optional(CONF_CITY): SelectSelector(
            SelectSelectorConfig(
                options=[] if MISSING else sorted(cities()), mode=SelectSelectorMode.DROPDOWN
            )
        ),
        probatio.Required(CONF_SEED_TIME, default=False): bool,
    }
)
IMPORT_SCHEMA = probatio.Schema(
    {
        probatio.Required(CONF_NAME, default=DEFAULT_NAME): str,
        probatio.Required(CONF_HOME): TextSelector(TextSelectorConfig(multiline=True)),
    }
)


class HomeFlowConfigFlow(ConfigFlow, domain=DOMAIN):
    """Create a virtual home."""

    VERSION = 1

    def __init__(self) -> None:
        """A flow that has built no home yet."""
        self._title = ""
        self._data: dict[str, Any] = {}
        self._home: Home | None = None

    @staticmethod
    @callback
    @override
    def async_get_options_flow(config_entry: ConfigEntry) -> HomeFlowOptionsFlow:
        """How the home's simulation runs."""
        return HomeFlowOptionsFlow()

    @classmethod
    @callback
    @override
    def async_get_supported_subentry_types(
        cls, config_entry: ConfigEntry
    ) -> dict[str, type[ConfigSubentryFlow]]:
        """A home's conversation agents."""
        return {SUBENTRY_CONVERSATION: ConversationFlow}

    @override
    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Generate a home or import one."""
        if MISSING:
            return self.async_abort(
                reason="package_missing",
                description_placeholders={"missing": ", ".join(MISSING), "url": INSTALL_URL},
            )
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
        schema: probatio.Schema,
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
                    home = await self.hass.async_add_executor_job(
                        build_home, data, hass_now(self.hass)
                    )
                except TwinError as err:
                    errors["base"] = "invalid_home"
                    placeholders["error"] = str(err)
                else:
                    self._title, self._data, self._home = name, data, home
                    return await self.async_step_rooms()
        return self.async_show_form(
            step_id="import_home" if source == SOURCE_IMPORT else source,
            data_schema=self.add_suggested_values_to_schema(schema, user_input),
            errors=errors,
            description_placeholders=placeholders,
        )

    async def async_step_rooms(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Offer the user's own areas and floors named as the home's rooms and floors: those that
        hold nothing yet are chosen unless the user says otherwise."""
        if user_input is not None:
            return self.async_create_entry(title=self._title, data=self._data | user_input)
        assert self._home is not None
        areas, floors = same_named(self.hass, self._home)
        if not areas and not floors:
            return self.async_create_entry(title=self._title, data=self._data)
        fields: dict[Any, Any] = {}
        for key, found, names in (
            (CONF_AREAS, areas, {a.area_id: a.name for a in self._home.areas.values()}),
            (CONF_FLOORS, floors, {f.floor_id: f.name for f in self._home.floors.values()}),
        ):
            if found:
                options = [
                    SelectOptionDict(value=twin_id, label=names[twin_id]) for twin_id in found
                ]
                chosen = [twin_id for twin_id, empty in found.items() if empty]
                fields[probatio.Optional(key, default=chosen)] = SelectSelector(
                    SelectSelectorConfig(
                        options=options, multiple=True, mode=SelectSelectorMode.LIST
                    )
                )
        return self.async_show_form(step_id="rooms", data_schema=probatio.Schema(fields))


class HomeFlowOptionsFlow(OptionsFlowWithReload):
    """Simulation options: physics on or off, its speed and its tick."""

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and save the options; refuse a speed and tick that step more than a day."""
        errors: dict[str, str] = {}
        if user_input is not None:
            if user_input[CONF_SPEED] * user_input[CONF_TICK] <= MAX_SIMULATED_PER_TICK:
                return self.async_create_entry(data=user_input)
            errors["base"] = "too_fast"
        options = self.config_entry.options
        schema = probatio.Schema(
            {
                probatio.Required(
                    CONF_PHYSICS, default=options.get(CONF_PHYSICS, DEFAULT_PHYSICS)
                ): bool,
                probatio.Required(
                    CONF_SPEED, default=options.get(CONF_SPEED, DEFAULT_SPEED)
                ): probatio.All(probatio.Coerce(float), probatio.Range(min=0.1, max=3600)),
                probatio.Required(
                    CONF_TICK, default=options.get(CONF_TICK, DEFAULT_TICK)
                ): probatio.All(probatio.Coerce(int), probatio.Range(min=1, max=3600)),
            }
        )
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(schema, user_input),
            errors=errors,
        )


class ConversationFlow(ConfigSubentryFlow):
    """Add or change a conversation agent: its model, its prompt and the tools it may use."""

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Add an agent."""
        return await self._async_step_agent("user", {}, user_input)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Change an agent."""
        current = dict(self._get_reconfigure_subentry().data)
        return await self._async_step_agent("reconfigure", current, user_input)

    async def _async_step_agent(
        self, step_id: str, current: dict[str, Any], user_input: dict[str, Any] | None
    ) -> SubentryFlowResult:
        """Show the form; check the model is reachable, then save."""
        errors: dict[str, str] = {}
        placeholders = {"error": ""}
        if user_input is not None:
            data = {key: value for key, value in user_input.items() if value not in ("", [], None)}
            data |= {key: int(data[key]) for key in (CONF_TIMEOUT, CONF_MAX_TOOL_ROUNDS)}
            errors, placeholders["error"] = await _async_check_model(self.hass, data)
            if not errors:
                if step_id == "reconfigure":
                    return self.async_update_reload_and_abort(
                        self._get_entry(), self._get_reconfigure_subentry(), data=data
                    )
                # Reload, to add the agent, once the flow has added the subentry (as soon as this
                # step returns; a task started now could read the subentries before that).
                self.hass.loop.call_soon(
                    self.hass.config_entries.async_schedule_reload, self._entry_id
                )
                return self.async_create_entry(title=data.pop(CONF_NAME), data=data)
        schema = _agent_schema(self.hass, named=step_id == "user")
        suggested = {
            CONF_PROMPT: DEFAULT_PROMPT,
            CONF_LLM_HASS_API: [_default_llm_api(self.hass)],
            CONF_TIMEOUT: DEFAULT_TIMEOUT,
            CONF_MAX_TOOL_ROUNDS: DEFAULT_MAX_TOOL_ROUNDS,
            CONF_CONFIRM: DEFAULT_CONFIRM,
            **current,
            **(user_input or {}),
        }
        return self.async_show_form(
            step_id=step_id,
            data_schema=self.add_suggested_values_to_schema(schema, suggested),
            errors=errors,
            description_placeholders=placeholders,
        )


def _default_llm_api(hass: HomeAssistant) -> str:
    """HomeFlow's own tools where registered, else Home Assistant's Assist."""
    ids = {api.id for api in llm.async_get_apis(hass)}
    return HOMEFLOW_LLM_API if HOMEFLOW_LLM_API in ids else llm.LLM_API_ASSIST


def _agent_schema(hass: HomeAssistant, *, named: bool) -> probatio.Schema:
    """The agent's fields: a served model (URL, model, key) or a local one, prompt, LLM APIs."""
    apis = [SelectOptionDict(label=api.name, value=api.id) for api in llm.async_get_apis(hass)]
    fields: dict[Any, Any] = {}
    if named:
        fields[probatio.Required(CONF_NAME, default=DEFAULT_CONVERSATION_NAME)] = str
    fields |= {
        probatio.Optional(CONF_URL): TextSelector(TextSelectorConfig(type=TextSelectorType.URL)),
        probatio.Optional(CONF_MODEL): str,
        probatio.Optional(CONF_API_KEY): TextSelector(
            TextSelectorConfig(type=TextSelectorType.PASSWORD)
        ),
        probatio.Optional(CONF_MODEL_PATH): str,
        probatio.Optional(CONF_PROMPT): TemplateSelector(),
        probatio.Optional(CONF_LLM_HASS_API): SelectSelector(
            SelectSelectorConfig(options=apis, multiple=True)
        ),
        probatio.Required(CONF_TIMEOUT, default=DEFAULT_TIMEOUT): NumberSelector(
            NumberSelectorConfig(
                min=5, max=600, step=1, unit_of_measurement="s", mode=NumberSelectorMode.BOX
            )
        ),
        probatio.Required(CONF_MAX_TOOL_ROUNDS, default=DEFAULT_MAX_TOOL_ROUNDS): NumberSelector(
            NumberSelectorConfig(min=1, max=30, step=1, mode=NumberSelectorMode.BOX)
        ),
        probatio.Required(CONF_CONFIRM, default=DEFAULT_CONFIRM): BooleanSelector(),
    }
    return probatio.Schema(fields)


async def _async_check_model(
    hass: HomeAssistant, data: dict[str, Any]
) -> tuple[dict[str, str], str]:
    """Errors by field (and a detail to show) unless the agent's model can be used."""
    if (CONF_URL in data) == (CONF_MODEL_PATH in data):
        return {"base": "url_or_path"}, ""
    if CONF_MODEL_PATH in data:
        return await hass.async_add_executor_job(_check_local_model, data[CONF_MODEL_PATH])
    if CONF_MODEL not in data:
        return {CONF_MODEL: "model_required"}, ""
    try:
        url = data[CONF_URL] = cv.url(data[CONF_URL]).rstrip("/")
    except probatio.Invalid:
        return {CONF_URL: "invalid_url"}, ""
    api_key = data.get(CONF_API_KEY)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with async_get_clientsession(hass).get(
            f"{url}/models", headers=headers, timeout=aiohttp.ClientTimeout(total=10)
        ) as response:
            if response.status in (401, 403):
                return {CONF_API_KEY: "invalid_auth"}, ""
            if response.status >= 400:
                return {CONF_URL: "cannot_connect"}, f"GET {url}/models: HTTP {response.status}"
            models = await response.json(content_type=None)
    except (TimeoutError, aiohttp.ClientError, ValueError) as err:
        return {CONF_URL: "cannot_connect"}, f"GET {url}/models: {err or type(err).__name__}"
    if not isinstance(models, dict) or not isinstance(models.get("data"), list):
        return {CONF_URL: "cannot_connect"}, f"GET {url}/models did not list models"
    served = [model["id"] for model in models["data"] if isinstance(model, dict) and "id" in model]
    if data[CONF_MODEL] not in served:
        return {CONF_MODEL: "unknown_model"}, f"{url} serves: {', '.join(map(str, served))}"
    return {}, ""


def _check_local_model(path: str) -> tuple[dict[str, str], str]:
    """Errors unless this Python can run a model from `path` (torch and transformers)."""
    if not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
        return {CONF_MODEL_PATH: "local_model_unavailable"}, ""
    if not Path(path).is_dir():
        return {CONF_MODEL_PATH: "model_path_not_found"}, ""
    return {}, ""
