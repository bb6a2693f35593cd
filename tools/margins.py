"""A model's new code comes at whatever indentation it was written at (a method at its class's four spaces, or at
none): replace_symbol dedents it to parse it, and libcst indents its statements to where they go. The lines inside
a multi-line string are no statement's: dedenting took the margin from them too, and nothing gives it back, so a
method's docstring came out four spaces short and a triple-quoted value changed. strings_kept gives each string's
inner lines back the margin dedenting took, so every string reads as written."""

from __future__ import annotations

import os
import re

import libcst as cst


def margin(source: str) -> str:
    """The whitespace textwrap.dedent takes from every line of source: the longest one all its non-blank lines
    begin with."""
    lines = [line for line in source.splitlines() if line.strip()]
    return os.path.commonprefix([line[:len(line) - len(line.lstrip())] for line in lines]) if lines else ""


class _GivenBack(cst.CSTTransformer):
    def __init__(self, taken: str):
        self.taken = taken

    def _back(self, value: str) -> str:
        return re.sub(r"\n(?=[^\n])", "\n" + self.taken, value)  # a blank inner line stays blank

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        return updated.with_changes(value=self._back(updated.value))

    def leave_FormattedStringText(self, original: cst.FormattedStringText,
                                  updated: cst.FormattedStringText) -> cst.FormattedStringText:
        return updated.with_changes(value=self._back(updated.value))


def strings_kept(statements: list[cst.BaseStatement], source: str) -> list[cst.BaseStatement]:
    """statements, parsed from source dedented, with the inner lines of their strings as source has them."""
    taken = margin(source)
    return [s.visit(_GivenBack(taken)) for s in statements] if taken else statements
