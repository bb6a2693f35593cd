"""The run's check before the first edit, with the scripted model and a real sandbox: for a goal that only
describes a symptom, the model writes a reproduction (an example first, one call and the value it should give;
then a test file), omni confirms it shows the problem on the starting code (asking again, with what went wrong,
when it does not), and the check is in the record and the live log."""

from __future__ import annotations

import json

import pytest
from conftest import make_repo, run_omni

pytestmark = pytest.mark.docker

FILES = {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
         "test_calc.py": "import os\n\nimport pytest\nfrom calc import mul\n\n\ndef test_mul():\n"
                         "    assert mul(2, 3) == 6\n"}
PLAN = {"text": "1. Fix add\n2. Finish", "plan": True}
GOAL = "adding two numbers gives the wrong answer"
PASSES = {"text": json.dumps({"test_code": "from calc import mul\n\n\ndef test_mul_again():\n"
                                           "    assert mul(1, 1) == 1\n"})}
SHOWS = {"text": json.dumps({"test_code": "from calc import add\n\n\ndef test_add_sums():\n"
                                          "    assert add(2, 2) == 4\n"})}
HOLDS = {"text": json.dumps({"expression": "mul(2, 3)", "expected": "6"})}  # right already: shows nothing
MISCALLED = {"text": json.dumps({"expression": "add(2)", "expected": "2"})}  # a TypeError of its own making
NO_EXAMPLE = (HOLDS, MISCALLED)  # the example tries, before the test file's
SHOWS_EXAMPLE = {"text": json.dumps({"expression": "add(2, 2)", "expected": "4"})}
FIX = {"tool": "replace_in_file", "args": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}}
FINISH = {"tool": "finish", "args": {"summary": "add adds"}}


def checks(run) -> list[dict]:
    return [e for e in run.events() if e["kind"] == "check"]


def shown_by_the_second_test(tmp_path, fake, first: dict):
    """A run whose first test file (`first`) is no reproduction and whose second (SHOWS) is: the run, and the
    second ask, which says what was wrong with the first."""
    repo = make_repo(tmp_path / "repo", FILES)
    fake.add(PLAN, *NO_EXAMPLE, first, SHOWS, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_add_sums"] and "try 2" in check["result"]
    return run, fake.requests[4]["messages"][-1]["content"]


def kept_on_the_second_example(tmp_path, fake, files: dict, goal: str, first: dict, second: dict, fix: dict):
    """A run whose first example (`first`, an expression and a value) is asked again and whose second is the
    check: the run, the first try's record, and the second ask, which says what was wrong with the first."""
    repo = make_repo(tmp_path / "repo", files)
    fake.add(PLAN, {"text": json.dumps(first)}, {"text": json.dumps(second)}, fix, FINISH)
    run = run_omni(repo, "--yes", goal, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    tried, again = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert not tried["fails_as_it_should"] and again["fails_as_it_should"]
    (check,) = checks(run)
    assert check["source"] == "reproduction example" and "(try 2)" in check["result"]
    return run, tried, fake.requests[2]["messages"][-1]["content"]


def test_a_symptom_gets_a_reproduction_test_that_fails_first(tmp_path, fake, docker_engine):
    repo = make_repo(tmp_path / "repo", FILES)
    fake.add(PLAN, *NO_EXAMPLE, PASSES, SHOWS, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "reproduction test"
    assert check["tests"] == [".omni/check/test_reproduce.py::test_add_sums"] and "try 2" in check["result"]
    assert "✓ check: reproduction test: fails on the starting code" in run.stdout
    assert check["asserts"] == ["assert add(2, 2) == 4"] == run.summary()["check"]["asserts"]
    assert "written by the model; it asserts: assert add(2, 2) == 4" in run.stdout
    # the summary says it too: under --yes nothing asked before the apply
    assert "verified by a check the model wrote (a reproduction test, not a test of yours): it holds, and it " \
        "asserts assert add(2, 2) == 4" in " ".join(run.stdout.split())
    example_again = fake.requests[2]["messages"][-1]["content"]
    assert "`mul(2, 3)` gives 6 on the code as it is now, the value you said it should give" in example_again
    second_ask = fake.requests[4]["messages"][-1]["content"]
    assert "It passed on the starting code" in second_ask
    # how the project's own tests reach its code, not the standard library or pytest
    assert "import its code like this:\n```python\nfrom calc import mul\n```" in second_ask
    # on the steps' conversation, with the steps' tools (not to be called): one prefix for the server's cache
    assert fake.requests[1]["tools"] == fake.requests[5]["tools"] and fake.requests[1]["tool_choice"] == "none"
    assert fake.requests[1]["messages"][0] == fake.requests[5]["messages"][0]
    step = fake.requests[5]["messages"][1]["content"]  # the goal message carries the briefing
    assert "test_add_sums" in step and "Make it pass" in step
    diff = (run.run_dir / "diff.patch").read_text()
    assert "+    return a + b" in diff and ".omni" not in diff  # the reproduction test is not in the result
    assert "return a + b" in (repo / "calc.py").read_text() and not (repo / ".omni" / "check").exists()


def test_when_omnis_own_round_comes_first_the_reproduction_test_does_not_wait_for_a_plan(tmp_path, fake,
                                                                                         docker_engine):
    """The plan is put off until something reads it (verified repair's opening round acts first): the reproduction
    is the run's first request (without the steps' tool list), the opening round's candidates the next, and when one
    of them fixes the code nothing reads a plan, so none is asked for. The example the model wrote is the round's
    check, and names its target (the one function it calls)."""
    repo = make_repo(tmp_path / "repo", FILES)
    right = "```python\ndef add(a, b):\n    return a + b\n```"
    fake.add(PLAN, {"choices": [SHOWS_EXAMPLE["text"]] * 2}, {"choices": [right, right]})
    run = run_omni(repo, "--yes", "--samples", "2", GOAL, fake=fake, reproduce=True, opening_repair=True,
                   finish_on_check=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "reproduction example" and "(try 1; 2 samples wrote it)" in check["result"]
    assert "`add(2, 2) == 4` does not hold: add(2, 2) gives 0" in check["result"]
    assert len(fake.requests) == 2 and fake.requests[0]["n"] == fake.requests[1]["n"] == 2
    # the run's first request, read cold: the steps' messages without their tool list, which no step read here
    assert "tools" not in fake.requests[0] and fake.requests[0]["messages"][0]["content"].startswith("You are omni")
    assert not any("high-level plan" in str(r["messages"][-1]["content"]) for r in fake.requests)
    assert "expression" in json.dumps(fake.requests[0]["response_format"])  # the reproduction example's schema
    assert fake.requests[0]["max_tokens"] == 200
    assert run.summary()["check"]["source"] == "reproduction example"
    assert "return a + b" in (repo / "calc.py").read_text()


def test_a_test_that_fails_on_its_own_mistake_is_not_a_reproduction(tmp_path, fake, docker_engine):
    """It calls the module as if it were the function: it fails, but with a TypeError, and would fail
    whatever the fix. omni asks again, saying so."""
    calls_module = {"text": json.dumps({"test_code": "import calc\n\n\ndef test_add():\n"
                                                     "    assert calc(2, 2) == 4\n"})}
    run, second_ask = shown_by_the_second_test(tmp_path, fake, calls_module)
    assert "It did not fail on an assertion (it raised TypeError)" in second_ask
    assert "'module' object is not callable" in second_ask
    first, second = [e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test"]
    assert first["attempt"] == 1 and "calc(2, 2)" in first["code"] and not first["fails_as_it_should"]
    assert "'module' object is not callable" in first["outcome"]
    assert second["fails_as_it_should"] and "add(2, 2) == 4" in second["code"] and "1 failed" in second["outcome"]
    assert "reproduction test, try 1: It did not fail on an assertion (it raised TypeError)" in run.stdout
    assert "reproduction test, try 2: fails on the starting code, as it should" in run.stdout


def test_a_test_that_waits_for_time_to_pass_is_stopped_and_asked_again_without_the_wait(tmp_path, fake,
                                                                                          docker_engine):
    """A small model shows an expiry by sleeping through it; the run stops such a test at its short limit (not the
    suite's) and the next ask says to give the code a clock the test controls."""
    sleeps = {"text": json.dumps({"test_code": "import time\n\nfrom calc import add\n\n\ndef test_add_later():\n"
                                                "    time.sleep(600)\n    assert add(2, 2) == 4\n"})}
    run, second_ask = shown_by_the_second_test(tmp_path, fake, sleeps)
    assert "It ran past 30 s without finishing" in second_ask and "a clock the test controls" in second_ask
    first = next(e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test")
    assert "time.sleep(600)" in first["code"] and not first["fails_as_it_should"]
    assert "It ran past 30 s" in first["outcome"]


def test_a_test_cut_off_at_its_cap_with_no_whole_test_is_asked_again_shorter_and_not_run(tmp_path, fake,
                                                                                          docker_engine):
    """The request caps the reply below the run's own cap (a small model can repeat itself to it); a reply that
    reaches it before one test function is whole is not written or run, and the next ask says why."""
    repo = make_repo(tmp_path / "repo", FILES)
    cut = {"text": '{"test_code": "from calc import add\\n\\ndef test_add():\\n    assert add(',
           "finish_reason": "length"}
    fake.add(PLAN, *NO_EXAMPLE, cut, SHOWS, FIX, FINISH)
    run = run_omni(repo, "--yes", "--max-tokens", "4096", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "reproduction test" and "try 2" in check["result"]
    assert fake.requests[3]["max_tokens"] == fake.requests[4]["max_tokens"] == 384
    assert fake.requests[0]["max_tokens"] == 4096  # the plan keeps the run's own cap
    second_ask = fake.requests[4]["messages"][-1]["content"]
    assert "cut off at the length limit (384 tokens)" in second_ask and "It did not fail" not in second_ask
    cut_try = next(e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test")
    assert cut_try["code"].endswith("assert add(") and not cut_try["fails_as_it_should"]  # the cut text, recorded


def test_a_test_cut_off_at_its_cap_is_run_for_its_complete_part(tmp_path, fake, docker_engine):
    """A small model's test file that repeats its assertion until the cap: its complete lines are a test that
    shows the problem, run once with the repeats left out, and the check on the first try."""
    repo = make_repo(tmp_path / "repo", FILES)
    whole = json.dumps({"test_code": "from calc import add\n\n\ndef test_add_sums():\n"
                                     + "    assert add(2, 2) == 4\n" * 6})
    cut = {"text": whole[:-9], "finish_reason": "length"}  # mid-way through the last assertion
    fake.add(PLAN, *NO_EXAMPLE, cut, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_add_sums"] and "try 1" in check["result"]
    assert "the complete part of a reply cut off" in check["result"]
    tried = next(e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test")
    assert tried["fails_as_it_should"] and tried["code"].count("assert add(2, 2) == 4") == 1
    assert "return a + b" in (repo / "calc.py").read_text()


def test_a_test_that_compares_the_codes_value_with_one_of_another_form_is_asked_again(tmp_path, fake,
                                                                                      docker_engine):
    """It fails on an assertion, but one that compares the number add gives with a text: no fix makes it pass. Its
    assertions are read as examples (a parametrize case put in), evaluated, and the next ask says the form."""
    of_text = {"text": json.dumps({"test_code": "import pytest\nfrom calc import add\n\n\n"
                                                "@pytest.mark.parametrize('a, b, total', [(2, 2, '4'), (1, 0, '1')])\n"
                                                "def test_add(a, b, total):\n    assert add(a, b) == total\n"})}
    run, second_ask = shown_by_the_second_test(tmp_path, fake, of_text)
    assert "One of its assertions: `add(2, 2)` gives 0 on the code as it is now: the code gives an int, and you " \
           "wrote a str." in second_ask
    first = next(e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test")
    assert not first["fails_as_it_should"] and "another form" in first["outcome"]
    assert "return a + b" in (run.cwd / "calc.py").read_text()


def test_no_reproduction_in_two_tries_is_said_and_the_run_goes_on(tmp_path, fake, docker_engine):
    repo = make_repo(tmp_path / "repo", FILES)
    fake.add(PLAN, *NO_EXAMPLE, PASSES, {"text": "I am not sure how to test this."}, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "none" and check["tests"] == []
    assert "(2 example(s) and 2 test(s) tried)" in check["result"]
    assert "✗ check: none" in run.stdout
    assert "held no test file" not in fake.requests[4]["messages"][-1]["content"]  # the first one passed
    assert "return a + b" in (repo / "calc.py").read_text()


def test_failing_tests_at_the_start_are_the_check_and_cost_no_request(calc_repo, fake, docker_engine):
    fake.add(PLAN, FIX, FINISH)
    run = run_omni(calc_repo, "--yes", "fix add", fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "tests failing at the start" and check["tests"] == ["test_calc.py::test_add"]
    assert len(fake.requests) == 3  # plan, edit, finish: nothing asked for a reproduction


def test_a_symptom_gets_an_example_that_does_not_hold_as_its_check(tmp_path, fake, docker_engine):
    """An example that is called wrongly shows a mistake of its own, and is asked again, saying so (one that already
    holds shows nothing: the first test); the one that does not hold joins the goal's examples: it is in the briefing,
    each edit's result says what became of it, and finishing is checked against it."""
    repo = make_repo(tmp_path / "repo", FILES)
    fake.add(PLAN, MISCALLED, {"text": json.dumps({"expression": "add(2, 3)", "expected": "5"})}, FIX, FINISH)
    run = run_omni(repo, "--yes", "--max-tokens", "4096", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "reproduction example" and check["tests"] == [] and check["asserts"] == ["add(2, 3) == 5"]
    assert "`add(2, 3) == 5` does not hold: add(2, 3) gives -1 (try 2)" in check["result"]
    second_ask = fake.requests[2]["messages"][-1]["content"]
    assert "`add(2)` raised TypeError" in second_ask and "a mistake in the call" in second_ask
    assert "import its code like this:\n```python\nfrom calc import mul\n```" in second_ask
    tries = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert [(t["form"], t["fails_as_it_should"]) for t in tries] == [("example", False), ("example", True)]
    assert tries[0]["code"] == "add(2) == 2" and fake.requests[1]["max_tokens"] == 200
    assert "reproduction example, try 2: does not hold on the starting code, as it should" in run.stdout
    step = fake.requests[3]["messages"][1]["content"]
    assert "An example that shows the problem" in step and "`add(2, 3) == 5` does not hold" in step
    edited = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "replace_in_file")
    assert "The goal's examples now:\n- `add(2, 3) == 5` holds" in edited["output"]
    assert run.summary()["check"]["source"] == "reproduction example"
    assert "return a + b" in (repo / "calc.py").read_text()
    assert not any(r.get("response_format") and "test_code" in json.dumps(r["response_format"])
                   for r in fake.requests)  # no test file was asked for


def test_an_example_that_raises_what_the_goal_names_shows_the_problem(tmp_path, fake, docker_engine):
    """A raise is a mistake in the call unless the goal speaks of it: here the goal names the exception, so the
    example that raises it is the reproduction, and the fix makes it hold."""
    repo = make_repo(tmp_path / "repo", {
        "words.py": "def first_word(text):\n    return text.split()[0]\n",
        "test_words.py": "from words import first_word\n\n\ndef test_first():\n    assert first_word('a b') == 'a'\n"})
    raises = {"text": json.dumps({"expression": "first_word('')", "expected": "''"})}
    fix = {"tool": "replace_in_file", "args": {"path": "words.py", "old_text": "return text.split()[0]",
                                              "new_text": "return (text.split() or [''])[0]"}}
    fake.add(PLAN, raises, fix, FINISH)
    run = run_omni(repo, "--yes", "the first word of an empty text raises IndexError", fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (check,) = checks(run)
    assert check["source"] == "reproduction example"
    assert "first_word('') raises IndexError: list index out of range (try 1)" in check["result"]


def test_an_example_reply_that_is_no_example_or_no_expression_is_asked_again_and_written_nowhere(tmp_path, fake,
                                                                                                 docker_engine):
    """Bad input from the model: an expression that does not parse, then a reply with no JSON. Each try says what
    was wrong (the next try hears the mistake, not its text), nothing is evaluated or written, and the run goes on
    to the test file."""
    repo = make_repo(tmp_path / "repo", FILES)
    broken = {"text": json.dumps({"expression": "add(2,", "expected": "4"})}
    fake.add(PLAN, broken, {"text": "I would call add."}, PASSES, SHOWS, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    asked_again = fake.requests[2]["messages"][-1]["content"]
    assert "the expression you wrote is not one Python expression" in asked_again
    assert "add(2," not in asked_again  # the mistake said, its text not shown: a small model copies what it is shown
    first, second = [e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "example"]
    assert not first["fails_as_it_should"] and not second["fails_as_it_should"]
    assert first["code"] == "add(2, == 4" and "Your reply held no example" in second["outcome"]
    (check,) = checks(run)
    assert check["source"] == "reproduction test"
    assert "return a + b" in (repo / "calc.py").read_text() and not (repo / ".omni" / "check").exists()


def test_an_example_whose_value_has_another_form_than_the_code_gives_is_asked_again(tmp_path, fake, docker_engine):
    """The model guesses the form of the result wrong (a list where the function returns a tuple): such an example
    fails on the starting code for its form alone, and no fix would make it hold. It is not the check; the next try
    is told what the call gives now and in which form, and the one written in that form is."""
    files = {"span.py": "def bounds(values):\n    return (min(values), min(values))\n",
             "test_span.py": "from span import bounds\n\n\ndef test_one():\n    assert bounds([4]) == (4, 4)\n"}
    fix = {"tool": "replace_in_file", "args": {"path": "span.py", "old_text": "min(values), min(values)",
                                              "new_text": "min(values), max(values)"}}
    run, _, asked = kept_on_the_second_example(
        tmp_path, fake, files, "the upper bound of a span comes out as its lower one",
        {"expression": "bounds([1, 5])", "expected": "[1, 5]"}, {"expression": "bounds([1, 5])", "expected": "(1, 5)"},
        fix)
    assert "`bounds([1, 5])` gives (1, 1) on the code as it is now: the code gives a tuple of int, and you wrote " \
           "a list of int" in asked
    assert "max(values)" in (run.cwd / "span.py").read_text()


def test_a_test_file_with_its_fence_left_in_and_no_import_is_mended_and_shows_the_problem(tmp_path, fake,
                                                                                         docker_engine):
    """The model put the code fence inside the JSON's file text and forgot the import the project's tests use:
    the lint guard would refuse that file (a syntax error, an undefined name). omni takes the fence off and adds
    the shown import line that binds the name; the file then fails on its assertion, and is the check."""
    repo = make_repo(tmp_path / "repo", {**FILES, "test_calc.py": FILES["test_calc.py"].replace(
        "from calc import mul", "from calc import add, mul")})
    fenced = {"text": json.dumps({"test_code": "```python\ndef test_add_sums():\n    assert add(2, 2) == 4\n```"})}
    fake.add(PLAN, *NO_EXAMPLE, fenced, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (tried,) = [e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test"]
    assert tried["fails_as_it_should"]
    assert tried["code"] == "from calc import add, mul\ndef test_add_sums():\n    assert add(2, 2) == 4"
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_add_sums"]
    assert len(fake.requests) == 6  # accepted at once: the finish gate does not lint omni's own file (`mul` unused)
    assert "return a + b" in (repo / "calc.py").read_text()


def test_an_example_that_prints_is_read_as_the_call_it_prints_and_one_printing_more_is_asked_again(tmp_path, fake,
                                                                                                  docker_engine):
    """`print(...)` gives None whatever the code does: a print of one call is read as that call (what the model
    means); a print of more than one thing shows nothing, and the next try is told so."""
    repo = make_repo(tmp_path / "repo", FILES)
    printed = {"text": json.dumps({"expression": "print(add(2, 2), 'sum')", "expected": "4"})}
    printed_one = {"text": json.dumps({"expression": "print(add(2, 2))", "expected": "4"})}
    fake.add(PLAN, printed, printed_one, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    first, second = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert not first["fails_as_it_should"] and second["fails_as_it_should"] and second["code"] == "add(2, 2) == 4"
    asked_again = fake.requests[2]["messages"][-1]["content"]
    assert "the expression you wrote is a print, which gives None whatever the code does" in asked_again
    assert "'sum'" not in asked_again
    (check,) = checks(run)
    assert check["source"] == "reproduction example" and "add(2, 2) gives 0 (try 2)" in check["result"]


def test_examples_are_sampled_together_and_the_one_they_agree_on_is_the_check(tmp_path, fake, docker_engine):
    """With samples on, one request asks for several examples at a temperature; each is checked on the starting
    code, and of those that show a problem and two samples wrote alike, the check is the one calling a function the
    goal names, not the first that shows something (an example of another function, written as often)."""
    repo = make_repo(tmp_path / "repo", {
        "voice.py": "def shout(text):\n    return text.lower() + '!'\n\n\ndef whisper(text):\n"
                    "    return text.lower() + '...'\n",
        "test_voice.py": "from voice import whisper\n\n\ndef test_whisper():\n    assert whisper('Hi') == 'hi...'\n"})
    other = json.dumps({"expression": "whisper('Hi')", "expected": "'HI...'"})  # shows a "problem", not the goal's
    right = json.dumps({"expression": "shout('hi')", "expected": "'HI!'"})
    fix = {"tool": "replace_in_file", "args": {"path": "voice.py", "old_text": "text.lower() + '!'",
                                              "new_text": "text.upper() + '!'"}}
    fake.add(PLAN, {"choices": [other, right, other, right]}, fix, FINISH)
    run = run_omni(repo, "--yes", "--samples", "9", "shouted text comes out in lower case", fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    asked = fake.requests[1]  # after the plan
    assert asked["n"] == 4 and asked["temperature"] == 0.7  # at most 4 examples a try, whatever --samples says
    assert asked["max_tokens"] == 200 and "expression" in json.dumps(asked["response_format"])
    tries = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert [(t["sample"], t["fails_as_it_should"]) for t in tries] == [(1, True), (2, True), (3, True), (4, True)]
    (check,) = checks(run)
    assert check["source"] == "reproduction example"
    assert "`shout('hi') == 'HI!'` does not hold: shout('hi') gives 'hi!' (try 1; 2 samples wrote it)" in \
        check["result"]
    assert "text.upper()" in (repo / "voice.py").read_text()


def test_sampled_examples_vote_across_tries_and_the_next_try_hears_the_first_mistake(tmp_path, fake, docker_engine):
    """The first try's samples: one holds already, one shows the problem alone (not yet a check); the second try
    is told the first mistake, and one of its samples writes the same example: two votes, so it is the check."""
    repo = make_repo(tmp_path / "repo", FILES)
    fake.add(PLAN, {"choices": [HOLDS["text"], SHOWS_EXAMPLE["text"]]},
             {"choices": [MISCALLED["text"], SHOWS_EXAMPLE["text"]]}, FIX, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    again = fake.requests[2]["messages"][-1]["content"]
    assert "`mul(2, 3)` gives 6 on the code as it is now" in again and "add(2)" not in again
    (check,) = checks(run)
    assert check["source"] == "reproduction example" and "(try 2; 2 samples wrote it)" in check["result"]


def test_sampled_examples_that_never_agree_are_no_check_and_the_test_file_is_asked_for(tmp_path, fake,
                                                                                    docker_engine):
    """Each sample shows "a problem" with a value of its own (a small model's values at a temperature): none is
    taken, since a wrong check is worse than none, and the run goes on to the test file."""
    repo = make_repo(tmp_path / "repo", FILES)
    lone = [json.dumps({"expression": f"add({n}, 1)", "expected": str(n + 2)}) for n in range(4)]
    fake.add(PLAN, {"choices": lone[:2]}, {"choices": lone[2:]}, SHOWS, FIX, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    tries = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert [t["form"] for t in tries] == ["example"] * 4 + ["test"] and all(t["fails_as_it_should"] for t in tries)
    (check,) = checks(run)
    assert check["source"] == "reproduction test"


def test_an_example_whose_text_value_lacks_its_quotes_is_read_quoted(tmp_path, fake, docker_engine):
    """`tag('a b') == a-b`: the model wrote a text without its quotes, which raises NameError whatever the code
    does. Quoted, it is an example that shows the problem; a value that is no bare words is never quoted."""
    repo = make_repo(tmp_path / "repo", {
        "tags.py": "def tag(text):\n    return text.replace(' ', '_')\n",
        "test_tags.py": "from tags import tag\n\n\ndef test_one():\n    assert tag('a') == 'a'\n"})
    unquoted = {"text": json.dumps({"expression": "tag('a b')", "expected": "a-b"})}
    fix = {"tool": "replace_in_file", "args": {"path": "tags.py", "old_text": "'_'", "new_text": "'-'"}}
    fake.add(PLAN, unquoted, fix, FINISH)
    run = run_omni(repo, "--yes", "tags with a space get an underscore, not a dash", fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (tried,) = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert tried["fails_as_it_should"] and tried["code"] == "tag('a b') == 'a-b'"
    (check,) = checks(run)
    assert "`tag('a b') == 'a-b'` does not hold: tag('a b') gives 'a_b' (try 1)" in check["result"]
    assert "text.replace(' ', '-')" in (repo / "tags.py").read_text()


def test_an_example_written_as_an_assert_is_read_as_its_call_and_value(tmp_path, fake, docker_engine):
    """The model put the whole `assert call == value` into the expression field, and the value again, unquoted, in
    the other: the statement is read as the call and its value, which show the problem, and that is the check."""
    repo = make_repo(tmp_path / "repo", FILES)
    asserted = {"text": json.dumps({"expression": "assert add(2, 3) == 5", "expected": "five"})}
    fake.add(PLAN, asserted, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (tried,) = [e for e in run.events() if e["kind"] == "reproduction_try"]
    assert tried["fails_as_it_should"] and tried["code"] == "add(2, 3) == 5"
    (check,) = checks(run)
    assert check["source"] == "reproduction example" and "add(2, 3) gives -1 (try 1)" in check["result"]
    assert "return a + b" in (repo / "calc.py").read_text()


def test_a_test_file_comes_in_a_fence_and_its_names_the_project_defines_are_imported(tmp_path, fake, docker_engine):
    """The test file is asked for as a fenced block, not a JSON string (in which a small model wrote a placeholder
    or escaped the file twice). A name it reads and never imports is imported where the project defines it (`add`,
    which no test imports), and a standard library module by its name (`math`); the file then shows the problem."""
    repo = make_repo(tmp_path / "repo", FILES)
    fenced = {"text": "Here it is:\n```python\ndef test_add_sums():\n    assert add(2, 2) == math.floor(4.5)\n```\n"}
    fake.add(PLAN, *NO_EXAMPLE, fenced, FIX, FINISH)
    run = run_omni(repo, "--yes", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    (tried,) = [e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test"]
    assert tried["fails_as_it_should"], tried
    assert "from calc import add\n" in tried["code"] and "import math\n" in tried["code"]
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_add_sums"]
    asked = fake.requests[3]
    assert "```python code block" in asked["messages"][-1]["content"] and not asked.get("response_format")


def test_a_later_test_try_is_sampled_warm_and_a_file_written_again_is_not_run_again(tmp_path, fake, docker_engine):
    """Asked again at temperature 0, a small model writes the same file whatever its feedback says: a later try
    asks for two files at once at a temperature. One the same as the first try's is not run again (its earlier
    outcome is said for it); the other shows the problem and is the check."""
    repo = make_repo(tmp_path / "repo", FILES)
    no_example = {"choices": [HOLDS["text"], MISCALLED["text"]]}
    fake.add(PLAN, no_example, no_example, PASSES, {"choices": [PASSES["text"], SHOWS["text"]]}, FIX, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    assert fake.requests[3].get("n", 1) == 1 and fake.requests[3].get("temperature") == 0  # the first try: greedy
    assert fake.requests[4]["n"] == 2 and fake.requests[4]["temperature"] == 0.7
    tries = [e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test"]
    assert [(t["attempt"], t["sample"], t["fails_as_it_should"]) for t in tries] == [(1, 0, False), (2, 1, False),
                                                                                     (2, 2, True)]
    assert tries[1]["outcome"].startswith("It is the same file as an earlier try, whose run said: It passed")
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_add_sums"] and "try 2" in check["result"]
    assert "return a + b" in (repo / "calc.py").read_text()


SHELF = {"shelf.py": "class Shelf:\n    def __init__(self, items):\n        self.items = list(items)\n\n"
                     "    def upto(self, limit, inclusive=True):\n"
                     "        return [x for x in self.items if x <= limit]\n",
         "test_shelf.py": "from shelf import Shelf\n\n\ndef test_upto():\n    assert Shelf([1, 4]).upto(2) == [1]\n"}
SHELF_GOAL = "With items 1 to 5, s.upto(3, inclusive=False) returns [1, 2, 3] -- 3 should not be in it."
SHELF_FIX = {"tool": "replace_in_file", "args": {"path": "shelf.py", "old_text": "if x <= limit]",
                                                "new_text": "if x < limit or inclusive and x == limit]"}}
OFF_INPUT = "gives [1, 2] on the code as it is now, but the goal says this call gives [1, 2, 3]"


def test_an_example_of_the_goals_call_on_another_state_is_asked_again_with_the_value_the_goal_reports(
        tmp_path, fake, docker_engine):
    """The goal says what its call gives now on items it describes in words; the model's first example makes that
    call on items of its own, where it goes right. It holds, and the next ask says the value the goal reports, so
    the model builds the goal's items."""
    run, first, asked = kept_on_the_second_example(
        tmp_path, fake, SHELF, SHELF_GOAL,
        {"expression": "Shelf([1, 2]).upto(3, inclusive=False)", "expected": "[1, 2]"},
        {"expression": "Shelf([1, 2, 3, 4, 5]).upto(3, inclusive=False)", "expected": "[1, 2]"}, SHELF_FIX)
    assert OFF_INPUT in first["outcome"]
    assert f"`Shelf([1, 2]).upto(3, inclusive=False)` {OFF_INPUT}" in asked
    assert "inclusive and x == limit" in (run.cwd / "shelf.py").read_text()


ON_OTHER_ITEMS = "from shelf import Shelf\n\n\ndef test_upto():\n    s = Shelf([1, 2])\n" \
                 "    assert s.upto(3, inclusive=False) == [1, 2]\n"


@pytest.mark.parametrize("first, said", [
    (ON_OTHER_ITEMS + "    assert Shelf([1, 2]).upto(3) == [1, 2, 3]\n", "One of its assertions passes: "),
    (ON_OTHER_ITEMS, "It passed on the starting code, so it does not show the problem: "),
])
def test_a_test_that_passes_the_goals_call_on_another_state_is_asked_again_with_the_value_the_goal_reports(
        tmp_path, fake, docker_engine, first, said):
    """The test file makes the goal's call on items of its own, where it holds: the test fails on a case the goal
    never spoke of, or passes. It is not the check; the next ask says the value the goal reports."""
    repo = make_repo(tmp_path / "repo", SHELF)
    miscalled = {"text": json.dumps({"expression": "Shelf().upto(3)", "expected": "[]"})}
    goals = {"text": json.dumps({"test_code": "from shelf import Shelf\n\n\ndef test_upto_exclusive():\n"
                                              "    assert Shelf([1, 2, 3, 4, 5]).upto(3, inclusive=False) == "
                                              "[1, 2]\n"})}
    fake.add(PLAN, miscalled, miscalled, {"text": json.dumps({"test_code": first})}, goals, SHELF_FIX, FINISH)
    run = run_omni(repo, "--yes", SHELF_GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    tried = [e for e in run.events() if e["kind"] == "reproduction_try" and e["form"] == "test"][0]
    assert not tried["fails_as_it_should"] and OFF_INPUT in tried["outcome"]
    assert f"{said}`Shelf([1, 2]).upto(3, inclusive=False)` {OFF_INPUT}" in fake.requests[4]["messages"][-1]["content"]
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_upto_exclusive"] and "try 2" in check["result"]
    assert "inclusive and x == limit" in (repo / "shelf.py").read_text()


AS_REPORTED = "gives [1, 2, 3] on the code as it is now, and that is what the goal reports this call gives"


def test_a_reproduction_on_the_goals_input_asserting_the_value_the_goal_reports_is_told_that_value_is_the_problem(
        tmp_path, fake, docker_engine):
    """The model builds the goal's items and asserts what the goal says the call gives now: the example holds, the
    test passes. Each next ask says its input is right and its value the problem, not to choose another input."""
    repo = make_repo(tmp_path / "repo", SHELF)
    reported = {"text": json.dumps({"expression": "Shelf([1, 2, 3, 4, 5]).upto(3, inclusive=False)",
                                    "expected": "[1, 2, 3]"})}
    passes = {"text": json.dumps({"test_code": "from shelf import Shelf\n\n\ndef test_upto():\n"
                                               "    s = Shelf([1, 2, 3, 4, 5])\n"
                                               "    assert s.upto(3, inclusive=False) == [1, 2, 3]\n"})}
    goals = {"text": json.dumps({"test_code": "from shelf import Shelf\n\n\ndef test_upto_exclusive():\n"
                                              "    assert Shelf([1, 2, 3, 4, 5]).upto(3, inclusive=False) == "
                                              "[1, 2]\n"})}
    fake.add(PLAN, reported, reported, passes, goals, SHELF_FIX, FINISH)
    run = run_omni(repo, "--yes", SHELF_GOAL, fake=fake, reproduce=True)
    assert run.code == 0, run.stdout + run.stderr
    example_ask, test_ask = (fake.requests[n]["messages"][-1]["content"] for n in (2, 4))
    assert f"`Shelf([1, 2, 3, 4, 5]).upto(3, inclusive=False)` {AS_REPORTED}" in example_ask
    assert "Choose an input" not in example_ask
    assert f"It passed on the starting code, so it does not show the problem: `Shelf([1, 2, 3, 4, 5]).upto(3, " \
           f"inclusive=False)` {AS_REPORTED}" in test_ask
    (check,) = checks(run)
    assert check["tests"] == [".omni/check/test_reproduce.py::test_upto_exclusive"] and "try 2" in check["result"]
    assert "inclusive and x == limit" in (repo / "shelf.py").read_text()


def test_an_example_comparing_an_iterator_with_a_list_is_asked_again_to_put_the_call_in_a_list(
        tmp_path, fake, docker_engine):
    """The function returns a filter object, which equals no list: an example comparing it with one fails on the
    starting code whatever the fix, and is not the check (an agreed one was, in a dev task's record). The next
    ask says to put the call in list(...), and that example is."""
    files = {"nums.py": "def evens(values):\n    return filter(lambda x: x % 2 == 1, values)\n",
             "test_nums.py": "from nums import evens\n\n\ndef test_none():\n    assert list(evens([])) == []\n"}
    fix = {"tool": "replace_in_file", "args": {"path": "nums.py", "old_text": "x % 2 == 1", "new_text": "x % 2 == 0"}}
    run, _, asked = kept_on_the_second_example(
        tmp_path, fake, files, "evens keeps the odd numbers, not the even ones",
        {"expression": "evens([1, 2, 3, 4])", "expected": "[2, 4]"},
        {"expression": "list(evens([1, 2, 3, 4]))", "expected": "[2, 4]"}, fix)
    assert "the code gives an iterator, which equals no list of int, whatever the fix. Put the call in list(...), " \
           "`list(evens([1, 2, 3, 4]))`" in asked
    (check,) = checks(run)
    assert check["asserts"] == ["list(evens([1, 2, 3, 4])) == [2, 4]"]
    assert "x % 2 == 0" in (run.cwd / "nums.py").read_text()
