"""The examples a goal states as code: a report of a bug often says what a call gives and what it should give.
Read however the report words it, as long as both sides are code:
- `expression == value`;
- what it gives, then what it should give: `expression <verb> A instead of B` (or "rather than"; any verb:
  returns, gives, comes out as, I get...), `... A, expected B`, `... the right answer is B`;
- what it should give: `expression should equal value` (be, return, give, must...);
- what was expected, subject first: `I expected expression to be value` (want, would like...).
The expression is the one just before the words, or the last call in the same sentence ("f(x) in mod.py returns
3 instead of 2.5"), or after "it"/"this"/"that" the last call before the pronoun. An expression must contain a
call with arguments, and the English around it does not parse, so it is left out; an expected value must be a
value, not a word ("should be quiet"), and a rule with a condition after it ("... when the list is empty") is
not one case. (omni/check/examples.py runs them in the sandbox, and drops the ones that already hold.)"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass


MAX_EXAMPLES = 4
WINDOW = 200  # characters an expression may span
_INSTEAD = re.compile(r"\s+(?:instead of|rather than)\s+", re.I)
# What a call is said to give: the verb between the expression and the value it gives now.
_VERB = re.compile(r"\s+(?:returns?|returned|gives?|gave|yields?|yielded|produces?|produced|evaluates to|"
                   r"results? in|comes? out as|came out as|prints?|printed|outputs?|shows?|get|got|is|was)\s+", re.I)
_EQUALS = re.compile(r"(?<![=!<>])==(?!=)")
_GIVE = r"(?:be(?:en)?\s+equal\s+to|equal(?:led)?|return(?:ed)?|give[ns]?|yield(?:ed)?|produced?|" \
        r"evaluated?\s+to|be(?:en)?)"
_SHOULD = re.compile(r"\s+(?:should|must|ought\s+to|is\s+supposed\s+to|needs\s+to)\s+(?:have\s+)?" + _GIVE + r"\s+",
                     re.I)
# What it should give, said after what it gives: "..., expected 2.5", "the correct result is 2.5".
_EXPECTED = re.compile(r"(?:\bexpected(?:\s+(?:result|value|output|answer))?(?:\s+(?:is|was|would\s+be)|\s*[:=])?"
                       r"|\b(?:the\s+)?(?:right|correct|proper|expected)\s+(?:answer|result|value|output)"
                       r"\s+(?:is|would\s+be|should\s+be)\s*:?)\s+", re.I)
# Subject first: "I expected f(x) to be 2.5", "we want f(x) to return [1]".
_TO_GIVE = re.compile(r"\s+to\s+" + _GIVE + r"\s+", re.I)
_EXPECTING = re.compile(r"\b(?:expect(?:ed|s)?|want(?:ed|s)?|would\s+like|'d\s+like)\s+`?$", re.I)
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)  # the comparisons an example can be made of
_SENTENCE = re.compile(r"[.!?](?=\s)|\n\s*\n")  # where a sentence ends: the last call before a verb is in it
_CONDITIONS = {"when", "whenever", "if", "unless", "for"}  # "f(x) should be 3 when ...": a rule, not one case
_PRONOUN = re.compile(r"(?:^|\W)(?:it|this|that)\s*$", re.I)  # "... is wrong: it should be ..." refers back
# Endings of a stated value: the character after it.
_ENDS = set(" \t\n,.;:)`!?'\"")


@dataclass(frozen=True)
class Example:
    expression: str
    expected: str

    def __str__(self) -> str:
        return f"{self.expression} == {self.expected}"


def _tree(text: str, compare: bool = False) -> ast.expr | None:
    """The expression `text` is, if it is one as code is written: on one line, with no `x. y` attribute; a comparison
    only when compare (what a call is said of: `f(a) < f(b)` is False, it should be True)."""
    if "\n" in text or text.endswith((".", ",")):
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    data = text.encode()  # offsets are in bytes
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and \
                data[node.value.end_col_offset:node.end_col_offset - len(node.attr.encode())] != b".":
            return None  # "[1, 2]. Then" is a sentence going on, not an attribute
    if isinstance(tree, (ast.BoolOp, ast.IfExp)) or isinstance(tree, ast.Compare) and not (
            compare and all(isinstance(op, _ORDERING) for op in tree.ops)):  # "f(x) in mod.py" is English
        return None  # one side of one comparison, not a chain of them ("3 and f(y) == 4")
    if isinstance(tree, ast.Tuple) and not _in_parentheses(text):
        return None  # "1, 2" is a list of things in English; "(1, 2)" is a tuple
    return tree


def _in_parentheses(text: str) -> bool:
    """Whether text is one group in parentheses: "(3, 1)", not "(3, 1), not (3, 0)"."""
    try:
        return text.startswith("(") and text.endswith(")") and bool(ast.parse(text[1:-1], mode="eval"))
    except SyntaxError:
        return False


def _expression_before(goal: str, end: int) -> str | None:
    """The longest expression with a call in it that ends at `end`: English before it does not parse."""
    text = goal[max(0, end - WINDOW):end].rstrip().removesuffix("`").rstrip()  # `f(x)` is f(x)
    for start in range(len(text)):
        if (start and not (text[start - 1].isspace() or text[start - 1] in "(`\"'")) \
                or not (text[start].isalpha() or text[start] == "_"):
            continue
        tree = _tree(text[start:], compare=True)
        if tree is not None and any(isinstance(node, ast.Call) for node in ast.walk(tree)):
            return text[start:]
    return None


def _value_after(goal: str, start: int) -> str | None:
    """The longest value that starts at `start`, not a comparison or a chain of them (`3 and f(y) == 4`)."""
    return _longest_after(goal, start, lambda piece: _tree(piece) is not None)


def _longest_after(goal: str, start: int, fits: Callable[[str], bool]) -> str | None:
    """The longest piece of the goal that starts at `start` (after a space or a backtick), ends where a value may
    (_ENDS), and `fits`."""
    text = goal[start:start + WINDOW].lstrip().removeprefix("`")
    best = None
    for end in range(1, len(text) + 1):
        if end < len(text) and text[end] not in _ENDS:
            continue
        piece = text[:end].strip()
        if piece and fits(piece):
            best = piece
    return best


def bare_calls(expression: str) -> set[str]:
    """The names an example's expression calls directly (`word_count(...)`, not `pkg.parse(...)`)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return set()
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def calls_in(source: str) -> list[tuple[str, bool]]:
    """(name, whether it is called through another name) of each call in a piece of Python source: a bare call
    (`size(...)`) is to a module's function; `pkg.size(...)` may be a method too. Parsed, not pattern-matched."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                found.append((node.func.id, False))
            elif isinstance(node.func, ast.Attribute):
                found.append((node.func.attr, True))
    return found


def _last_call(goal: str, end: int) -> str | None:
    """The last expression with a call in it that ends before `end` in the same sentence ("f(x) in mod.py
    returns 3": the words between the call and the verb are not code)."""
    start = max([m.end() for m in _SENTENCE.finditer(goal, max(0, end - WINDOW), end)], default=max(0, end - WINDOW))
    for close in range(end, start, -1):
        if goal[close - 1:close] in (")", "]") and (found := _expression_before(goal, close)):
            return found
    return None


def _subject(goal: str, end: int) -> str | None:
    """What a value is said of: the expression just before the words, the last call in the same sentence, or,
    after "it", "this" or "that", the last expression with a call in the WINDOW before the pronoun."""
    if found := _expression_before(goal, end) or _last_call(goal, end):
        return found
    start = max(0, end - 20)
    pronoun = _PRONOUN.search(goal[start:end])
    if not pronoun:
        return None
    before = start + pronoun.start()
    for close in range(before, max(0, before - WINDOW), -1):
        if goal[close - 1:close] == ")" and (found := _expression_before(goal, close)):
            return found
    return None


def _stated(expression: str, expected: str, after: str) -> bool:
    """Whether "expression should equal expected" states one case: a value, not a word ("should be
    quiet"); a call with arguments, not a function named in prose ("width() should return -1 for a control
    character"); and not a condition after it."""
    calls = [n for n in ast.walk(_tree(expression, compare=True) or ast.Constant(0)) if isinstance(n, ast.Call)]
    rest = after.lstrip()[len(expected):].split()
    return (not isinstance(_tree(expected), ast.Name) and any(c.args or c.keywords for c in calls)
            and not (rest and rest[0].lower() in _CONDITIONS))


def _compared(expression: str, expected: str) -> str | None:
    """A comparison is the example's expression when what it should give is True or False; else its last operand
    is, when that has a call (`n < len(xs) should be 3` is said of len(xs))."""
    tree = _tree(expression, compare=True)
    if not isinstance(tree, ast.Compare) or expected in ("True", "False"):
        return expression
    last = tree.comparators[-1]
    operand = expression.encode()[last.col_offset:last.end_col_offset].decode()
    return operand if any(isinstance(n, ast.Call) for n in ast.walk(last)) else None


def _after(goal: str, start: int) -> tuple[str, int] | None:
    """The value stated at `start` and where it ends."""
    value = _value_after(goal, start)
    return (value, goal.find(value, start) + len(value)) if value else None


def goal_examples(goal: str) -> list[Example]:
    """Every example the goal states (see the module's comment), in the order the goal states them."""
    found: list[tuple[int, Example]] = []

    def take(at: int, expression: str | None, value: tuple[str, int] | None, check: bool = True) -> None:
        expression = _compared(expression, value[0]) if expression and value else expression
        if expression and value and (not check or _stated(expression, value[0], goal[value[1] - len(value[0]):])):
            found.append((at, Example(expression, value[0])))

    for match in _EQUALS.finditer(goal):
        take(match.start(), _expression_before(goal, match.start()), _after(goal, match.end()), check=False)
    for match in _INSTEAD.finditer(goal):
        verbs = list(_VERB.finditer(goal, max(0, match.start() - 100), match.start()))
        if verbs:
            direct = _expression_before(goal, verbs[-1].start())
            take(match.start(), direct or _last_call(goal, verbs[-1].start()), _after(goal, match.end()),
                 check=not direct)
    for match in _SHOULD.finditer(goal):
        take(match.start(), _subject(goal, match.start()), _after(goal, match.end()))
    for match in _EXPECTED.finditer(goal):
        value = _after(goal, match.end())
        if value and not _TO_GIVE.match(goal, value[1]):  # "expected f(x) to be 3" is read below
            take(match.start(), _last_call(goal, match.start()), value)
    for match in _TO_GIVE.finditer(goal):
        expression = _expression_before(goal, match.start())
        if expression:
            before = goal[:goal.rfind(expression, 0, match.start())]
            if _EXPECTING.search(before):
                take(match.start(), expression, _after(goal, match.end()))
    unique = list(dict.fromkeys(example for _, example in sorted(found, key=lambda item: item[0])))
    return unique[:MAX_EXAMPLES]


def written_with(expression: str) -> set:
    """The values an example's expression is written with: its constants (numbers and strings, not the items of a
    list or other container, which are its data) and the numbers inside its strings ('[::2]' is written with 2)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return set()
    data = {id(e) for n in ast.walk(tree) if isinstance(n, (ast.List, ast.Tuple, ast.Set, ast.Dict))
            for e in ast.walk(n) if e is not n}
    values = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, str))
              and not isinstance(n.value, bool) and id(n) not in data}
    return values | {int(x) for v in values if isinstance(v, str) for x in re.findall(r"-?\d+", v)}


def spelled(expression: str) -> list[str]:
    """Every identifier-like word an example is written with, inside its strings too (`search('reverse(@)', x)`
    spells search, reverse and x): the words the goal spells out in code."""
    return re.findall(r"[A-Za-z_]\w*", expression)


def reported(goal: str) -> list[Example]:
    """What the goal says a call gives now, when it writes the call and a value (`f(x) returns [1, 2]`, the
    `_VERB` verbs): each as an Example of the call and that value, the value a Python literal. Not what it should
    give: the report of the code as it is, which a reproduction on the goal's input gives too."""
    found = []
    for verb in _VERB.finditer(goal):
        expression = _expression_before(goal, verb.start())
        value = _literal_after(goal, verb.end())
        calls = [n for n in ast.walk(ast.parse(expression, mode="eval")) if isinstance(n, ast.Call)] \
            if expression else []
        if value is not None and any(c.args or c.keywords for c in calls):  # a call with arguments: one case
            found.append(Example(expression, value))
    return list(dict.fromkeys(found))[:MAX_EXAMPLES]


def _literal_after(goal: str, start: int) -> str | None:
    """The longest Python literal that starts at `start` (`['b', 'c']`, `3`), not a name or an expression."""
    return _longest_after(goal, start, _literal)


def _literal(piece: str) -> bool:
    """Whether a piece of the goal is one Python literal on one line; "(127, 127, 127)," ends a clause, not a
    tuple."""
    if "\n" in piece or piece.endswith(","):
        return False
    try:
        ast.literal_eval(piece)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True
