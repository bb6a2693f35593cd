"""The lines a goal's words name, where a definition's one-change candidates begin when no test points to lines."""

import pytest
from conftest import make_repo, run_omni

from omni.goal.reading import plain_words
from omni.repair.mutants import mutants
from omni.repair.verified import FIRST_MUTANTS
from omni.repair.worded import worded_lines

LAYOUT = '''def layout(items, per_page, columns, gap):
    width = columns * 80 + (columns - 1) * gap
    if width > 1200:
        width = 1200
    rows = items // columns
    if items % columns > 0:
        rows += 1
    pages = items // per_page
    if items % per_page >= 0:
        pages += 1
    return width, rows, pages
'''
PLAN = {"text": "1. Fix layout in pages.py\n2. Finish", "plan": True}
FINISH = {"tool": "finish", "args": {"summary": "a full last page opens no other"}}
GOAL = "With 10 items and 10 per page, layout() says 2 pages. A full last page should not open another one."


def test_the_lines_whose_names_share_a_word_with_the_goal():
    lines = worded_lines(LAYOUT, frozenset(plain_words(GOAL)))
    assert lines == {5, 6, 8, 9, 10, 11}  # items, per_page, pages; not the width's lines, nor `columns` alone


def test_attributes_and_keyword_arguments_are_names_too():
    source = '''    def carry(self):
        if self.ticks > 9:
            self.ticks = 0
            self.rounds += 1
        return Score(laps=self.laps)
'''
    assert worded_lines(source, frozenset(plain_words("the rounds never advance"))) == {4}
    assert worded_lines(source, frozenset(plain_words("laps are lost"))) == {5}  # laps=, and self.laps


def test_no_lines_for_code_that_does_not_parse_or_words_it_does_not_use():
    assert worded_lines("def broken(:\n    pass\n", frozenset({"broken"})) == frozenset()
    assert worded_lines(LAYOUT, frozenset(plain_words("the colour is wrong"))) == frozenset()


def test_the_fix_on_a_named_line_is_among_the_first_candidates_only_with_those_lines_first():
    fixed = LAYOUT.replace(">= 0", "> 0")
    in_order_of_the_code = mutants(LAYOUT, FIRST_MUTANTS)
    named_first = mutants(LAYOUT, FIRST_MUTANTS, worded_lines(LAYOUT, frozenset(plain_words(GOAL))))
    assert fixed not in in_order_of_the_code
    assert fixed in named_first


@pytest.mark.docker
def test_with_the_goals_example_as_the_check_the_fix_on_a_named_line_is_tried_first_and_applied(tmp_path, fake,
                                                                                                docker_engine):
    """The check is the goal's example alone, and no test points to a line. The one-change candidates begin on the
    lines that read items, per_page and pages, and two of the first eight pass (`> 0`, `>= 1`); the samples are
    asked beside them, and the one that passes rewrites three lines. The one-line change is applied (a smaller
    diff). In the order of the code, none of the first eight passes, and the sample settles the round alone."""
    repo = make_repo(tmp_path / "repo", {"pages.py": LAYOUT, "test_pages.py": (
        "from pages import layout\n\n\ndef test_width():\n    assert layout(3, 10, 3, 10)[0] == 260\n")})
    rewritten = LAYOUT.replace("    pages = items // per_page\n    if items % per_page >= 0:\n        pages += 1\n",
                               "    pages = -(-items // per_page)\n")
    wrong = LAYOUT.replace(">= 0", "<= 1")
    fake.add(PLAN, {"tool": "propose_fixes", "args": {"path": "pages.py", "symbol": "layout"}},
             {"choices": [f"```python\n{rewritten}```", f"```python\n{wrong}```"]}, FINISH)
    run = run_omni(repo, "--yes", "--samples", "2", "layout(10, 10, 5, 0) returns (400, 2, 2) instead of "
                   f"(400, 2, 1). {GOAL}", fake=fake, mechanical=True)
    assert run.code == 0, run.stdout + run.stderr
    seen = [e for e in run.events() if e["kind"] == "candidate"]
    assert [c["asked"] for c in seen[:10]] == ["mechanical"] * 8 + ["n", "n"]
    assert sum(c["passes"] for c in seen[:8]) == 2 and seen[8]["passes"] and not seen[9]["passes"]
    text = (repo / "pages.py").read_text()
    assert "if items % per_page >= 0:" not in text and "-(-items" not in text and "pages += 1" in text
