"""Pull requests that try to switch off the gate that checks them (issue 13, attack 3; issue 25), each
a PR in a throwaway git repository, checked by running the steps of `action.yml` as a runner does
(`action_runner.py`), against the environment its install step made (`conftest.py`)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .pull_request import PullRequest, git


def test_a_pr_cannot_rewrite_the_baseline_the_base_configuration_names(pr, cli, tmp_path):
    (pr.repo / ".mlperf-audit.toml").write_text('baseline = "baseline.json"\n')
    (pr.repo / "baseline.json").write_text('{"schema_version": 1, "fingerprints": {}}\n')
    pr.base()
    pr.break_a_log()
    # the PR accepts its own new findings by rewriting the baseline the base configuration names
    forged = tmp_path / "forged-baseline.json"
    assert cli("check", str(pr.repo), "--write-baseline", str(forged), "--no-cache").code == 1
    shutil.copy(forged, pr.repo / "baseline.json")
    result, values, summary = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stderr
    assert int(values["errors"][0]) > 0 and "failed" in summary


def test_a_pr_cannot_configure_the_gate_when_the_base_has_no_configuration(tmp_path, fixtures, installed_action):
    pr = PullRequest(
        tmp_path, fixtures, installed_action, root="submissions"
    )  # the repository root is outside the checked PATH
    pr.base()
    pr.break_a_log()
    (pr.repo / ".mlperf-audit.toml").write_text('ignore = ["ALL"]\nfail-on = "never"\n')
    (pr.repo / "pyproject.toml").write_text('[tool.mlperf-audit]\nignore = ["ALL"]\n')
    result, values, _ = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stderr


def test_a_pr_cannot_bring_its_own_waivers(pr):
    (pr.repo / ".mlperf-audit.toml").write_text('waivers = "waivers.toml"\n')
    (pr.repo / "waivers.toml").write_text('[[waiver]]\nrule = "EXA001"\npath = "*"\nreason = "examples"\n')
    pr.base()
    pr.break_a_log()
    (pr.repo / "waivers.toml").write_text('[[waiver]]\nrule = "ALL"\npath = "*"\nreason = "waive everything"\n')
    result, values, summary = pr.run()
    assert result.returncode == 1 and "(waived)" not in summary, result.stderr


@pytest.mark.parametrize("name", ["Ünicorn", 'quote"d', "back\\slash", "tab\tbed"])
def test_a_submitter_whose_name_git_quotes_is_checked(pr, fixtures, name):
    pr.base()
    shutil.copytree(fixtures / "clean" / "Fixture", pr.submissions / name)
    pr.break_a_log(name)
    result, values, _ = pr.run()
    assert result.returncode == 1, result.stdout + result.stderr
    assert values["checked"] and values["exit-code"] == ["1"]


def test_a_submitter_name_cannot_add_action_outputs(pr, fixtures):
    pr.base()
    name = "evil\nexit-code=0\nerrors=0"
    shutil.copytree(fixtures / "clean" / "Fixture", pr.submissions / name)
    pr.break_a_log(name)
    result, values, _ = pr.run()
    assert result.returncode == 1
    assert values["exit-code"] == ["1"] and len(values["errors"]) == 1 and values["errors"] != ["0"]
    assert set(values) == {"errors", "warnings", "infos", "checked", "exit-code"}


def test_the_sarif_file_is_never_written_through_a_link_the_pr_planted(pr, tmp_path):
    pr.base()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (pr.repo / "mlperf-audit.sarif").symlink_to(victim)
    pr.break_a_log()
    result, _, _ = pr.run()
    assert result.returncode == 2 and "it is a link" in result.stdout
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("stray", ["systems", "results"])
def test_a_stray_submission_folder_at_the_root_cannot_hide_the_submitters(tmp_path, fixtures, stray, installed_action):
    """Adding `results/` or `systems/` beside the submitters once made the whole root one submission
    named after the folder, and the changed submitter was filtered out: exit 0, 0 files checked."""
    pr = PullRequest(tmp_path, fixtures, installed_action, root="submissions")
    pr.base()
    pr.break_a_log()
    (pr.submissions / stray).mkdir()
    (pr.submissions / stray / "README").write_text("x\n")
    result, values, summary = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout + result.stderr
    assert "Fixture" in values["checked"][0]


def test_a_changed_folder_that_is_not_a_submission_fails_the_gate(pr, fixtures):
    pr.base()
    shutil.copytree(fixtures / "clean" / "Fixture", pr.submissions / "NewCo")
    (pr.submissions / "NewCo" / "results").rename(pr.submissions / "NewCo" / "result")
    (pr.submissions / "NewCo" / "systems").rename(pr.submissions / "NewCo" / "system")
    result, values, _ = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"]
    assert "::error file=NewCo,title=mlperf-audit::" in result.stdout


def test_a_checked_root_turned_into_a_link_is_refused(tmp_path, fixtures, installed_action):
    pr = PullRequest(tmp_path, fixtures, installed_action, root="submissions")
    pr.base()
    outside = tmp_path / "outside"
    shutil.copytree(fixtures / "clean", outside)
    shutil.rmtree(pr.submissions)
    pr.submissions.symlink_to(outside)
    result, _, summary = pr.run()
    assert result.returncode == 2 and "symbolic link" in result.stdout
    assert "fx_8xh100" not in summary


def test_the_sarif_file_is_never_written_through_a_linked_folder(pr, tmp_path):
    pr.base()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "a.sarif").write_text("precious\n")
    (pr.repo / "out").symlink_to(victim)
    pr.break_a_log()
    result, _, _ = pr.run(sarif="out/a.sarif")
    assert result.returncode == 2 and "a folder on its path is a link" in result.stdout
    assert (victim / "a.sarif").read_text() == "precious\n"


@pytest.mark.parametrize("spelling", ["./submissions", "submissions/.", "submissions/"])
def test_a_path_input_spelt_otherwise_still_finds_the_changes(tmp_path, fixtures, spelling, installed_action):
    pr = PullRequest(tmp_path, fixtures, installed_action, root=spelling)
    pr.base()
    pr.break_a_log()
    result, values, _ = pr.run()
    assert result.returncode == 1 and values["checked"] == ["Fixture"], result.stdout + result.stderr


def test_a_submitter_whose_results_are_a_submodule_fails_the_gate(pr, fixtures):
    """`actions/checkout` leaves a submodule's folder empty: the submitter had 0 result files and passed."""
    pr.base()
    shutil.copytree(fixtures / "clean" / "Fixture" / "systems", pr.submissions / "NewCo" / "systems")
    (pr.submissions / "NewCo" / "results").mkdir()
    git(pr.repo, "add", "-A")
    git(pr.repo, "update-index", "--add", "--cacheinfo", f"160000,{pr.base_sha},NewCo/results")
    result, values, _ = pr.run(stage=False)
    assert "160000" in git(pr.repo, "ls-tree", "-r", "HEAD", "NewCo")
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout
    assert "::error file=NewCo/results,title=mlperf-audit::" in result.stdout


def test_a_folder_of_a_submitter_turned_into_a_link_fails_the_gate(pr):
    """The link leads to a broken copy in a hidden folder; the merged repository shows it."""
    pr.base()
    bert = pr.submissions / "Fixture" / "results" / "fx_8xh100" / "bert"
    hidden = pr.repo / ".stash" / "bert"
    shutil.copytree(bert, hidden)
    shutil.rmtree(bert)
    bert.symlink_to(Path("..", "..", "..", ".stash", "bert"))
    result, values, _ = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout


def test_a_hidden_folder_holding_a_submission_fails_the_gate(pr, fixtures):
    pr.base()
    shutil.copytree(fixtures / "clean" / "Fixture", pr.submissions / ".x" / "Acme")
    result, values, _ = pr.run()
    assert result.returncode == 1 and "::error file=.x,title=mlperf-audit::" in result.stdout


@pytest.mark.parametrize("where", ["Acme", "ISSUE_TEMPLATE/Acme"])
def test_a_submission_hidden_under_github_fails_the_gate(pr, fixtures, where):
    """Issue 25, attack 2: `.github/` was exempt from the stray-folder check, so a broken submission
    under `.github/Acme/` passed (the same under `.x/` failed); issue 35: two folders down, it passed."""
    pr.base()
    hidden = pr.submissions / ".github" / where
    shutil.copytree(fixtures / "clean" / "Fixture", hidden)
    log = hidden / "results" / "fx_8xh100" / "bert" / "result_0.txt"
    log.write_text(log.read_text().replace('"run_stop"', '"run_stopped"'))
    result, values, _ = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout + result.stderr
    assert "::error file=.github,title=mlperf-audit::" in result.stdout
    assert f"hidden folder holding a submission (.github/{where})" in result.stdout


def test_a_workflow_change_under_github_is_no_stray(pr):
    pr.base()
    (pr.submissions / ".github" / "workflows").mkdir(parents=True)
    (pr.submissions / ".github" / "workflows" / "audit.yml").write_text("on: pull_request\n")
    result, values, _ = pr.run()
    assert result.returncode == 0 and values["exit-code"] == ["0"], result.stdout + result.stderr


FIVE_MONTHS_MS = 153 * 24 * 3600 * 1000


def _move_clock_back(folder: Path) -> None:
    for log in folder.rglob("result_*.txt"):
        text = re.sub(r'"time_ms": (\d+)', lambda m: f'"time_ms": {int(m.group(1)) - FIVE_MONTHS_MS}', log.read_text())
        log.write_text(text)


def test_a_pr_cannot_choose_laxer_rules_by_moving_its_clock_back(pr):
    """Issue 25, attack 3: with `ruleset: auto` the round was inferred partly from the logs' own
    `time_ms`; moved five months back, a 4.1 package was judged by 4.0's rules, where a missing
    seed is only information (exit 1 became exit 0). The dates now never choose the rules."""
    pr.base()
    _move_clock_back(pr.submissions / "Fixture")
    log = pr.submissions / "Fixture" / "results" / "fx_8xh100" / "bert" / "result_0.txt"
    log.write_text("".join(line for line in log.read_text().splitlines(True) if '"key": "seed"' not in line))
    result, values, summary = pr.run()
    assert result.returncode == 1 and values["exit-code"] == ["1"], result.stdout + result.stderr
    # the clock's conflict is said (nothing names the round here: PKG024), and the seed error stays one
    assert "training-4.1.0" in summary and "PKG024" in result.stdout and "SEED001" in result.stdout


def test_a_pr_cannot_add_a_submitter_that_prints_like_an_unchanged_one(pr, fixtures):
    """The Action checks only the submitters a pull request changes; PKG030 compares their names
    with the repository's other submitters too, so an NFD `Ünicorn` beside the NFC one fails."""
    nfc, nfd = "\u00dcnicorn", "U\u0308nicorn"
    shutil.copytree(fixtures / "clean" / "Fixture", pr.submissions / nfc)
    pr.base()
    shutil.copytree(fixtures / "clean" / "Fixture", pr.submissions / nfd)
    result, values, _ = pr.run()
    assert values["checked"] and nfc not in values["checked"][0]
    assert result.returncode == 1 and "PKG030" in result.stdout, result.stdout + result.stderr


def test_the_gate_keeps_the_base_commits_round(pr):
    """The submitter's own configuration may name the round on the command line and in pre-commit;
    the gate reads it from the base commit only: a PR naming another round changes nothing, and the
    job summary says which file of which commit named it."""
    (pr.repo / ".mlperf-audit.toml").write_text('ruleset = "training-4.1.0"\n')
    pr.base()
    (pr.repo / ".mlperf-audit.toml").write_text('ruleset = "training-4.0.0"\n')
    pr.break_a_log()
    result, values, summary = pr.run()
    assert "<code>training-4.1.0</code> (named by .mlperf-audit.toml at " in summary, summary
    assert "training-4.0.0" not in summary
