"""Each rule that reads the goal's English, on a table of phrasings written for these tests (none is a benchmark
goal), with the ones it must not match."""

from __future__ import annotations

import pytest

from omni.goal.reading import goal_tests, names_word, read_goal, reports_a_fault, speaks_of_errors, speaks_of_iterators

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


INSIDE = ["shop/tests/test_cart.py::test_total", "shop/tests/test_server.py::test_starts"]


@pytest.mark.parametrize("goal, about", [
    # the package's name is in every test's path: the test's own words decide
    ("shop.cart(items).total() ignores the discount", ["shop/tests/test_cart.py::test_total"]),
    ("the shop's server no longer starts", ["shop/tests/test_server.py::test_starts"]),
    # only the shared words tie the goal to them: all of them, as before
    ("the shop is broken since the upgrade", INSIDE),
    # one failing test: its folder's words count as always
    ("shop prices come out wrong", None),
])
def test_a_word_every_failing_test_shares_decides_only_when_nothing_else_does(goal, about):
    failing = INSIDE if about is not None else INSIDE[:1]
    found = goal_tests(goal, failing)
    assert found.about == (about if about is not None else failing)
    assert sorted(found.unrelated + found.about) == sorted(failing)


SLUG = ["tests/test_text.py::test_slug_keeps_digits", "tests/test_text.py::test_slug_of_unicode",
        "tests/test_text.py::test_slug_rejects_bytes"]


@pytest.mark.parametrize("goal, about", [
    # every failing test is named after the thing the goal asks for: all of them are the goal's
    ("add slug(text) to text.py: it lowercases words and joins them with dashes; bytes raise TypeError", SLUG),
    # the one file they share is no such word: the tests' own words decide
    ("text.py: bytes should raise TypeError", SLUG[2:]),
])
def test_a_word_every_failing_test_is_named_after_ties_them_all_to_the_goal(goal, about):
    assert goal_tests(goal, SLUG).about == about


SIZES = ["tests/test_units.py::test_render[1048576-1.0 MB]", "tests/test_units.py::test_render[10-10 B]",
         "tests/test_cli.py::test_help", "tests/test_units.py::test_render[21048576-20.1 MB]"]


@pytest.mark.parametrize("goal, about", [
    # no word of the goal is in the tests' names; the value it writes is in one test's parameters
    ('Sizes print wrong: 1536 bytes says "1.5 KB", fine, but 1048576 says "1024.0 KB".', SIZES[:1]),
    ("A mebibyte (1048576) comes out as kilobytes", SIZES[:1]),
    ('Showing "10 B" for ten bytes is right, and a mebibyte is not', SIZES[1:2]),  # a quoted value, whole
    # a value that is only part of a parameter, or too short to tell, ties nothing
    ("2.0 came out as 1.0 after the upgrade", []),
    ("about 048576 bytes go missing", []),
])
def test_a_goal_is_about_the_failing_tests_whose_parameters_hold_a_value_it_writes(goal, about):
    assert goal_tests(goal, SIZES).about == about


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


@pytest.mark.parametrize("goal, speaks", [
    ("Crash when the config file is empty", True),
    ("loading a theme with no colours throws an exception", True),
    ("the importer raised on a blank header row", True),
    ("a traceback when the cache dir is read-only", True),
    ("Errors from the HTTP layer are swallowed", True),
    ("the CSV export drops the last row", False),
    ("negative widths come out as zero", False),
])
def test_a_goal_that_speaks_of_a_raise_or_a_crash(goal, speaks):
    """A reproduction that raises shows the problem only when the goal speaks of one (omni/check/reproduction.py)."""
    assert speaks_of_errors(goal) is speaks


def test_a_goal_names_an_exception_as_a_word_of_its_own():
    assert names_word("reading an empty file gives KeyError: 'name'", "KeyError")
    assert not names_word("reading an empty file gives MyKeyError", "KeyError")
    assert not names_word("it fails", "")


@pytest.mark.parametrize("goal, listed, files", [
    ("the bug is in app/units.py", set(), ["app/units.py"]),
    ("see ./cli.py and lib/io.pyi", set(), ["cli.py", "lib/io.pyi"]),
    ("units.py parses '2k' wrong", {"pkg/units.py", "README.md"}, ["pkg/units.py"]),  # a bare name, one match
    ("units.py parses '2k' wrong", {"pkg/units.py", "old/units.py"}, ["units.py"]),  # two matches: as written
    ("the README says so", {"README.md"}, []),
    ("update setup.cfg and docs/index.rst", set(), []),  # not Python files
])
def test_the_files_a_goal_names(goal, listed, files):
    assert read_goal(goal).files_in(listed) == files


@pytest.mark.parametrize("goal, symbols", [
    ("parse_size drops the decimals", ["parse_size"]),
    ("HttpClient.get retries forever", ["HttpClient.get"]),
    ("`render` escapes twice", ["render"]),
    ("calling load() on an empty file crashes", ["load"]),
    ("the parser is slow on long lines", []),  # plain words only
    ("print the total", []),  # a builtin
])
def test_the_names_a_goal_writes_like_code(goal, symbols):
    assert list(read_goal(goal).symbols) == symbols


@pytest.mark.parametrize("goal, fix", [
    ("fix parse_size in units.py", ("parse_size",)),
    ("Please fix `Client.get` so it retries", ("Client.get",)),
    ("the fix for this is unclear", ()),  # "fix" as a noun, before no name
    ("fix the bug in the loader", ()),
    ("fix this crash", ()),
])
def test_the_names_a_goal_says_to_fix(goal, fix):
    assert read_goal(goal).fix == fix


@pytest.mark.parametrize("goal, wrong", [
    ("'--all' is ignored by list_items", (("'--all'", "--all"),)),
    ("the pattern `*.tmp` does not match", (("`*.tmp`", "*.tmp"),)),
    ("'abc' should be accepted", ()),  # no word that it goes wrong
    ("it prints 'done' at the end", ()),
])
def test_the_values_a_goal_says_go_wrong(goal, wrong):
    assert read_goal(goal).wrong == wrong


@pytest.mark.parametrize("goal, has, lacks", [
    ("Slices with a step are ignored", {"slices", "slice", "step"}, {"with", "are"}),
    ("negated patterns keep matching", {"negated", "negate", "patterns", "pattern", "keep", "matching", "match"},
     set()),
    ("it should work when the value is wrong", set(), {"should", "work", "value", "wrong"}),
])
def test_a_goals_plain_words_and_their_stems(goal, has, lacks):
    plain = read_goal(goal).plain
    assert has <= plain and not (lacks & plain)


@pytest.mark.parametrize("goal, lazy", [
    ("chunks() returns a generator instead of a list", True),
    ("the iterator it gives stops one item early", True),
    ("evens keeps the odd numbers, not the even ones", False),
    ("parse('7') yields 8 instead of 7", False),  # "yields" as a verb of what a call gives
])
def test_a_goal_that_speaks_of_iterators_is_told_apart(goal, lazy):
    assert speaks_of_iterators(goal) is lazy
