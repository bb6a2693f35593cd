"""The per-repo project environment: dependency detection, the cached layer, a failed install reported."""

from __future__ import annotations

import pytest

from conftest import make_repo, run_omni
from omni.box.images import project_requirements


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


def test_a_single_string_requirement_in_setup_py_is_one_requirement(tmp_path):
    # wcwidth 0.2.13 writes install_requires=('backports...;' 'python_version < "3.2"'): a string, not a tuple.
    (tmp_path / "setup.py").write_text("setup(install_requires=('backports.functools-lru-cache>=1.2.1;'\n"
                                       "                          'python_version < \"3.2\"'), tests_require=3)\n")
    assert project_requirements(tmp_path) == ['backports.functools-lru-cache>=1.2.1;python_version < "3.2"']


def test_broken_dependency_files_do_not_crash_detection(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\nbroken")
    (tmp_path / "setup.py").write_text("setup(install_requires=get_requirements())\n")
    assert project_requirements(tmp_path) == []


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
