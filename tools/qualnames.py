"""A libcst transformer that knows where it is: each class and function is handed, as the walk leaves it, to
`at(qualname, original, updated)` with its qualified name (`Outer.Inner.method`). What replaces or adds a
definition by name (python_tools' replace_symbol, pyadd's new method) says only what it does there."""

from __future__ import annotations

import libcst as cst


class AtQualname(cst.CSTTransformer):
    def __init__(self) -> None:
        self.stack: list[str] = []

    def _visit(self, node: cst.ClassDef | cst.FunctionDef) -> bool:
        self.stack.append(node.name.value)
        return True

    def _leave(self, original, updated):
        here = ".".join(self.stack)
        self.stack.pop()
        return self.at(here, original, updated)

    visit_ClassDef = visit_FunctionDef = _visit
    leave_ClassDef = leave_FunctionDef = _leave

    def at(self, qualname: str, original, updated):
        """What the definition named qualname becomes (updated: with its body already walked)."""
        return updated
