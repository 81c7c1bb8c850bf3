"""Issue 25, attack 1: a pull request replaced the gate with its own code. `action.yml` ran
`python3 -m ...` with the checkout as the working folder, and `python -m` puts that folder first on
`sys.path`: a `mlperf_audit/github_action.py`, a `tabulate.py` or a `pip/__main__.py` added by the
pull request ran instead of the installed code, and the step wrote `exit-code=0` while the same
pull request broke a log. Each test runs the steps of `action.yml` as a runner does
(`action_runner.py`); the copy of the file before the fix shows what the tests would have seen."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .action_runner import SHADOWS, Runner, marks_left, plant_shadows
from .pull_request import REPO, InstalledAction, PullRequest, git

OLD_ACTION = REPO / "tests" / "data" / "action-before-issue-25.yml"
#: The old Action installed into the runner's own Python: here, the session's environment stands for it.
OLD_INSTALL = "Install mlperf-audit from the action's own checkout, with pinned dependencies"
#: Shadows that are single files at the repository root: no changed folder, nothing the gate
#: reports as a stray, only code waiting to be imported.
ROOT_MODULES = ("tabulate.py", "yaml.py", "sitecustomize.py", "usercustomize.py")


def test_the_install_step_runs_nothing_of_the_workspace(installed_action: InstalledAction):
    """The session's install ran in a workspace holding every shadow (`pip/`, `venv/`, ...)."""
    assert installed_action.install.step("install").returncode == 0
    assert marks_left(installed_action.marks) == []
    where = subprocess.run(
        [
            str(installed_action.venv / "bin" / "python"),
            "-I",
            "-c",
            "import mlperf_audit, tabulate; print(mlperf_audit.__file__, tabulate.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(Path(path).resolve().is_relative_to(installed_action.venv.resolve()) for path in where), where


def test_a_pr_that_shadows_every_module_of_the_gate_is_still_checked(pr: PullRequest, tmp_path: Path):
    pr.base()
    marks = tmp_path / "marks"
    plant_shadows(pr.repo, marks)
    pr.break_a_log()
    result, values, summary = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout + result.stderr
    assert "::error file=results/fx_8xh100/bert/result_0.txt" in result.stdout or "bert" in summary
    assert marks_left(marks) == []


@pytest.mark.parametrize(
    ("action", "shadow_ran", "exit_code"),
    [(REPO / "action.yml", False, "1"), (OLD_ACTION, True, None)],
    ids=["action.yml", "before-issue-25"],
)
def test_a_module_at_the_repository_root_cannot_run_in_the_gate(
    pr: PullRequest,
    tmp_path: Path,
    installed_action: InstalledAction,
    action: Path,
    shadow_ran: bool,
    exit_code: str | None,
):
    """`tabulate.py` alone at the root changes no folder the gate would flag; imported by the old
    Action, it could do anything, here it only leaves its mark."""
    pr.base()
    marks = tmp_path / "marks"
    plant_shadows(pr.repo, marks)
    for relative in SHADOWS:
        if relative not in ROOT_MODULES:
            path = pr.repo / relative
            shutil.rmtree(path.parent) if path.parent != pr.repo and path.parent.exists() else None
    pr.break_a_log()
    old = action == OLD_ACTION
    result, values, _ = pr.run(
        action=action,
        skip=(OLD_INSTALL,) if old else ("install",),
        python_bin=installed_action.venv / "bin" if old else None,
    )
    assert ("tabulate.py" in marks_left(marks)) is shadow_ran, marks_left(marks)
    if exit_code is not None:
        assert values["exit-code"] == [exit_code] and result.returncode == 1, result.stdout + result.stderr


def test_the_action_before_the_fix_let_the_pr_pass_the_gate(
    pr: PullRequest, tmp_path: Path, installed_action: InstalledAction
):
    """The attack as it was reported, on the copy of the old `action.yml`: the pull request's
    `pip/__main__.py` ran instead of pip, and its `github_action.py` reported a pass."""
    pr.base()
    marks = tmp_path / "marks"
    plant_shadows(pr.repo, marks)
    pr.break_a_log()
    result, values, _ = pr.run(action=OLD_ACTION, skip=(), python_bin=installed_action.venv / "bin")
    assert values.get("exit-code") == ["0"] and result.returncode == 0
    assert {"pip/__main__.py", "mlperf_audit/github_action.py"} <= set(marks_left(marks))


def test_the_script_refuses_to_run_with_the_workspace_on_its_module_path(pr: PullRequest, installed_action):
    """Run as the old Action ran it (`python -m`, the checkout as working folder), the script stops
    before it could import a module of the checkout later (numpy is imported when a rule needs it)."""
    pr.base()
    result = subprocess.run(
        [str(installed_action.venv / "bin" / "python"), "-m", "mlperf_audit.github_action"],
        cwd=pr.repo,
        env={"GITHUB_WORKSPACE": str(pr.repo), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "is on the module search path" in result.stdout, result.stdout + result.stderr


def test_the_action_refuses_to_run_from_the_checkout_it_checks(tmp_path: Path, installed_action):
    """`uses: ./` runs the action's files from the workspace, which the pull request writes."""
    workspace = tmp_path / "workspace"
    inside = workspace / ".github" / "actions" / "mlperf-audit"
    inside.mkdir(parents=True)
    shutil.copy(REPO / "action.yml", inside / "action.yml")
    temp = tmp_path / "temp"
    temp.mkdir()
    runner = Runner(inside / "action.yml", inside, temp, installed_action.python_bin, tmp_path / "store")
    ran = runner.run(workspace, {"cache": "false"}, {}, skip=("run", "prune"))
    install = ran.step("install")
    assert install.returncode == 2 and "not uses: ./" in install.stdout
    assert not (temp / "mlperf-audit-venv").exists()


def test_cache_entries_saved_by_a_pr_run_cannot_change_a_later_verdict(pr: PullRequest, fixtures: Path):
    """Under `pull_request_target` a PR's run saves the cache for the base branch. Even entries that
    are damaged, swapped between keys or cut short (the worst a writer of the folder could do) give
    the verdict a run without the cache gives."""
    pr.base()
    pr.break_a_log()
    first, first_values, _ = pr.run()
    assert first.returncode == 1
    store = pr.tmp / "cache-store"
    entries = sorted(path for path in store.rglob("*") if path.is_file())
    assert entries, "the run saved no cache entry"
    contents = [path.read_bytes() for path in entries]
    for index, path in enumerate(entries):
        forged = contents[(index + 1) % len(contents)]  # another key's entry under this key
        path.write_bytes(forged[: len(forged) // 2] if index % 2 else forged)
    again, again_values, _ = pr.run()
    assert again.returncode == first.returncode and again_values["errors"] == first_values["errors"]


def test_the_action_installs_into_its_own_environment_not_the_runners(installed_action: InstalledAction):
    """Issue 26, item 11: the Action once installed into the runner's own Python. Its environment
    lies under runner.temp, and the runner's `python3` is left as it was (it cannot even import it)."""
    assert installed_action.venv.name == "mlperf-audit-venv"
    temp = installed_action.venv.parent
    assert (temp / "step-0.sh").is_file()  # the install step ran from this runner folder
    runner_python = installed_action.python_bin / "python3"
    bare = subprocess.run([str(runner_python), "-I", "-c", "import mlperf_audit"], capture_output=True, text=True)
    assert bare.returncode == 1 and "No module named 'mlperf_audit'" in bare.stderr
    own = subprocess.run([str(installed_action.venv / "bin" / "python"), "-I", "-m", "mlperf_audit", "--version"])
    assert own.returncode == 0


# ---------------------------------------------------------------- inputs (issue 26, item 11)


def _annotated_rules(stdout: str) -> set[str]:
    return set(re.findall(r"^::(?:error|warning|notice) .*?title=(\w+) ", stdout, re.MULTILINE))


def test_the_args_select_and_ignore_inputs_are_honoured(pr: PullRequest):
    """The broken log gives SEED006 (an error) and LOG005 (a warning)."""
    pr.base()
    pr.break_a_log()
    result, values, _ = pr.run()
    assert result.returncode == 1 and {"SEED006", "LOG005"} <= _annotated_rules(result.stdout), result.stdout
    # without SEED006 only a warning is left: the exit code is 1 only because --fail-on warning is obeyed
    result, values, _ = pr.run(inputs={"args": "--ignore SEED006 --fail-on warning"})
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout + result.stderr
    assert "SEED006" not in _annotated_rules(result.stdout) and values["errors"] == ["0"]
    # the select input and args together: only LOG005, the ruleset args names, and nothing fails
    result, values, summary = pr.run(inputs={"select": "LOG005", "args": "--fail-on never --ruleset 'training-5.0.0'"})
    assert result.returncode == 0 and values["exit-code"] == ["0"], result.stdout + result.stderr
    assert _annotated_rules(result.stdout) == {"LOG005"}
    assert "ruleset <code>training-5.0.0</code>" in summary


def test_no_input_reaches_a_shell(pr: PullRequest, tmp_path: Path):
    """Inputs are passed in the step's environment and split by shlex, never by a shell: command
    substitutions, separators and `${{ }}` expressions in them are text."""
    pr.base()
    pr.break_a_log()
    marks = tmp_path / "marks"
    marks.mkdir()

    def attack(name: str) -> str:
        mark = marks / name
        return f"$(touch {mark}-a) `touch {mark}-b`; touch {mark}-c && touch {mark}-d | touch {mark}-e"

    expression = "${{ github.workspace }}"
    result, values, _ = pr.run(inputs={"args": f"{attack('args')} {expression}"})
    assert result.returncode == 2 and "exit-code" not in values
    assert result.stdout.startswith("::error title=mlperf-audit::args: '$(touch"), result.stdout
    result, _, _ = pr.run(inputs={"select": attack("select")})
    assert result.returncode == 2 and "unknown rule selector '$(touch" in result.stdout, result.stdout
    result, _, _ = pr.run(inputs={"ignore": f"{expression},{attack('ignore')}"})
    assert result.returncode == 2 and f"unknown rule selector '{expression}'" in result.stdout, result.stdout
    result, _, _ = pr.run(inputs={"annotate-info": f"true; {attack('annotate-info')}"})
    assert result.returncode == 2 and "annotate-info must be true or false" in result.stdout
    assert sorted(path.name for path in marks.iterdir()) == []
    scripts = "".join(path.read_text() for path in (pr.tmp / "runner-temp").glob("step-*.sh"))
    assert "touch" not in scripts and "github.workspace" not in scripts


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ("--config .mlperf-audit.toml", "reads its configuration"),
        ("--trust-tree-config", "reads its configuration"),
        ("--waivers waivers.toml", "reads its configuration"),
        ("--baseline=baseline.json", "reads its configuration"),
        ("-o out.txt", "writes only"),
        ("-oout.txt", "writes only"),
        ("--output out.txt", "writes only"),
        ("--report sarif:out.sarif", "writes only"),
        ("--write-baseline baseline.json", "writes only"),
        ("--format json", "writes only"),
        ("--cache-dir .cache", "outside the workspace"),
        ("--partial Fixture", "the path input names"),
        ("-- --partial", "the path input names"),
        ("--selct LOG005", "did you mean --select"),
        ("--conf x.toml", "not an option the Action takes"),
        ("--fail-on sometimes", "invalid choice"),
        ("--ruleset training-4.1", "did you mean training-4.1.0"),
        ("--jobs 0", "at least 1"),
        ("--select 'LOG005", "cannot split"),
    ],
)
def test_args_that_would_read_or_write_a_chosen_file_are_refused(pr: PullRequest, args: str, reason: str):
    """Each is a usage error, in one annotation that says why, before anything is checked or written."""
    pr.base()
    pr.break_a_log()
    result, values, summary = pr.run(inputs={"args": args, "cache": "false"}, sarif="")
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stdout.splitlines()  # nothing else ran
    assert line.startswith("::error title=mlperf-audit::") and reason in line, line
    assert "Traceback" not in result.stderr and summary == "" and values == {}
    assert git(pr.repo, "status", "--porcelain", "--ignored") == ""
