"""A results repository and a pull request on it, checked by the steps of `action.yml`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .action_runner import ActionRun, Runner

REPO = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class InstalledAction:
    """What the install step of `action.yml` made, once per test session (`conftest.py`)."""

    venv: Path  # the environment the install step made under the runner's temporary folder
    install: ActionRun  # what the install step did, in a workspace full of shadowing files
    marks: Path  # where a shadowing file would have left its mark
    python_bin: Path  # the folder of the runner's `python3`


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout.strip()


class PullRequest:
    """A results repository whose base commit holds the clean fixture submission; the test edits
    the work tree as the PR's author would, then `run()` commits the head and runs the Action."""

    def __init__(self, tmp_path: Path, fixtures: Path, installed: InstalledAction, root: str = ".") -> None:
        self.tmp = tmp_path
        self.installed = installed
        self.repo = tmp_path / "results"
        self.root = root
        self.submissions = self.repo / root
        shutil.copytree(fixtures / "clean", self.submissions)
        git(self.repo, "init", "-q", "-b", "main")

    def base(self) -> None:
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "base")
        self.base_sha = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "checkout", "-q", "-b", "pr")

    def break_a_log(self, submitter: str = "Fixture") -> None:
        """A line cut short in a bert log: the official seed checker cannot read the run (an error)."""
        log = self.submissions / submitter / "results" / "fx_8xh100" / "bert" / "result_0.txt"
        lines = log.read_text().splitlines(True)
        log.write_text("".join(lines[:2] + [':::MLLOG {"namespace": "", "time_ms": 1, "key": \n'] + lines[2:]))

    def run(
        self,
        sarif: str = "mlperf-audit.sarif",
        stage: bool = True,
        action: Path = REPO / "action.yml",
        skip: tuple[str, ...] = ("install",),
        python_bin: Path | None = None,
        inputs: dict[str, str] | None = None,
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]], str]:
        """Commits the head and runs every step of `action` but those named in `skip` (by default the
        install: the session's install made the environment), as the `pull_request` event of that
        head, with `python_bin` holding the runner's `python3` and `inputs` over the defaults here."""
        if stage:
            git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "head")
        head = git(self.repo, "rev-parse", "HEAD")
        event = self.tmp / "event.json"
        event.write_text(
            json.dumps(
                {
                    "pull_request": {
                        "number": 1,
                        "base": {"sha": self.base_sha, "ref": "main"},
                        "head": {"sha": head, "ref": "pr"},
                    }
                }
            )
        )
        summary = self.tmp / "summary.md"
        summary.write_text("")
        temp = self.tmp / "runner-temp"
        temp.mkdir(exist_ok=True)
        if not (temp / "mlperf-audit-venv").exists():
            (temp / "mlperf-audit-venv").symlink_to(self.installed.venv)
        runner = Runner(action, REPO, temp, python_bin or self.installed.python_bin, self.tmp / "cache-store")
        ran = runner.run(
            self.repo,
            {
                "path": self.root,  # the ruleset input keeps action.yml's default, as a workflow that omits it
                "fail-on": "error",
                "changed-only": "true",
                "sarif-file": sarif,
                **(inputs or {}),
            },
            {
                "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_EVENT_PATH": str(event),
                "GITHUB_SHA": head,
                "GITHUB_STEP_SUMMARY": str(summary),
            },
            skip=skip,
        )
        check = ran.step("run")
        result = subprocess.CompletedProcess(["action.yml"], check.returncode, ran.stdout, ran.stderr)
        return result, check.outputs, summary.read_text()
