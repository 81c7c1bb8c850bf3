"""The GitHub Action's script (`action.yml` runs `python -m mlperf_audit.github_action`).

Inputs arrive as environment variables (never interpolated into a shell script):
`INPUT_PATH` (the results repository root in the workspace, default `.`), `INPUT_RULESET`,
`INPUT_FAIL_ON`, `INPUT_CHANGED_ONLY` (`true`: on a pull request, check only the submitters whose
files the PR changes), `INPUT_SARIF_FILE` (where to write SARIF; empty: none).

On a pull request the base commit comes from the event payload (`GITHUB_EVENT_PATH`); the checkout
must include it (`actions/checkout` with `fetch-depth: 0`). The configuration
(`.mlperf-audit.toml`, or `[tool.mlperf-audit]` in `pyproject.toml`) and the waivers file it
names are read from the base commit, never from the PR's head: a PR cannot switch off its own
checks. The script writes annotations to standard output, the Markdown summary to
`GITHUB_STEP_SUMMARY`, the SARIF file, and `errors`, `warnings`, `infos`, `checked` and
`exit-code` to `GITHUB_OUTPUT`; it exits with the checker's exit code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from .api import check
from .config import FAIL_ON_CHOICES, KNOWN_RULESETS, load_config
from .errors import AuditError
from .formats.ci import render_github, render_markdown, render_sarif
from .plugins import PluginHost
from .report import Report


class ActionError(AuditError):
    """Bad input or an unusable checkout: exit code 2."""


def _git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ActionError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _event() -> dict[str, Any]:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    return json.loads(Path(path).read_text(encoding="utf-8"))


def changed_submitters(workspace: Path, root: str, base: str, head: str) -> list[str]:
    """Submitter folders under `root` that have files changed between base and head."""
    names = _git("diff", "--name-only", f"{base}...{head}", "--", root, cwd=workspace).splitlines()
    prefix = "" if root in (".", "") else root.rstrip("/") + "/"
    found = set()
    for name in names:
        relative = name[len(prefix):] if name.startswith(prefix) else None
        if relative and "/" in relative:
            found.add(relative.split("/", 1)[0])
    return sorted(name for name in found if (workspace / prefix / name).is_dir())


def base_configuration(workspace: Path, base: str, folder: Path) -> str | None:
    """Writes the base commit's configuration (and its waivers) outside the workspace; returns its path."""
    for name in (".mlperf-audit.toml", "pyproject.toml"):
        shown = subprocess.run(["git", "show", f"{base}:{name}"], cwd=workspace, capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        data = tomllib.loads(shown.stdout)
        table = data.get("tool", {}).get("mlperf-audit") if name == "pyproject.toml" else data
        if not isinstance(table, dict):
            continue
        table = dict(table)
        if isinstance(table.get("waivers"), str):
            waivers = _git("show", f"{base}:{table['waivers']}", cwd=workspace)
            (folder / "waivers.toml").write_text(waivers, encoding="utf-8")
            table["waivers"] = str(folder / "waivers.toml")
        lines = [f"{key} = {json.dumps(value)}" for key, value in table.items()]
        (folder / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(folder / "config.toml")
    return None


def _output(name: str, value: Any) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(f"{name}={value}\n")


def _summary(text: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(text + "\n")


def run() -> int:
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    root = os.environ.get("INPUT_PATH", ".").strip() or "."
    ruleset = os.environ.get("INPUT_RULESET", "").strip() or None
    fail_on = os.environ.get("INPUT_FAIL_ON", "error").strip() or "error"
    changed_only = os.environ.get("INPUT_CHANGED_ONLY", "true").strip().lower() == "true"
    sarif_file = os.environ.get("INPUT_SARIF_FILE", "").strip()
    if fail_on not in FAIL_ON_CHOICES:
        raise ActionError(f"fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {fail_on!r}")
    if ruleset is not None and ruleset not in KNOWN_RULESETS:
        raise ActionError(f"unsupported ruleset {ruleset!r}; supported: {', '.join(KNOWN_RULESETS)}")
    if root.startswith("/") or ".." in Path(root).parts or not re.fullmatch(r"[\w./ -]+", root):
        raise ActionError(f"path must be a folder inside the workspace, not {root!r}")
    event = _event()
    pull_request = event.get("pull_request") if os.environ.get("GITHUB_EVENT_NAME", "").startswith("pull_request") else None
    base = pull_request["base"]["sha"] if pull_request else None
    head = (pull_request["head"]["sha"] if pull_request else None) or os.environ.get("GITHUB_SHA", "HEAD")
    submitters: list[str] | None = None
    if base and changed_only:
        submitters = changed_submitters(workspace, root, base, head)
        if not submitters:
            _summary("### mlperf-audit: no submission changed in this pull request")
            for name in ("errors", "warnings", "infos", "exit-code"):
                _output(name, 0)
            _output("checked", "")
            return 0
    host = PluginHost()
    with tempfile.TemporaryDirectory(prefix="mlperf-audit-action-") as temp:
        config_file = base_configuration(workspace, base, Path(temp)) if base else None
        config = load_config(target=workspace / root, config_file=config_file, fail_on=fail_on, ruleset=ruleset)
        previous = os.getcwd()
        os.chdir(workspace)  # paths in annotations and SARIF are relative to the repository root
        try:
            report: Report = check(root, config, host, submitters=submitters)
            sys.stdout.write(render_github(report))
            _summary(render_markdown(report))
            if sarif_file:
                Path(sarif_file).write_text(render_sarif(report), encoding="utf-8")
        finally:
            os.chdir(previous)
    _output("errors", report.summary["error"])
    _output("warnings", report.summary["warning"])
    _output("infos", report.summary["info"])
    _output("checked", " ".join(submitters) if submitters is not None else root)
    _output("exit-code", report.exit_code)
    return report.exit_code


def main() -> int:
    try:
        return run()
    except AuditError as error:
        print(f"::error title=mlperf-audit::{error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
