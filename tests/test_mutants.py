"""Mechanical candidates: one small change each, written into the definition's own text."""

from __future__ import annotations

import ast
import difflib

import pytest
from conftest import changed_line

from omni.repair.mutants import mutants
from omni.repair.rewritten import in_rewrite, without_docstring


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line.startswith("+") and not line.startswith("+++")]


def test_a_parameter_the_function_never_uses_is_passed_on_to_each_call_it_makes():
    """A dropped argument: `limit` is taken and never read; each call of the body gets it by name, a call that
    passes it already or passes **kwargs does not, and a multi-line call with a trailing comma stays Python."""
    source = ("def fetch(self, url, limit=None, retries=3):\n    page = self.get(url)\n"
              "    more = self.next(\n        page,\n    )\n    self.log(**self.extra)\n    self.close()\n"
              "    return self.parse(page, more, limit=None)\n")
    variants = mutants(source, limit=200)
    forwarded = [changed_lines(source, v) for v in variants if "=retries" in v or "limit=limit" in v]
    assert ["+    page = self.get(url, limit=limit)"] in forwarded
    assert ["+    page = self.get(url, retries=retries)"] in forwarded
    assert ["+        page, retries=retries,"] in forwarded  # after the last argument, before the trailing comma
    assert ["+    self.close(limit=limit)"] in forwarded  # a call with no arguments
    assert not any("self.log(**self.extra, " in v for v in variants)
    assert not any("limit=None, limit=limit" in v for v in variants)
    assert not any("self=self" in v or "url=url" in v for v in variants)  # url is used; self is never passed on


@pytest.mark.parametrize("line, fixed", [
    ("    return a if a < b else b", "    return a if a <= b else b"),
    ("    return a if a >= b else b", "    return a if a > b else b"),
    ("    return key in seen", "    return key not in seen"),
    ("    return key is not None", "    return key is None"),
    ("    return a == b", "    return a != b"),
    ("    return a and b", "    return a or b"),
    ("    return not a", "    return a"),
    ("    return a - b", "    return a + b"),
    ("    return a / b", "    return a // b"),
    ("    return items[len(items) - 1:]", "    return items[len(items) - 0:]"),
    ("    return items[:2]", "    return items[:3]"),
    ("    return divmod(a, b)", "    return divmod(b, a)"),
    ("    return sorted(items, reverse=True)", "    return sorted(items, reverse=False)"),
    ("    return self.month % 3", "    return (self.month - 1) % 3"),
    ("    return a // b", "    return (a + 1) // b"),
    ("    return items[b]", "    return items[b - 1]"),
    ("    return items[a:b]", "    return items[a:b + 1]"),
    ("    return [items[k] for k in range(b)]", "    return [items[k] for k in range(b - 1)]"),
    ("    return list(range(a, self.size))", "    return list(range(a, self.size + 1))"),
    ("    key = key or a", "    key = a"),
    ("    return key and a and b", "    return key and b"),
    ("    return a if a < b else b", "    return a if a > b else b"),
    ("    return a if a <= b else b", "    return a if a > b else b"),
    ("    return max(items)", "    return min(items)"),
    ("    return int(a / 100 * b)", "    return round(a / 100 * b)"),
    ("    return [k for row in items[:1] for k in row]", "    return [k for row in items for k in row]"),
    ("    return a.strip()[1:]", "    return a.strip()"),
    ("    return all(items)", "    return any(items)"),
    ("    return key.endswith(a)", "    return key.startswith(a)"),
    ("    return key.rstrip()", "    return key.lstrip()"),
    ("    return a if key else b", "    return a if not key else b"),
    ("    return a if key and seen else b", "    return a if not (key and seen) else b"),
    ("    return min_width if a else max_width", "    return max_width if a else max_width"),
])
def test_the_one_change_a_bug_is_often_made_of_is_among_them(line, fixed):
    source = f"def f(a, b, key=None, seen=(), items=(), self=None):\n{line}\n"
    variants = mutants(source, limit=100)
    assert any(changed_lines(source, v) == ["+" + fixed] for v in variants), variants
    for variant in variants:
        ast.parse(variant)
        assert len(changed_lines(source, variant)) == 1 and variant != source


def test_a_loop_that_stops_or_goes_on_and_a_condition_negated():
    source = "def f(xs):\n    for x in xs:\n        if x.done:\n            break\n    return xs\n"
    changed = [changed_lines(source, v) for v in mutants(source, limit=100)]
    assert ["+            continue"] in changed and ["+        if not x.done:"] in changed
    compared = "def f(a, b):\n    if a == b:\n        return a\n"  # a comparison: its operator turns instead
    assert [changed_lines(compared, v) for v in mutants(compared, limit=100)] == [["+    if a != b:"],
                                                                                 ["+    if a in b:"]]
    forever = "def f():\n    while True:\n        g()\n"  # a loop run until it breaks: no `not True`
    assert [changed_lines(forever, v) for v in mutants(forever, limit=100)] == [["+    while False:"]]


def test_formatting_comments_docstring_and_indentation_are_kept():
    source = ('    def total(self, xs):  # a method\n        """Sum of 1 and 2."""\n'
              '        # add them up\n        return sum(xs)  +  1\n')
    variants = mutants(source, limit=100)
    assert "    def total(self, xs):  # a method\n        \"\"\"Sum of 1 and 2.\"\"\"\n        # add them up\n" \
           "        return sum(xs)  -  1\n" in variants
    assert all('"""Sum of 1 and 2."""' in v for v in variants)  # numbers in a docstring are not code
    assert all(v.startswith("    def total(self, xs):  # a method\n") for v in variants)


def test_kinds_take_turns_and_the_limit_holds():
    body = "\n".join(f"    x{n} = {n + 2}" for n in range(30))
    source = f"def f(a, b):\n{body}\n    return g(a, b) if a < b else 0\n"
    variants = mutants(source, limit=6)
    firsts = [changed_lines(source, v)[0] for v in variants]
    assert len(variants) == 6
    assert "+    return g(a, b) if a <= b else 0" in firsts  # the comparison before 30 constants
    assert "+    return g(b, a) if a < b else 0" in firsts  # the swap too


def test_the_changes_on_the_lines_the_failing_tests_point_to_come_first():
    """A long definition has more one-change variants than are tried: those on the spectrum's lines go first,
    the kinds still taking turns there; without such lines, the order of the code."""
    body = "\n".join(f"    x{n} = a < {n + 2} and b" for n in range(20))
    source = f"def f(a, b):\n{body}\n    return x19 + b if a < b else x0 - b\n"
    last = len(source.splitlines())
    near = [changed_lines(source, v)[0] for v in mutants(source, limit=7, near=frozenset({last}))]
    assert near == ["+    return x19 + b if a <= b else x0 - b", "+    return x19 - b if a < b else x0 - b",
                    "+    return x19 + b if a > b else x0 - b", "+    return x19 + b if a < b else x0 + b",
                    "+    return x19 + b if a >= b else x0 - b",
                    "+    return x0 - b if a < b else x19 + b",  # the catalogue's kinds after the first ones
                    "+    x0 = a <= 2 and b"]  # then the others
    plain = [changed_lines(source, v)[0] for v in mutants(source, limit=4)]
    assert "+    return x19 + b if a <= b else x0 - b" not in plain and "+    x0 = a <= 2 and b" in plain


def test_after_the_best_lines_come_the_other_lines_the_failing_tests_ran_by_their_score():
    """The spectrum's best line first; then each tier of the other lines the failing tests ran, best first; the lines
    no failing test ran (the else branch here) last, whatever the kind of their change."""
    source = ("def f(a, b):\n    if a < b:\n        low = 0\n    else:\n        low = b - 1\n    high = a + 2\n"
              "    return low < high\n")
    tiers = (frozenset({7}), frozenset({6}), frozenset({2, 3}), frozenset({1, 4, 5}))
    ordered = mutants(source, limit=64, near=tiers[0], then=tiers[1:3])
    where = [next(n for n, lines in enumerate(tiers) if changed_line(source, v) in lines) for v in ordered]
    assert where == sorted(where) and set(where) == {0, 1, 2, 3}
    assert sorted(ordered) == sorted(mutants(source, limit=64))  # the same candidates, in another order
    assert [changed_line(source, v) for v in mutants(source, limit=3, then=(frozenset({5}),))] == [5, 5, 5]


def test_the_spectrums_file_lines_are_found_in_the_code_without_its_docstring():
    whole = 'def f(a):\n    """Two\n    lines."""\n    b = a + 1\n    return b * 2\n'  # lines 10-14 of its file
    rewritten = without_docstring(whole).splitlines()
    assert in_rewrite((13, 14), 10, whole) == {2, 3} and rewritten[1].strip() == "b = a + 1"
    assert in_rewrite((11,), 10, whole) == frozenset()  # a docstring line: not in the code rewritten
    assert in_rewrite((13,), 10, "def f(a):\n    x = 1\n    y = 2\n    return x\n") == {4}


def test_type_annotations_are_not_changed():
    source = "def f(xs: list[int], n: dict[str, int] = None) -> tuple[int, int]:\n    k: list[int] = xs[n]\n"
    assert [changed_lines(source, v) for v in mutants(source, limit=100)] == [["+    k: list[int] = xs[n - 1]"],
                                                                               ["+    k: list[int] = xs[n + 1]"]]


def test_a_name_is_read_as_a_sibling_name_of_the_definition_and_only_as_one():
    """One word more, less or other, one shared: a mix-up of two names in the same definition. Names that share no
    word are no siblings (`stage` and `limit`), nor is a name the definition does not use."""
    source = ("def rank(stage, _stage=None, limit=0):\n    if stage is None:\n        return LastPlace\n"
              "    return FirstPlace if _stage > limit else limit\n")
    renamed = [changed_lines(source, v) for v in mutants(source, limit=100)]
    assert ["+        return FirstPlace"] in renamed and ["+    if _stage is None:"] in renamed
    assert ["+    return LastPlace if _stage > limit else limit"] in renamed
    assert ["+    return FirstPlace if stage > limit else limit"] in renamed
    assert not any(name in line for lines in renamed for line in lines for name in ("if limit", "> stage",
                                                                                       "else stage", "OtherPlace"))
    typed = "def f(limit: MaxLimit) -> int:\n    return limit + 1\n"  # a type is no sibling of a value
    assert not any("MaxLimit +" in v for v in mutants(typed, limit=100))


def test_a_slice_is_taken_off_where_it_is_read_and_not_where_it_is_written():
    source = "def f(items, b):\n    items[:1] = b\n    del items[2:]\n    return items[0]\n"
    variants = mutants(source, limit=200)
    assert variants and not any("    items = b\n" in v or "    del items\n" in v for v in variants)


@pytest.mark.parametrize("source", ["def f(:\n    pass\n", "def f():\n    return g(x)\n", ""])
def test_code_with_nothing_to_change_or_that_does_not_parse_gives_none(source):
    assert mutants(source) == []



def kind(before: str, after: str) -> str:
    """"swap": the same lines in another order; "move": the same lines, one in another margin; "drop": lines left
    out, none changed; "copy": lines added, each one the code has already (in another margin), none removed; else
    "change"."""
    old, new = before.splitlines(), after.splitlines()
    if sorted(old) == sorted(new):
        return "swap"
    if sorted(line.strip() for line in old) == sorted(line.strip() for line in new):
        return "move"
    if len(new) > len(old) and not removed_lines(before, after):
        known = {line.strip() for line in old}
        return "copy" if all(line[1:].strip() in known for line in changed_lines(before, after)) else "change"
    return "drop" if len(new) < len(old) and not changed_lines(before, after) else "change"


def removed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line.startswith("-") and not line.startswith("---")]


ESCAPE = ('def escape(text, log=print):\n    """Escape text."""\n    text = text.replace("&", "&amp;")\n'
          '    text = text.replace("<", "&lt;")  # after the ampersands\n    if not text:\n        return text\n'
          '    log(text); log(text)\n    return text\n')


def test_a_statement_with_its_lines_to_itself_is_left_out_lines_and_all():
    """An assignment, a call made for its effect, a guard (`if` with no `else`): each left out whole. Not the
    docstring, not statements that share a line, not a `return`, not the only statement of a block."""
    dropped = [removed_lines(ESCAPE, v) for v in mutants(ESCAPE, limit=200) if kind(ESCAPE, v) == "drop"]
    assert dropped == [['-    text = text.replace("&", "&amp;")'],
                       ['-    text = text.replace("<", "&lt;")  # after the ampersands'],
                       ["-    if not text:", "-        return text"]]  # `log(text); log(text)` share a line
    only = "def f(xs):\n    for x in xs:\n        g(x)\n    return xs\n"  # the loop's body: one statement
    assert not any("g(x)" not in v for v in mutants(only, limit=200))


def test_two_neighbouring_one_line_statements_are_swapped():
    """Not a compound statement, nor one that ends the flow, nor two alike, nor two that share no name."""
    swapped = [v for v in mutants(ESCAPE, limit=200) if kind(ESCAPE, v) == "swap"]
    first = '    text = text.replace("&", "&amp;")\n'
    second = '    text = text.replace("<", "&lt;")  # after the ampersands\n'
    assert swapped == [ESCAPE.replace(first + second, second + first)]
    last = "def f(a):\n    a.append(1)\n    a.append(2)"  # the code's last line has no line end
    assert "def f(a):\n    a.append(2)\n    a.append(1)" in mutants(last, limit=200)
    alike = "def f(a):\n    a.pop()\n    a.pop()\n"
    assert all(kind(alike, v) != "swap" for v in mutants(alike, limit=200))


def test_statements_are_left_out_or_swapped_after_the_one_change_kinds_first_where_the_tests_point():
    """Where the failing tests point, the statement kinds come after the one-change kinds there and before any
    change elsewhere; elsewhere, after all the others."""
    source = "def f(a, b):\n    a.append(1)\n    b.append(2)\n    c = a < b\n    return c\n"
    variants = mutants(source, limit=200)
    kinds = [kind(source, v) for v in variants]
    first = kinds.index("drop")
    assert first > 0 and set(kinds[:first]) == {"change"} and "swap" in kinds
    later = [changed_lines(source, v) for v, k in zip(variants[first:], kinds[first:], strict=True) if k == "change"]
    assert later == [["+    b.append(-2)"]]  # the catalogue's, in turn with the statements' (`-1` came before)
    near = mutants(source, limit=200, near=frozenset({3}))  # `b.append(2)`
    assert [changed_lines(source, v) for v in near[:3]] == [["+    b.append(3)"], ["+    b.append(1)"],
                                                            ["+    b.append(-2)"]]  # the catalogue's sign third
    assert removed_lines(source, near[3]) == ["-    b.append(2)"] and kind(source, near[3]) == "drop"
    assert kind(source, near[4]) == "swap"  # with `c = a < b`, which reads b (not with `a.append(1)`: no name shared)
    assert kind(source, near[5]) == "change" and kinds.count("swap") == 1  # then the one-change kinds elsewhere


PRICE = ("def price(order, member):\n    if member:\n        total = order.net * 0.9\n        if order.coupon:\n"
         "            total -= order.coupon\n    else:\n        total = order.net\n    return total\n")


def test_a_statement_that_follows_an_assignment_is_copied_after_the_same_assignment_in_another_block():
    """The insert of statement-level repair, from the code's own statements: the guard one branch has after it
    computes `total`, put after the other branch's `total = ...`; nowhere else (not into its own block, nor into the
    block inside it, nor after the `return`, which follows no assignment)."""
    copies = [v for v in mutants(PRICE, limit=200) if kind(PRICE, v) == "copy"]
    assert copies == [PRICE.replace("        total = order.net\n",
                                    "        total = order.net\n        if order.coupon:\n"
                                    "            total -= order.coupon\n")]
    held = PRICE.replace("        total = order.net\n", "        total = order.net\n        if order.coupon:\n"
                         "            total -= order.coupon\n")
    assert all(kind(held, v) != "copy" for v in mutants(held, limit=200))  # the block (or the guard) has it already
    other = PRICE.replace("        total = order.net\n", "        cost = order.net\n")
    assert all(kind(other, v) != "copy" for v in mutants(other, limit=200))  # it computes something else


def test_a_copy_goes_before_the_return_that_ends_a_block_and_never_after_an_elif_chain():
    clamp = ("def clamp(a):\n    if a:\n        out = a * 2\n        out = min(out, 10)\n        return out\n"
             "    out = -a\n    return out\n")
    copies = [changed_lines(clamp, v) for v in mutants(clamp, limit=200) if kind(clamp, v) == "copy"]
    assert copies == [["+    out = min(out, 10)"]]
    assert [v for v in mutants(clamp, limit=200) if kind(clamp, v) == "copy"][0].endswith(
        "    out = -a\n    out = min(out, 10)\n    return out\n")
    chain = "def f(x):\n    if x > 1:\n        y = 2\n        y += x\n    elif x < 0:\n        y = 3\n    return y\n"
    copied = [v for v in mutants(chain, limit=200) if kind(chain, v) == "copy"]
    assert copied == [chain.replace("        y = 3\n", "        y = 3\n        y += x\n")]  # in the elif's body only


def test_a_copy_is_a_statement_kind_first_where_the_tests_point_and_after_the_one_change_kinds_elsewhere():
    variants = mutants(PRICE, limit=200)
    kinds = [kind(PRICE, v) for v in variants]
    assert kinds.count("copy") == 1
    later = [changed_lines(PRICE, v) for v, k in list(zip(variants, kinds, strict=True))[kinds.index("copy"):]
             if k == "change"]  # the catalogue's alone: an attribute of `order` read as the other one
    assert later == [["+        if order.net:"], ["+            total -= order.net"], ["+        total = order.coupon"]]
    near = [kind(PRICE, v) for v in mutants(PRICE, limit=200, near=frozenset({7}))]  # `total = order.net`
    assert near[:2] == ["change", "copy"]  # `order.net` read as `order.coupon` (the catalogue's), then the copy
    assert near.count("change") == kinds.count("change")


def test_a_patterns_character_class_takes_digits_too_and_its_repeats_and_anchors_change_one_at_a_time():
    """A slug that lost its digits: the fix is the class `[^a-z\\d]`, one change of the pattern; raw stays raw."""
    source = ('def slug(title):\n    return re.sub(r"[^a-z]+", "-", title.lower()).strip("-")\n')
    changed = [changed_lines(source, v) for v in mutants(source, limit=200)]
    patterned = [c[0] for c in changed if 'r"[^a-z]+"' not in c[0] and 're.sub(r"' in c[0]
                 and "title.lower()" in c[0]]
    assert patterned == ['+    return re.sub(r"[^a-z\\d]+", "-", title.lower()).strip("-")',  # digits too
                         '+    return re.sub(r"[a-z]+", "-", title.lower()).strip("-")',  # negated the other way
                         '+    return re.sub(r"[^a-z]*", "-", title.lower()).strip("-")']  # `+` as `*`


def test_a_pattern_changes_only_into_one_that_compiles_and_keeps_its_quotes_and_escapes():
    from omni.repair.patterns import patterns, variants

    source = ("def version(text):\n    found = re.match('^v?(\\\\d+)\\\\.(\\\\d{1,3})$', text)\n"
              "    words = re.split(KEYS, text)\n    return re.findall(r'a' r'b', text), found, words\n")
    variants_of = [changed_lines(source, v) for v in mutants(source, limit=200)]
    in_match = [c[0] for c in variants_of if c and "re.match" in c[0]]
    assert "+    found = re.match('^v(\\\\d+)\\\\.(\\\\d{1,3})$', text)" in in_match  # the optional `v` required
    assert "+    found = re.match('^v?(\\\\d+)\\\\.(\\\\d{1,4})$', text)" in in_match  # a count one more
    assert "+    found = re.match('v?(\\\\d+)\\\\.(\\\\d{1,3})$', text)" in in_match  # an anchor left out
    lines = source.splitlines(keepends=True)
    changed = {edit[0] for node in ast.walk(ast.parse(source)) for edit in patterns(node, lines, set())}
    assert changed == {2}  # a name (line 3) and two literals side by side (line 4) are never changed
    counted = 'def pair(s):\n    return re.match(r"\\d{2,2}", s)\n'
    assert "\\d{3,2}" in variants("\\d{2,2}")  # a bound one more: the least above the most
    offered = [e[4] for node in ast.walk(ast.parse(counted)) for e in patterns(node, counted.splitlines(True), set())]
    assert 'r"\\d{1,2}"' in offered and not any("{3,2}" in text for text in offered)  # it does not compile


RECORD = ("def record(self, key, value):\n    try:\n        entry = self.entries[key]\n    except KeyError:\n"
          "        entry = self.entries[key] = Entry(key)\n        entry.seen = self.clock()\n    else:\n"
          "        entry.hits += 1\n    entry.value = value\n")


def test_the_last_statement_of_a_block_is_moved_out_to_after_the_statement_that_holds_it():
    """What every branch needs, written into one: `entry.seen` set only when the key was new."""
    moved = RECORD.replace("        entry.seen = self.clock()\n", "").replace(
        "        entry.hits += 1\n", "        entry.hits += 1\n    entry.seen = self.clock()\n")
    variants = mutants(RECORD, limit=200)
    assert moved in variants
    assert RECORD.replace("        entry.hits += 1\n", "").replace(  # the `else` has one statement: never emptied
        "    entry.value = value\n", "    entry.hits += 1\n    entry.value = value\n") not in variants
    loop = ("def total(rows):\n    amount = 0\n    for row in rows:\n        amount += row.amount\n"
            "        report(amount)\n    return amount\n")
    once = loop.replace("        report(amount)\n    return", "    report(amount)\n    return")
    assert once in mutants(loop, limit=200) and kind(loop, once) == "move"
    chain = "def f(x):\n    if x > 1:\n        y = 2\n    elif x < 0:\n        y = 3\n        y += x\n    return y\n"
    outside = chain.replace("        y += x\n    return y\n", "    y += x\n    return y\n")
    assert outside not in mutants(chain, limit=200)  # an elif's block is left to its chain, whose `orelse` it is


def test_the_bodies_of_two_neighbouring_branches_of_a_chain_are_swapped_and_an_if_else_is_left_to_negation():
    """None sorts first: `elif a is None` answers 1 and `elif b is None` -1, the wrong way round."""
    rank = ("def rank(a, b):\n    if a is None and b is None:\n        return 0\n    elif a is None:\n"
            "        return 1\n    elif b is None:\n        return -1\n    else:\n        return (a > b) - (a < b)\n")
    swapped = [v for v in mutants(rank, limit=200) if kind(rank, v) == "swap"]
    right = rank.replace("        return 1\n    elif b is None:\n        return -1\n",
                         "        return -1\n    elif b is None:\n        return 1\n")
    assert right in swapped
    assert rank.replace("        return 0\n    elif a is None:\n        return 1\n",  # the first two
                        "        return 1\n    elif a is None:\n        return 0\n") in swapped
    assert len(swapped) == 3  # and the last elif's with the else's
    sign = "def sign(x):\n    if x < 0:\n        return -1\n    else:\n        return 1\n"
    assert [v for v in mutants(sign, limit=200) if kind(sign, v) == "swap"] == []  # `if not x < 0:` is one already


@pytest.mark.parametrize("line, fixed", [
    ("    return key == seen", "    return key in seen"),  # one value where a collection of them was meant
    ("    return key not in seen", "    return key != seen"),
    ("    return key is a", "    return key == a"),
    ("    return a if key else b", "    return b if key else a"),  # each case given the other's answer
    ("    return items[-1]", "    return items[1]"),  # a sign
    ("    return items.index(a, 2)", "    return items.index(a, -2)"),
    ("    return items[a:b]", "    return items[:b]"),  # one bound of a slice left out
    ("    return items[a:b]", "    return items[a:]"),
    ("    return a * b", "    return a / b"),
    ("    return a ** b", "    return a * b"),
    ("    return a & b", "    return a | b"),
    ("    return a << b", "    return a >> b"),
    ("    return int(a / b)", "    return (a / b)"),  # a wrapping builtin taken off
    ("    return abs(a)", "    return a"),
    ("    return [k for k in items]", "    return [k for k in sorted(items)]"),  # put in order, or reversed
    ("    return list(items)", "    return list(reversed(items))"),
    ("    return self.low + self.high", "    return self.high + self.high"),  # another attribute of the object
    ("    return self.left() or self.right()", "    return self.right() or self.right()"),
    ("    return sorted(items, key=a, reverse=b)", "    return sorted(items, reverse=b)"),  # an argument left out
    ("    return round(a, 2)", "    return round(a)"),
    ("    return items[a] * (key - a) + items[b] * (b - key)",  # two like parts of one expression exchanged
     "    return items[a] * (b - key) + items[b] * (key - a)"),
    ("    return items[a] * (key - a) + items[b] * (b - key)",
     "    return items[b] * (key - a) + items[a] * (b - key)"),
    ("    return self.low(a) < self.high(b)", "    return self.high(a) < self.low(b)"),
    ("    return len(a) - len(b)", "    return len(b) - len(a)"),
])
def test_the_catalogues_operators_write_back_what_the_first_kinds_cannot(line, fixed):
    source = f"def f(a, b, key=None, seen=(), items=(), self=None):\n{line}\n"
    variants = mutants(source, limit=200)
    assert any(changed_lines(source, v) == ["+" + fixed] for v in variants), [changed_lines(source, v)
                                                                             for v in variants]
    for variant in variants:
        ast.parse(variant)
        assert len(changed_lines(source, variant)) == 1 and variant != source


def test_the_catalogue_leaves_alone_what_would_write_a_first_kinds_change_again_or_nothing():
    """A number right of `+`/`-` gets no minus (`a - -1` is `a + 1`), a value already in order is not sorted again,
    an attribute read on another object is not swapped in, a call with one argument keeps it, and the operands of
    `+` and `*` are not exchanged (the same value)."""
    changed = [c for line in ("    return a - 1", "    return list(sorted(items))", "    return self.low + key.high",
                              "    return round(a)")
               for v in mutants(f"def f(a, key, items, self):\n{line}\n", limit=200)
               for c in changed_lines(f"def f(a, key, items, self):\n{line}\n", v)]
    assert "+    return a - -1" not in changed
    assert not any("sorted(sorted(" in c or "reversed(sorted(" in c for c in changed)
    assert "+    return self.high + key.high" not in changed and "+    return self.low + key.low" not in changed
    assert "+    return round()" not in changed
    exchanged = [c for line in ("    return len(a) + len(b)", "    return len(a) * len(b)")
                 for v in mutants(f"def f(a, b, key):\n{line}\n", limit=200)
                 for c in changed_lines(f"def f(a, b, key):\n{line}\n", v)]
    assert "+    return len(b) + len(a)" not in exchanged and "+    return len(b) * len(a)" not in exchanged
