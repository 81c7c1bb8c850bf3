"""The static gates, run by `make test` like every other test: mypy over checker/ and rules/ with zero
errors, and ruff's lint over the code (configured in pyproject.toml: [tool.mypy], [tool.ruff])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_reports_no_error() -> None:
    result = _run("mypy")  # the files and options come from [tool.mypy]
    assert result.returncode == 0, f"mypy failed (exit {result.returncode}):\n{result.stdout}{result.stderr}"


def test_ruff_lint_reports_nothing() -> None:
    result = _run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, f"ruff check failed (exit {result.returncode}):\n{result.stdout}{result.stderr}"
