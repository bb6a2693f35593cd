"""The argument parser omni's commands share: no abbreviated flags (`--mod` is not `--model`), and a
"did you mean" for a mistyped flag or choice. Also the shell completion scripts made from the parsers."""

from __future__ import annotations

import argparse
import difflib
import re
import sys


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.given: list[str] = []

    def parse_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def error(self, message: str):
        """The error and what to do about it, then where the full usage is (it is 20 lines)."""
        self.exit(2, f"{self.prog}: error: {message}{self.suggestion(message)}\n`{self.prog} --help` lists every "
                  "flag.\n")

    def suggestion(self, message: str) -> str:
        """`; did you mean --model?` for an unknown flag or a bad choice close to a known one; for words left over
        after a goal, how to quote a goal of several words."""
        found = re.match(r"unrecognized arguments: (.+)", message)
        if found and not found.group(1).startswith("-"):
            words = [w for w in self.given if not w.startswith("-")]
            return f'; a goal of several words is one argument: quote it, omni "{" ".join(words)}"' if words else ""
        if found:
            word, known = found.group(1).split()[0].split("=")[0], _flags(self)
        elif found := re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message):
            word, known = found.group(1), re.findall(r"'([^']*)'", found.group(2))
        else:
            return ""
        close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}?" if close else ""


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every flag of a parser and of its subcommands (argparse reports a subcommand's unknown flag at the top)."""
    found = []
    for action in parser._actions:
        found += action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _flags(sub)
    return found


SHELLS = ("bash", "zsh", "fish")


def completion(parser: argparse.ArgumentParser, shell: str) -> str:
    """A completion script for `omni` (bash and zsh made by shtab; fish from the parser's flags)."""
    if shell == "fish":
        return _fish(parser)
    import shtab

    return shtab.complete(parser, shell=shell)


def _fish(parser: argparse.ArgumentParser) -> str:
    lines = ["complete -c omni -f"]
    subs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    names = list(subs.choices) if subs else []
    for name in names:
        lines.append(f"complete -c omni -n '__fish_use_subcommand' -a {name}")
    tables = [("__fish_use_subcommand", parser)] + [(f"__fish_seen_subcommand_from {n}", subs.choices[n])
                                                     for n in names]
    for condition, table in tables:
        for action in table._actions:
            for option in action.option_strings:
                flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
                choices = f" -xa '{' '.join(map(str, action.choices))}'" if action.choices else ""
                help_text = (action.help or "").replace("'", "").split(" (")[0][:60]
                lines.append(f"complete -c omni -n '{condition}' {flag}{choices} -d '{help_text}'")
    return "\n".join(lines) + "\n"
