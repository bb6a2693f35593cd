"""Placeholder for `omni plan --spec` / `omni run SPEC` (task specs)."""

from __future__ import annotations

from omni.errors import UsageError


def main(argv: list[str]) -> int:
    raise UsageError("task specs are not available in this version")
