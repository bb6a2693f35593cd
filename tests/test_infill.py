"""Infilled candidates (omni/model/infill.py, omni/repair/infilled.py): the format by model family, the probe and the
fills through the real openai client against the fake server's /v1/completions, the holes of a line, the
candidates a fill makes, and a run whose fix is an infilled line, against a real Docker sandbox."""

from __future__ import annotations

import pytest

from conftest import PLAN, git, make_repo, run_omni
from fake_server import FakeOpenAI
from omni.model.endpoint import ModelConfig
from omni.model.infill import QWEN, STARCODER, Infill, Masked, format_for
from omni.model.transport import Transport
from omni.repair.infilled import _short, candidates, holes, masked

PROBE_BODY = "def add(a, b):\n"  # what the probe's prefix ends with: its hole is the body's one line


def answers_probe(prefix: str, suffix: str) -> str:
    return "    return a + b" if prefix.endswith(PROBE_BODY) else ""


def transport(url: str, model: str = "qwen2.5-coder-1.5b") -> Transport:
    return Transport(ModelConfig(model=model, base_url=url, api_key="sk-test", max_attempts=1),
                     lambda kind, **data: None)


@pytest.mark.parametrize("name, fmt", [
    ("qwen2.5-coder-1.5b", QWEN), ("Qwen/Qwen2.5-Coder-7B-Instruct", QWEN), ("qwen2.5-coder:7b", QWEN),
    ("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", QWEN), ("qwen/qwen-2.5-coder-32b-instruct", QWEN),
    ("bigcode/starcoder2-3b", STARCODER),
    ("gpt-4.1-mini", None), ("llama3.1:8b", None), ("qwen2.5:7b", None), ("anthropic/claude-sonnet-4", None),
])
def test_the_format_comes_from_the_model_family(name, fmt):
    assert format_for(name) == fmt


def test_an_endpoint_that_fills_the_probe_right_infills():
    with FakeOpenAI(fills=answers_probe) as fake:
        infill = Infill.probed(transport(fake.base_url))
        assert infill is not None
        (probe,) = fake.filled
        assert probe["prompt"].startswith("<|fim_prefix|>def add(a, b):\n") and probe["prompt"].endswith(
            "<|fim_middle|>")
        assert "\n" in probe["stop"] and probe["temperature"] == 0


@pytest.mark.parametrize("fills", [None, lambda prefix, suffix: "    return a - b",
                                   lambda prefix, suffix: "<|fim_pad|>"])
def test_an_endpoint_that_cannot_fill_gets_no_infilling(fills):
    """No completions endpoint (404), a wrong fill, or the sentinels written back as text: None, and no error."""
    with FakeOpenAI(fills=fills) as fake:
        assert Infill.probed(transport(fake.base_url)) is None


def test_a_model_of_no_known_family_is_never_asked():
    with FakeOpenAI(fills=answers_probe) as fake:
        assert Infill.probed(transport(fake.base_url, "gpt-4.1-mini")) is None
        assert fake.filled == [] and fake.requests == []


def test_a_fill_is_the_greedy_one_then_the_samples_in_one_request():
    with FakeOpenAI(fills=lambda prefix, suffix: "x + 1") as fake:
        infill = Infill(transport(fake.base_url), QWEN)
        fills, usage = infill.fill(Masked.of("def f(x):\n    return x\n", 2, 2, 1, 2), 3, one_line=True)
        assert fills == ["x + 1"] * 4 and usage.prompt_tokens > 0
        greedy, sampled = fake.filled
        assert (greedy["n"], greedy["temperature"], sampled["n"], sampled["temperature"]) == (1, 0, 3, 0.8)


def test_a_fill_of_lines_stops_where_the_code_after_the_hole_begins_again():
    with FakeOpenAI(fills=lambda prefix, suffix: "    y = 1\n    return y\n") as fake:
        infill = Infill(transport(fake.base_url), QWEN)
        hole = Masked.of("def f(x):\n    y = 2\n    return y\n", 2, 1, 1, 3)  # a gap before line 2
        fills, _ = infill.fill(hole, 0)
        assert fills == ["    y = 1\n"]
        assert hole.definition(fills[0]) == "def f(x):\n    y = 1\n    y = 2\n    return y\n"


SOURCE = '''"""Helpers."""


def clamp(value, low, high):
    """value kept between low and high."""
    if value < low:
        return low
    total = compute(value,
                    high)
    # a comment
    return min(value, high)
'''


def test_a_line_has_its_expressions_largest_first_then_itself_then_the_gaps_beside_it():
    line = 6  # `    if value < low:`
    found = holes(SOURCE, [line])
    cut = [(h.kind, SOURCE[h.start:h.end]) for h in found]
    assert cut[:2] == [("part", "value < low"), ("part", "value")]  # PARTS of them, the largest first
    assert cut[2] == ("line", "if value < low:")
    assert [k for k, _ in cut[3:]] == ["gap", "gap"]
    assert found[3].start == SOURCE.index("    if value") and found[4].start == SOURCE.index("        return low")
    assert [SOURCE[h.start:h.end] for h in holes(SOURCE, [6], parts=3)][:3] == ["value < low", "value", "low"]


def test_a_statement_over_several_lines_is_one_hole_and_a_comment_line_has_only_gaps():
    statement = holes(SOURCE, [8])
    assert ("statement", "total = compute(value,\n                    high)") in [
        (h.kind, SOURCE[h.start:h.end]) for h in statement]
    assert [h.kind for h in holes(SOURCE, [10])] == ["gap", "gap"]  # `# a comment`


def test_a_fill_that_writes_the_rest_of_its_line_again_is_taken_without_it():
    part = next(h for h in holes(SOURCE, [6]) if SOURCE[h.start:h.end] == "value < low")
    cut = masked(SOURCE, part, 4, 11)
    original = "".join(SOURCE.splitlines(keepends=True)[3:11])
    assert candidates(cut, part, ["value <= low:"], original) == [original.replace("value < low", "value <= low")]


def test_a_definition_no_test_points_into_has_its_lines_filled_when_it_is_short():
    assert _short(SOURCE, 4, 11) == [6, 7, 8, 9, 11]  # not the docstring nor the comment
    assert _short("def f(x):\n" + "    x += 1\n" * 9 + "    return x\n", 1, 11) == []


def test_the_fills_become_definitions_that_parse_and_change_something():
    start, end = 4, 11
    original = "".join(SOURCE.splitlines(keepends=True)[start - 1:end])
    part = next(h for h in holes(SOURCE, [6]) if SOURCE[h.start:h.end] == "value < low")
    cut = masked(SOURCE, part, start, end)
    made = candidates(cut, part, ["value <= low", "value < low", "value <", "value <= low", "x < low\nmore"],
                      original)
    assert made == [original.replace("value < low", "value <= low"), original.replace("value < low", "x < low")]
    gap = next(h for h in holes(SOURCE, [11]) if h.kind == "gap" and h.line == 11)
    cut = masked(SOURCE, gap, start, end)
    made = candidates(cut, gap, ["    high = max(high, low)\n    value = 0\n"], original)
    inserted = original.replace("    return min", "    high = max(high, low)\n    return min")
    assert made == [inserted, inserted.replace("    return min", "    value = 0\n    return min")]


SLUG = {
    "textutil.py": '"""Small text helpers."""\n\n\ndef slugify(title):\n    """Lower-case words of title joined by '
                   'hyphens."""\n    words = title.split()\n    cleaned = [w.strip(".,!?") for w in words]\n'
                   '    return "-".join(w for w in cleaned)\n',
    "tests/test_textutil.py": "from textutil import slugify\n\n\ndef test_slugify_capitals():\n"
                              "    assert slugify('Hello World!') == 'hello-world'\n\n\n"
                              "def test_plain():\n    assert slugify('a b') == 'a-b'\n",
}


def fills_the_missing_line(prefix: str, suffix: str) -> str:
    """A model that knows the missing line: the gap before `words = title.split()` is `title = title.lower()`."""
    if prefix.endswith(PROBE_BODY):
        return "    return a + b"
    if prefix.endswith('hyphens."""\n') and suffix.startswith("    words = title.split()"):
        return "    title = title.lower()\n"
    return ""


def test_an_infilled_line_fixes_what_no_sample_did(tmp_path, docker_engine):
    """The fault is a line left out. The opening round's infilled candidates come before its samples: the gap's
    fill is tried in the sandbox, passes the check, and is applied; no sample is asked for."""
    repo = make_repo(tmp_path / "repo", SLUG)
    with FakeOpenAI([{**PLAN, "plan": True}], fills=fills_the_missing_line) as fake:
        run = run_omni(repo, "--yes", "--samples", "2", "--model", "qwen2.5-coder-1.5b",
                       "slugify keeps capitals: slugify('Hello World!') gives 'Hello-World' instead of 'hello-world'",
                       fake=fake, finish_on_check=True, opening_repair=True)
        assert run.code == 0, run.stdout + run.stderr
        infilled = [e for e in run.events() if e["kind"] == "candidate" and e["asked"] == "infilled"]
        assert any(e["passes"] for e in infilled)
        assert not [e for e in run.events() if e["kind"] == "candidate" and e["asked"] != "infilled"]
        assert [e["available"] for e in run.events() if e["kind"] == "infill"] == [True]
        assert "    title = title.lower()\n    words = title.split()" in (repo / "textutil.py").read_text()
        assert len(fake.filled) > 2  # the probe, and the holes up to the gap that fixed it
        assert not any(r.get("n") for r in fake.requests)  # no sampled rewrite was asked


def test_with_a_one_change_fix_of_the_goals_example_in_hand_no_hole_is_filled_before_the_samples(tmp_path,
                                                                                                  docker_engine):
    """The check is the goal's one example, and a one-change candidate already makes it hold: the call waits for the
    samples' vote (a fix of one example may go wrong on other inputs), but asks no fill on the way: fills would find
    candidates, and one is found. Only the probe reaches /v1/completions."""
    repo = make_repo(tmp_path / "repo", {"seqs.py": "def rev(x):\n    if isinstance(x, str):\n        return x[::-1]"
                                                    "\n    return list(x)\n"})
    right = "```python\ndef rev(x):\n    return x[::-1] if isinstance(x, str) else list(reversed(x))\n```"
    with FakeOpenAI([{**PLAN, "plan": True}, {"choices": [right, right]}], fills=answers_probe) as fake:
        run = run_omni(repo, "--yes", "--samples", "2", "--model", "qwen2.5-coder-1.5b",
                       "rev([1, 2, 3]) gives [1, 2, 3] instead of [3, 2, 1]. Fix rev in seqs.py.",
                       fake=fake, finish_on_check=True, opening_repair=True, mechanical=True)
        assert run.code == 0, run.stdout + run.stderr
        seen = [e for e in run.events() if e["kind"] == "candidate"]
        assert any(e["passes"] for e in seen if e["asked"] == "mechanical")
        assert [e["available"] for e in run.events() if e["kind"] == "infill"] == [True]
        assert len(fake.filled) == 1  # the probe alone
        assert not [e for e in seen if e["asked"] == "infilled"]
        assert [r["n"] for r in fake.requests if r.get("n")] == [2]  # the samples, asked after the one-change fix
        assert "list(reversed(x))" in (repo / "seqs.py").read_text()


def test_no_infill_asks_no_fill(tmp_path, docker_engine):
    repo = make_repo(tmp_path / "repo", SLUG)
    right = '```python\ndef slugify(title):\n    return "-".join(w.strip(".,!?") for w in title.lower().split())\n```'
    with FakeOpenAI([{**PLAN, "plan": True}, {"choices": [right, right]}], fills=fills_the_missing_line) as fake:
        run = run_omni(repo, "--yes", "--samples", "2", "--model", "qwen2.5-coder-1.5b", "--no-infill",
                       "slugify keeps capitals: slugify('Hello World!') gives 'Hello-World' instead of 'hello-world'",
                       fake=fake, finish_on_check=True, opening_repair=True)
        assert run.code == 0, run.stdout + run.stderr
        assert fake.filled == []
        assert {e["asked"] for e in run.events() if e["kind"] == "candidate"} == {"n"}


def test_a_file_that_is_not_utf8_gets_no_fill_and_keeps_its_bytes(tmp_path, docker_engine):
    """A module that is not UTF-8 cannot be parsed as Python: propose_fixes says so, with what to do instead (not
    that its function is missing, which once made it ask for a new function), before any hole of it is filled or any
    rewrite is asked; the file keeps its bytes."""
    repo = make_repo(tmp_path / "repo", {"tests/test_textutil.py": SLUG["tests/test_textutil.py"]})
    source = b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + SLUG["textutil.py"].encode()
    (repo / "textutil.py").write_bytes(source)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a latin-1 module")
    propose = {"tool": "propose_fixes", "args": {"path": "textutil.py", "symbol": "slugify"}}
    with FakeOpenAI([{**PLAN, "plan": True}, propose, {"tool": "finish", "args": {"summary": "cannot"}}],
                    fills=fills_the_missing_line) as fake:
        run = run_omni(repo, "--yes", "--samples", "2", "--model", "qwen2.5-coder-1.5b",
                       "slugify keeps capitals: slugify('Hello World!') should give 'hello-world'", fake=fake)
        observation = next(e for e in run.events() if e["kind"] == "observation" and e["tool"] == "propose_fixes")
        assert not observation["success"], observation
        assert "not valid UTF-8 (byte 0xe9 on line 2)" in observation["error"]
        assert "replace_in_file" in observation["error"]
        assert len(fake.filled) <= 1  # the probe at most: no hole of the file
        assert not any(r.get("n") for r in fake.requests)  # no rewrite asked
        assert not [e for e in run.events() if e["kind"] == "candidate"]
        assert (repo / "textutil.py").read_bytes() == source
        examples = next(e["text"] for e in run.events() if e["kind"] == "briefing" and "goal's examples" in e["text"])
        assert "gives 'Hello-World'" in examples and "NameError" not in examples  # its function is found, and run


def test_a_fill_the_server_fails_leaves_the_round_to_the_samples(tmp_path, docker_engine):
    """A fill request that fails (HTTP 400 here) ends the definition's fills; the samples are asked as without them,
    and the run goes on."""
    repo = make_repo(tmp_path / "repo", SLUG)
    right = '```python\ndef slugify(title):\n    return "-".join(w.strip(".,!?") for w in title.lower().split())\n```'
    with FakeOpenAI([{**PLAN, "plan": True}, {"choices": [right, right]}],
                    fills=lambda prefix, suffix: answers_probe(prefix, suffix) or None) as fake:
        run = run_omni(repo, "--yes", "--samples", "2", "--model", "qwen2.5-coder-1.5b",
                       "slugify keeps capitals: slugify('Hello World!') gives 'Hello-World' instead of 'hello-world'",
                       fake=fake, finish_on_check=True, opening_repair=True)
        assert run.code == 0, run.stdout + run.stderr
        assert len(fake.filled) == 2  # the probe, and the first hole's fill, which failed
        assert {e["asked"] for e in run.events() if e["kind"] == "candidate"} == {"n"}
        assert "title.lower()" in (repo / "textutil.py").read_text()
