"""The GitHub Action's script, run locally as GitHub runs it: a temporary repository made from the real
sample (base commit), a pull request that changes one submitter (head commit), a synthetic event payload
and the GITHUB_* variables GitHub sets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import published_rounds

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
    (repo / ".mlperf-audit.toml").write_text('fail-on = "warning"\nwaivers = "waivers.toml"\n')
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
    # base configuration obeyed (fail-on warning), the PR's ignore = ["ALL"] is not
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


# ---------------------------------------------------------------- annotations within GitHub's limits

#: What GitHub shows of one step (actions/runner keeps 10 of each kind) and of one job.
PER_KIND, PER_JOB = 10, 50
KINDS = ("error", "warning", "notice")
_COUNTED = re.compile(r"(\d+) (error|warning|info finding)s?\b")
_COMMAND = re.compile(r"^::(error|warning|notice) ", re.MULTILINE)


def run_push(
    workspace: Path, tmp_path: Path, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], dict, str, dict]:
    """The script on a push: the whole `workspace` checked, the SARIF file written outside it."""
    summary, outputs, sarif = tmp_path / "summary.md", tmp_path / "outputs.txt", tmp_path / "out.sarif"
    summary.write_text("")
    outputs.write_text("")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
        "INPUT_SARIF_FILE": str(sarif),
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    result = subprocess.run(
        [sys.executable, "-I", "-m", "mlperf_audit.github_action"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    document = json.loads(sarif.read_text()) if sarif.exists() else {}
    return result, values, summary.read_text(), document


def _claimed(summary: str, label: str, end: str) -> Counter:
    """The counts the summary gives after `label` ("Annotated on the files:", "Not annotated:")."""
    if label not in summary:
        return Counter()
    text = summary.split(label, 1)[1].split(end, 1)[0]
    kind = {"error": "error", "warning": "warning", "info finding": "notice"}
    return Counter({kind[noun]: int(number) for number, noun in _COUNTED.findall(text)})


def _listed(summary: str) -> Counter:
    """Findings the summary's submitter tables list: a row each, or the count of an "and N more" row."""
    listed: Counter = Counter()
    for section in summary.split("<details")[1:]:
        if "<b>by rule</b>" in section or "<b>scores</b>" in section:
            continue
        for line in section.splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) != 4 or cells[0].split(" ")[0] not in ("error", "warning", "info") or "waived" in cells[0]:
                continue
            more = re.fullmatch(r"and (\d+) more like these.*", cells[3])
            kind = {"info": "notice"}.get(cells[0], cells[0])
            listed[kind] += int(more.group(1)) if more else 1
    return listed


def assert_within_limits(result, values, summary: str, sarif: dict, annotate_info: bool) -> Counter:
    """At most 10 annotations of each kind and 50 in all, errors first, infos only when asked; the
    summary says how many of each kind are annotated and counts the rest, and both add up to the
    findings the check made (its outputs), which the summary's tables and the SARIF file list."""
    order = _COMMAND.findall(result.stdout)
    annotated = Counter(order)
    totals = {"error": int(values["errors"]), "warning": int(values["warnings"]), "notice": int(values["infos"])}
    assert order == sorted(order, key=KINDS.index), "errors first, then warnings, then notices"
    assert all(annotated[kind] <= PER_KIND for kind in KINDS) and sum(annotated.values()) <= PER_JOB
    assert annotated["error"] == min(PER_KIND, totals["error"])
    assert annotated["warning"] == min(PER_KIND, totals["warning"])
    assert annotated["notice"] == (min(PER_KIND, totals["notice"]) if annotate_info else 0)
    claimed = _claimed(summary, "Annotated on the files:", ".")
    left = _claimed(summary, "Not annotated:", "**")
    for kind in KINDS:
        assert claimed[kind] == annotated[kind], (kind, claimed, annotated)
        assert annotated[kind] + left[kind] == totals[kind], (kind, annotated, left, totals)
    assert _listed(summary) == Counter({kind: n for kind, n in totals.items() if n})
    assert len(sarif["runs"][0]["results"]) == sum(totals.values())
    assert len(summary.encode()) <= 1024 * 1024
    return annotated


@pytest.mark.sample
@pytest.mark.parametrize("annotate_info", [False, True], ids=["default", "annotate-info"])
def test_annotations_of_the_sample_stay_within_githubs_limits(sample, tmp_path, annotate_info):
    result, values, summary, sarif = run_push(
        sample, tmp_path, annotate_info="true" if annotate_info else "false", fail_on="never"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    annotated = assert_within_limits(result, values, summary, sarif, annotate_info)
    assert int(values["infos"]) > PER_KIND  # the sample has more infos than GitHub would show
    assert ("info findings are annotated only with" in summary) is not annotate_info
    assert annotated["notice"] == (PER_KIND if annotate_info else 0)


@pytest.mark.sample
def test_errors_take_the_annotations_first_one_rule_after_another(sample, tmp_path):
    """More errors than GitHub shows: ten are annotated, before any warning, and every rule that
    found an error has one of them before any rule has two."""
    workspace = tmp_path / "results"
    shutil.copytree(sample, workspace)
    for path in [workspace, *workspace.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for folder in sorted({log.parent for log in workspace.glob("*/results/*/*/result_*.txt")}):
        log = sorted(folder.glob("result_*.txt"))[0]
        lines = log.read_text().splitlines(True)
        log.write_text("".join(lines[:2] + [':::MLLOG {"namespace": "", "time_ms": 1, "key": \n'] + lines[2:]))
    result, values, summary, sarif = run_push(workspace, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert int(values["errors"]) > PER_KIND and int(values["warnings"]) > PER_KIND
    assert_within_limits(result, values, summary, sarif, annotate_info=False)
    error_rules = {r["ruleId"] for r in sarif["runs"][0]["results"] if r["level"] == "error"}
    annotated_rules = set(re.findall(r"^::error .*?title=(\w+) ", result.stdout, re.MULTILINE))
    assert annotated_rules == error_rules if len(error_rules) <= PER_KIND else len(annotated_rules) == PER_KIND
    assert f"Not annotated: {int(values['errors']) - PER_KIND} errors" in summary


def _published_round(version: str) -> Path:
    found = published_rounds().get(version)
    if found is None:
        pytest.skip(f"the v{version} round is not under $MLPERF_AUDIT_ROUNDS")
    return found


def test_annotations_of_the_whole_v4_1_round_stay_within_githubs_limits(tmp_path):
    """Issue 26's "Done when": the Action once wrote 399 annotations for this round (5 errors, 27
    warnings, 367 notices), of which GitHub showed 10 of each kind and dropped the rest unsaid."""
    result, values, summary, sarif = run_push(_published_round("4.1"), tmp_path, args="--jobs 2")
    assert result.returncode == 1, result.stdout + result.stderr
    annotated = assert_within_limits(result, values, summary, sarif, annotate_info=False)
    assert annotated["error"] > 0 and annotated["notice"] == 0
    assert "the job summary lists them" in result.stdout


@pytest.mark.parametrize("submitters", [1, 400], ids=["one-submitter", "many-submitters"])
def test_a_summary_over_githubs_limit_is_cut_at_a_row_and_says_so(fixtures, submitters):
    """GitHub drops a whole step summary over 1 MiB. A report of 6,000 findings of 600 rules is
    cut after the last table row that fits, whether one submitter's table is too big or the tables
    of many are, and a line says how much is left out."""
    import dataclasses

    from mlperf_audit.config import Config
    from mlperf_audit.engine.api import check
    from mlperf_audit.formats.ci import STEP_SUMMARY_LIMIT, annotate, render_markdown

    report = check(fixtures / "demo", Config(cache_dir=None))
    base = report.findings[0]
    findings = tuple(
        dataclasses.replace(
            base,
            rule=f"XYZ{index % 600:04d}",
            submitter=f"Submitter{index % submitters:03d}",
            message=f"finding {index} " + "x" * 400,
        )
        for index in range(6_000)
    )
    big = dataclasses.replace(report, findings=tuple(sorted(findings, key=lambda f: f.sort_key())))
    text = render_markdown(big, annotations=annotate(big), limit=STEP_SUMMARY_LIMIT)
    size = len(text.encode())
    assert STEP_SUMMARY_LIMIT * 0.9 < size <= STEP_SUMMARY_LIMIT
    cut = re.search(
        r"The summary was cut here .*: (\d+) more row\(s\) of the last table and (\d+) more table\(s\)", text
    )
    assert cut is not None and text.rstrip().endswith("are complete._")
    assert text.count("<details") == text.count("</details>")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert all(line.count("|") == 5 for line in rows)
    shown = sum(1 for line in rows if "finding " in line)
    assert 0 < shown < 6_000
    if submitters == 1:  # the one table is cut inside: its first rows are shown, the rest counted
        assert int(cut.group(2)) == 0 and shown + int(cut.group(1)) == 6_000


def test_errors_are_given_room_before_warnings(fixtures):
    """Where fewer places are left than errors and warnings need (a job whose other steps already
    annotated), errors take them first; infos take none unless asked, and then only what is left."""
    import dataclasses

    from mlperf_audit.config import Config
    from mlperf_audit.engine.api import check
    from mlperf_audit.formats.ci import annotate
    from mlperf_audit.model import Severity

    report = check(fixtures / "demo", Config(cache_dir=None))
    base = report.findings[0]
    findings = tuple(
        dataclasses.replace(base, rule=f"XYZ{index:03d}", severity=severity, line=index + 1)
        for index, severity in enumerate([Severity.INFO] * 15 + [Severity.WARNING] * 15 + [Severity.ERROR] * 15)
    )
    many = dataclasses.replace(report, findings=findings)
    for per_job, annotate_info, expected in [
        (50, False, ["error"] * 10 + ["warning"] * 10),
        (50, True, ["error"] * 10 + ["warning"] * 10 + ["notice"] * 10),
        (14, True, ["error"] * 10 + ["warning"] * 4),
        (6, False, ["error"] * 6),
    ]:
        made = annotate(many, annotate_info=annotate_info, per_job=per_job)
        assert _COMMAND.findall("\n".join(made.commands)) == expected
        left = {kind.value: count for kind, count in made.left.items()}
        assert left == {kind: 15 - expected.count({"info": "notice"}.get(kind, kind)) for kind in left}


def test_the_base_configuration_is_written_back_as_the_toml_it_was(tmp_path):
    """The Action copies the base commit's configuration out of the workspace and the command reads the
    copy: a plugin's table, a date, an infinite float and text beyond ASCII must read back as the base
    commit wrote them (written as JSON, a `[plugins.NAME]` table made every Action run exit 2)."""
    import tomllib

    from mlperf_audit.config import load_config
    from mlperf_audit.github_action import trusted_configuration

    repo = tmp_path / "repo"
    repo.mkdir()
    text = (
        'ruleset = "training-5.1.0"\nselect = ["ALL"]\nfail-on = "warning"\nnote = "caf\\u00e9 \\"quoted\\"\\n"\n'
        "reviewed = 2026-05-14\nlimit = inf\nshare = 0.5\n\n[plugins.example]\nnoise-share = 0.8\n"
    )
    (repo / ".mlperf-audit.toml").write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    written = trusted_configuration(repo, git(repo, "rev-parse", "HEAD"), tmp_path)
    assert written is not None
    assert tomllib.loads(Path(written).read_text()) == tomllib.loads(text)
    (repo / ".mlperf-audit.toml").write_text('ruleset = "training-5.1.0"\n[plugins.example]\nnoise-share = 0.8\n')
    git(repo, "commit", "-qam", "only what the command reads")
    (tmp_path / "again").mkdir()
    written = trusted_configuration(repo, git(repo, "rev-parse", "HEAD"), tmp_path / "again")
    config = load_config(target=repo, config_file=written, discover=False)
    assert config.ruleset == "training-5.1.0" and dict(dict(config.plugins)["example"])["noise-share"] == 0.8
