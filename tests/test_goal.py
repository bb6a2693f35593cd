"""Each rule that reads the goal's English, on a table of phrasings written for these tests (none is a benchmark
goal), with the ones it must not match."""

from __future__ import annotations

import pytest

from omni.goal import reports_a_fault, goal_tests

FAILING = ["tests/test_invoice.py::test_total_with_discount", "tests/test_net.py::test_download_retries",
           "tests/test_dates.py::TestParse::test_iso_week"]


@pytest.mark.parametrize("goal, about", [
    ("fix the discount in invoice.py", ["tests/test_invoice.py::test_total_with_discount"]),
    ("the invoice total ignores the discount", ["tests/test_invoice.py::test_total_with_discount"]),
    ("`parse('2024-W05')` gives the wrong ISO week", ["tests/test_dates.py::TestParse::test_iso_week"]),
    ("make the failing tests pass", FAILING),
    ("get all tests green, the suite is red", FAILING),
    ("tests/test_net.py::test_download_retries fails on CI", ["tests/test_net.py::test_download_retries"]),
    ("downloads are not retried after a timeout", ["tests/test_net.py::test_download_retries"]),
])
def test_a_goal_is_about_the_failing_tests_it_names_or_shares_words_with(goal, about):
    found = goal_tests(goal, FAILING)
    assert found.about == about and sorted(found.unrelated + found.about) == sorted(FAILING)


@pytest.mark.parametrize("goal", [
    "add a CHANGELOG entry for 2.1",
    "rename the logger in app.py",
    "add ok.txt with a greeting",  # the opening verb "add" is what to do, not where
    "document the config options in the README",
])
def test_a_goal_about_something_else_leaves_the_failing_tests_unrelated(goal):
    found = goal_tests(goal, FAILING + ["tests/test_calc.py::test_add"])
    assert found.about == []


@pytest.mark.parametrize("goal", [
    "the CSV export drops the last row",
    "Crash when the config file is empty",
    "parse_size('1.5k') returns 1 instead of 1536",
    "fix the off-by-one in paginate",
    "dates before 1970 come out wrong",
    "the retry loop never gives up",
    "search is case sensitive but should not be",
])
def test_a_report_of_behaviour_is_a_fault(goal):
    assert reports_a_fault(goal)


@pytest.mark.parametrize("goal", [
    "add a subtract function to calc.py",
    "Implement a --dry-run flag for the sync command",
    "support YAML as well as JSON in load_config",
    "Feature request: allow a custom separator in join_path",
    "rename Client.fetch to Client.get",
    "please write docstrings for the public functions",
])
def test_a_request_for_something_new_is_no_fault(goal):
    assert not reports_a_fault(goal)
