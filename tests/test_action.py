"""The GitHub Action's script, run locally as GitHub runs it: a temporary repository made from the real
sample (base commit), a pull request that changes one submitter (head commit), a synthetic event payload
and the GITHUB_* variables GitHub sets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    ).stdout.strip()


@pytest.fixture
def pull_request(tmp_path, sample):
    repo = tmp_path / "results"
    shutil.copytree(sample, repo)
    for path in [repo, *repo.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (repo / ".mlperf-audit.toml").write_text('ignore = ["EXA"]\nfail-on = "warning"\nwaivers = "waivers.toml"\n')
    (repo / "waivers.toml").write_text(
        '[[waiver]]\nrule = "FOR006"\npath = "Google/*"\nreason = "platform name known"\n'
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "pr")
    # the PR changes one submitter (tinycorp: drops the run_stop of a second bert run) and tries to
    # switch the checks off with its own configuration
    log = repo / "tinycorp" / "results" / "tinybox_green" / "bert" / "result_5.txt"
    log.write_text("".join(line for line in log.read_text().splitlines(True) if '"run_stop"' not in line))
    (repo / ".mlperf-audit.toml").write_text('ignore = ["ALL"]\n')
    (repo / "waivers.toml").write_text('[[waiver]]\nrule = "ALL"\npath = "*"\nreason = "waive everything"\n')
    git(repo, "commit", "-q", "-am", "head")
    head = git(repo, "rev-parse", "HEAD")
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {"pull_request": {"number": 1, "base": {"sha": base, "ref": "main"}, "head": {"sha": head, "ref": "pr"}}}
        )
    )
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    summary.touch()
    outputs.touch()
    env = {
        **os.environ,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_WORKSPACE": str(repo),
        "GITHUB_SHA": head,
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
        "INPUT_PATH": ".",
        "INPUT_RULESET": "training-4.1.0",
        "INPUT_FAIL_ON": "error",
        "INPUT_CHANGED_ONLY": "true",
        "INPUT_SARIF_FILE": "mlperf-audit.sarif",
    }
    return repo, env, summary, outputs


def run_action(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The script as `action.yml` runs it: isolated (`-I`), from a folder outside the workspace."""
    return subprocess.run(
        [sys.executable, "-I", "-m", "mlperf_audit.github_action"],
        cwd=cwd.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.sample
def test_action_checks_only_the_changed_submitter(pull_request):
    repo, env, summary, outputs = pull_request
    result = run_action(env, repo)
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert values["checked"] == "tinycorp"
    # base configuration obeyed (fail-on warning, EXA ignored), the PR's ignore = ["ALL"] is not
    assert result.returncode == 1 and values["exit-code"] == "1"
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert annotations and all("file=tinycorp/" in line for line in annotations)
    assert any(line.startswith("::error file=tinycorp/results/tinybox_green/bert") for line in annotations)
    assert not any("EXA001" in line for line in annotations)
    assert "(waived)" not in summary.read_text()  # the PR's own waivers.toml (waive ALL) is not obeyed
    assert int(values["errors"]) > 0
    assert summary.read_text().startswith("### ❌ mlperf-audit failed")
    sarif = json.loads((repo / "mlperf-audit.sarif").read_text())
    schema = REPO.parent / "shared" / "reference" / "schemas" / "sarif-schema-2.1.0.json"
    jsonschema.Draft4Validator(json.loads(schema.read_text())).validate(sarif)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
        if "locations" in r
    }
    assert uris and all(uri.startswith("tinycorp/") for uri in uris)


@pytest.mark.sample
def test_action_without_changes_checks_nothing(pull_request):
    repo, env, summary, outputs = pull_request
    event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["head"]["sha"] = event["pull_request"]["base"]["sha"]
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    result = run_action(env, repo)
    assert result.returncode == 0 and "no submission changed" in summary.read_text()


@pytest.mark.sample
def test_action_rejects_bad_inputs(pull_request):
    repo, env, _, _ = pull_request
    result = run_action({**env, "INPUT_FAIL_ON": "sometimes; rm -rf /"}, repo)
    assert result.returncode == 2 and result.stdout.startswith("::error title=mlperf-audit::fail-on must be")
    assert run_action({**env, "INPUT_PATH": "../elsewhere"}, repo).returncode == 2


def test_action_yml_passes_inputs_through_env():
    """Every input reaches the script as INPUT_<NAME> in the run step's environment, and only there:
    no script interpolates one."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    for step in steps:
        assert "${{" not in step.get("run", "")  # no input is interpolated into a script
    (run,) = [step for step in steps if step.get("id") == "run"]
    passed = {name: value for name, value in run["env"].items() if name.startswith("INPUT_")}
    expected = {
        "INPUT_" + name.upper().replace("-", "_"): f"${{{{ inputs.{name} }}}}"
        for name in action["inputs"]
        if name != "cache"  # the cache input chooses steps and MLPERF_AUDIT_CACHE_DIR, not the script
    }
    assert passed == expected
    assert set(run["env"]) - set(passed) == {"MLPERF_AUDIT_CACHE_DIR", "MLPERF_AUDIT_VENV"}


def test_every_python_step_runs_isolated_outside_the_workspace():
    """No file of the checkout can shadow a module (issue 25): each Python command is `-I` (no
    working folder, no PYTHON* variables on sys.path), from the environment the install step made,
    in a folder outside the workspace (tests/security/test_action_isolation.py runs the steps)."""
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    for step in steps:
        if "run" not in step:
            continue
        assert step["working-directory"] == "${{ runner.temp }}"
        for line in step["run"].splitlines():
            if "python" in line and "-m " in line:
                assert " -I -m " in line, line
                assert line.lstrip().startswith(
                    ('python3 -I -m venv "$MLPERF_AUDIT_VENV"', '"$MLPERF_AUDIT_VENV/bin/python"')
                )


SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13")


def _runtime_closure() -> dict[str, str]:
    """Every distribution mlperf-audit needs at run time, transitively, on any supported Python
    (a requirement whose marker holds on one of them: typing-extensions below 3.13), with the
    version installed here ("" where this interpreter does not need it)."""
    import importlib.metadata as metadata
    import re

    from packaging.requirements import Requirement

    found: dict[str, str] = {}

    def walk(name: str) -> None:
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            return
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            found[key] = ""
            return
        found[key] = distribution.version
        for line in distribution.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or any(
                requirement.marker.evaluate({"extra": "", "python_version": version}) for version in SUPPORTED_PYTHONS
            ):
                walk(requirement.name)

    walk("mlperf-audit")
    del found["mlperf-audit"]
    return found


def test_action_pins_every_runtime_dependency():
    """The Action installs exactly pinned versions of everything it runs (a new release of a
    dependency cannot change the gate between two pull requests)."""
    lines = (REPO / ".github" / "action-constraints.txt").read_text().splitlines()
    pins = dict(line.split("==", 1) for line in lines if line and not line.startswith("#"))
    closure = _runtime_closure()
    assert set(pins) == set(closure), "\n".join(f"{name}=={version}" for name, version in sorted(closure.items()))
    assert pins["mlperf-logging"] == "4.1.68"


def test_action_yml_keeps_the_cache_outside_the_workspace():
    """Restored before the check, pruned and saved after it (even when it failed), under runner.temp."""
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    names = [step.get("uses", step.get("id", step.get("run", ""))).split("@")[0] for step in steps]
    assert names == ["install", "actions/cache/restore", "run", "prune", "actions/cache/save"]
    restore, save = steps[1], steps[4]
    assert restore["with"]["path"] == save["with"]["path"] == "${{ runner.temp }}/mlperf-audit-cache"
    assert restore["with"]["key"] == save["with"]["key"] and "github.run_id" in save["with"]["key"]
    assert save["if"].startswith("always()") and steps[3]["if"].startswith("always()")
    assert "runner.temp" in steps[2]["env"]["MLPERF_AUDIT_CACHE_DIR"]
