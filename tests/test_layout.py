"""The repository's top level holds what the design card names and what has earned its place."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Each entry with why it is here; anything else at the top level is a mistake (a log of a manual
#: run, a scratch file) until it is added with its reason.
ALLOWED = {
    "pyproject.toml": "the package, its dependencies and the built-in packs' entry points",
    "README.md": "what the tool does, and the two set-up commands",
    "checker": "the core: discovery, parser, model, engine, formats, commands",
    "rules": "the built-in rule packs",
    "plugins": "the example third-party plugin",
    "fixtures": "the synthetic packages and their generator",
    "tests": "the tests",
    "docs": "generated and written documentation",
    "bench": "benchmarks and the published-rounds harness",
    "SECURITY.md": "the threat model and what is guaranteed",
    "CONTRIBUTING.md": "from a fresh clone to a new rule",
    "CHANGELOG.md": "what changed, breaking changes first",
    "Makefile": "`make demo` and `make test`",
    "noxfile.py": "the gates as sessions (lint, types, imports, docs, tests on each Python)",
    "action.yml": "the GitHub Action (GitHub requires it at the top)",
    ".github": "the Action's pinned dependencies",
    ".ci": "what CI runs",
    ".gitignore": "what a run leaves behind (the official tools' logs, caches)",
    ".pre-commit-hooks.yaml": "the pre-commit hook (pre-commit requires it at the top)",
}


def test_the_top_level_holds_only_what_earns_its_place():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    top = {name.split(b"/", 1)[0].decode() for name in tracked.split(b"\0") if name}
    assert top <= set(ALLOWED), f"not on the allow-list: {sorted(top - set(ALLOWED))}"
