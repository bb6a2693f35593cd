"""The goal's examples: what is taken from a goal, and how the gate holds the work to them."""

from __future__ import annotations

import json

import pytest

from conftest import make_repo, run_omni
from omni.goal.examples import Example, goal_examples

PLAN = {"text": "1. Fix add\n2. Finish"}
FINISH = {"tool": "finish", "args": {"summary": "fixed add"}}
FIX_ADD = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                              "new_text": "return a + b"}}


@pytest.mark.parametrize("goal, expected", [
    ("trim_slash should drop a trailing '/' (trim_slash('docs/') == 'docs'), but it keeps it.",
     [Example("trim_slash('docs/')", "'docs'")]),
    ("sorting is backwards: ranks.order([3, 1, 2]) gives [3, 2, 1] instead of [1, 2, 3]. Fix it.",
     [Example("ranks.order([3, 1, 2])", "[1, 2, 3]")]),
    ("units.parse_size('2k')[0] returns 2 instead of 2048.", [Example("units.parse_size('2k')[0]", "2048")]),
    ("Add word_count: word_count('a b a') == {'a': 2, 'b': 1}.",
     [Example("word_count('a b a')", "{'a': 2, 'b': 1}")]),
    ("f(x) == 3 and g(y) == 4", [Example("f(x)", "3"), Example("g(y)", "4")]),  # two, not one chained
    ("Use `split('a,b') == ['a', 'b']`.", [Example("split('a,b')", "['a', 'b']")]),
    ("Duration(minutes=90) is not normalized: it should equal Duration(hours=1, minutes=30) (as seconds do).",
     [Example("Duration(minutes=90)", "Duration(hours=1, minutes=30)")]),
    ("to_list('a') should return ['a'], not 'a'.", [Example("to_list('a')", "['a']")]),
    ("mean([1, 2]) yields 1 instead of 1.5", [Example("mean([1, 2])", "1.5")]),
    ("clamp(15, 0, 10) must be 10", [Example("clamp(15, 0, 10)", "10")]),
    # The same report in other words: whatever the verb, with words between the call and the verb, the expected
    # value said after the one it gives, or the call said after what was expected.
    ("middle([4, 1, 3, 2]) in numbers/core.py returns 3 instead of 2.5", [Example("middle([4, 1, 3, 2])", "2.5")]),
    ("With middle([4, 1, 3, 2]) I get 3 rather than 2.5", [Example("middle([4, 1, 3, 2])", "2.5")]),
    ("middle([4, 1, 3, 2]) returns 3, expected 2.5", [Example("middle([4, 1, 3, 2])", "2.5")]),
    ("middle([4, 1, 3, 2]) -> 3 (expected: 2.5)", [Example("middle([4, 1, 3, 2])", "2.5")]),
    ("middle([4,1,3,2]) comes out as 3; the right answer is 2.5", [Example("middle([4,1,3,2])", "2.5")]),
    ("I expected middle([4, 1, 3, 2]) to be 2.5 but got 3.", [Example("middle([4, 1, 3, 2])", "2.5")]),
    ("Expected `middle([4, 1, 3, 2])` to return 2.5, got 3", [Example("middle([4, 1, 3, 2])", "2.5")]),
    ("We want pad('7', 3) to give '007'", [Example("pad('7', 3)", "'007'")]),
    ("`to_int('0x1f')` should be `31`", [Example("to_int('0x1f')", "31")]),
    ("Calling middle([4, 1, 3, 2]) returns 3 but the result is supposed to be 2.5.",
     [Example("middle([4, 1, 3, 2])", "2.5")]),
    # a comparison is what is said to be True or False, whole; said to be a number, it is its last operand's
    ("Dates sort wrong: when('may 2') < when('june 1') is False here; it should be True.",
     [Example("when('may 2') < when('june 1')", "True")]),
    ("key(a) >= key(b) returns True instead of False", [Example("key(a) >= key(b)", "False")]),
    ("For 3 < count_words('a b c d') it should be 4", [Example("count_words('a b c d')", "4")]),
    # a tuple in parentheses is a value; one of two tuples said side by side is the one after the verb
    ("split_pair('a=b') returns ('a', '') instead of ('a', 'b')", [Example("split_pair('a=b')", "('a', 'b')")]),
    ("quot_rem(7, 2) should be (3, 1), not (3, 0)", [Example("quot_rem(7, 2)", "(3, 1)")]),
])
def test_examples_are_taken_from_the_way_bug_reports_state_them(goal, expected):
    assert goal_examples(goal) == expected


@pytest.mark.parametrize("goal", [
    "the count == 3 is wrong",  # no call: not an example of code
    "make the tests pass",
    "x == y is what the docs say",
    "it gives an error instead of a warning",  # no code on either side
    "run(cmd) fails: it should be quiet",  # a word, not a value
    "the output should equal 3",  # no call it is said of
    "width() should return -1 when the string has a tab",  # a function named in prose, and a condition
    "size('ab') should return 0 if it is empty",  # a condition
    "order([3, 2, 1]). Then sort the rest",  # a sentence going on, not an attribute
    "use fast_sum(xs) instead of slow_sum(xs)",  # an instruction: no verb says what a call gives
    "Call setup(db) first. The count should be 3",  # the call is in another sentence
    "After load(path), the docs should be updated",  # a word, not a value
    "I want parse('a') to be fast",  # a word, not a value
    "pad('7', 3) should give '007' when the width is wider",  # a rule with a condition
    "we expected an error. save(x) is fine",  # no value after "expected"
])
def test_prose_gives_no_examples(goal):
    assert goal_examples(goal) == []


def calc(tmp_path):
    return make_repo(tmp_path / "repo", {
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"})


def test_the_goal_example_is_shown_at_the_start_and_finishing_before_it_holds_is_sent_back(tmp_path, fake):
    repo = calc(tmp_path)
    same = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b",
                                                "new_text": "return a - b"}}
    fake.add(PLAN, FINISH, same, FIX_ADD, FINISH)
    goal = "add(2, 3) == 5 does not hold, and mul(2, 3) == 6 must keep working"
    run = run_omni(repo, "--yes", goal, fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    brief = fake.requests[1]["messages"][1]["content"]
    assert "`add(2, 3) == 5` does not hold: add(2, 3) gives -1" in brief
    # it holds already: it describes what works, and is not a check
    assert "mul(2, 3)" not in brief.split("The goal's examples")[1].split("\n\n")[0]
    decisions = [e for e in run.events() if e["kind"] == "gate"]
    assert [d["decision"] for d in decisions] == ["refine", "accept"]
    assert "the goal's example `add(2, 3) == 5` does not hold: add(2, 3) gives -1" in decisions[0]["reasons"][0]
    assert "the run's check holds" in decisions[1]["validation"]
    unchanged = fake.requests[3]["messages"][-1]["content"]  # an edit that changed nothing: the code is still wrong
    assert "changed nothing" in unchanged and "- `add(2, 3) == 5` does not hold: add(2, 3) gives -1" in unchanged
    assert "So the code is not right yet" in unchanged
    # Shown the same code again, a small model at temperature 0 writes it again: it samples warmer until an edit lands.
    assert [fake.requests[n].get("temperature") for n in (2, 3, 4)] == [0.0, 0.8, 0.0]
    edited = json.dumps(fake.requests[4]["messages"])  # the edit's result says what it did to the example
    assert "The goal's examples now:\\n- `add(2, 3) == 5` holds" in edited
    assert "return a + b" in (repo / "calc.py").read_text()


def test_an_example_that_raises_is_checked_and_one_whose_module_is_missing_is_dropped(tmp_path, fake):
    repo = calc(tmp_path)
    add_sub = {"tool": "insert_lines", "args": {"path": "calc.py", "line": 7,
                                                "text": "\n\ndef sub(a, b):\n    return a - b\n"}}
    fake.add(PLAN, FINISH, add_sub, FINISH, FINISH)
    goal = "Add sub: sub(5, 3) == 2. Also numpy.zeros(2).sum() == 0 should hold."
    run = run_omni(repo, "--yes", goal, fake=fake, sandbox="local")
    assert run.code == 0, run.stdout
    brief = fake.requests[1]["messages"][1]["content"]
    assert "`sub(5, 3) == 2` does not hold: sub(5, 3) raises NameError: sub is not defined in the repository" in brief
    # not importable here: nothing to check
    assert "numpy" not in brief.split("The goal's examples")[1].split("\n\n")[0]
    decisions = [e for e in run.events() if e["kind"] == "gate"]
    assert decisions[0]["decision"] == "refine" and "sub(5, 3)" in " ".join(decisions[0]["reasons"])
    assert decisions[-1]["decision"] == "accept"
