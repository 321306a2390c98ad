"""The `homeflow` command: one entry point for homes, data, benchmarks and training."""

from importlib.metadata import version

import click

from twin.cli import home

from .chat import chat
from .flywheel.cli import data
from .serve import serve
from .watch import watch


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version("homeflow"), prog_name="homeflow")
def main() -> None:
    """HomeFlow: a Home Assistant-compatible twin and data flywheel for smart-home agents."""


@main.group()
def bench() -> None:
    """SmartHome-Bench: generate the benchmark, run a policy on it, report and compare results."""


@main.group()
def train() -> None:
    """Train agents: SFT on verified trajectories, then step-wise RL in the twin."""


main.add_command(home)
main.add_command(chat)
main.add_command(data)
main.add_command(watch)
main.add_command(serve)
