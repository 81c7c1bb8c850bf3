"""The Action installed once per test session, the way `action.yml` installs it, into a runner
folder whose workspace is a pull request that shadows every module the gate imports; and the pull
request fixture that runs the other steps against it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .action_runner import Runner, plant_shadows, runner_python
from .pull_request import REPO, InstalledAction, PullRequest


@pytest.fixture(scope="session")
def installed_action(tmp_path_factory: pytest.TempPathFactory) -> InstalledAction:
    """Runs the install step of the real `action.yml` (a real pip install, pinned) once; every
    Action test then runs the other steps against this environment."""
    root = tmp_path_factory.mktemp("action-install")
    workspace, temp, marks = root / "workspace", root / "runner-temp", root / "marks"
    workspace.mkdir()
    temp.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    plant_shadows(workspace, marks)
    python_bin = runner_python(root / "runner-python")
    runner = Runner(REPO / "action.yml", REPO, temp, python_bin, root / "cache-store")
    ran = runner.run(workspace, {"cache": "false"}, {}, skip=("run", "prune"))
    install = ran.step("install")
    assert install.returncode == 0, install.stdout + install.stderr
    return InstalledAction(temp / "mlperf-audit-venv", ran, marks, python_bin)


@pytest.fixture
def pr(tmp_path: Path, fixtures: Path, installed_action: InstalledAction) -> PullRequest:
    return PullRequest(tmp_path, fixtures, installed_action)
