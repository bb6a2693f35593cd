"""Every tool's name, description and typed parameters: the one source of truth.

The host turns these models into the schemas the model sees and validates each call against them
before anything runs. The class docstring is the description the model reads; keep it short and
say when to use the tool. `HOST_TOOLS` run in omni itself; the rest run in the sandbox.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class list_files(Spec):
    """List files in the repository (honours .gitignore). Start here to see the layout."""

    path: str = Field(".", description="directory relative to the repo root")
    max_results: int = Field(200, ge=1, le=2000)


class find_files(Spec):
    """Find files by name with a glob such as '*.py' or 'test_*'."""

    pattern: str = Field(description="glob matched against the path or the file name")
    path: str = Field(".", description="directory to search in")
    max_results: int = Field(200, ge=1, le=2000)


class search(Spec):
    """Search file contents with a regular expression; returns file:line:text."""

    pattern: str = Field(description="regular expression")
    path: str = Field(".", description="file or directory to search")
    glob: str | None = Field(None, description="only files matching this glob, e.g. '*.py'")
    ignore_case: bool = False
    max_results: int = Field(50, ge=1, le=1000)


class read_file(Spec):
    """Read a file with line numbers, 100 lines at a time."""

    path: str
    start_line: int = Field(1, ge=1)
    end_line: int | None = Field(None, ge=1)


class outline(Spec):
    """Classes, functions and methods of a Python file or package, with line ranges."""

    path: str


class read_symbol(Spec):
    """Show the source of a Python class or function by name, e.g. 'parse_date' or 'Parser.parse'."""

    symbol: str = Field(description="name or qualified name of a def or class")
    path: str = Field(".", description="file or directory to look in")


class replace_in_file(Spec):
    """Replace an exact piece of text in a file. Copy old_text exactly from read_file, without line numbers."""

    path: str
    old_text: str = Field(description="exact current text, including indentation")
    new_text: str = Field(description="replacement text")
    line: int | None = Field(None, ge=1, description="only when old_text occurs more than once: the line where "
                             "the occurrence to replace starts")


class insert_lines(Spec):
    """Insert text before the given line number (use the last line + 1 to append)."""

    path: str
    line: int = Field(ge=1)
    text: str


class create_file(Spec):
    """Create a new file with the given content."""

    path: str
    content: str
    overwrite: bool = False


class delete_file(Spec):
    """Delete a file."""

    path: str


class replace_symbol(Spec):
    """Replace a whole Python function, method or class, named like 'func' or 'Class.method'. Decorators, a
    docstring, and a class's members that new_source leaves out are kept. A top-level function or class that
    does not exist yet is added at the end of the file."""

    path: str
    symbol: str = Field(description="qualified name, e.g. 'Parser.parse'")
    new_source: str = Field(description="the complete new definition, starting with def or class")


class delete_symbol(Spec):
    """Delete a Python function, method or class by qualified name."""

    path: str
    symbol: str


class add_import(Spec):
    """Add an import statement to a Python file if it is not there yet."""

    path: str
    statement: str = Field(description="e.g. 'from pathlib import Path'")


class lint(Spec):
    """Run ruff on the given files, or on the files changed so far."""

    paths: list[str] | None = None


class run_tests(Spec):
    """Run the test suite, or a selection such as ['tests/test_x.py::test_y']; returns a summary."""

    selection: list[str] | None = None
    timeout: int = Field(600, ge=1, le=3600)


class shell(Spec):
    """Run a bash command in the repository (for anything the other tools do not cover)."""

    command: str
    timeout: int = Field(120, ge=1, le=3600)


class git_status(Spec):
    """Files changed since the run started."""


class git_diff(Spec):
    """The diff of the changes made so far, optionally for one path."""

    path: str | None = None


class PlanItem(Spec):
    text: str
    status: Literal["pending", "in_progress", "done", "skipped"] = "pending"


class update_plan(Spec):
    """Replace the plan: the full list of steps with their status. Use it to mark progress or change course."""

    steps: list[PlanItem] = Field(min_length=1, max_length=12)


class ask_user(Spec):
    """Ask the user a clarifying question when the goal is ambiguous. Use rarely."""

    question: str


class finish(Spec):
    """Call when the goal is met and checked. The work is then validated."""

    summary: str = Field(description="what changed and how it was checked")


HOST_TOOLS = (update_plan, ask_user, finish)
# Tools that only look: the same call gives the same answer until something changes the workspace.
READ_ONLY = (list_files, find_files, search, read_file, read_symbol, outline, git_status, git_diff)
# Tools that run the code and change nothing that lasts: run again unchanged, they say the same.
CHECKS = (lint, run_tests)
# Tools that change files: the loop's hints track whether anything was changed, and tested since.
EDITING = (replace_in_file, insert_lines, create_file, delete_file, replace_symbol, delete_symbol, add_import)
# The smaller set for small models (--tools core): fewer, distinct choices and a shorter prompt.
CORE = (search, read_file, read_symbol, replace_in_file, insert_lines, replace_symbol, create_file, run_tests)
SANDBOX_TOOLS = (
    list_files, find_files, search, read_file, read_symbol, outline, replace_in_file, insert_lines, create_file,
    delete_file, replace_symbol, delete_symbol, add_import, lint, run_tests, shell, git_status, git_diff,
)
