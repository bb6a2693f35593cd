"""Every tool, declared once: name (the class's), description (the docstring), parameters, kind, whether --tools core
offers it, its tools/ module (a host tool's is its sandbox half), details model. The host's schemas and tool groups
and the server's dispatch table come from these. Descriptions name a form, never a value: small models copy them."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

# What a tool does to the workspace, which decides how the loop treats a repeat of it.
READ = "read"  # only looks: the same call gives the same answer until something changes the workspace
CHECK = "check"  # runs the code, changes nothing that lasts
EDIT = "edit"  # changes files
COMMAND = "command"  # may change anything
HOST = "host"  # runs in omni itself, never in the sandbox
INTERNAL = "internal"  # not offered to the model: omni's own use of the sandbox


class Details(BaseModel, extra="allow"):
    """Fields a tool's result carries beside its text, for the host to read (never the prose)."""


class ListDetails(Details):
    total: int = 0
    files: list[str] = Field(default_factory=list, description="the files shown")


class SearchMatch(BaseModel):
    path: str
    line: int
    text: str


class SearchDetails(Details):
    total: int = 0
    matches: list[SearchMatch] = Field(default_factory=list, description="the matches shown")


class FoundDefinition(BaseModel):
    path: str
    line: int
    name: str
    kind: Literal["def", "class", "assign"]
    top_level: bool = Field(description="not indented: a module's own, not a method or a nested one")


class FoundDetails(Details):
    found: list[FoundDefinition] = Field(default_factory=list)


class ReadDetails(Details):
    total_lines: int = 0
    next_start_line: int | None = Field(None, description="where a paged read goes on; None at the end")
    text: str = Field("", description="the lines shown, without their numbers, each ended by a newline")


class Definition(BaseModel):
    path: str
    kind: Literal["class", "method", "def", "value"]
    name: str = Field(description="qualified: Class.method, outer.inner")
    start: int
    end: int


class SymbolDetails(Details):
    matches: int = 0
    definitions: list[Definition] = Field(default_factory=list, description="each match, best first")
    locations: list[str] = Field(default_factory=list)
    blocks: list[str] = Field(default_factory=list, description="each match as shown, best first")
    sources: list[str] = Field(default_factory=list, description="each match's source, without line numbers")
    reads: list[Definition] = Field(default_factory=list, description="the values the first match reads")
    read_on: Definition | None = None  # the first match's lines left out (a long one is shown in part), to its end


class EditDetails(Details):
    unchanged: bool = Field(False, description="the edit would change nothing; nothing was written")
    new_errors: int = 0
    symbols: list[str] = Field(default_factory=list, description="innermost definitions holding the changed lines")


class LintFinding(BaseModel):
    path: str
    code: str
    message: str
    new: bool | None = Field(None, description="not there when the run started; None when unknown")


class LintDetails(Details):
    problems: int = 0
    findings: list[LintFinding] = Field(default_factory=list)
    new_findings: list[str] | None = Field(None, description="'path: CODE message' each; None: no start to compare")


class TestCounts(BaseModel):
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration_s: float = 0.0


class TestDetails(Details):
    summary: TestCounts | None = Field(None, description="None when pytest could not run or report")
    failing: list[str] = Field(default_factory=list, description="ids of failing and erroring tests")
    headline: str = Field("", description="one line: the counts")
    raised: dict[str, str] = Field(default_factory=dict, description="failing test id -> the exception it raised")
    missing: dict[str, str] = Field(default_factory=dict, description="test id -> a module it needs, not installed")
    unbound: dict[str, str] = Field(default_factory=dict, description="test id -> a name its own code never binds")
    failures: dict[str, str] = Field(default_factory=dict, description="failing test id -> message and trace end")


class ExamplesDetails(Details):
    results: list[dict] = Field(default_factory=list)


class AiderDetails(EditDetails):
    files: list[str] = Field(default_factory=list, description="the files Aider was given")
    picked_by: str = Field("", description="how those files were chosen")
    changed: list[dict] = Field(default_factory=list, description="{path, added, removed} of each file changed")
    diff: str = ""
    summary: str = Field("", description="the end of what Aider printed: its reply and what it applied")
    requests: int = Field(0, description="model requests Aider made through the relay")


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ClassVar[str] = READ
    core: ClassVar[int] = 0  # its place in the small-model set (--tools core); 0: not in it
    edits: ClassVar[bool] = False  # a host tool that changes files (checkpointed and guarded like an edit)
    module: ClassVar[str] = ""
    details: ClassVar[type[Details]] = Details


class list_files(Spec):
    """List files in the repository (honours .gitignore). Start here to see the layout."""

    module, details = "files", ListDetails
    path: str = Field(".", description="directory relative to the repo root")
    max_results: int = Field(200, ge=1, le=2000)


class find_files(Spec):
    """Find files by name: a glob pattern (with * and ?) or a part of the file name."""

    module, details = "files", ListDetails
    pattern: str = Field(description="glob matched against the path or the file name")
    path: str = Field(".", description="directory to search in")
    max_results: int = Field(200, ge=1, le=2000)


class search(Spec):
    """Search file contents with a regular expression; returns file:line:text."""

    core, module, details = 1, "files", SearchDetails
    pattern: str = Field(description="regular expression")
    path: str = Field(".", description="file or directory to search")
    glob: str | None = Field(None, description="only files whose name matches this glob pattern")
    ignore_case: bool = False
    max_results: int = Field(50, ge=1, le=1000)


class read_file(Spec):
    """Read a file with line numbers, 100 lines at a time."""

    core, module, details = 2, "files", ReadDetails
    path: str
    start_line: int = Field(1, ge=1)
    end_line: int | None = Field(None, ge=1)


class read_symbol(Spec):
    """Show the source of a Python class or function, by its name (or Class.method for a method)."""

    core, module, details = 3, "python_tools", SymbolDetails
    symbol: str = Field(description="name or qualified name of a def or class")
    path: str = Field(".", description="file or directory to look in")


class outline(Spec):
    """Classes, functions and methods of a Python file or package, with line ranges."""

    module = "python_tools"
    path: str


class replace_in_file(Spec):
    """Replace an exact piece of text in a file. Copy old_text exactly from read_file, without line numbers."""

    kind, core, module, details = EDIT, 4, "edits", EditDetails
    path: str
    old_text: str = Field(description="exact current text, including indentation")
    new_text: str = Field(description="replacement text")
    line: int | None = Field(None, ge=1, description="only when old_text occurs more than once: the line where "
                             "the occurrence to replace starts")


class insert_lines(Spec):
    """Insert text before the given line number (use the last line + 1 to append)."""

    kind, core, module, details = EDIT, 5, "edits", EditDetails
    path: str
    line: int = Field(ge=1)
    text: str


class create_file(Spec):
    """Create a new file with the given content."""

    kind, core, module, details = EDIT, 7, "edits", EditDetails
    path: str
    content: str
    overwrite: bool = False


class delete_file(Spec):
    """Delete a file."""

    kind, module, details = EDIT, "edits", EditDetails
    path: str


class replace_symbol(Spec):
    """Replace a whole Python function, method or class, named like 'func' or 'Class.method'. Decorators, a
    docstring, and a class's members that new_source leaves out are kept. A top-level function or class that
    does not exist yet is added at the end of the file."""

    kind, core, module, details = EDIT, 6, "python_tools", EditDetails
    path: str
    symbol: str = Field(description="the definition's name, or Class.method for a method")
    new_source: str = Field(description="the complete new definition, starting with def or class")


class delete_symbol(Spec):
    """Delete a Python function, method or class by qualified name."""

    kind, module, details = EDIT, "python_tools", EditDetails
    path: str
    symbol: str


class add_import(Spec):
    """Add an import statement to a Python file if it is not there yet."""

    kind, module, details = EDIT, "python_tools", EditDetails
    path: str
    statement: str = Field(description="one import statement, written as it should appear in the file")


class lint(Spec):
    """Run ruff on the given files, or on the files changed so far."""

    kind, module, details = CHECK, "checks", LintDetails
    paths: list[str] | None = None


class run_tests(Spec):
    """Run the test suite, or only some tests (test files, or test ids written file::name); returns a summary."""

    kind, core, module, details = CHECK, 8, "checks", TestDetails
    selection: list[str] | None = Field(None, description="test files or test ids from this repository; "
                                        "leave it out to run the whole suite")
    timeout: int = Field(600, ge=1, le=3600)


class shell(Spec):
    """Run a bash command in the repository (for anything the other tools do not cover)."""

    kind, module = COMMAND, "checks"  # details: exit_code, killed, elided_bytes, duration_s
    command: str
    timeout: int = Field(120, ge=1, le=3600)


class git_status(Spec):
    """Files changed since the run started."""

    module = "checks"


class git_diff(Spec):
    """The diff of the changes made so far, optionally for one path."""

    module = "checks"
    path: str | None = None


class find_definitions(Spec):
    """The def, class (and module-level assignment) lines that define the given names, or names with given words."""

    kind, module, details = INTERNAL, "files", FoundDetails
    names: list[str] = Field(default_factory=list, description="exact names")
    containing: list[str] = Field(default_factory=list, description="words a name contains (case ignored)")
    kinds: list[Literal["def", "class", "assign"]] = Field(default_factory=lambda: ["def", "class"])
    max_results: int = Field(1000, ge=1, le=5000)


class check_examples(Spec):
    """Evaluate the goal's examples (`expression == expected`) in the project's Python."""

    kind, module, details = INTERNAL, "checks", ExamplesDetails
    examples: list[dict]
    timeout: int = Field(30, ge=1, le=600)
    trace: bool = False  # each result also lists the repository's functions its expression ran


class CandidateOutcome(BaseModel, extra="allow"):  # also: tests_ran, examples_hold, progress (fewer tests fail)
    applied: bool = False  # through the edit gate
    error: str = ""  # why the edit gate refused it
    passes: bool = False  # the check passes with it
    failing: list[str] = Field(default_factory=list)  # the check's tests that still fail
    tidied: str = ""  # the definition with ruff's fixes for what the candidate added: what was checked
    lint: list[str] = Field(default_factory=list)  # findings it adds that no fix of ruff's cleared: 'CODE message'
    diff_lines: int = 0
    shape: str = ""  # the code without formatting: equal shapes are the same fix
    breaks: list[str] = Field(default_factory=list)  # tests (the module's, or the suite's) that passed before, not now
    message: str = ""  # how the check still fails with it (a test's failure, an example's result), or the first break
    unchanged: bool = False  # the candidate is the code as it is (refused: it changes nothing)
    probes: list[dict] = Field(default_factory=list)  # with a candidate that passes: what each probe gives


class RepairDetails(Details):
    outcomes: list[CandidateOutcome] = Field(default_factory=list)
    baseline: list[dict] = Field(default_factory=list)  # what each probe gives on the code as it is: {got, raised}


class spectrum(Spec):
    """The definitions failing tests run more than passing ones do: both run with a line tracer, Ochiai scores."""

    kind, module = INTERNAL, "spectrum"  # details: suspects [{path, symbol, score, lines, ran}], failed, passed
    failing: list[str] = Field(default_factory=list)  # none: the examples ({expression, expected}) are that side
    passing: list[str] | None = None  # test files or ids: the failing tests' own files by default
    examples: list[dict] = Field(default_factory=list)


class try_fixes(Spec):
    """Try candidate rewrites of one definition, each in a scratch copy, against the run's check."""

    kind, module, details = INTERNAL, "repair", RepairDetails
    path: str
    symbol: str
    candidates: list[str] = Field(min_length=1, max_length=16)
    tests: list[str] | None = None
    examples: list[dict] | None = None
    probes: list[str] | None = None  # expressions near the examples: what each gives tells passing candidates apart
    failing_before: list[str] | None = None  # the tests failing at the run's start; else those of the workspace now
    whole_suite: bool = False  # a passing candidate must not break any test of the suite (with failing_before)
    timeout: int = Field(300, ge=1, le=3600)


class PlanItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    status: Literal["pending", "in_progress", "done", "skipped"] = "pending"


class update_plan(Spec):
    """Replace the plan: the full list of steps with their status. Use it to mark progress or change course."""

    kind = HOST
    steps: list[PlanItem] = Field(min_length=1, max_length=12)


class ask_user(Spec):
    """Ask the user a clarifying question when the goal is ambiguous. Use rarely."""

    kind = HOST
    question: str


class finish(Spec):
    """Call when the goal is met and checked. The work is then validated."""

    kind = HOST
    summary: str = Field(description="what changed and how it was checked")


class propose_fixes(Spec):
    """Ask for several complete rewrites of one function, method or class, try each against the run's
    failing tests and the goal's examples in a scratch copy, and apply the one that passes. Use it when
    your own edit did not fix the problem."""

    kind, details, edits = HOST, EditDetails, True
    path: str = Field(description="the file that defines it")
    symbol: str = Field(description="the definition's name, or Class.method for a method")
    note: str = Field("", description="what is wrong with it now, in a sentence")


class aider_edit(Spec):
    """Hand a change you can describe in words to Aider, which edits the files in its own formats; you get the diff."""

    kind, module, details, edits = HOST, "aider", AiderDetails, True
    instruction: str = Field(min_length=1, description="the change to make, in plain words")
    files: list[str] | None = Field(None, description="the files to edit; omit to let omni pick them")


ALL: tuple[type[Spec], ...] = tuple(Spec.__subclasses__())  # in the order declared above


def of_kind(*kinds: str) -> tuple[type[Spec], ...]:
    return tuple(spec for spec in ALL if spec.kind in kinds)
