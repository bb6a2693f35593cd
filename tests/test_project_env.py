"""The per-repo project environment: dependency detection, the cached layer, a failed install reported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import clean_env, make_repo, run_omni
from omni.box.requirements import project_requirements


def test_dependencies_are_detected_from_every_kind_of_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["attrs>=22"]\n[project.optional-dependencies]\n'
        'test = ["hypothesis"]\ndocs = ["sphinx"]\n')
    (tmp_path / "requirements-dev.txt").write_text("# tools\nblack==24.1.0  # formatter\n-r requirements.txt\n")
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x', install_requires=['six'])\n")
    assert project_requirements(tmp_path) == ["attrs>=22", "black==24.1.0", "hypothesis", "six"]


def test_a_test_suites_own_requirements_and_dependency_groups_are_detected(tmp_path):
    # A suite's helpers (pretend, a pytest plugin) often live beside the tests or in a PEP 735 group; without
    # them its files fail to collect, and the run's check would be "tests failing at the start" for that reason.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "requirements.txt").write_text("pretend\n-r ../requirements.txt\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "dev.txt").write_text("freezegun\n")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[dependency-groups]\ntest = ["pytest-mock", {include-group = "typing"}]\n'
        'typing = ["mypy"]\ndocs = ["sphinx"]\nloop = [{include-group = "loop"}]\ndev = [{include-group = "loop"}]\n')
    assert project_requirements(tmp_path) == ["freezegun", "mypy", "pretend", "pytest-mock"]


def test_a_requirements_name_that_is_a_folder_or_a_link_is_not_read(tmp_path):
    (tmp_path / "requirements.txt").mkdir()
    (tmp_path / "secret").write_text("token-not-a-requirement\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "requirements.txt").symlink_to(tmp_path / "secret")
    assert project_requirements(tmp_path) == []


def test_tox_poetry_and_included_requirement_files_are_detected(tmp_path):
    # tox's main test environment (not its lint env, not a factor or substitution line), the files -r includes
    # (relative to the including file, once each, only those a --yes apply holds back), and Poetry's tables
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "requirements-tests.txt").write_text(
        "-r requirements.txt\npytest-mock  # fixtures\n-r ../ci/extra.txt\n-c constraints.txt\n")
    (tmp_path / "requirements" / "requirements.txt").write_text("python-dateutil>=2.7\n-r requirements-tests.txt\n")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "extra.txt").write_text("not-held-back-so-not-read\n")
    (tmp_path / "tox.ini").write_text(
        "[tox]\nenvlist = py311\n[testenv]\ndeps =\n    -r{toxinidir}/requirements/requirements-tests.txt\n"
        "    simplejson==3.*\n    py38: mock\n    {[base]deps}\ncommands = pytest\n"
        "[testenv:lint]\ndeps = pre-commit\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry.dependencies]\npython = "^3.8"\nrequests = "^2.31"\nattrs = "23.1.0"\nsix = "*"\n'
        'local = {path = "../local"}\nidna = {version = "~3.4", optional = true}\n'
        '[tool.poetry.group.test.dependencies]\npytest-cov = ">=4,<6"\n'
        '[tool.poetry.group.docs.dependencies]\nsphinx = "^7"\n')
    assert project_requirements(tmp_path) == ["attrs==23.1.0", "idna>=3.4", "pytest-cov>=4,<6", "pytest-mock",
                                              "python-dateutil>=2.7", "requests>=2.31", "simplejson==3.*", "six"]


def test_the_project_itself_in_tox_deps_is_its_extras_never_a_copy_from_the_index(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "My_Pkg"\ndependencies = ["attrs"]\n'
        '[project.optional-dependencies]\ntests = ["hypothesis"]\nyaml = ["pyyaml"]\ndocs = ["sphinx"]\n')
    (tmp_path / "tox.ini").write_text("[testenv]\ndeps =\n    my-pkg[yaml]\n    .[tests]\n    -e .\n")
    assert project_requirements(tmp_path) == ["attrs", "hypothesis", "pyyaml"]


def test_an_include_that_leaves_the_repository_or_is_absolute_is_not_read(tmp_path):
    outside = tmp_path / "requirements.txt"
    outside.write_text("secret-outside\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text(f"-r ../requirements.txt\n--requirement={outside}\nsix\n")
    assert project_requirements(repo) == ["six"]


def test_a_single_string_requirement_in_setup_py_is_one_requirement(tmp_path):
    # wcwidth 0.2.13 writes install_requires=('backports...;' 'python_version < "3.2"'): a string, not a tuple.
    (tmp_path / "setup.py").write_text("setup(install_requires=('backports.functools-lru-cache>=1.2.1;'\n"
                                       "                          'python_version < \"3.2\"'), tests_require=3)\n")
    assert project_requirements(tmp_path) == ['backports.functools-lru-cache>=1.2.1;python_version < "3.2"']


def test_broken_dependency_files_do_not_crash_detection(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\nbroken")
    (tmp_path / "setup.py").write_text("setup(install_requires=get_requirements())\n")
    assert project_requirements(tmp_path) == []


def test_a_requirement_without_a_name_of_its_own_is_passed_on_not_a_crash(tmp_path):
    """A project with a name, and a tox dep that begins with none (extras alone): it goes to pip as written."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\n[project.optional-dependencies]\n'
                                             'test = ["pytest"]\n')
    (tmp_path / "tox.ini").write_text("[testenv]\ndeps =\n    [test]\n    .[test]\n")
    assert project_requirements(tmp_path) == ["[test]", "pytest"]


@pytest.mark.docker
def test_failed_install_still_gives_a_sandbox_and_is_reported(tmp_path, fake, docker_engine):
    # One bad requirement does not cost the others: six is still installed.
    repo = make_repo(tmp_path / "repo", {"requirements.txt": "omni-no-such-package-xyz==0.0.1\nsix\n",
                                         "a.py": "x = 1\n"})
    fake.add({"text": "1. Look"},
             {"tool": "shell", "args": {"command": "/opt/project/bin/python -c 'import six, sys; "
                                                   "print(sys.executable)'"}},
             {"tool": "finish", "args": {"summary": "looked"}}, {"tool": "finish", "args": {"summary": "looked"}})
    run = run_omni(repo, "--yes", "look", fake=fake, timeout=600)
    assert run.code == 0, run.stdout + run.stderr
    setup = [e for e in run.events() if e["kind"] == "env_setup"]
    # the project layer's build is condensed on screen (its start and end, or its cache hit); every
    # build line is in the record
    assert "project environment omni-project:" in run.stdout or "dependencies into omni-project:" in run.stdout
    assert "Step 1/" not in run.stdout and "Successfully built" not in run.stdout
    assert any(e.get("failed") and "omni-no-such-package-xyz" in e["line"] for e in setup), setup
    first_step = fake.requests[1]["messages"][-1]["content"]
    assert "Installing the project's dependencies failed" in first_step
    observation = [e for e in run.events() if e["kind"] == "observation"][0]
    assert observation["success"] and "/opt/project/bin/python" in observation["output"], observation


@pytest.mark.docker
def test_sandbox_project_builds_the_layer_a_run_then_finds_cached(tmp_path, fake, docker_engine):
    repo = make_repo(tmp_path / "repo", {"requirements.txt": "six\n", "tests/requirements.txt": "iniconfig\n",
                                         "a.py": "x = 1\n"})
    built = subprocess.run([sys.executable, "-m", "omni.cli", "sandbox", "project"], cwd=repo,
                           capture_output=True, text=True, timeout=600, env=clean_env())
    assert built.returncode == 0, built.stdout + built.stderr
    line = built.stdout.strip().splitlines()[-1]
    assert line.startswith("omni-project:") and line.endswith("is ready (2 project dependencies)"), built.stdout
    look = {"tool": "shell", "args": {"command": "/opt/project/bin/python -c 'import iniconfig'"}}
    fake.add({"text": "1. Look"}, look,
             {"tool": "finish", "args": {"summary": "looked"}}, {"tool": "finish", "args": {"summary": "looked"}})
    run = run_omni(repo, "--yes", "look", fake=fake, timeout=600)
    assert run.code == 0, run.stdout + run.stderr
    assert any(e.get("cached") for e in run.events() if e["kind"] == "env_setup")  # nothing installed in the run
    assert [e["success"] for e in run.events() if e["kind"] == "observation"][0]


def test_sandbox_project_outside_a_repository_says_so_before_building(tmp_path):
    done = subprocess.run([sys.executable, "-m", "omni.cli", "sandbox", "project"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=clean_env())
    assert done.returncode == 2 and "is not inside a git repository" in done.stderr, done.stdout + done.stderr
    assert "omni-project" not in done.stdout + done.stderr
