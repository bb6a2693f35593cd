"""Lines the goal's words name: where no failing test points to lines of a definition (the check is the goal's
examples, or the tests' spectrum has not run), its one-change candidates begin on the lines whose names share a
word with the goal. A report that "10 items at 10 per page make 2 pages" points at the lines that read `items`,
`per_page` and `pages`, not at the lines above them that work out a width; in the order of the code, the first
mechanical candidates (omni/repair/verified.py: FIRST_MUTANTS) are all spent on the lines that come first.

Names are read from the code's syntax (a variable, an attribute, a keyword argument), each split into its words
(omni/goal/reading.py: shared_words, which also takes "page" as a word of `pages`); the goal's words are its plain
words, the examples' own spelling among them (`layout(items=10)` names items)."""

from __future__ import annotations

import ast
import textwrap

from omni.goal.reading import shared_words


def worded_lines(source: str, words: frozenset[str]) -> frozenset[int]:
    """The lines of source (from 1, as mutants.py numbers them) where a name, an attribute or a keyword argument
    shares a word with words; none when source does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return frozenset()
    return frozenset(node.lineno for node in ast.walk(tree)
                     if (name := _name(node)) and shared_words(name, words))


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.keyword):
        return node.arg or ""
    return ""
