"""The gates and the suite as sessions, each in its own environment: `nox` runs them all, `nox -s lint` one.

    nox -s lint        # ruff check and ruff format --check
    nox -s types       # mypy, strict ([tool.mypy])
    nox -s imports     # lint-imports ([tool.importlinter])
    nox -s docs        # docs/generate.py, then git diff: the generated docs are committed as generated
    nox -s tests       # pytest on Python 3.11, 3.12 and 3.13; `nox -s "tests(3.12)" -- -k parser` for one

`make test` runs the same gates inside pytest (tests/test_gates.py); a session runs one of them alone, in
an environment of its own under .nox/ (`nox -r` reuses it).
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import nox
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent
#: requires-python is >=3.11; .ci/run tests the same three.
PYTHONS = ["3.11", "3.12", "3.13"]
#: The files docs/generate.py writes.
GENERATED_DOCS = ["README.md", "docs/compliance-rules.md"]

# A session on an interpreter that cannot be found fails rather than being skipped, and no interpreter is
# ever downloaded: the supported ones come from pyenv or PATH, as in CI.
nox.options.error_on_missing_interpreters = True
nox.options.download_python = "never"
nox.options.default_venv_backend = "venv"


def interpreter(version: str) -> str:
    """The interpreter of a minor version as `.ci/run` finds it: pyenv's (its shims run only the selected
    version), else one on PATH; else the bare version, which nox then reports as not found."""
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        root = ""
    candidates = sorted(Path(root).glob(f"versions/{version}.*/bin/python{version}")) if root else []
    on_path = shutil.which(f"python{version}")
    for candidate in [*map(str, candidates), *([on_path] if on_path else [])]:
        if subprocess.run([candidate, "-c", "import sys"], capture_output=True).returncode == 0:
            return candidate
    return version


def tool(name: str) -> str:
    """A test tool's requirement as the `test` extra of pyproject.toml states it, so that a session
    installs the version `make test` does."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for line in project["optional-dependencies"]["test"]:
        if canonicalize_name(Requirement(line).name) == canonicalize_name(name):
            return str(line)
    raise LookupError(f"{name} is not in the test extra of pyproject.toml")


@nox.session
def lint(session: nox.Session) -> None:
    session.install(tool("ruff"))
    session.run("ruff", "check", "--no-cache", ".")
    session.run("ruff", "format", "--check", "--no-cache", ".")


@nox.session
def types(session: nox.Session) -> None:
    # mypy follows the imports into the dependencies and the stubs, so the project comes with them
    session.install("-e", ".[test]")
    session.run("mypy")


@nox.session
def imports(session: nox.Session) -> None:
    # lint-imports reads the import graph of the installed packages, the example plugin's too
    session.install("-e", ".", "-e", "plugins/mlperf-audit-example", tool("import-linter"))
    session.run("lint-imports", "--no-cache")


@nox.session
def docs(session: nox.Session) -> None:
    session.install("-e", ".")
    session.run("python", "docs/generate.py")
    session.run("git", "diff", "--exit-code", "--", *GENERATED_DOCS, external=True)


@nox.session
@nox.parametrize("python", [interpreter(version) for version in PYTHONS], ids=PYTHONS)
def tests(session: nox.Session) -> None:
    # the example plugin is a third-party plugin the suite installs and runs, as `make test` does
    session.install("-e", ".[test]", "-e", "plugins/mlperf-audit-example")
    session.run("python", "-m", "pytest", *session.posargs)
