"""The pre-commit hook of `.pre-commit-hooks.yaml`, as a submitter uses it (issue 26, item 1).

pre-commit installs the hook from this checkout into an environment of its own (pip, from the
package index, like any hook) and runs it in a real git repository holding a copy of one real
submitter: `try-repo` on the clean package passes (the repository's `.git`, `.github` and
configuration files are not the package's); on commits, through the repository's own
`.pre-commit-config.yaml` naming this checkout, it fails on a broken package, including a commit
that touches only the submitter's code under `benchmarks/`. `try-repo` builds the environment in a
store of its own each time (40 s on an idle machine, 60-80 s on a busy one); the commits share one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SAMPLE, shared_data

pytest.importorskip("pre_commit", reason="pre-commit is in the test extra: pip install -e '.[test]'")
pytestmark = pytest.mark.sample

SUBMITTER = "Google"  # one system, one benchmark folder, no error: the smallest clean submitter of the sample


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout as its files stand (edits and new files included, as `try-repo` takes them),
    committed into a repository of its own: every run below installs the same commit, so
    pre-commit builds the hook's environment once."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for name in filter(None, (os.fsdecode(item) for item in listed)):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    _git(snapshot, "init", "-q")
    _git(snapshot, "add", "-A")
    _git(snapshot, "commit", "-q", "-m", "snapshot")
    head = subprocess.run(["git", "-C", str(snapshot), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return snapshot, head.stdout.strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def submitter_repo(tmp_path: Path, hook_repo: tuple[Path, str]) -> Path:
    """A submitter's repository: one real submitter of the v4.1 sample and the files such a
    repository holds beside it (its pre-commit configuration names this checkout), committed."""
    root = tmp_path / "acme"
    shutil.copytree(shared_data(SAMPLE, "v4.1 sample") / SUBMITTER, root)
    (root / ".gitignore").write_text("*.log\n")
    repo, rev = hook_repo
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: mlperf-audit\n"
    )
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "audit.yml").write_text("on: push\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "package")
    return root


def _pre_commit(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_hook_passes_on_a_clean_submitter_repository(submitter_repo, hook_repo, pre_commit_home):
    result = _pre_commit(submitter_repo, pre_commit_home, "try-repo", str(hook_repo[0]), "mlperf-audit", "--all-files")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mlperf-audit" in result.stdout and "Passed" in result.stdout, result.stdout
    assert "PKG015" not in result.stdout and "'.git'" not in result.stdout


def test_the_hook_fails_on_a_hidden_file_inside_the_package(submitter_repo, hook_repo, pre_commit_home):
    system = next((submitter_repo / "results").iterdir())
    hidden = next(system.iterdir()) / ".hidden"
    hidden.write_text("x")
    _git(submitter_repo, "add", str(hidden))
    result = _pre_commit(submitter_repo, pre_commit_home, "run")  # the staged files, as on commit
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Failed" in result.stdout and "PKG015" in result.stdout and "'.hidden'" in result.stdout, result.stdout
    assert "'.git'" not in result.stdout


def test_the_hook_runs_when_a_commit_touches_only_the_code(submitter_repo, hook_repo, pre_commit_home):
    """A commit of `benchmarks/` alone is checked too (REP rules read the code): a folder name with a
    space there fails the commit instead of skipping the hook."""
    readme = submitter_repo / "benchmarks" / "gpt3" / "implementations" / "max text" / "README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text("# MaxText\n")
    _git(submitter_repo, "add", str(readme))
    result = _pre_commit(submitter_repo, pre_commit_home, "run")
    assert "Skipped" not in result.stdout, result.stdout
    assert result.returncode == 1 and "'max text' contains a space" in result.stdout, result.stdout
