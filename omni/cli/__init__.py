"""The command line: `omni "<goal>"`, the interactive session, subcommands and task specs."""

from omni.cli.main import main

__all__ = ["main"]
