"""omni/repair/block.py: the block around a line, marked, and a reply put back in its place."""

from __future__ import annotations

import textwrap

import pytest

from omni.repair.block import END, START, Block, around, inside, marked, spliced

SPAN = textwrap.dedent('''\
    def span(self, frame, count=1):
        """The span of a frame."""
        floor = self.start
        if frame == "week":
            floor = floor.shift(days=-self.weekday)
        elif frame == "quarter":
            floor = floor.shift(months=-(self.month % 3))
        for _ in range(count):
            floor = floor.next()
        try:
            end = floor.shift(**{frame: count})
        except ValueError:
            end = None
        return floor, end
''')


@pytest.mark.parametrize(("line", "block"), [
    (7, Block(4, 7)),    # in an elif's body: the whole if/elif (4 lines), never the elif alone
    (9, Block(8, 9)),    # a loop's body: the loop
    (13, Block(10, 13)),  # an except branch: the whole try
    (14, Block(14, 14)),  # a plain statement
    (1, None),           # the def line is not in the body
    (40, None),          # not in the definition
])
def test_the_block_around_a_line(line, block):
    assert around(SPAN, [line]) == block


def test_lines_that_rank_alike_give_the_run_of_statements_that_holds_them_all():
    assert around(SPAN, [5, 7]) == Block(4, 7)  # both in the if/elif: the if
    assert around(SPAN, [3, 9]) == Block(3, 9)  # the assignment, the if and the loop
    assert around(SPAN, [2, 14]) == Block(2, 14)  # from the docstring to the return: the whole body, 13 lines
    long = "def f(x):\n" + "".join(f"    x += {i}\n" for i in range(40))
    assert around(long, [2, 41]) is None  # 40 lines: no block


def test_a_long_compound_statement_gives_its_inner_statement():
    long_if = "def f(x):\n    if x:\n" + "".join(f"        x += {i}\n" for i in range(12)) + "    return x\n"
    assert around(long_if, [5]) == Block(5, 5)


def test_a_method_indented_in_its_class_and_a_source_that_does_not_parse():
    method = textwrap.indent(SPAN, "    ")
    assert around(method, [7]) == Block(4, 7)
    assert around("def f(:\n    pass\n", [2]) is None


def test_marked_shows_the_block_between_markers_at_its_indentation():
    shown = marked(SPAN, Block(4, 7)).splitlines()
    assert shown[3] == "    " + START and shown[8] == "    " + END
    assert shown[4:8] == SPAN.splitlines()[3:7] and len(shown) == len(SPAN.splitlines()) + 2
    assert inside(SPAN, Block(8, 9)) == "for _ in range(count):\n    floor = floor.next()"


def test_a_reply_is_put_back_at_the_blocks_indentation():
    reply = ("if frame == 'week':\n    floor = floor.shift(days=-self.weekday)\nelif frame == 'quarter':\n"
             "    floor = floor.shift(months=-((self.month - 1) % 3))\n")
    fixed = spliced(SPAN, Block(4, 7), reply)
    assert "        floor = floor.shift(months=-((self.month - 1) % 3))" in fixed.splitlines()
    assert fixed.splitlines()[:3] == SPAN.splitlines()[:3] and fixed.splitlines()[7:] == SPAN.splitlines()[7:]


def test_a_reply_with_the_markers_copied_or_a_whole_definition_or_broken_code():
    with_markers = f"    {START}\n    for _ in range(count + 1):\n        floor = floor.next()\n    {END}\n"
    assert "    for _ in range(count + 1):" in spliced(SPAN, Block(8, 9), with_markers).splitlines()
    whole = "def span(self, frame, count=1):\n    return None, None\n"
    assert spliced(SPAN, Block(8, 9), whole) == whole
    assert spliced(SPAN, Block(8, 9), "for _ in range(:\n") == ""
