"""The command line: `omni "<goal>"`, the interactive session, subcommands and task specs (the entry point is
omni/cli/main.py: main)."""
