"""A tiny random Qwen3 model with a tokenizer trained here, shared by the local-model tests
(no downloads)."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import pytest

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]


def qwen3_template() -> str:
    spec = importlib.util.find_spec("trl")
    assert spec is not None
    assert spec.submodule_search_locations
    return (Path(spec.submodule_search_locations[0]) / "chat_templates/qwen3.jinja").read_text()


def tiny_qwen3(texts: list[str], vocab_size: int) -> tuple[Any, Any]:
    """(model, tokenizer): a random two-layer Qwen3 over a byte-level BPE of `vocab_size`
    learnt from Qwen3's chat template and `texts`, with that template."""
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator([qwen3_template(), *texts], trainer)
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
    return transformers.Qwen3ForCausalLM(config), tokenizer


@pytest.fixture(scope="session")
def tiny() -> tuple[Any, Any]:
    """(model, tokenizer): a two-layer Qwen3 over a 400-token byte-level BPE."""
    model, tokenizer = tiny_qwen3(["Which lights are there? list_entities"], 400)
    return model.eval(), tokenizer


@pytest.fixture
def eager(tiny: tuple[Any, Any]) -> tuple[Any, Any]:
    """The tiny model, biased to open every message with `<`, as a call would."""
    model, tokenizer = tiny
    model = copy.deepcopy(model)
    model.generation_config.sequence_bias = {(tokenizer.convert_tokens_to_ids("<"),): 50.0}
    return model, tokenizer
