"""Whether a value a model wrote has the form of the value the code gives: a reproduction example whose expected
value is a dict of dicts where the code returns a dict of strings fails on the starting code for its form alone,
and no fix of the code makes it hold. Only values both written as Python literals are compared; a number is any
number, None fits anything (a function that returns nothing may be the problem), an empty collection fits any
of its kind.

An iterator is a form too: a call that returns one (`map`, a generator, `iter(...)`) gives a value equal to no
list or tuple (its repr `<map object at 0x...>`), so an example that compares it with one fails for that alone (a
dev task's record: the agreed example, the run's check, was such a comparison). Whether a value is one is a field
of the evaluation (tools/example_eval.py), not read from its repr."""

from __future__ import annotations

import ast

_NUMBER = (int, float, complex)


def other_form(expected: str, got: str, iterator: bool = False) -> str:
    """"" when `expected` could be a value of the code's form (or either side is not a literal); else what each is,
    for the model: "the code gives a dict of str, and you wrote a dict of dict". iterator: the code gave an
    iterator, to be judged against a list or a tuple (the caller's choice: not when the goal speaks of iterators,
    which may be its problem)."""
    if iterator and _sequence(expected):
        return f"the code gives an iterator, which equals no {_form(ast.literal_eval(expected))[2:]}"
    try:
        wrote, gives = ast.literal_eval(expected), ast.literal_eval(got)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ""
    if _fits(wrote, gives):
        return ""
    return f"the code gives {_form(gives)}, and you wrote {_form(wrote)}"


def of_another_form(expression: str, got: str, form: str, iterator: bool = False) -> str:
    """What to tell the writer of a value of another form (`form`: what other_form said, given `iterator`)."""
    if iterator:
        return (f"`{expression}` gives {got} on the code as it is now: {form}, whatever the fix. Put the call in "
                f"list(...), `list({expression})`, and write the list it should give.")
    return (f"`{expression}` gives {got} on the code as it is now: {form}. A value of another form fails for its "
            "form alone, whatever the fix. Write the value it should give in the form the code gives, changed only "
            "where the goal says it goes wrong.")


def _sequence(expected: str) -> bool:
    try:
        return isinstance(ast.literal_eval(expected), (list, tuple))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _fits(wrote: object, gives: object) -> bool:
    if wrote is None or gives is None:
        return True
    if _number(wrote) and _number(gives):
        return True
    if type(wrote) is not type(gives):
        return False
    if isinstance(wrote, dict):
        common = wrote.keys() & gives.keys()
        if common:
            return all(_fits(wrote[k], gives[k]) for k in common)
        return _any_fits(list(wrote.values()), list(gives.values()))
    if isinstance(wrote, (list, tuple, set, frozenset)):
        return _any_fits(list(wrote), list(gives))
    return True


def _any_fits(wrote: list, gives: list) -> bool:
    return not wrote or not gives or any(_fits(w, g) for w in wrote for g in gives)


def _number(value: object) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _form(value: object) -> str:
    """`a dict of str`, `a list of int/str`, `a str`: the value's type and, for a collection, its items' types."""
    items = list(value.values()) if isinstance(value, dict) else \
        list(value) if isinstance(value, (list, tuple, set, frozenset)) else None
    kinds = "/".join(sorted({type(i).__name__ for i in items})) if items else ""
    name = type(value).__name__
    return ("an " if name[0] in "aeiou" else "a ") + name + (f" of {kinds}" if kinds else "")
