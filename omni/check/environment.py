"""Tests that fail before the run for a reason no change to the code can remove, so they are never the run's check,
and the user is told why: the sandbox lacks a module they import (what to declare; a module the goal names is not
one of them: a test of a module the goal asks to write fails to import it until the work is done), or their own
code uses a name the project defines and never binds it (tools/unbound.py: a doctest run without its docs'
namespace, a test missing an import)."""

from __future__ import annotations

from omni.goal.reading import GoalReading

MAX_NAMED = 5


def not_installed(missing: dict[str, str], reading: GoalReading) -> dict[str, str]:
    """Of the failing tests and the module each could not import (run_tests' `missing`), those whose module the
    goal does not name."""
    return {test: module for test, module in missing.items() if not reading.names(module.split(".")[0])}


def note(missing: dict[str, str]) -> str:
    """What to tell the user about them (its one caller gives at least one)."""
    modules = sorted(set(missing.values()))
    return (f"{len(missing)} test(s) cannot run in the sandbox: they import {', '.join(modules[:MAX_NAMED])}, "
            "which the project does not declare where omni reads dependencies (test extras or groups, requirements "
            "files, tox's deps). They are left out of the run's check; declare them to have them run.")


def unbound_note(unbound: dict[str, str]) -> str:
    """What to tell the user about the tests whose own code misses a name (its one caller gives at least one)."""
    names = sorted(set(unbound.values()))
    return (f"{len(unbound)} test(s) fail before the run on a name their own code uses and never binds: "
            f"{', '.join(names[:MAX_NAMED])}, which the project defines (a doctest run without the namespace its "
            "docs' conftest gives, or a test missing an import). No change to the code makes them pass; they are "
            "left out of the run's check.")
