"""Missing lines (omni/repair/gaps.py): a reply's lines added after the line it names. Code from outside the
benchmark."""

from __future__ import annotations

from omni.repair.gaps import inserted, numbered

TOTAL = '''def total(prices):
    sum_ = 0
    for price in prices:
        cents = round(price * 100)
        sum_ += cents
    return sum_ / 100'''
GUARD = "        if cents < 0:\n            raise ValueError(price)\n"


def test_the_prompt_shows_each_line_with_its_number():
    assert numbered(TOTAL).splitlines()[3] == "4|         cents = round(price * 100)"


def test_the_lines_go_after_the_line_the_reply_names_at_its_indentation():
    reply = "The guard is missing, after line 4:\n```python\nif cents < 0:\n    raise ValueError(price)\n```"
    assert inserted(TOTAL, reply) == [TOTAL.replace("        sum_ += cents", GUARD + "        sum_ += cents")]


def test_after_a_line_that_opens_a_block_the_lines_go_inside_it():
    reply = "After line 3\n```python\nif price is None:\n    continue\n```"
    (only,) = inserted(TOTAL, reply)
    assert "    for price in prices:\n        if price is None:\n            continue\n        cents" in only


def test_lines_copied_with_their_numbers_lose_them_and_keep_their_own_indentation():
    reply = "after line 4\n```python\n5|         if cents < 0:\n6|             raise ValueError(price)\n```"
    assert inserted(TOTAL, reply)[0] == TOTAL.replace("        sum_ += cents", GUARD + "        sum_ += cents")


def test_after_the_last_line_of_a_block_the_lines_may_belong_to_it_or_follow_it():
    reply = "after line 5\n```python\nsum_ = max(sum_, 0)\n```"
    inside, after = inserted(TOTAL, reply)
    assert "        sum_ += cents\n        sum_ = max(sum_, 0)\n    return" in inside
    assert "        sum_ += cents\n    sum_ = max(sum_, 0)\n    return" in after


def test_a_reply_that_names_no_line_of_the_body_or_gives_no_code_adds_nothing():
    assert inserted(TOTAL, "```python\nif cents < 0:\n    raise ValueError(price)\n```") == []
    assert inserted(TOTAL, "after line 40\n```python\npass\n```") == []
    assert inserted(TOTAL, "after line 2, a check of the prices") == []
    assert inserted(TOTAL, "after line 2\n```python\nif prices:\n```") == []  # does not parse


def test_a_reply_that_is_a_whole_definition_is_taken_as_it_is():
    whole = TOTAL.replace("round(", "int(")
    assert inserted(TOTAL, f"after line 4\n```python\n{whole}\n```") == [whole]


def test_lines_the_reply_repeats_around_its_new_ones_say_where_they_go_and_are_not_added_twice():
    reply = ("after line 2\n```python\ncents = round(price * 100)\nif cents < 0:\n    raise ValueError(price)\n"
             "sum_ += cents\n```")
    assert inserted(TOTAL, reply) == [TOTAL.replace("        sum_ += cents", GUARD + "        sum_ += cents")]
    opened = "```python\nfor price in prices:\n    if price is None:\n        continue\n```"
    (only,) = inserted(TOTAL, opened)
    assert "    for price in prices:\n        if price is None:\n            continue\n        cents" in only


def test_where_they_go_written_inside_the_code_block_is_read_and_not_added():
    reply = "```\nafter line 4\nif cents < 0:\n    raise ValueError(price)\n```"
    assert inserted(TOTAL, reply) == [TOTAL.replace("        sum_ += cents", GUARD + "        sum_ += cents")]
