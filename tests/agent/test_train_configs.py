"""The shipped training configs: every run config loads with its loader, the two RL variants
differ only in what they should, and the accelerate configs carry what `accelerate launch` reads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from accelerate.commands.config.config_args import load_config_from_file  # type: ignore[import-untyped]

from agent.training import rl, sft
from agent.training.common import TrainingError, claim_output

CONFIGS = Path(__file__).parents[2] / "configs"
ACCELERATE = sorted((CONFIGS / "accelerate").glob("*.yaml"))


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("sft_*.yaml")), ids=lambda p: p.name)
def test_every_sft_config_loads(path: Path) -> None:
    assert isinstance(sft.load_config(path), sft.SFTRun)


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("rl_*.yaml")), ids=lambda p: p.name)
def test_every_rl_config_loads_and_starts_from_the_mcts_sft_model(path: Path) -> None:
    run = rl.load_config(path)
    assert run.model == sft.load_config(CONFIGS / "sft_mcts.yaml").output
    assert run.blueprints.parts[-2:] == ("data", "rl")


def test_the_rl_variants_differ_only_in_variant_and_output() -> None:
    step = rl.load_config(CONFIGS / "rl_step.yaml")
    st = rl.load_config(CONFIGS / "rl_st.yaml")
    assert (step.variant, st.variant) == ("step", "st")
    assert (step.output.name, st.output.name) == ("step", "st")
    assert dataclasses.replace(st, variant="step", output=step.output) == step
    assert (step.kl, step.entropy) == rl.VARIANT_DEFAULTS["step"]
    assert (st.kl, st.entropy) == rl.VARIANT_DEFAULTS["st"]


@pytest.mark.parametrize("path", ACCELERATE, ids=lambda p: p.name)
def test_accelerate_configs_name_what_accelerate_launch_reads(path: Path) -> None:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert config["compute_environment"] == "LOCAL_MACHINE"
    assert config["distributed_type"] in {"MULTI_GPU", "DEEPSPEED"}
    assert isinstance(config["num_processes"], int)
    assert config["num_processes"] > 1
    if config["distributed_type"] == "DEEPSPEED":
        assert config["deepspeed_config"]["zero_stage"] in {2, 3}
    parsed = load_config_from_file(str(path))  # accelerate's own reader: refuses unknown keys
    assert parsed.distributed_type == config["distributed_type"]


def test_the_accelerate_configs_are_the_three_documented() -> None:
    names = [p.name for p in ACCELERATE]
    assert names == ["deepspeed_zero2.yaml", "deepspeed_zero3.yaml", "multi_gpu.yaml"]
    guide = (CONFIGS.parent / "docs" / "scale_out.md").read_text(encoding="utf-8")
    assert all(f"configs/accelerate/{name}" in guide for name in names)


def test_a_checkpoint_continues_only_under_its_own_settings(tmp_path: Path) -> None:
    """An output's run.json holds the settings its checkpoints were trained under; a setting
    it does not record (one a later version added) is not held against it."""
    run = sft.make_run({"dataset": str(tmp_path / "data"), "output": str(tmp_path / "out")})
    claim_output(run)
    checkpoint = tmp_path / "out" / "checkpoint-3"
    checkpoint.mkdir()
    (checkpoint / "trainer_state.json").write_text("{}")
    claim_output(run)
    claim_output(dataclasses.replace(run, save_steps=5))  # how it runs, not what it trains
    with pytest.raises(TrainingError, match=r"checkpoint-3 .*learning_rate: 5e-05 -> 0\.001"):
        claim_output(dataclasses.replace(run, learning_rate=1e-3))
    recorded = tmp_path / "out" / "run.json"
    held = json.loads(recorded.read_text())
    del held["seed"]
    recorded.write_text(json.dumps(held))
    claim_output(dataclasses.replace(run, seed=7))
