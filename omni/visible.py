"""Text the model controls, made safe to show on a terminal: every control or escape byte, and every character
that reorders or hides text, is written out as an escape (`\\x1b`, `\\r`, `\\u202e`) instead of being obeyed.

A diff line `import os; os.system(...)\\x1b[2K\\r# tidy` reads as a comment on a terminal; an OSC 52 sequence in
a command's output puts text on the clipboard; a right-to-left override turns code around. What the user reviews
must be what is applied, so omni shows these bytes, never sends them. Newlines and tabs stay; a CR right before a
newline (a CRLF file) stays too, since nothing after it on the line can be hidden.
"""

from __future__ import annotations

import re

from rich.markup import escape

# C0 controls but tab, newline and a CR that ends a line; DEL, C1 controls; bidi embeddings, overrides, isolates and
# marks; zero-width characters and the line and paragraph separators.
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
                     "|\r(?!\n)")


def _shown(match: re.Match) -> str:
    char = match.group()
    if char == "\r":
        return "\\r"
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def visible(text: str) -> str:
    """The text with every control, escape, bidi and zero-width character written out."""
    return _HIDDEN.sub(_shown, text)


def safe(value: object) -> str:
    """A value made visible and escaped for rich markup: for every model-controlled string omni prints."""
    return escape(visible(str(value)))
