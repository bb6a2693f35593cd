"""What a repository declares it needs to run its tests, for the project layer of its sandbox (omni/box/images.py):
PEP 621 dependencies with their test extras, PEP 735 dependency groups, Poetry's dependencies and test groups,
requirements files (at the root, beside the tests, in requirements/, and those they include with -r), tox's main
test environment, setup.py's install_requires and tests_require.

Every file is read without following a link: a requirements file that points at ~/.netrc or /proc/self/environ
would bake the host's secrets into the image. A file reached through `-r` is read only when its name or folder
is one a --yes apply holds back (omni/trust.py: steering_files), so that no diff can change what the next sandbox
installs without the user seeing it.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import tomllib
from pathlib import Path

from omni import safefs
from omni.trust import steering_files

REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt", "requirements-test.txt",
                     "requirements_dev.txt", "test-requirements.txt", "test_requirements.txt",
                     "dev-requirements.txt", "tests/requirements.txt", "test/requirements.txt",
                     "requirements/test.txt", "requirements/tests.txt", "requirements/testing.txt",
                     "requirements/dev.txt")  # where a test suite's own needs are written (pytest plugins, helpers)
TEST_EXTRAS = ("test", "tests", "testing", "dev")
MAX_INCLUDES = 3  # -r inside -r inside -r


def _read(root: Path, name: str) -> str | None:
    raw = safefs.read_optional(root, name, limit=1 << 20)
    return raw.decode("utf-8", "replace") if raw is not None else None


def project_requirements(root: Path) -> list[str]:
    """The repo's declared Python dependencies, as pip requirement strings, sorted and once each. The project
    itself (`.[tests]`, or its own name, as tox deps often say) is its extras' requirements: the code under test is
    the repository's, never a copy installed from an index."""
    declared = _toml(_read(root, "pyproject.toml"))
    reqs = _pyproject(declared)
    seen: set[str] = set()
    for name in REQUIREMENT_FILES:
        reqs += _requirements_file(root, name, seen)
    reqs += _tox(root, seen)
    reqs += _setup_py(_read(root, "setup.py"))
    project = declared.get("project", {})
    own, extras = _normal(str(project.get("name", ""))), project.get("optional-dependencies", {})
    found: list[str] = []
    for req in reqs:
        named = _NAMED.match(req)  # always matches: each part is optional
        name, listed = named.group(1) or "", named.group(2) or ""
        if req.startswith(".") or (own and _normal(name) == own):
            found += [r for e in listed.split(",") for r in extras.get(e.strip(), []) if isinstance(r, str)]
        else:
            found.append(req)
    return sorted(set(found))


_NAMED = re.compile(r"\.?\s*([A-Za-z0-9][A-Za-z0-9._-]*)?\s*(?:\[([^\]]*)\])?")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _toml(text: str | None) -> dict:
    try:
        return tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError:
        return {}


def _requirements_file(root: Path, name: str, seen: set[str], depth: int = 0) -> list[str]:
    """A requirements file's requirements, with the files its -r lines name (relative to it) when they are
    steering files; -c, -e and other options are left out (they point at constraints or the tree)."""
    name = posixpath.normpath(name)
    if name in seen or name.startswith("../") or posixpath.isabs(name) or depth > MAX_INCLUDES:
        return []
    seen.add(name)
    text = _read(root, name)
    return _lines(root, (text or "").splitlines(), posixpath.dirname(name), seen, depth)


def _lines(root: Path, lines: list[str], folder: str, seen: set[str], depth: int) -> list[str]:
    reqs: list[str] = []
    for line in lines:
        line = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        included = _included(line)
        if included is not None:
            path = posixpath.normpath(posixpath.join(folder, included))
            if steering_files([path]):
                reqs += _requirements_file(root, path, seen, depth + 1)
        elif line and not line.startswith("-"):
            reqs.append(line)
    return reqs


def _included(line: str) -> str | None:
    """The file a `-r file`, `-rfile` or `--requirement file` line includes; None for any other line."""
    for flag in ("--requirement", "-r"):
        if line.startswith(flag):
            rest = line[len(flag):].lstrip("= ").strip()
            return rest or None
    return None


def _pyproject(declared: dict) -> list[str]:
    project, groups = declared.get("project", {}), declared.get("dependency-groups", {})
    reqs = list(project.get("dependencies", []))
    for extra in TEST_EXTRAS:
        reqs += project.get("optional-dependencies", {}).get(extra, [])
        reqs += _group(groups, extra)
    return [r for r in reqs if isinstance(r, str)] + _poetry(declared.get("tool", {}).get("poetry", {}))


def _group(groups: dict, name: str, seen: frozenset = frozenset()) -> list[str]:
    """A PEP 735 dependency group's requirements, its include-group entries followed (once each)."""
    found: list[str] = []
    for item in groups.get(name, []) if isinstance(groups, dict) and name not in seen else []:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            found += _group(groups, item["include-group"], seen | {name})
    return found


def _poetry(poetry: dict) -> list[str]:
    """Poetry's dependencies and its test and dev groups, as pip requirements: `^1.2` and `~1.2` become `>=1.2`
    (their floor), a bare version `==`; a path or git dependency is left out."""
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    tables += [poetry.get("group", {}).get(g, {}).get("dependencies", {}) for g in TEST_EXTRAS]
    reqs = []
    for table in tables:
        for name, spec in table.items() if isinstance(table, dict) else []:
            version = spec.get("version") if isinstance(spec, dict) else spec
            if name.lower() == "python" or not isinstance(version, str):
                continue
            version = version.strip()
            if version in ("", "*"):
                reqs.append(name)
            elif version[0] in "^~" and version[1:2] != "=":
                reqs.append(f"{name}>={version[1:].strip()}")
            else:
                reqs.append(name + (version if version[0] in "<>=!~" else f"=={version}"))
    return reqs


def _tox(root: Path, seen: set[str]) -> list[str]:
    """The deps of tox.ini's main [testenv]: the environment its tests run in (not lint or docs). A line with a
    factor (`py38: mock`) or a substitution (`{[base]deps}`) is left out."""
    text = _read(root, "tox.ini")
    if text is None:
        return []
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
        deps = parser.get("testenv", "deps", fallback="")
    except configparser.Error:
        return []
    lines = [line.replace("{toxinidir}/", "") for line in deps.splitlines()]
    lines = [line for line in lines if "{" not in line and not (":" in line and "://" not in line)]
    return _lines(root, lines, "", seen, 0)


def _setup_py(text: str | None) -> list[str]:
    try:
        tree = ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError):
        tree = None
    reqs: list[str] = []
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "tests_require"):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, str):  # install_requires=('a;' 'python_version < "3"') is one string
                value = [value]
            reqs += [r for r in value if isinstance(r, str)] if isinstance(value, (list, tuple, set)) else []
    return reqs
