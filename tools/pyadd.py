"""A method a replace_symbol names that its class does not have yet, added at the end of the class: a small model
reaches for "replace" when it means "write this method", and `Class.method` says where it goes. Only when the class
is there, once, and the new code defines the method (a top-level definition is added by python_tools itself)."""

from __future__ import annotations

import libcst as cst
from qualnames import AtQualname


class _AddTo(AtQualname):
    def __init__(self, owner: str, new: list[cst.BaseStatement]):
        super().__init__()
        self.owner, self.new, self.hits = owner, new, 0

    def at(self, qualname: str, original, updated):
        if qualname != self.owner or not isinstance(updated, cst.ClassDef) \
                or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        self.hits += 1
        spaced = [self.new[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)]), *self.new[1:]]
        return updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, *spaced]))


def defines(statements: list[cst.BaseStatement], name: str) -> bool:
    """Whether the statements define a function or class of that name."""
    return any(isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name for s in statements)


def added_to_class(module: cst.Module, owner: str, new: list[cst.BaseStatement]) -> cst.Module | None:
    """The module with `new` at the end of the class named `owner` (qualified: Outer.Inner), or None when there
    is no such class, or more than one."""
    adding = _AddTo(owner, new)
    updated = module.visit(adding)
    return updated if adding.hits == 1 else None
