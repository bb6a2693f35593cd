"""A test that fails on a name its own code uses and never binds, where the project defines that name: a doctest of
the docs run without the namespace the docs' conftest would give it (`>>> Version(1, 0, 0)` with no import), or a
test that forgot an import. No change to the project's code makes it pass, so it is never a run's check. The same
NameError raised inside the project's code is the code's fault (a missing import there), and is not one of these."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from example_eval import defining_modules

_NAME_ERROR = re.compile(r"NameError\W{1,3}name '(\w+)' is not defined")
_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+|^([^\s:"]+\.(?:py|rst|md|txt)):\d+: ', re.M)
_STAR = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)


def unbound_name(trace: str, test_path: str, root: Path) -> str:
    """The name the test's own code failed to find (the last frame of the trace is a doctest's or the test file's,
    and the file has no star import that could bring the name), when the project defines it at the top of a module
    outside its tests; "" otherwise."""
    found = _NAME_ERROR.search(trace)
    frames = [a or b for a, b in _FRAME.findall(trace)]
    if not found or not frames:
        return ""
    last = frames[-1]
    own = last.startswith("<doctest") or os.path.normpath(last) == os.path.normpath(test_path) \
        or last.endswith(os.sep + os.path.normpath(test_path))
    try:
        star = _STAR.search((root / test_path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        star = None
    return found.group(1) if own and not star and _defined(root, found.group(1)) else ""


@lru_cache(maxsize=64)  # a suite's failing doctests often miss the same name
def _defined(root: Path, name: str) -> bool:
    """Whether a module of the project's, outside its tests, defines name at its top (def, class, assignment)."""
    return next(defining_modules(name, str(root)), None) is not None
