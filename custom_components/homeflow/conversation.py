"""Conversation agents: a home's "conversation" subentries, each a model that acts on Home
Assistant through an LLM API (HomeFlow's own tools or Assist) in a bounded tool loop.

An agent set to confirm sensitive actions (CONF_CONFIRM) gives HomeFlow's tools the auditor's
CONFIRMING_POLICY and the conversation's twin.confirmation.Confirmation: a refused unlock is
kept pending, by conversation id, until the user's next message, which confirms it if it is a
yes; the model's call then goes through."""

import logging
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Literal, override

import probatio
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import (
    CONF_API_KEY,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_PROMPT,
    CONF_URL,
    MATCH_ALL,
)
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import chat_session, intent, llm
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.json import json_dumps

from agent.policies import (
    AssistantMessage,
    ContextFull,
    Message,
    PolicyError,
    PolicyTimeout,
    ToolCall,
)
from agent.policies.local import LocalPolicy
from agent.policies.openai import Delta, OpenAIPolicy
from twin.auditor import CONFIRMING_POLICY
from twin.confirmation import Confirmation

from . import HomeFlowConfigEntry
from .const import (
    CONF_CONFIRM,
    CONF_MAX_TOOL_ROUNDS,
    CONF_MODEL_PATH,
    CONF_TIMEOUT,
    DEFAULT_CONFIRM,
    DEFAULT_MAX_TOOL_ROUNDS,
    DEFAULT_TIMEOUT,
    DOMAIN,
    HOMEFLOW_LLM_API,
    SUBENTRY_CONVERSATION,
)
from .llm_api import DEFAULT_PROMPT, HomeFlowAPI

_LOGGER = logging.getLogger(__name__)
# Each message is its own request to the model server, which queues them itself.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add one agent per conversation subentry of the home."""
    for subentry in entry.subentries.values():
        if subentry.subentry_type == SUBENTRY_CONVERSATION:
            async_add_entities(
                [HomeFlowConversationEntity(hass, entry, subentry)],
                config_subentry_id=subentry.subentry_id,
            )


class HomeFlowConversationEntity(conversation.ConversationEntity):
    """An agent whose model streams its answer and its tool calls into the chat log."""

    _attr_has_entity_name = True
    _attr_name = None
    _attr_supports_streaming = True

    def __init__(
        self, hass: HomeAssistant, entry: HomeFlowConfigEntry, subentry: ConfigSubentry
    ) -> None:
        """Set up the agent's model client; a local model loads at the first message."""
        self.entry = entry
        self.subentry = subentry
        data = subentry.data
        self._attr_unique_id = subentry.subentry_id
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, subentry.subentry_id)},
            name=subentry.title,
            manufacturer="HomeFlow",
            model=data.get(CONF_MODEL) or Path(data.get(CONF_MODEL_PATH, "")).name,
            entry_type=DeviceEntryType.SERVICE,
        )
        if data.get(CONF_LLM_HASS_API):
            self._attr_supported_features = conversation.ConversationEntityFeature.CONTROL
        self._model: OpenAIPolicy | LocalPolicy | None = None
        # Sensitive actions the agent asked the user to confirm, by conversation id.
        self._asked: dict[str, Confirmation] = {}
        if CONF_URL in data:
            self._model = OpenAIPolicy(
                data[CONF_URL],
                data[CONF_MODEL],
                data.get(CONF_API_KEY),
                timeout=data.get(CONF_TIMEOUT, DEFAULT_TIMEOUT),
                session=async_get_clientsession(hass),
            )

    @property
    @override
    def supported_languages(self) -> list[str] | Literal["*"]:
        """The model's languages are its own."""
        return MATCH_ALL

    @override
    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        """Give the model the prompt and tools, run its tool loop, answer with its last text."""
        data = self.subentry.data
        confirmation = self._asked.pop(chat_log.conversation_id, Confirmation())
        confirmation.hear(user_input.text)
        try:
            await chat_log.async_provide_llm_data(
                user_input.as_llm_context(DOMAIN),
                self._llm_apis(confirmation),
                data.get(CONF_PROMPT) or DEFAULT_PROMPT,
                user_input.extra_system_prompt,
            )
        except conversation.ConverseError as err:
            return err.as_conversation_result()
        try:
            await self._async_run_tool_loop(chat_log)
        finally:
            if confirmation.pending:
                self._keep_asking(chat_log.conversation_id, confirmation)
        last = chat_log.content[-1]
        if not isinstance(last, conversation.AssistantContent) or not last.content:
            raise _error("no_answer")  # it said nothing, or only markup that is not speech
        result = conversation.async_get_result_from_chat_log(user_input, chat_log)
        if result.response.response_type is not intent.IntentResponseType.ERROR:
            result.response.response_type = _response_type(chat_log)
        return result

    def _llm_apis(self, confirmation: Confirmation) -> list[str] | llm.API | None:
        """The agent's LLM APIs, HomeFlow's own confirming sensitive actions in this
        conversation if the agent is set to (an API the agent names that is gone is left for
        Home Assistant to report)."""
        ids = self.subentry.data.get(CONF_LLM_HASS_API)
        ids = [ids] if isinstance(ids, str) else ids
        confirm = self.subentry.data.get(CONF_CONFIRM, DEFAULT_CONFIRM)
        registered = {api.id: api for api in llm.async_get_apis(self.hass)}
        if not confirm or not ids or HOMEFLOW_LLM_API not in ids or set(ids) - set(registered):
            return ids
        homeflow = HomeFlowAPI(
            hass=self.hass,
            id=HOMEFLOW_LLM_API,
            name=registered[HOMEFLOW_LLM_API].name,
            policy=CONFIRMING_POLICY,
            confirmation=confirmation,
        )
        apis = [homeflow if api_id == HOMEFLOW_LLM_API else registered[api_id] for api_id in ids]
        return apis[0] if len(apis) == 1 else llm.MergedAPI(apis)

    def _keep_asking(self, conversation_id: str, confirmation: Confirmation) -> None:
        """Keep what the agent asked the user to confirm for the user's next message, as long
        as the conversation lasts."""
        self._asked[conversation_id] = confirmation
        with chat_session.async_get_chat_session(self.hass, conversation_id) as session:
            session.async_on_cleanup(lambda: self._asked.pop(conversation_id, None))

    async def _async_run_tool_loop(self, chat_log: conversation.ChatLog) -> None:
        """Ask the model again while it calls tools, at most the agent's tool rounds."""
        tools = []
        if chat_log.llm_api:
            serializer = chat_log.llm_api.custom_serializer
            tools = [_format_tool(tool, serializer) for tool in chat_log.llm_api.tools]
        rounds = self.subentry.data.get(CONF_MAX_TOOL_ROUNDS, DEFAULT_MAX_TOOL_ROUNDS)
        for _ in range(rounds):
            messages = _messages(chat_log.content)
            try:
                async for _content in chat_log.async_add_delta_content_stream(
                    self.entity_id, self._chat_deltas(messages, tools)
                ):
                    pass
            except ContextFull as err:
                raise _error("context_full", error=str(err)) from err
            except PolicyTimeout as err:
                raise _error("model_timeout", error=str(err)) from err
            except PolicyError as err:
                raise _error("model_failed", error=str(err)) from err
            if not chat_log.unresponded_tool_results:
                return
        raise _error("too_many_tool_rounds", rounds=str(rounds))

    async def _chat_deltas(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AsyncIterator[conversation.AssistantContentDeltaDict]:
        """The model's next message as the chat log's deltas."""
        yield {"role": "assistant"}
        async for delta in self._deltas(messages, tools):
            if delta.parse_errors:
                _LOGGER.warning(
                    "%s dropped malformed tool calls: %s",
                    self.entity_id,
                    "; ".join(delta.parse_errors),
                )
            if delta.content:
                yield {"content": delta.content}
            if delta.tool_calls:
                yield {
                    "tool_calls": [
                        llm.ToolInput(tool_name=call.name, tool_args=call.arguments, id=call.id)
                        for call in delta.tool_calls
                    ]
                }

    async def _deltas(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AsyncIterator[Delta]:
        """The model's next message in pieces: streamed when served, whole when local."""
        if self._model is None:
            self._model = await self.hass.async_add_executor_job(
                LocalPolicy.from_pretrained, self.subentry.data[CONF_MODEL_PATH]
            )
        if isinstance(self._model, OpenAIPolicy):
            async for delta in self._model.stream(messages, tools):
                yield delta
            return
        message = await self._model.act(messages, tools)
        yield Delta(message.content, message.tool_calls, message.parse_errors)


def _response_type(chat_log: conversation.ChatLog) -> intent.IntentResponseType:
    """ACTION_DONE if this turn changed the home: an Assist intent that says it acted, or a
    tool declared to write (HomeFlow's call_service) that succeeded; else QUERY_ANSWER. A tool
    that declares nothing (Assist's GetLiveContext) is not taken to have acted."""
    tools = chat_log.llm_api.tools if chat_log.llm_api else []
    writers = {
        tool.name
        for tool in tools
        if tool.annotations != llm.ToolAnnotations() and not tool.annotations.read_only
    }
    for content in chat_log.content[chat_log.llm_input_provided_index :]:
        if not isinstance(content, conversation.ToolResultContent) or content.result.error:
            continue
        data = content.result.data
        if isinstance(data, llm.IntentResponseDict):
            acted = data.original.response_type is intent.IntentResponseType.ACTION_DONE
        else:
            acted = content.tool_name in writers
        if acted:
            return intent.IntentResponseType.ACTION_DONE
    return intent.IntentResponseType.QUERY_ANSWER


def _format_tool(tool: llm.Tool, serializer: Any) -> dict[str, Any]:
    """An LLM API tool in the OpenAI function format."""
    function = {
        "name": tool.name,
        "parameters": probatio.to_openapi(
            tool.parameters, custom_serializer=serializer, openapi_version="3.1.0"
        ),
    }
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def _messages(contents: Iterable[conversation.Content]) -> list[Message]:
    """The chat log as OpenAI chat messages, tool results as the twin's episodes give them (the
    result itself, which says whether it failed), so a model trained in the twin reads them."""
    messages: list[Message] = []
    for content in contents:
        if isinstance(content, conversation.ToolResultContent):
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": content.tool_call_id,
                    "name": content.tool_name,
                    "content": json_dumps(content.result.data),
                }
            )
        elif isinstance(content, conversation.AssistantContent):
            calls = tuple(
                ToolCall(call.id, call.tool_name, call.tool_args)
                for call in content.tool_calls or ()
            )
            messages.append(AssistantMessage(content.content or "", calls).to_openai())
        else:
            messages.append({"role": content.role, "content": content.content})
    return messages


def _error(key: str, **placeholders: str) -> HomeAssistantError:
    """The agent's error (its speech), in the user's language."""
    return HomeAssistantError(
        translation_domain=DOMAIN, translation_key=key, translation_placeholders=placeholders
    )
