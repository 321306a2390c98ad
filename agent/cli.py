"""The `homeflow` command: one entry point for homes, data, benchmarks and training."""

from importlib.metadata import version

import click

from twin.cli import home

from .bench.cli import bench
from .chat import chat
from .flywheel.cli import data
from .serve import serve
from .training.cli import train
from .watch import watch


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version("homeflow"), prog_name="homeflow")
def main() -> None:
    """HomeFlow: a Home Assistant-compatible twin and data flywheel for smart-home agents."""


main.add_command(home)
main.add_command(bench)
main.add_command(chat)
main.add_command(data)
main.add_command(watch)
main.add_command(serve)
main.add_command(train)


if __name__ == "__main__":
    main()
