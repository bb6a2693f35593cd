"""Every tool's success and failure paths, run inside a real container through the tool server."""

from __future__ import annotations


import pytest
from conftest import git, make_repo, own_sandbox

from omni.results import Action
from omni.box.sandbox import DockerSandbox, SandboxConfig
from omni.box.toolbox import Toolbox
from omni.box.workspace import Workspace, find_repo

pytestmark = pytest.mark.docker


SHAPES = '''"""Shapes."""

import math


# A comment above the class that must survive edits.
class Circle:
    """A circle."""

    def __init__(self, r):
        self.r = r  # radius

    def area(self):
        return math.pi * self.r


def unit():
    # keep this comment
    return Circle(1)
'''
FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": SHAPES,
    "tests/test_shapes.py": "from pkg.shapes import Circle, unit\nimport math\n\n\n"
                            "def test_area():\n    assert Circle(2).area() == math.pi * 4, 'area is pi r squared'\n\n\n"
                            "def test_unit():\n    assert unit().r == 1\n\n\ndef test_skip():\n"
                            "    import pytest\n    pytest.skip('not today')\n",
    "legacy.py": "def broken():\n    return undefined_name\n",
    "styled.py": "import os\n\n\ndef one():\n    return 1\n",  # breaks F401 (unused import) from the start
    ".gitignore": "ignored/\n",
    "ignored/secret.txt": "hidden\n",
    "big.txt": "".join(f"line {n}\n" for n in range(1, 1001)),
    "web/index.js": "function hello() { return 'hi'; }\n",
}


@pytest.fixture(scope="module")
def box(tmp_path_factory, docker_engine):
    repo = make_repo(tmp_path_factory.mktemp("tools") / "repo", FILES)
    (repo / "data.bin").write_bytes(b"\x00\x01\x02binary")
    (repo / "latin1.txt").write_bytes("caf\xe9 ol\xe9\n".encode("latin-1"))
    workspace = Workspace(find_repo(repo), "tools-test")
    workspace.create()
    sandbox = DockerSandbox("tools-test", workspace.path, repo / ".git", SandboxConfig(project_env=False))
    sandbox.root = workspace.path
    yield sandbox
    sandbox.close()
    workspace.remove()


def call(box, name, **args):
    checked = Toolbox().validate(Action(name=name, args=args))
    assert isinstance(checked, dict), checked
    return box.run_tool(name, checked, 120)


def test_host_checks_that_every_tool_is_installed_in_the_container(box):
    listed = set(box.run_tool("__list__", {}, 10).output.split())
    assert set(Toolbox().names) - Toolbox().host <= listed


# ---- find and read ------------------------------------------------------------------------------
def test_list_files_respects_gitignore(box):
    out = call(box, "list_files").output
    assert "pkg/shapes.py" in out and "web/index.js" in out and "ignored/secret.txt" not in out
    cut = call(box, "list_files", max_results=2)
    assert "more files not shown" in cut.output and cut.details["total"] > 2


def test_find_files(box):
    assert call(box, "find_files", pattern="test_*.py").output.strip() == "tests/test_shapes.py"
    assert call(box, "find_files", pattern="shapes").output.strip() == "pkg/shapes.py\ntests/test_shapes.py"
    miss = call(box, "find_files", pattern="*.rs")
    assert not miss.success and "Use list_files" in miss.error
    text = call(box, "find_files", pattern="Circle")  # meant: where is Circle? answer that
    assert text.success and "these are the lines containing 'Circle'" in text.output
    assert "pkg/shapes.py:7:" in text.output
    in_file = call(box, "find_files", pattern="area", path="pkg/shapes.py")
    assert in_file.success and "pkg/shapes.py is a file" in in_file.output and "pkg/shapes.py:13:" in in_file.output
    absent = call(box, "find_files", pattern="zzz_nowhere", path="pkg/shapes.py")
    assert not absent.success and "does not occur in it" in absent.error


def test_search(box):
    out = call(box, "search", pattern=r"def \w+\(self").output
    assert "pkg/shapes.py:10:    def __init__(self, r):" in out and "pkg/shapes.py:13:" in out
    assert "ignored/" not in call(box, "search", pattern="hidden").output
    assert "no matches" in call(box, "search", pattern="zzzzqqq").output
    capped = call(box, "search", pattern="line", path="big.txt", max_results=5)
    assert "995 more matches not shown; narrow" in capped.output
    assert call(box, "search", pattern="CIRCLE", ignore_case=True, glob="*.py").success
    bad = call(box, "search", pattern="(unclosed")
    assert not bad.success and "invalid regular expression" in bad.error


def test_read_file_ranges_pages_and_refusals(box):
    out = call(box, "read_file", path="pkg/shapes.py", start_line=13, end_line=14).output
    assert out == "13|     def area(self):\n14|         return math.pi * self.r"
    paged = call(box, "read_file", path="big.txt").output
    assert paged.splitlines()[-1] == "[lines 101-1000 not shown (100 lines per read); read on with start_line=101]"
    ranged = call(box, "read_file", path="big.txt", start_line=101, end_line=900).output  # explicit ranges page too
    assert ranged.splitlines()[-2].startswith("200|")
    assert ranged.splitlines()[-1] == "[lines 201-900 not shown (100 lines per read); read on with start_line=201]"
    assert "caf\ufffd ol\ufffd" in call(box, "read_file", path="latin1.txt").output
    text = call(box, "read_file", path="pkg/shapes.py", start_line=13, end_line=14).details["text"]
    assert text == "    def area(self):\n        return math.pi * self.r\n"  # the lines themselves, for omni's prompts
    assert call(box, "read_file", path="big.txt").details["text"].count("\n") == 100  # a page's
    listed = call(box, "read_file", path="pkg")  # a directory: what a model reading "." wants is the listing
    assert listed.success and listed.output == "pkg is a directory; its files:\npkg/__init__.py\npkg/shapes.py"
    for args, message in [({"path": "data.bin"}, "binary file"),
                          ({"path": "nope.py"}, "does not exist"), ({"path": "../../etc/passwd"}, "outside"),
                          ({"path": "/etc/passwd"}, "is absolute"), ({"path": ".git/config"}, ".git is not open"),
                          ({"path": "big.txt", "start_line": 5000}, "only 1000 lines")]:
        result = call(box, "read_file", **args)
        assert not result.success and message in result.error, (args, result.error)


def test_a_module_path_without_py_reads_the_module(box):
    # small models name files the way imports do: pkg/shapes, pkg.shapes, and the import path with .py kept
    for path in ("pkg/shapes", "pkg.shapes", "pkg.shapes.py"):
        read = call(box, "read_file", path=path, start_line=13, end_line=14)
        assert read.success and read.output == "13|     def area(self):\n14|         return math.pi * self.r", path
    symbol = call(box, "read_symbol", path="pkg/shapes", symbol="Circle.area")
    assert symbol.success and "return math.pi * self.r" in symbol.output
    assert "does not exist" in call(box, "read_file", path="pkg/nothing").error
    assert "does not exist" in call(box, "read_file", path="pkg.nothing.py").error


@pytest.mark.parametrize("read_as, edit_as", [
    ("pkg/shapes.py:Circle.area", "pkg/shapes.py::Circle.area"),  # as the briefing shows locations (file:line)
    ("pkg.shapes.Circle.area", "shapes.Circle.area"),  # as an import path (parse.parse, jmespath.functions.f)
])
def test_a_symbol_written_as_a_location_or_an_import_path_names_the_definition(box, read_as, edit_as):
    read = call(box, "read_symbol", path=".", symbol=read_as)
    assert read.success and "return math.pi * self.r" in read.output
    shapes = box.root / "pkg" / "shapes.py"
    before = shapes.read_text()
    new = "def area(self):\n    return math.pi * self.r ** 2\n"
    try:
        edit = call(box, "replace_symbol", path="pkg/shapes.py", symbol=edit_as, new_source=new)
        assert edit.success and "self.r ** 2" in shapes.read_text()
    finally:
        shapes.write_text(before)  # the module's other tests read the file as it was


def test_an_import_path_to_a_name_that_is_not_defined_is_not_found(box):
    missing = call(box, "read_symbol", path=".", symbol="pkg.shapes.Square")
    assert not missing.success and "no def, class or assigned value named 'pkg.shapes.Square'" in missing.error


def test_new_code_copied_with_the_header_and_line_numbers_it_was_shown_with_is_read_without_them(box):
    shown = call(box, "read_symbol", path="pkg/shapes.py", symbol="Circle.area").output
    assert shown.startswith("pkg/shapes.py lines 13-14: method Circle.area\n13|")
    shapes = box.root / "pkg" / "shapes.py"
    before = shapes.read_text()
    try:
        edit = call(box, "replace_symbol", path="pkg/shapes.py", symbol="Circle.area",
                    new_source=shown.replace("self.r", "self.r ** 2"))
        assert edit.success and "copied with the header and line numbers" in edit.output
        assert "        return math.pi * self.r ** 2" in shapes.read_text() and "13|" not in shapes.read_text()
    finally:
        shapes.write_text(before)


def test_huge_files_get_a_clear_error_and_nothing_is_written(box):
    big = box.root / "huge.txt"
    big.write_text("x = 1\n" * 600_000)  # 3.6 MB: readable in pages, too large to edit whole
    before = big.stat().st_mtime_ns
    page = call(box, "read_file", path="huge.txt", start_line=599_999, end_line=600_000)
    assert page.success and "600000| x = 1" in page.output
    edit = call(box, "replace_in_file", path="huge.txt", old_text="x = 1\n", new_text="y\n")
    assert not edit.success and "too large to handle whole" in edit.error
    assert big.stat().st_mtime_ns == before
    big.unlink()


def test_outline_of_a_package(box):
    out = call(box, "outline", path="pkg").output
    assert "pkg/shapes.py" in out
    assert "class Circle  [7-14]" in out and "method Circle.area  [13-14]" in out and "def unit  [17-19]" in out
    other = call(box, "outline", path="web/index.js")
    assert not other.success and "not a Python file" in other.error


def test_a_long_class_lists_its_members_with_how_to_call_them(box):
    """A long class's members carry their parameters as Python reads them (decorators, annotations, defaults, a
    `#` in a text, comments and lines split), so a test or an example can call the code without reading each member."""
    body = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(50))
    members = ("    @classmethod\n    def make(\n        cls, maxsize: int,  # the most\n"
               "        timer=time.monotonic,\n    ) -> \"Cache\":\n        return cls(maxsize)\n\n"
               "    class Link:\n        pass\n\n"
               "    async def fetch(self, key, *, default=(1, 2), sep=\"#\", **kw) -> None:\n        pass\n")
    call(box, "create_file", path="cache.py", content=f"import time\n\n\nclass Cache:\n{members}{body}")
    out = call(box, "read_symbol", symbol="Cache", path="cache.py").output
    listed = [line.strip() for line in out.splitlines() if line.strip().startswith(("method ", "class Cache."))]
    assert listed[:3] == ["method Cache.make(cls, maxsize: int, timer=time.monotonic)  [5-10]",
                          "class Cache.Link  [12-13]",
                          "method Cache.fetch(self, key, *, default=(1, 2), sep='#', **kw)  [15-16]"]
    assert listed[3] == "method Cache.m0(self)  [17-18]" and len(listed) == 53


def test_read_symbol_by_name_qualified_name_and_long_class(box):
    out = call(box, "read_symbol", symbol="Circle.area").output
    assert out.splitlines()[0] == "pkg/shapes.py lines 13-14: method Circle.area"
    assert "14|         return math.pi * self.r" in out
    assert call(box, "read_symbol", symbol="area").output == out  # the last part of a qualified name
    unit = call(box, "read_symbol", symbol="unit()", path="pkg").output
    assert unit.startswith("pkg/shapes.py lines 17-19: def unit")
    body = "\n".join(f"    def m{i}(self):\n        return {i}\n" for i in range(80))
    call(box, "create_file", path="long.py", content=f"class Long:\n    \"\"\"Many methods.\"\"\"\n{body}")
    long = call(box, "read_symbol", symbol="Long", path="long.py").output
    assert "(long; its first lines, then its members" in long and "method Long.m79(self)  [" in long
    assert len(long.splitlines()) < 120
    for args, message in [({"symbol": "Nope"}, "no def, class or assigned value named 'Nope'"),
                          ({"symbol": "a b"}, "is not a Python name"),
                          ({"symbol": "unit", "path": "web/index.js"}, "not a Python file")]:
        result = call(box, "read_symbol", **args)
        assert not result.success and message in result.error, (args, result.error)


# ---- edits --------------------------------------------------------------------------------------
def test_replace_in_file_near_miss_and_ambiguity(box):
    call(box, "create_file", path="edit_me.py", content="x = 1\ny = 1\nz = 1\n")
    miss = call(box, "replace_in_file", path="edit_me.py", old_text="y = 2", new_text="y = 3")
    assert miss.failure == "edit_failed" and "Did you mean these lines" in miss.error and "2| y = 1" in miss.error
    many = call(box, "replace_in_file", path="edit_me.py", old_text=" = 1", new_text=" = 2")
    assert many.failure == "edit_failed" and "occurs 3 times" in many.error and "1, 2, 3" in many.error
    assert "Give line (one of those numbers)" in many.error
    off = call(box, "replace_in_file", path="edit_me.py", old_text=" = 1", new_text=" = 2", line=4)
    assert off.failure == "edit_failed" and "does not start on line 4" in off.error
    empty = call(box, "replace_in_file", path="edit_me.py", old_text="", new_text="q")
    assert not empty.success and "old_text is empty" in empty.error
    assert (box.root / "edit_me.py").read_text() == "x = 1\ny = 1\nz = 1\n"
    ok = call(box, "replace_in_file", path="edit_me.py", old_text="y = 1", new_text="y = 10")
    assert ok.success and (box.root / "edit_me.py").read_text() == "x = 1\ny = 10\nz = 1\n"
    picked = call(box, "replace_in_file", path="edit_me.py", old_text=" = 1", new_text=" = 3", line=3)
    assert picked.success and (box.root / "edit_me.py").read_text() == "x = 1\ny = 10\nz = 3\n"
    assert picked.output.endswith("Changed (- before, + after, with line numbers):\n      2| y = 10\n"
                                  "-     3| z = 1\n+     3| z = 3")  # the model sees what it changed, and where
    same = call(box, "replace_in_file", path="edit_me.py", old_text="y = 10", new_text="y = 10")
    assert same.failure == "edit_failed" and "changed nothing: edit_me.py already reads exactly like that" in same.error
    unique = call(box, "replace_in_file", path="edit_me.py", old_text="y = 10", new_text="y = 11", line=7)
    assert unique.success and (box.root / "edit_me.py").read_text() == "x = 1\ny = 11\nz = 3\n"  # line not needed
    assert not list(box.root.glob(".edit_me.py.*"))  # no temp file left from the atomic write


def test_replace_in_file_forgives_indentation_and_quote_style_when_the_place_is_unique(box):
    call(box, "create_file", path="loose.py", content='def sign(s):\n    if s[0] == "-":\n        return 1\n'
         '    return 0\n\n\ndef other(s):\n    if s[0] == "+":\n        return 1\n    return 0\n')
    both = call(box, "replace_in_file", path="loose.py", old_text="    return 1\nreturn 0", new_text="return 5")
    assert not both.success and "Did you mean" in both.error  # two places match loosely: nothing is guessed
    flat = call(box, "replace_in_file", path="loose.py", old_text="return 1\nreturn 0", new_text="return 5", line=9)
    assert not flat.success  # old_text lost the lines' relative indentation: re-indenting would be a guess
    picked = call(box, "replace_in_file", path="loose.py", old_text="    return 1\nreturn 0", new_text="    return 1\n"
                  "return 3", line=9)
    assert picked.success and (box.root / "loose.py").read_text().endswith("        return 1\n    return 3\n")
    assert picked.details["symbols"] == ["other"]  # the definition the edit changed, for the repair rung
    block = call(box, "replace_in_file", path="loose.py", old_text="if s[0] == '-':\n    return 1",
                 new_text="if s[0] == '-':\n    return -1")
    assert block.success and "matched lines 2-3 once the indentation and quote style were ignored" in block.output
    assert (box.root / "loose.py").read_text().startswith("def sign(s):\n    if s[0] == '-':\n        return -1\n")
    assert block.details["symbols"] == ["sign"]
    part = call(box, "replace_in_file", path="loose.py", old_text="== '+'", new_text="== '*'")
    assert part.success and "matched line 8" in part.output
    assert "    if s[0] == '*':\n" in (box.root / "loose.py").read_text()
    (box.root / "loose.py").unlink()


def test_syntax_breaking_edit_is_rolled_back_with_the_offending_lines(box):
    before = (box.root / "pkg/shapes.py").read_text()
    result = call(box, "replace_in_file", path="pkg/shapes.py", old_text="        return math.pi * self.r",
                  new_text="        return math.pi * (self.r")
    assert result.failure == "lint_failed" and "rolled back" in result.error
    assert "Or rewrite the whole method instead (lines 13-14): replace_symbol with path='pkg/shapes.py', " \
        "symbol='Circle.area'" in result.error
    assert "pkg/shapes.py:" in result.error and ">" in result.error
    assert (box.root / "pkg/shapes.py").read_text() == before
    undefined = call(box, "replace_in_file", path="pkg/shapes.py", old_text="    return Circle(1)",
                     new_text="    return Circel(1)")
    assert undefined.failure == "lint_failed" and "F821" in undefined.error
    assert "removes the definition" not in undefined.error
    assert (box.root / "pkg/shapes.py").read_text() == before
    call(box, "create_file", path="used.py", content="def helper():\n    return 1\n\n\ndef main():\n"
         "    return helper()\n")
    dropped = call(box, "replace_symbol", path="used.py", symbol="helper",
                   new_source="def count_reps(seq):\n    return {}\n")
    assert dropped.failure == "lint_failed" and "removes the definition of `helper`, which the code still uses" \
        in dropped.error
    assert (box.root / "used.py").read_text() == "def helper():\n    return 1\n\n\ndef main():\n    return helper()\n"


def test_preexisting_errors_do_not_block_edits(box):
    result = call(box, "insert_lines", path="legacy.py", line=1, text="# a harmless comment")
    assert result.success, result.error
    assert (box.root / "legacy.py").read_text().startswith("# a harmless comment\ndef broken():")


def test_create_insert_delete(box):
    assert call(box, "create_file", path="notes/todo.md", content="- a\n").success
    exists = call(box, "create_file", path="notes/todo.md", content="- b\n")
    assert not exists.success and "already exists" in exists.error
    assert call(box, "insert_lines", path="notes/todo.md", line=2, text="- c").success
    assert (box.root / "notes/todo.md").read_text() == "- a\n- c\n"
    bad_line = call(box, "insert_lines", path="notes/todo.md", line=9, text="x")
    assert not bad_line.success and "between 1 and 3" in bad_line.error
    assert call(box, "delete_file", path="notes/todo.md").success
    assert not (box.root / "notes/todo.md").exists()
    assert not call(box, "delete_file", path="notes/todo.md").success


def test_replace_symbol_keeps_comments_and_formatting_elsewhere(box):
    call(box, "create_file", path="geo.py", content=SHAPES)
    new = "def area(self):\n    # now squared\n    return math.pi * self.r ** 2\n"
    result = call(box, "replace_symbol", path="geo.py", symbol="Circle.area", new_source=new)
    assert result.success, result.error
    text = (box.root / "geo.py").read_text()
    assert text == SHAPES.replace("        return math.pi * self.r\n",
                                  "        # now squared\n        return math.pi * self.r ** 2\n")
    missing = call(box, "replace_symbol", path="geo.py", symbol="Circle.aera", new_source=new)
    assert not missing.success and "Nearest names: Circle.area" in missing.error
    invalid = call(box, "replace_symbol", path="geo.py", symbol="unit", new_source="def unit(:\n    pass\n")
    assert invalid.failure == "lint_failed" and "not valid Python" in invalid.error
    assert call(box, "delete_symbol", path="geo.py", symbol="unit").success
    assert "def unit" not in (box.root / "geo.py").read_text()
    assert "# A comment above the class that must survive edits." in (box.root / "geo.py").read_text()
    not_py = call(box, "replace_symbol", path="web/index.js", symbol="hello", new_source="def hello(): pass")
    assert not not_py.success and "not a Python file" in not_py.error
    call(box, "create_file", path="deco.py", content="import functools\n\n\n@functools.cache\ndef f(x):\n"
         "    return x\n\n\n@functools.cache\ndef g(x):\n    return x\n")
    kept = call(box, "replace_symbol", path="deco.py", symbol="f", new_source="def f(x):\n    return -x\n")
    assert kept.success and "@functools.cache\ndef f(x):\n    return -x\n" in (box.root / "deco.py").read_text()
    call(box, "create_file", path="conv.py", content='class Conv:\n    """Doc."""\n\n    CHARS = "0123"\n\n'
         '    def __call__(self, s):\n        return 1\n\n    def other(self):\n        return 2\n')
    merged = call(box, "replace_symbol", path="conv.py", symbol="Conv",
                  new_source="class Conv:\n    def __call__(self, s):\n        return -1\n")
    assert merged.success and (box.root / "conv.py").read_text() == (
        'class Conv:\n    """Doc."""\n\n    CHARS = "0123"\n    def __call__(self, s):\n        return -1\n\n'
        '    def other(self):\n        return 2\n')  # what the rewrite left out is kept, in its place
    call(box, "create_file", path="width.py", content='def width(s):\n    """Cells s takes.\n\n    -1 for control.\n'
         '    """\n    return len(s)\n')
    documented = call(box, "replace_symbol", path="width.py", symbol="width",
                      new_source="def width(s):\n    return -1 if '\\x01' in s else len(s)\n")
    assert documented.success and (box.root / "width.py").read_text() == (
        'def width(s):\n    """Cells s takes.\n\n    -1 for control.\n    """\n'
        '    return -1 if \'\\x01\' in s else len(s)\n')
    redoc = call(box, "replace_symbol", path="width.py", symbol="width",
                 new_source='def width(s):\n    """Cells."""\n    return len(s)\n')  # a new docstring wins
    assert redoc.success
    assert (box.root / "width.py").read_text() == 'def width(s):\n    """Cells."""\n    return len(s)\n'
    swapped = call(box, "replace_symbol", path="deco.py", symbol="g",
        new_source="@staticmethod\ndef g(x):\n    return 1")
    assert swapped.success
    assert (box.root / "deco.py").read_text().endswith("\n\n@staticmethod\ndef g(x):\n    return 1\n")


def test_replace_symbol_reads_a_header_that_left_out_def_with_def(box):
    """The local model wrote `match_file(patterns, file) -> bool:` for a def, three times in a row (run X,
    pathspec-negation): each was refused as invalid Python. The name is the symbol's, so the def is put back."""
    call(box, "create_file", path="match.py", content="def match_file(patterns, file) -> bool:\n    return False\n"
         "\n\nclass M:\n    def hit(self, x):\n        return 0\n")
    fixed = call(box, "replace_symbol", path="match.py", symbol="match_file",
                 new_source="match_file(patterns, file) -> bool:\n    return file in patterns\n")
    assert fixed.success, fixed.error
    assert "read with def" in fixed.output
    written = (box.root / "match.py").read_text()
    assert "def match_file(patterns, file) -> bool:\n    return file in patterns\n" in written
    method = call(box, "replace_symbol", path="match.py", symbol="M.hit",
                  new_source="    hit(self, x):\n        return x\n")
    assert method.success and "    def hit(self, x):\n        return x\n" in (box.root / "match.py").read_text()
    other = call(box, "replace_symbol", path="match.py", symbol="match_file", new_source="other(p):\n    return 1\n")
    assert other.failure == "lint_failed" and "not valid Python" in other.error  # another name: not guessed
    broken = call(box, "replace_symbol", path="match.py", symbol="match_file", new_source="match_file(:\n    pass\n")
    assert broken.failure == "lint_failed" and "Nothing was written" in broken.error


def test_replace_symbol_adds_a_missing_top_level_definition_and_replace_in_file_says_how_to_add(box):
    call(box, "create_file", path="seqs.py", content="def first(seq):\n    return seq[0]\n")
    new = "def count_reps(seq):\n    return {x: list(seq).count(x) for x in seq}\n"
    added = call(box, "replace_symbol", path="seqs.py", symbol="count_reps", new_source=new)
    assert added.success and "added: it was not defined" in added.output
    assert (box.root / "seqs.py").read_text() == "def first(seq):\n    return seq[0]\n\n\n" + new
    other = call(box, "replace_symbol", path="seqs.py", symbol="last", new_source=new)  # names disagree
    assert not other.success and "no class or function named 'last'" in other.error
    attempt = call(box, "replace_in_file", path="seqs.py", old_text="def last(seq):",
                   new_text="def last(seq):\n    return seq[-1]")
    assert attempt.failure == "edit_failed" and "insert_lines (line=7 appends at the end)" in attempt.error
    assert (box.root / "seqs.py").read_text() == "def first(seq):\n    return seq[0]\n\n\n" + new
    call(box, "create_file", path="exported.py", content="__all__ = [\n    'first',\n]\n\n\ndef first(s):\n"
         "    return s[0]\n")
    listed = call(box, "replace_symbol", path="exported.py", symbol="last",
        new_source="def last(s):\n    return s[-1]\n")
    assert listed.success and "(added: it was not defined, and listed in __all__)" in listed.output
    assert (box.root / "exported.py").read_text() == ("__all__ = [\n    'first', 'last',\n]\n\n\ndef first(s):\n"
                                                      "    return s[0]\n\n\ndef last(s):\n    return s[-1]\n")
    private = call(box, "replace_symbol", path="exported.py", symbol="_helper", new_source="def _helper():\n    pass\n")
    assert private.success and "__all__" not in private.output
    assert (box.root / "exported.py").read_text().startswith("__all__ = [\n    'first', 'last',\n]\n")
    # A method named without its class is that method, never a new top-level copy of it.
    call(box, "create_file", path="funcs.py", content="class F:\n    def rev(self, a):\n        return a\n\n\n"
         "class G:\n    def one(self):\n        return 1\n\n    def rev(self, a):\n        return a\n\n\n"
         "class H:\n    def only(self):\n        return 2\n")
    method = call(box, "replace_symbol", path="funcs.py", symbol="only",
                  new_source="def only(self):\n    return 3\n")
    assert method.success and "replace_symbol H.only:" in method.output
    assert (box.root / "funcs.py").read_text().endswith("class H:\n    def only(self):\n        return 3\n")
    two = call(box, "replace_symbol", path="funcs.py", symbol="rev",
        new_source="def rev(self, a):\n    return a[::-1]\n")
    assert not two.success and "'rev' names 2 definitions in funcs.py: F.rev, G.rev" in two.error
    # A method its class does not have yet is added at the end of that class; with no such class, nothing is.
    grown = call(box, "replace_symbol", path="funcs.py", symbol="F.twice",
                 new_source="def twice(self, a):\n    return a * 2\n")
    assert grown.success and "replace_symbol F.twice (added to F: it was not defined)" in grown.output, grown.error
    assert (box.root / "funcs.py").read_text().startswith("class F:\n    def rev(self, a):\n        return a\n\n"
                                                          "    def twice(self, a):\n        return a * 2\n\n\nclass G:")
    nowhere = call(box, "replace_symbol", path="funcs.py", symbol="Missing.twice",
                   new_source="def twice(self, a):\n    return a * 2\n")
    assert not nowhere.success and "no class or function named 'Missing.twice'" in nowhere.error


UNITS = ('"""Durations."""\nimport logging\nimport re\n\n_PART = re.compile(r"(\\d+)([hms])")\n'
         '_UNIT = {"h": 3600,\n         "m": 3600, "s": 1}  # seconds per unit\nlog = logging.getLogger(__name__)\n'
         'LIMIT = 1\nLIMIT = 2\n\n\ndef parse(text):\n    log.debug(text)\n    assert LIMIT\n'
         '    return sum(int(n) * _UNIT[u] for n, u in _PART.findall(text))\n\n\nclass Splitter:\n'
         '    SEP: str = ","\n    UNUSED = 1\n\n    def split(self, s):\n        return s.split(self.SEP)\n')


def test_a_value_a_function_reads_is_found_read_and_replaced_like_a_definition(box):
    """A fault in a module's table is not in the function that reads it: read_symbol names the values a
    definition reads (written with a literal, bound once) and shows one, and replace_symbol rewrites it
    in place, the rest of the file byte for byte; a class's value read through self too."""
    call(box, "create_file", path="units.py", content=UNITS)
    read = call(box, "read_symbol", symbol="parse", path="units.py")
    assert read.success and [(v["name"], v["start"], v["end"]) for v in read.details["reads"]] == \
        [("_PART", 5, 5), ("_UNIT", 6, 7)]  # not log (no literal), not LIMIT (bound twice)
    method = call(box, "read_symbol", symbol="Splitter.split", path="units.py")
    assert [v["name"] for v in method.details["reads"]] == ["Splitter.SEP"]
    shown = call(box, "read_symbol", symbol="_UNIT")
    assert shown.success and shown.details["definitions"][0]["kind"] == "value"
    assert shown.details["sources"] == ['_UNIT = {"h": 3600,\n         "m": 3600, "s": 1}  # seconds per unit']
    fixed = call(box, "replace_symbol", path="units.py", symbol="_UNIT",
                 new_source='_UNIT = {"h": 3600, "m": 60, "s": 1}')
    assert fixed.success, fixed.error
    assert (box.root / "units.py").read_text() == UNITS.replace(
        '_UNIT = {"h": 3600,\n         "m": 3600, "s": 1}  # seconds per unit', '_UNIT = {"h": 3600, "m": 60, "s": 1}')
    sep = call(box, "replace_symbol", path="units.py", symbol="Splitter.SEP", new_source='SEP: str = ";"')
    assert sep.success and '    SEP: str = ";"\n    UNUSED = 1\n' in (box.root / "units.py").read_text()
    for source in ("def _UNIT():\n    return 1\n", "OTHER = 1\n", '_UNIT = {}\nX = 1\n'):
        refused = call(box, "replace_symbol", path="units.py", symbol="_UNIT", new_source=source)
        assert not refused.success and "must be one assignment to it, `_UNIT = ...`" in refused.error, source
    broken = call(box, "replace_symbol", path="units.py", symbol="_UNIT", new_source="_UNIT = {")
    assert broken.failure == "lint_failed" and "Nothing was written" in broken.error
    assert '_UNIT = {"h": 3600, "m": 60, "s": 1}' in (box.root / "units.py").read_text()
    call(box, "create_file", path="shared.py", content="A = 1; B = 2\n\n\nclass K: D = 4\n")
    for name in ("B", "K.D"):  # a statement that shares its line is not a value: rewriting its lines would cut
        kept = call(box, "replace_symbol", path="shared.py", symbol=name, new_source=f"{name[-1]} = 5")
        assert not kept.success, name
    assert (box.root / "shared.py").read_text() == "A = 1; B = 2\n\n\nclass K: D = 4\n"


def test_replace_symbol_given_a_directory_edits_the_one_file_that_defines_the_name(box):
    call(box, "create_file", path="deep/mod_one.py", content="def only_here(x):\n    return x\n")
    call(box, "create_file", path="deep/tests/test_mod.py", content="def only_here(x):\n    return 0\n")
    for name in ("dup_a.py", "dup_b.py"):
        call(box, "create_file", path=f"deep/{name}", content="def twice(x):\n    return x\n")
    found = call(box, "replace_symbol", path=".", symbol="only_here", new_source="def only_here(x):\n    return -x\n")
    assert found.success and "deep/mod_one.py written" in found.output, found.error
    assert (box.root / "deep/mod_one.py").read_text() == "def only_here(x):\n    return -x\n"
    assert (box.root / "deep/tests/test_mod.py").read_text() == "def only_here(x):\n    return 0\n"  # code first
    two = call(box, "replace_symbol", path="deep", symbol="twice", new_source="def twice(x):\n    return 2\n")
    assert not two.success and "defined in 2 files under it: deep/dup_a.py, deep/dup_b.py" in two.error
    none = call(box, "delete_symbol", path="deep", symbol="nowhere_at_all")
    assert not none.success and "no def or class named 'nowhere_at_all' is under it" in none.error
    assert (box.root / "deep/dup_a.py").read_text() == "def twice(x):\n    return x\n"


def test_add_import(box):
    call(box, "create_file", path="imp.py", content='"""Doc."""\n\nimport os\n\nX = os.sep\n')
    assert call(box, "add_import", path="imp.py", statement="from pathlib import Path").success
    assert (box.root / "imp.py").read_text() == '"""Doc."""\n\nimport os\nfrom pathlib import Path\n\nX = os.sep\n'
    again = call(box, "add_import", path="imp.py", statement="import os")
    assert again.success and "already has" in again.output
    bad = call(box, "add_import", path="imp.py", statement="x = 1")
    assert not bad.success and "must be an import" in bad.error


# ---- checks -------------------------------------------------------------------------------------
def test_run_tests_summarises_failures(box):
    result = call(box, "run_tests")
    assert result.failure == "tests_failed"
    assert result.details["summary"]["passed"] == 1 and result.details["summary"]["failed"] == 1
    assert result.details["summary"]["skipped"] == 1
    assert result.details["failing"] == ["tests/test_shapes.py::test_area"]
    assert result.details["raised"] == {"tests/test_shapes.py::test_area": "AssertionError"}
    assert "FAILED tests/test_shapes.py::test_area" in result.output and "area is pi r squared" in result.output
    one = call(box, "run_tests", selection=["tests/test_shapes.py::test_unit"])
    assert one.success and one.output.startswith("pytest: 1 passed, 0 failed")
    wrong_id = call(box, "run_tests", selection=["tests/test_shapes.py::test_nothing_here"])
    assert wrong_id.output.startswith("No test matches tests/test_shapes.py::test_nothing_here. "
                                      "Ran tests/test_shapes.py instead.")
    assert wrong_id.details["summary"]["passed"] == 1 and wrong_id.details["summary"]["failed"] == 1
    wrong_file = call(box, "run_tests", selection=["tests/test_shape.py"])
    assert wrong_file.output.startswith("tests/test_shape.py does not exist. Did you mean: tests/test_shapes.py")
    assert "Ran the whole test suite instead." in wrong_file.output and wrong_file.details["summary"]["failed"] == 1
    skipped = call(box, "run_tests", selection=["tests/test_shapes.py::test_skip"])
    assert not skipped.success and "no test ran: all 1 were skipped, so this checked nothing" in skipped.error
    outside = call(box, "run_tests", selection=["../elsewhere.py"])
    assert not outside.success and "outside the repository" in outside.error


def test_lint_changed_and_given_files(box):
    call(box, "create_file", path="lintme.py", content="import os\nimport sys\n\nprint(sys.argv)\n")
    result = call(box, "lint", paths=["lintme.py"])
    assert result.failure == "lint_failed" and "lintme.py:1:8: F401" in result.output
    assert "lintme.py" in call(box, "lint").output  # changed files by default
    assert "F401 `os` imported but unused (fixable) [new]" in result.output and "1 new in this run" in result.error
    old = call(box, "lint", paths=["legacy.py"])  # committed with an undefined name: not this run's doing
    assert old.success and "all there before this run; none new" in old.output
    assert "F821 Undefined name `undefined_name` [there before this run]" in old.output


def test_lint_code_in_the_files_own_style_is_not_new_but_another_rule_is(box):
    wrote = call(box, "create_file", path="styled.py", overwrite=True,
                 content="import os\nimport sys\n\n\ndef one():\n    unused = 2\n    return 1\n")
    assert wrote.success, wrote.error
    result = call(box, "lint", paths=["styled.py"])
    assert "F401 `os` imported but unused (fixable) [there before this run]" in result.output
    assert "F401 `sys` imported but unused (fixable) [a rule this file broke before]" in result.output
    assert "F841 Local variable `unused` is assigned to but never used" in result.output
    assert "1 new in this run" in result.error and result.details["new_findings"] == [
        "styled.py: F841 Local variable `unused` is assigned to but never used"]


def test_a_method_replaced_keeps_the_lines_inside_its_strings_as_written(tmp_path):
    """A method given at its class's indentation is dedented to be parsed; the lines inside its docstring and a
    triple-quoted value are no statements, and keep the indentation they were written with (they came out four
    spaces short, and the value changed). A method added to the class keeps them the same way."""
    files = {"report.py": "class Report:\n    def header(self):\n        return 'old'\n"}
    header = ('    def header(self):\n        """The header.\n\n        Two lines.\n        """\n'
              '        return """Title\n        Sub\n        """\n')
    footer = '    def footer(self):\n        """The footer.\n\n        Its end.\n        """\n        return "end"\n'
    with own_sandbox(tmp_path, "strings", files) as box:
        replaced = call(box, "replace_symbol", path="report.py", symbol="Report.header", new_source=header)
        assert replaced.success, replaced.error
        added = call(box, "replace_symbol", path="report.py", symbol="Report.footer", new_source=footer)
        assert added.success, added.error
        written = (box.workspace_obj.path / "report.py").read_text()
        assert written == "class Report:\n" + header + "\n" + footer, written
        ns: dict = {}
        exec(written, ns)
        assert ns["Report"]().header() == "Title\n        Sub\n        "


def test_lint_changes_no_file_where_the_project_asks_ruff_to_fix(tmp_path):
    """A project's `fix = true` makes a bare `ruff check` rewrite what it finds fixable (here it sorted __all__):
    lint, and the gate's lint at the start and at the end, only read. The finding is reported as it stands."""
    source = "__all__ = ['b', 'a']\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    files = {"pyproject.toml": "[tool.ruff]\nfix = true\nlint.select = ['RUF022']\n", "names.py": source}
    with own_sandbox(tmp_path, "fixing", files) as box:
        linted = call(box, "lint", paths=["names.py"])
        assert "RUF022" in linted.output and "[there before this run]" in linted.output, linted.output
        assert (box.workspace_obj.path / "names.py").read_text() == source
        # while the sandbox runs, the worktree is the sandbox user's: host git (root here) trusts it only by name
        worktree = box.workspace_obj.path
        assert git(worktree, "-c", f"safe.directory={worktree}", "status", "--porcelain") == ""


def test_an_executable_file_an_edit_leaves_executable_has_no_new_lint_problem(tmp_path):
    """ruff's EXE rules read a file's mode: the starting state is linted with each file's mode as it was, so an
    executable module without a shebang (as some packages ship theirs) is a problem there before the run."""
    files = {"ruff.toml": "[lint]\nextend-select = ['EXE']\n", "tool.py": "def f():\n    return 1\n"}

    def executable(repo):
        (repo / "tool.py").chmod(0o755)
        git(repo, "add", "tool.py")
        git(repo, "commit", "-qm", "executable")

    with own_sandbox(tmp_path, "modes", files, prepare=executable) as box:
        edited = call(box, "replace_in_file", path="tool.py", old_text="return 1", new_text="return 2")
        assert edited.success, edited.error
        linted = call(box, "lint", paths=["tool.py"])
        assert "EXE002" in linted.output and "[there before this run]" in linted.output, linted.output
        assert linted.success and linted.details["new_findings"] == []


def test_git_status_and_diff_show_the_runs_changes(box):
    call(box, "create_file", path="brand_new.txt", content="hello\n")
    call(box, "create_file", path=".omni/check/test_reproduce.py", content="import os\n")  # omni's own: not shown
    assert "brand_new.txt" in call(box, "git_status").output
    diff = call(box, "git_diff").output
    assert "+hello" in diff and "brand_new.txt" in diff
    assert ".omni" not in call(box, "git_status").output + diff
    assert ".omni" not in call(box, "lint").output  # its unused import is nobody's problem


def test_shell_exit_codes(box):
    ok = call(box, "shell", command="echo hi; echo err >&2")
    assert ok.success and "hi" in ok.output and "err" in ok.output
    bad = call(box, "shell", command="exit 3")
    assert bad.failure == "command_failed" and bad.exit_code == 3


def test_non_python_repo_with_a_test_command(tmp_path, docker_engine):
    with own_sandbox(tmp_path, "js", {"check.sh": "grep -q 'return 2' lib.sh && echo 'all good'\n",
                                      "lib.sh": "f() { return 1; }\n"}, test_command="bash check.sh") as box:
        failing = box.run_tool("run_tests", {}, 60)
        assert failing.failure == "tests_failed" and "exited 1" in failing.error
        assert box.run_tool("replace_in_file", {"path": "lib.sh", "old_text": "return 1", "new_text": "return 2"},
                            30).success
        passing = box.run_tool("run_tests", {}, 60)
        assert passing.success and "all good" in passing.output
        assert "lib.sh:1:" in box.run_tool("search", {"pattern": "return"}, 30).output


STRICT_TESTS = """import warnings

import pytest

warnings.warn(pytest.PytestDeprecationWarning("an API this pytest will remove"))


def test_ok():
    assert True


def test_own_warning():
    warnings.warn(DeprecationWarning("the project's own"))
"""


def test_pytest_deprecations_do_not_break_a_project_that_errors_on_warnings(tmp_path, docker_engine):
    # dateutil's config turns warnings into errors; with the newer pytest the sandbox installed, pytest's own
    # notice about a parametrize generator stopped the whole file from collecting.
    with own_sandbox(tmp_path, "strict", {"pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
                                          "tests/test_strict.py": STRICT_TESTS}) as box:
        result = box.run_tool("run_tests", {"selection": ["tests/test_strict"]}, 60)
        assert result.output.startswith("tests/test_strict is read as tests/test_strict.py.")
        assert result.details["summary"]["passed"] == 1, result.output  # collected, despite pytest's notice
        assert result.details["failing"] == ["tests/test_strict.py::test_own_warning"]  # the project's own still fail
        dotted = box.run_tool("run_tests", {"selection": ["tests.test_strict::test_ok"]}, 60)
        assert dotted.success and "tests.test_strict is read as tests/test_strict.py." in dotted.output


SRC_LAYOUT = {
    "pytest.ini": "[pytest]\npythonpath = src\n",
    "src/stats/__init__.py": "",
    "src/stats/core.py": "def middle(xs):\n    xs = sorted(xs)\n    return xs[len(xs) // 2]\n",
    "src/stats/spread.py": "def width(xs):\n    return max(xs) - min(xs)\n",
    "src/stats/unused.py": "def nothing():\n    return None\n",
    "tests/helpers.py": "def data():\n    return [4, 1, 3, 2]\n",
    "tests/test_core.py": "from stats.core import middle\n\n\ndef test_odd():\n    assert middle([3, 1, 2]) == 2\n",
    "tests/test_median.py": "from stats import core\n\n\ndef test_even():\n    assert core.middle([4, 1, 2]) == 2\n"
                            "\n\ndef test_four():\n    assert core.middle([4, 1, 2, 3]) == 2.5\n",
    "tests/test_spread.py": "import stats.spread\n\n\ndef test_width():\n    assert stats.spread.width([1, 5]) == 4\n",
}


def test_run_tests_on_a_source_file_runs_the_tests_that_import_it(tmp_path, docker_engine):
    # A model that edited src/stats/core.py asks for "its" tests by that path: pytest collects nothing from it.
    with own_sandbox(tmp_path, "srcmap", SRC_LAYOUT) as box:
        result = box.run_tool("run_tests", {"selection": ["src/stats/core.py"]}, 60)
        assert result.output.startswith("src/stats/core.py is code, not tests: ran the tests that import it "
                                        "(tests/test_core.py, tests/test_median.py).")
        assert result.details["summary"]["passed"] == 2 and result.details["summary"]["failed"] == 1
        assert result.details["failing"] == ["tests/test_median.py::test_four"]
        both = box.run_tool("run_tests", {"selection": ["src/stats/spread.py", "tests/test_core.py"]}, 60)
        assert both.success and both.details["summary"]["passed"] == 2, both.output
        lonely = box.run_tool("run_tests", {"selection": ["src/stats/unused.py"]}, 60)
        assert lonely.output.startswith("src/stats/unused.py is code, not tests, and no test file imports it: "
                                        "ran the whole suite.")
        assert lonely.details["summary"]["passed"] == 3 and lonely.details["summary"]["failed"] == 1
        helper = box.run_tool("run_tests", {"selection": ["tests/helpers.py"]}, 60)  # imported by no test either
        assert "no test file imports it" in helper.output and helper.details["summary"]["passed"] == 3


def test_run_tests_on_a_source_file_also_runs_the_tests_of_a_package_that_imports_it(tmp_path, docker_engine):
    # tests/test_api.py imports middle from the package, whose __init__ imports it from core: it tests core.py,
    # after the files that import core itself; it does not test spread.py, which the package does not import.
    files = {**SRC_LAYOUT, "src/stats/__init__.py": "from .core import middle\n",
             "tests/test_api.py": "from stats import middle\n\n\ndef test_api():\n    assert middle([1, 2, 3]) == 2\n"}
    with own_sandbox(tmp_path, "srcpackage", files) as box:
        result = box.run_tool("run_tests", {"selection": ["src/stats/core.py"]}, 60)
        assert result.output.startswith("src/stats/core.py is code, not tests: ran the tests that import it "
                                        "(tests/test_core.py, tests/test_median.py, tests/test_api.py).")
        assert result.details["summary"]["passed"] == 3 and result.details["summary"]["failed"] == 1
        spread = box.run_tool("run_tests", {"selection": ["src/stats/spread.py"]}, 60)
        assert spread.output.startswith("src/stats/spread.py is code, not tests: ran the tests that import it "
                                        "(tests/test_spread.py).")


def test_a_test_file_that_fails_to_collect_is_named_by_its_path(tmp_path, docker_engine):
    # pytest's junit report names a module that failed to import by its dotted name, with no class: the id the
    # check, the spectrum and run_tests are given must be the file's path, or none of them can run it again.
    # The rest of the suite still runs (pytest runs nothing after a collection error unless told to go on), and a
    # module the sandbox lacks is named, unless it is the project's own (then the code is at fault).
    files = {**SRC_LAYOUT, "tests/unit/test_helper.py": "import no_such_helper_xyz\n\n\ndef test_x():\n    pass\n",
             "tests/test_own.py": "import stats.not_written_yet\n\n\ndef test_y():\n    pass\n"}
    with own_sandbox(tmp_path, "uncollected", files) as box:
        ran = box.run_tool("run_tests", {}, 120)
        assert sorted(ran.details["failing"]) == ["tests/test_median.py::test_four", "tests/test_own.py",
                                                  "tests/unit/test_helper.py"], ran.output
        assert ran.details["summary"]["passed"] == 3, ran.output  # test_odd, test_even, test_width ran too
        assert ran.details["missing"] == {"tests/unit/test_helper.py": "no_such_helper_xyz"}
        again = box.run_tool("run_tests", {"selection": ["tests/unit/test_helper.py"]}, 60)
        assert again.details["failing"] == ["tests/unit/test_helper.py"] and "no_such_helper_xyz" in again.output


def test_a_test_whose_own_code_misses_a_name_the_project_defines_is_named_with_it(tmp_path, docker_engine):
    # A doctest of the docs with no import (its docs' conftest would give the name) and a test missing an import
    # cannot pass whatever the code does; the same NameError raised inside the project's code (a module that forgot
    # an import) is the code's fault, and a name nobody defines is a typo to fix: neither is named.
    files = {**SRC_LAYOUT, "pytest.ini": "[pytest]\npythonpath = src\naddopts = --doctest-glob='*.rst'\n",
             "docs/guide.rst": "Guide\n=====\n\n>>> middle([5, 1, 3])\n3\n",
             "src/stats/extra.py": "def spread(xs):\n    return middle(xs)\n",
             "tests/test_forgot.py": "def test_forgot():\n    assert middle([1]) == 1\n\n\n"
                                     "def test_typo():\n    assert midle([1]) == 1\n",
             "tests/test_extra.py": "from stats.extra import spread\n\n\ndef test_spread():\n"
                                    "    assert spread([1]) == 1\n"}
    with own_sandbox(tmp_path, "unbound", files) as box:
        ran = box.run_tool("run_tests", {}, 120)
        assert {"docs/guide.rst::guide.rst", "tests/test_forgot.py::test_forgot", "tests/test_forgot.py::test_typo",
                "tests/test_extra.py::test_spread"} <= set(ran.details["failing"]), ran.output
        assert ran.details["unbound"] == {"docs/guide.rst::guide.rst": "middle",
                                          "tests/test_forgot.py::test_forgot": "middle"}, ran.output
        brief = box.run_tool("run_tests", {"selection": ["tests/test_forgot.py", "tests/test_extra.py"]}, 60)
        assert brief.details["unbound"] == {"tests/test_forgot.py::test_forgot": "middle"}, brief.output


def test_a_failing_doctest_of_a_text_file_is_named_by_its_path(tmp_path, docker_engine):
    # pytest's junit report names a text file's doctest (--doctest-glob) by its dotted path, suffix and all: the
    # id must be the file itself, or neither run_tests nor the spectrum can run it again.
    files = {**SRC_LAYOUT, "pytest.ini": "[pytest]\npythonpath = src\naddopts = --doctest-glob='*.rst'\n",
             "docs/usage-guide.rst": "Usage\n=====\n\n>>> from stats.core import middle\n>>> middle([5, 1, 3])\n5\n"}
    with own_sandbox(tmp_path, "doctests", files) as box:
        ran = box.run_tool("run_tests", {}, 120)
        assert "docs/usage-guide.rst::usage-guide.rst" in ran.details["failing"], ran.details["failing"]
        again = box.run_tool("run_tests", {"selection": ["docs/usage-guide.rst::usage-guide.rst"]}, 60)
        assert again.details["failing"] == ["docs/usage-guide.rst::usage-guide.rst"], again.output


SPECTRUM = {
    "pytest.ini": "[pytest]\npythonpath = src\naddopts = --cov=stats\n",  # a coverage plugin: left out
    "src/stats/__init__.py": "",
    "src/stats/core.py": ("def middle(xs):\n    xs = sorted(xs)\n    n = len(xs)\n    if n % 2:\n"
                          "        return xs[n // 2]\n    return (xs[n // 2] + xs[n // 2]) / 2\n\n\n"
                          "def width(xs):\n    def top(v):\n        return v\n    return top(max(xs)) - min(xs)\n\n\n"
                          "def _table():\n    return {0: 'even'}\n\n\nTABLE = _table()\n"),  # run on import
    "tests/test_core.py": ("from stats.core import middle, width\n\n\ndef test_odd():\n"
                           "    assert middle([3, 1, 2]) == 2\n\n\ndef test_even():\n"
                           "    assert width([1, 5]) == 4 and middle([4, 1, 3, 2]) == 2.5\n\n\n"
                           "def test_width():\n    assert width([1, 5]) == 4\n"),
    ".omni/check/test_reproduce.py": "from stats.core import middle\n\n\ndef test_it():\n"
                                     "    assert middle([2, 1]) == 1.5\n",
}


def test_spectrum_ranks_the_line_only_failing_tests_run(tmp_path, docker_engine):
    with own_sandbox(tmp_path, "spectrum", SPECTRUM) as box:
        ran = box.run_tool("spectrum", {"failing": ["tests/test_core.py::test_even"]}, 300)
        assert ran.success, ran.error
        suspects = ran.details["suspects"]
        assert (suspects[0]["path"], suspects[0]["symbol"], suspects[0]["score"], suspects[0]["lines"]) == \
            ("src/stats/core.py", "middle", 1.0, [6])  # the even branch: only the failing test runs it
        assert suspects[0]["ran"] == [[2, 3, 4]]  # its other lines test_even ran (and test_odd); not the odd branch
        assert {s["symbol"] for s in suspects} == {"middle", "width", "width.top"}
        assert all(s["score"] < 1.0 for s in suspects[1:])  # width runs in the passing test_width too
        assert ran.details["failed"] == 1 and ran.details["passed"] == 2
        # A reproduction test's file has no passing test: the test files of the code it ran are the passing side.
        alone = box.run_tool("spectrum", {"failing": [".omni/check/test_reproduce.py::test_it"]}, 300)
        assert alone.success and alone.details["suspects"][0]["symbol"] == "middle", alone.output
        assert alone.details["passed"] == 2  # test_odd and test_width, from tests/test_core.py
        # With no failing test, the goal's examples that do not hold are the failing side, run as tests of their
        # own; those that hold and the tests of the code they ran are the passing side. Nothing is left behind.
        examples = [{"expression": "middle([4, 1, 3, 2])", "expected": "2.5"},
                    {"expression": "middle([3, 1, 2])", "expected": "2"}]
        by_example = box.run_tool("spectrum", {"examples": examples}, 300)
        assert by_example.success, by_example.error
        first = by_example.details["suspects"][0]
        assert (first["symbol"], first["score"], first["lines"]) == ("middle", 1.0, [6]), by_example.output
        # the examples import stats.core as they run; the tests imported it at collection: _table is no suspect
        assert "_table" not in {s["symbol"] for s in by_example.details["suspects"]}, by_example.output
        assert by_example.details["failed"] == 1 and by_example.details["passed"] == 3  # an example, test_odd/width
        left = box.run_tool("shell", {"command": "ls -A .omni/check"}, 30)
        assert "test_goal_examples" not in left.output and "test_reproduce.py" in left.output, left.output
        probe = box.run_tool("spectrum", {"examples": [{"expression": "middle([1])"}]}, 60)
        assert not probe.success and "nothing to fail" in probe.error
        none = box.run_tool("spectrum", {"failing": ["tests/test_core.py::test_odd"]}, 300)
        assert not none.success and "no test failed under the tracer" in none.error
        outside = box.run_tool("spectrum", {"failing": ["../x.py::test"]}, 60)
        assert not outside.success and "outside the repository" in outside.error


def test_project_addopts_for_a_missing_plugin_are_left_out_and_said(tmp_path, docker_engine):
    # wcwidth's tox.ini adds --cov options; without pytest-cov, pytest exited 4 before running a test.
    with own_sandbox(tmp_path, "cov", {"tox.ini": "[pytest]\naddopts = --cov=pkg --cov-append\n",
                                       "tests/test_cov.py": "def test_ok():\n    assert True\n"}) as box:
        result = box.run_tool("run_tests", {}, 60)
        assert result.success and result.details["summary"]["passed"] == 1, result.output + result.error
        assert result.output.startswith("pytest: 1 passed")
        assert "unrecognized arguments: --cov=pkg --cov-append), so its addopts were left out" in result.output


def test_a_src_layout_is_imported_from_the_working_tree(tmp_path, docker_engine):
    # dateutil keeps its package in src/; its tests imported the copy freezegun had installed, so an edit was
    # never tested (and that newer copy's deprecation broke collection).
    with own_sandbox(tmp_path, "srclayout", {"src/omni_src_pkg/__init__.py": "VALUE = 1\n",
                                             "tests/test_value.py": "import omni_src_pkg\n\n\ndef test_value():\n"
                                                                    "    assert omni_src_pkg.VALUE == 1\n"}) as box:
        result = box.run_tool("run_tests", {}, 60)
        assert result.success and result.details["summary"]["passed"] == 1, result.output + result.error
        shown = box.run_tool("shell", {"command": "python3 -c 'import omni_src_pkg; print(omni_src_pkg.__file__)'"}, 60)
        assert shown.success and "/src/omni_src_pkg/__init__.py" in shown.output, shown.error


def test_code_escaped_twice_is_read_with_line_breaks_only_when_that_is_what_parses(box):
    call(box, "create_file", path="esc.py", content="def f(x):\n    return x\n\n\ndef g():\n    return 1\n")
    flat = 'def f(x):\\n    \\"\\"\\"Negate.\\"\\"\\"\\n    return -x\\n'  # one line: \n and \" as two characters
    fixed = call(box, "replace_symbol", path="esc.py", symbol="f", new_source=flat)
    assert fixed.success and "held \\n as two characters" in fixed.output, fixed.error
    assert (box.root / "esc.py").read_text().startswith('def f(x):\n    """Negate."""\n    return -x\n')
    edit = call(box, "replace_in_file", path="esc.py", old_text="def g():\\n    return 1",
                new_text="def g():\\n    return 2")
    assert edit.success and "held \\n as two characters" in edit.output, edit.error
    assert (box.root / "esc.py").read_text().endswith("def g():\n    return 2\n")
    kept = call(box, "replace_in_file", path="esc.py", old_text="return 2", new_text='return "a\\nb"')
    assert kept.success and "two characters" not in kept.output  # valid as written: a string with \n in it
    assert (box.root / "esc.py").read_text().endswith('def g():\n    return "a\\nb"\n')
    made = call(box, "create_file", path="esc2.py", content="import os\\n\\nHOME = os.sep\\n")
    assert made.success and (box.root / "esc2.py").read_text() == "import os\n\nHOME = os.sep\n"
    added = call(box, "insert_lines", path="esc2.py", line=4, text="def h():\\n    return HOME")
    assert added.success and (box.root / "esc2.py").read_text().endswith("def h():\n    return HOME\n")


def test_new_code_is_indented_like_the_file_when_only_that_parses(box):
    tabbed = "def norm(path, seps=None):\n\tif seps is None:\n\t\tseps = ['/']\n\tif path.startswith('/'):\n" \
             "\t\tpath = path[1:]\n\treturn path\n"
    call(box, "create_file", path="tabbed.py", content=tabbed)
    # Written as a model writes it: from the middle of a tab-indented line, its body in spaces relative to it.
    edit = call(box, "replace_in_file", path="tabbed.py", old_text="if path.startswith('/'):\n\t\tpath = path[1:]",
                new_text="if path.startswith('./'):\n    path = path[2:]")
    assert edit.success, edit.error
    assert "indented with spaces in a file indented with tabs" in edit.output and "from the start of its first line" \
        in edit.output
    assert (box.root / "tabbed.py").read_text() == tabbed.replace(
        "'/'):\n\t\tpath = path[1:]", "'./'):\n\t\tpath = path[2:]")
    added = call(box, "insert_lines", path="tabbed.py", line=6, text="    if not path:\n        return '.'")
    assert added.success and "indented with tabs" in added.output, added.error
    assert "\tif not path:\n\t\treturn '.'\n\treturn path\n" in (box.root / "tabbed.py").read_text()
    call(box, "create_file", path="spaced.py", content="def f(x):\n    if x:\n        return 1\n    return 0\n")
    nested = call(box, "replace_in_file", path="spaced.py", old_text="if x:\n        return 1",
                  new_text="if x > 1:\n    return 2")
    assert nested.success and "tabs" not in nested.output and "from the start of its first line" in nested.output
    assert (box.root / "spaced.py").read_text() == "def f(x):\n    if x > 1:\n        return 2\n    return 0\n"
    plain = call(box, "replace_in_file", path="spaced.py", old_text="return 0", new_text="return -1")
    assert plain.success and "read that way" not in plain.output


# ---- the goal's examples (not a model tool: the gate's) -----------------------------------------------
def test_check_examples_imports_what_each_name_means_in_the_project_python(box):
    examples = [{"expression": "Circle(2).r", "expected": "math.floor(3.5)"},  # a class, found by definition
                {"expression": "unit().r", "expected": "1"},
                {"expression": "legacy.broken()", "expected": "None"},  # a module; its code raises
                {"expression": "context.Context", "expected": "1"},  # the tools' own modules do not shadow
                {"expression": "pkg.shapes.unit().r", "expected": "1"},  # a submodule its package does not import
                {"expression": "pkg.shapes.nothing.f()", "expected": "1"}]
    result = box.run_tool("check_examples", {"examples": examples, "timeout": 30}, 60)
    assert result.success, result.error
    first, second, third, fourth, submodule, missing = result.details["results"]
    assert submodule["holds"] is True, submodule
    assert missing["raised"] == "AttributeError" and "nothing" in missing["got"]
    assert first == {"holds": False, "got": "2", "value": "2", "raised": "", "iterator": False}
    assert second["holds"] is True
    assert third["raised"] == "NameError" and "undefined_name" in third["got"]
    assert fourth["raised"] == "ModuleNotFoundError" and "context" in fourth["got"]


def test_an_examples_value_leaves_object_addresses_out_so_two_runs_compare(box):
    result = box.run_tool("check_examples", {"examples": [{"expression": "object()", "expected": "1"}],
                                             "timeout": 30}, 60)
    found = result.details["results"][0]
    assert " at 0x" in found["got"] and found["value"] == "<object object>" and not found["iterator"]


def test_an_example_that_gives_an_iterator_says_so_in_a_field(box):
    examples = [{"expression": "map(str, [1])", "expected": "['1']"}, {"expression": "iter([1])"},
                {"expression": "list(map(str, [1]))", "expected": "['1']"}]
    result = box.run_tool("check_examples", {"examples": examples, "timeout": 30}, 60)
    assert [r["iterator"] for r in result.details["results"]] == [True, True, False]
    assert [r["holds"] for r in result.details["results"]] == [False, False, True]


def test_find_definitions_reads_definition_lines_into_fields(box):
    found = box.run_tool("find_definitions", {"names": ["unit", "Circle", "area"], "kinds": ["def", "class"]}, 60)
    assert found.success, found.error
    seen = {(d["name"], d["kind"], d["top_level"]) for d in found.details["found"]}
    assert ("Circle", "class", True) in seen and ("unit", "def", True) in seen and ("area", "def", False) in seen


def test_check_examples_that_never_finish_are_stopped(box):
    looping = [{"expression": "list(iter(int, 1))", "expected": "[]"}]  # never ends
    result = box.run_tool("check_examples", {"examples": looping, "timeout": 2}, 30)
    assert not result.success and result.failure == "timeout" and "did not finish in 2s" in result.error


# ---- files that are not plain UTF-8 ------------------------------------------------------------
def test_an_edit_keeps_every_byte_it_does_not_change(tmp_path):
    latin = "# caf\xe9\nname = 'ol\xe9'\nvalue = 1\n".encode("latin-1")
    bom = b"\xef\xbb\xbf" + "def f():\n    return 1\n".encode()
    with own_sandbox(tmp_path, "bytes", {"README": "x\n"}) as box:
        root = box.workspace
        (root / "legacy.py").write_bytes(latin)
        (root / "bom.py").write_bytes(bom)
        (root / "caf\xe9.py".encode("latin-1").decode("utf-8", "surrogateescape")).write_bytes(b"def g():\n    pass\n")
        edited = call(box, "replace_in_file", path="legacy.py", old_text="value = 1", new_text="value = 2")
        assert edited.success, edited.error
        assert (root / "legacy.py").read_bytes() == latin.replace(b"value = 1", b"value = 2")
        mixed = call(box, "replace_in_file", path="legacy.py", old_text="value = 2", new_text="value = 'é'")
        assert not mixed.success and "not UTF-8 (byte 0xe9 on line 1)" in mixed.error
        assert (root / "legacy.py").read_bytes() == latin.replace(b"value = 1", b"value = 2")
        structured = call(box, "replace_symbol", path="legacy.py", symbol="h", new_source="def h():\n    pass\n")
        assert not structured.success
        assert "not valid UTF-8" in structured.error and "replace_in_file" in structured.error
        # Reading it as Python says why it cannot, not that what it defines is missing; a folder's outline skips it.
        for name, args in [("read_symbol", {"symbol": "value", "path": "legacy.py"}),
                           ("outline", {"path": "legacy.py"})]:
            unread = call(box, name, **args)
            assert not unread.success, name
            assert "legacy.py is not valid UTF-8 (byte 0xe9 on line 1)" in unread.error, name
        assert "Not parsed:\nlegacy.py: legacy.py is not valid UTF-8" in call(box, "outline", path=".").output
        # A BOM does not stop Python-aware tools, and it is still there after the edit.
        assert "def f  [1-2]" in call(box, "outline", path="bom.py").output
        rewritten = call(box, "replace_symbol", path="bom.py", symbol="f", new_source="def f():\n    return 2\n")
        assert rewritten.success, rewritten.error
        assert (root / "bom.py").read_bytes() == b"\xef\xbb\xbf" + b"def f():\n    return 2\n"
        # A file name that is not UTF-8 comes back as a result, not an unreadable reply.
        listed = call(box, "outline", path=".")
        assert listed.success and "caf\\xe9.py" in listed.output and "def g" in listed.output


def test_a_failing_test_in_a_class_has_the_id_pytest_takes(tmp_path):
    words = ("import unittest\n\n\nclass WordTests(unittest.TestCase):\n"
             "    def test_upper(self):\n        self.assertEqual('a'.upper(), 'a')\n")
    files = {"tests/__init__.py": "", "tests/test_words.py": words}
    with own_sandbox(tmp_path, "classid", files) as box:
        ran = call(box, "run_tests")
        assert ran.details["failing"] == ["tests/test_words.py::WordTests::test_upper"]
        assert ran.details["raised"] == {"tests/test_words.py::WordTests::test_upper": "AssertionError"}
        again = call(box, "run_tests", selection=ran.details["failing"])  # the id runs that one test
        assert again.details["summary"]["failed"] == 1 and "does not exist" not in again.output
