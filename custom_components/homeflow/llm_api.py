"""HomeFlow's LLM API: the agent's tool surface, offered to every conversation agent in HA.

Each tool is one of the twin's tools, run by a HassBackend on the entities exposed to the
conversation's assistant; the API prompt is the agent prompt's device list and workflow.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, override

import probatio
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import llm

from agent.prompt import CLARIFY, REPLY, ROLE, system_prompt
from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.confirmation import Confirmation

from .backend import HassBackend
from .const import DOMAIN, HOMEFLOW_LLM_API

# The paper's agent prompt (B.3) less its device list and tool workflow, which the LLM API adds.
DEFAULT_PROMPT = "\n\n".join([ROLE, CLARIFY, REPLY])

# The validators of the JSON types the tools' schemas use.
JSON_TYPES: Mapping[str, Any] = {
    "string": str,
    "integer": int,
    "number": probatio.Any(int, float),
    "boolean": bool,
    "null": None,
}
READING = llm.ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)
ACTING = llm.ToolAnnotations(open_world=False)


@dataclass(slots=True, kw_only=True)
class HomeFlowAPI(llm.API):
    """The twin's tools on Home Assistant's exposed entities, judged by the auditor's `policy`:
    the registered API's is the default, which asks nothing; a HomeFlow agent that confirms
    sensitive actions makes its own, with the conversation's `confirmation`."""

    policy: ActionPolicy = DEFAULT_POLICY
    confirmation: Confirmation | None = None

    @override
    async def async_get_api_instance(self, llm_context: llm.LLMContext) -> llm.APIInstance:
        """The tools and prompt for one conversation, acting in its context."""
        backend = HassBackend(
            self.hass,
            assistant=llm_context.assistant,
            context=llm_context.context,
            policy=self.policy,
            confirmation=self.confirmation,
        )
        # The agent's own prompt less what the conversation agent's prompt already says.
        sections = (await system_prompt(backend)).split("\n\n")
        prompt = "\n\n".join(s for s in sections if s not in (ROLE, CLARIFY, REPLY))
        return llm.APIInstance(
            api=self,
            api_prompt=prompt,
            llm_context=llm_context,
            tools=[HomeFlowTool(backend, schema) for schema in backend.tool_schemas],
        )


class HomeFlowTool(llm.Tool):
    """One tool of the surface, its parameters the tool's JSON schema as a probatio schema."""

    integration = DOMAIN

    def __init__(self, backend: HassBackend, schema: Mapping[str, Any]) -> None:
        """Describe the tool as its OpenAI-format `schema` does."""
        function = schema["function"]
        self.name = function["name"]
        self.description = function["description"]
        self.parameters = validator(function["parameters"])
        self.annotations = ACTING if self.name == "call_service" else READING
        self._backend = backend

    @override
    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: llm.LLMContext
    ) -> llm.ToolResult:
        """Run the tool; a refused call is an error result the model reads and corrects."""
        result = await self._backend.run_tool(self.name, tool_input.tool_args)
        return llm.ToolResult(data=result, error=result.get("success") is False)


def validator(schema: Mapping[str, Any]) -> Any:
    """The probatio validator of a JSON schema of the tools' subset: types, items, properties,
    required and additionalProperties, with the properties' descriptions."""
    kinds = schema["type"]
    options = []
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if kind == "object" and "properties" in schema:
            required = set(schema.get("required", ()))
            fields = {
                (probatio.Required if key in required else probatio.Optional)(
                    key, description=field.get("description")
                ): validator(field)
                for key, field in schema["properties"].items()
            }
            closed = schema.get("additionalProperties", True) is False
            extra = probatio.PREVENT_EXTRA if closed else probatio.ALLOW_EXTRA
            options.append(probatio.Schema(fields, extra=extra))
        elif kind == "object":
            options.append(dict)
        elif kind == "array":
            options.append([validator(schema["items"])])
        else:
            options.append(JSON_TYPES[kind])
    return options[0] if len(options) == 1 else probatio.Any(*options)


@callback
def async_register_llm_api(hass: HomeAssistant) -> None:
    """Offer the API to conversation agents, for as long as Home Assistant runs."""
    llm.async_register_api(hass, HomeFlowAPI(hass=hass, id=HOMEFLOW_LLM_API, name="HomeFlow"))
