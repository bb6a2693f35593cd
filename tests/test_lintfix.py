"""A candidate rewrite's own lint, with a real sandbox and the project's ruff settings: ruff's fixes for what a
candidate adds, safe ones first and then unsafe ones, are made before it is checked (and that code is what is
applied), the findings no fix clears are the candidate's `lint`, and among passing candidates a clean one is applied
first."""

from __future__ import annotations

import pytest
from conftest import make_repo, own_sandbox, run_omni

pytestmark = pytest.mark.docker

QUOTES = {
    "pyproject.toml": '[tool.ruff.lint]\nselect = ["E", "F", "SIM"]\n',
    "quotes.py": "def unquote(val):\n    if val[0] == '\"' and val[-1] == '\"':\n        return val[1:-1]\n"
                 "    return val\n",
    "test_quotes.py": "from quotes import unquote\n\n\ndef test_double():\n    assert unquote('\"a\"') == 'a'\n\n\n"
                      "def test_backtick():\n    assert unquote('`a`') == 'a'\n",
}
# passes the check, and brings SIM114 (two branches with one body), which ruff fixes safely
BRANCHES = ("def unquote(val):\n    if val[0] == '\"' and val[-1] == '\"':\n        return val[1:-1]\n"
            "    elif val[0] == '`' and val[-1] == '`':\n        return val[1:-1]\n    return val\n")
# passes the check, and brings E711 (== None), whose fix ruff calls unsafe: made too, and then checked
NONE_TEST = ("def unquote(val):\n    if val[0] in '\"`' and val[-1] == val[0] and val != None:\n"
             "        return val[1:-1]\n    return val\n")
# passes the check, and brings E741 (a variable named l), which ruff has no fix for
NAMED_L = ("def unquote(val):\n    l = val[0]\n    if l in '\"`' and val[-1] == l:\n        return val[1:-1]\n"
           "    return val\n")


def test_fixes_are_made_before_the_check_and_a_finding_with_no_fix_is_the_candidates_lint(tmp_path, docker_engine):
    with own_sandbox(tmp_path, "lintfix", QUOTES) as box:
        tried = box.run_tool("try_fixes", {"path": "quotes.py", "symbol": "unquote",
                                           "candidates": [BRANCHES, NONE_TEST, NAMED_L],
                                           "tests": ["test_quotes.py::test_backtick"]}, 120)
        assert tried.success, tried.error
        branches, none_test, named_l = tried.details["outcomes"]
        assert branches["passes"] and branches["lint"] == [] and "elif" not in branches["tidied"]
        assert "if val[0] == '\"' and val[-1] == '\"' or val[0] == '`' and val[-1] == '`':" in branches["tidied"]
        assert none_test["passes"] and none_test["lint"] == [] and "val is not None:" in none_test["tidied"]
        assert named_l["passes"] and named_l["tidied"] == ""
        assert [finding.split()[0] for finding in named_l["lint"]] == ["E741"]
        assert "adds lint findings: E741" in tried.output
        assert (box.workspace / "quotes.py").read_text() == QUOTES["quotes.py"]  # only a scratch copy was changed


def test_a_finding_of_a_rule_the_file_already_breaks_is_its_style_not_the_candidates(tmp_path, docker_engine):
    """As the finish gate's lint judges it: the file had SIM114 before, so a candidate's SIM114 is left as it is."""
    files = {**QUOTES, "quotes.py": QUOTES["quotes.py"] + "\n\ndef sign(x):\n    if x > 0:\n        return 1\n"
             "    elif x > 9:\n        return 1\n    return 0\n"}
    with own_sandbox(tmp_path, "lintstyle", files) as box:
        tried = box.run_tool("try_fixes", {"path": "quotes.py", "symbol": "unquote", "candidates": [BRANCHES],
                                           "tests": ["test_quotes.py::test_backtick"]}, 120)
        (outcome,) = tried.details["outcomes"]
        assert outcome["passes"] and outcome["lint"] == [] and outcome["tidied"] == ""


def test_of_passing_candidates_a_clean_one_is_applied_over_more_votes_and_the_gate_accepts_it(tmp_path, fake,
                                                                                                docker_engine):
    """Two samples write the E741 candidate, one the SIM114 one: votes would pick the first, whose finding the
    finish gate would hold against the run; the clean (tidied) one is applied, and the run ends accepted."""
    repo = make_repo(tmp_path / "repo", QUOTES)
    fenced = [f"```python\n{code}```" for code in (NAMED_L, NAMED_L, BRANCHES)]
    propose = {"tool": "propose_fixes", "args": {"path": "quotes.py", "symbol": "unquote"}}
    fake.add({"text": "1. Fix unquote\n2. Finish", "plan": True}, propose, {"choices": fenced},
             {"tool": "finish", "args": {"summary": "backticks are quotes too"}})
    run = run_omni(repo, "--yes", "--samples", "3", "make unquote() strip backtick quotes too", fake=fake)
    assert run.code == 0, run.stdout + run.stderr
    seen = [e for e in run.events() if e["kind"] == "candidate"]
    assert [(c["passes"], c["votes"], [f.split()[0] for f in c["lint"]]) for c in seen] == [
        (True, 2, ["E741"]), (True, 2, ["E741"]), (True, 1, [])]
    observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
    assert "candidate 3 passes the check" in observation["output"] and "ruff's fixes" in observation["output"]
    diff = (run.run_dir / "diff.patch").read_text()
    assert "or val[0] == '`' and val[-1] == '`':" in diff and "l = " not in diff and "elif" not in diff
    assert [e["decision"] for e in run.events() if e["kind"] == "gate"] == ["accept"]


def test_a_line_the_candidate_made_too_long_is_formatted_alone_with_the_projects_settings(tmp_path, docker_engine):
    """ruff has no fix for E501: the one line too long (over the project's 60) is formatted by ruff format
    (--range), with the project's settings, and the candidate's lint is clean. Where the file had long lines
    before, a long line is its style (as the gate judges it) and nothing is formatted."""
    files = {"pyproject.toml": '[tool.ruff]\nline-length = 60\n[tool.ruff.lint]\nselect = ["E"]\n',
             "calls.py": ("def combine(*parts):\n    return '-'.join(parts)\n\n\n"
                          "def joined(first, second, third, fourth):\n"
                          "    return combine(first, second, third)\n"),
             "test_calls.py": "from calls import joined\n\n\ndef test_four():\n"
                              "    assert joined('a', 'b', 'c', 'd') == 'a-b-c-d'\n"}
    candidate = ("def joined(first, second, third, fourth):\n"
                 "    return combine(first, second, third, fourth)  # all four, in order\n")
    with own_sandbox(tmp_path, "wrap", files) as box:
        tried = box.run_tool("try_fixes", {"path": "calls.py", "symbol": "joined", "candidates": [candidate],
                                           "tests": ["test_calls.py::test_four"]}, 120)
        assert tried.success, tried.error
        (outcome,) = tried.details["outcomes"]
        assert outcome["passes"] and outcome["lint"] == [], outcome
        assert outcome["tidied"] == ("def joined(first, second, third, fourth):\n    return combine(\n"
                                     "        first, second, third, fourth\n    )  # all four, in order\n")
        assert (box.workspace / "calls.py").read_text() == files["calls.py"]  # only a scratch copy was changed
