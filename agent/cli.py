"""The `homeflow` command: one entry point for homes, data, benchmarks and training."""

from importlib.metadata import version
from typing import Any

import click

from twin.cli import home

from .bench.cli import bench
from .chat import chat
from .errors import AgentError
from .flywheel.cli import data
from .serve import serve
from .training.cli import train
from .watch import watch


class _Commands(click.Group):
    """The command group that reports an AgentError no command caught as a one-line error."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an AgentError becomes click's error (its message, exit status 1)."""
        try:
            return super().invoke(ctx)
        except AgentError as err:
            raise click.ClickException(str(err)) from err


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
