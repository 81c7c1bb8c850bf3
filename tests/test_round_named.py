"""Which round a check is judged by, and what named it (issue 34, item 1): `--ruleset`, a
configuration file, a folder above the submissions, or nothing. Every report says which; when
nothing names the round and the logs' dates fit another round than the one taken, PKG024 leads and
the findings of the round's rules follow from it; `audit --claims` judges no claim under such a
guess. On copies of the real samples in folders named for no round."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLE, SHARED_DATA, published_rounds, shared_data

V60_SAMPLE = SHARED_DATA / "mlperf-training-v6.0-sample"
CLAIMS = Path(__file__).parent / "data" / "claims-v4.1-sample.yaml"
#: A round's own rules: what the wrong round changes (rules/mlperf_audit_rules/support/causes.py).
ROUND_RULES = re.compile(r"CMP\d+|RCP\d+|SEED\d+|PKG01[5789]|SYS002")


@pytest.fixture
def v60_copy(tmp_path: Path) -> Path:
    """The real v6.0 sample copied into a folder whose name names no round."""
    copy = tmp_path / "checkout" / "results-copy"
    shutil.copytree(shared_data(V60_SAMPLE, "v6.0 sample"), copy)
    return copy


def _json(cli, *argv: str) -> tuple[int, dict]:
    result = cli("check", *argv, "--format", "json", "--no-cache")
    return result.code, json.loads(result.out)


def _text(cli, monkeypatch, *argv: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    return cli("check", *argv, "--no-cache").out.splitlines()


def test_named_by_nothing_pkg024_leads_and_the_round_rules_follow_from_it(cli, v60_copy, monkeypatch):
    """The v6.0 sample's runs were logged in May 2026, inside 6.0's window; copied into a folder
    that names no round, the newest round allowing its benchmarks (6.1) is taken, never the one the
    dates suggest, and PKG024 says so first, with every finding of the round's rules under it."""
    code, report = _json(cli, str(v60_copy))
    source = report["config"]["ruleset_from"]
    assert report["ruleset"] == "training-6.1.0" and source["kind"] == "none" and source["where"] is None
    assert source["text"] == "not named: the newest round allowing every benchmark"
    (lead,) = [f for f in report["findings"] if f["rule"] == "PKG024"]
    assert "training-6.0.0's window" in lead["message"] and "--ruleset training-6.0.0" in lead["hint"]
    assert not [f for f in report["findings"] if f["rule"] == "PKG020"]  # said once, by PKG024
    following = [f for f in report["findings"] if f["caused_by"] == lead["fingerprint"]]
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    # every error is one of the round's rules, and follows from the round taken; JSON keeps them all
    assert errors and all(ROUND_RULES.fullmatch(f["rule"]) for f in errors)
    assert {f["fingerprint"] for f in errors} <= {f["fingerprint"] for f in following}
    assert code == 1 and report["summary"]["error"] == len(errors)  # the guess never makes a package pass
    text = _text(cli, monkeypatch, str(v60_copy))
    assert "training-6.1.0 (not named: the newest round allowing every" in text[0]
    first = next(i for i, line in enumerate(text) if re.search(r"\b(error|warning) [A-Z]+\d+\b", line))
    shown = [f for f in following if f["severity"] != "info"]  # infos are counted, not shown (-v)
    assert "warning PKG024" in text[first] and f"{len(shown)} more follow from it" in "\n".join(text)
    assert len(text) < 40, "\n".join(text)  # 234 errors folded into one screen


def test_named_by_the_option(cli, v60_copy, monkeypatch):
    code, report = _json(cli, str(v60_copy), "--ruleset", "training-6.0.0")
    assert report["ruleset"] == "training-6.0.0" and report["config"]["ruleset_from"]["kind"] == "option"
    assert not [f for f in report["findings"] if f["rule"] in ("PKG020", "PKG024") or f["severity"] == "error"]
    assert code == 0
    assert (
        "training-6.0.0 (named by --ruleset)"
        in _text(cli, monkeypatch, str(v60_copy), "--ruleset", "training-6.0.0")[0]
    )
    # named, a round the dates do not fit is the user's choice: PKG020 warns, nothing is folded
    code, report = _json(cli, str(v60_copy), "--ruleset", "training-6.1.0")
    (mismatch,) = [f for f in report["findings"] if f["rule"] == "PKG020"]
    assert mismatch["severity"] == "warning" and not [f for f in report["findings"] if f["caused_by"]]
    assert not [f for f in report["findings"] if f["rule"] == "PKG024"] and code == 1


def test_named_by_the_repositorys_own_configuration(cli, v60_copy, monkeypatch):
    """A submitter's repository names its round in its own .mlperf-audit.toml, checked from its root
    (as the pre-commit hook runs `mlperf-audit check .`): obeyed, and said."""
    (v60_copy / ".mlperf-audit.toml").write_text('ruleset = "training-6.0.0"\n')
    monkeypatch.chdir(v60_copy)
    code, report = _json(cli, ".")
    source = report["config"]["ruleset_from"]
    assert report["ruleset"] == "training-6.0.0" and code == 0
    assert source == {
        "kind": "tree configuration",
        "where": ".mlperf-audit.toml in the current directory",
        "text": "named by .mlperf-audit.toml in the current directory, inside the checked tree",
    }
    assert not [note for note in report["config"]["notes"] if "not obeyed" in note]
    # in pyproject.toml too
    (v60_copy / ".mlperf-audit.toml").unlink()
    (v60_copy / "pyproject.toml").write_text('[tool.mlperf-audit]\nruleset = "training-6.0.0"\n')
    code, report = _json(cli, ".")
    assert report["ruleset"] == "training-6.0.0" and report["config"]["ruleset_from"]["where"].startswith("pyproject")


def test_named_by_a_configuration_outside_the_tree(cli, v60_copy, tmp_path):
    config = tmp_path / "audit.toml"
    config.write_text('ruleset = "training-6.0.0"\n')
    code, report = _json(cli, str(v60_copy), "--config", str(config))
    assert report["config"]["ruleset_from"] == {
        "kind": "configuration",
        "where": str(config),
        "text": f"named by {config}",
    }
    assert code == 0


def test_named_by_a_folder(cli, tmp_path, monkeypatch):
    folder = tmp_path / "mlperf-training-v6.0-sample"
    shutil.copytree(shared_data(V60_SAMPLE, "v6.0 sample"), folder)
    code, report = _json(cli, str(folder / "Oracle"))
    assert report["ruleset"] == "training-6.0.0" and code == 0
    assert report["config"]["ruleset_from"]["kind"] == "folder"
    assert report["config"]["ruleset_from"]["where"] == "mlperf-training-v6.0-sample"
    header = " ".join(_text(cli, monkeypatch, str(folder / "Oracle"))[:3])
    assert "training-6.0.0 (named by the folder 'mlperf-training-v6.0-sample')" in header
    # a folder above the submissions that names the round wins over the package's own configuration
    (folder / ".mlperf-audit.toml").write_text('ruleset = "training-6.1.0"\n')
    monkeypatch.chdir(folder)
    code, report = _json(cli, ".")
    assert report["ruleset"] == "training-6.0.0" and report["config"]["ruleset_from"]["kind"] == "folder"
    assert any("names training-6.1.0, not obeyed" in note for note in report["config"]["notes"])


def test_the_packages_own_configuration_cannot_name_a_round_published_before_its_runs(cli, tmp_path, monkeypatch):
    """The v5.0 power sample (bert and llama2_70b_lora, logged in 2025) in a repository whose own
    configuration names 4.1, which allows both: its runs postdate 4.1's publication, so they cannot
    be 4.1 results, an error; named on the command line, it stays the user's choice (a warning)."""
    package = tmp_path / "own-repo"
    shutil.copytree(shared_data(SHARED_DATA / "mlperf-training-v5.0-power-sample", "v5.0 power sample"), package)
    (package / ".mlperf-audit.toml").write_text('ruleset = "training-4.1.0"\n')
    monkeypatch.chdir(package)
    code, report = _json(cli, ".")
    (mismatch,) = [f for f in report["findings"] if f["rule"] == "PKG020"]
    assert mismatch["severity"] == "error" and "after training-4.1.0's publication" in mismatch["message"]
    assert code == 1
    (package / ".mlperf-audit.toml").unlink()
    code, report = _json(cli, ".", "--ruleset", "training-4.1.0")
    (mismatch,) = [f for f in report["findings"] if f["rule"] == "PKG020"]
    assert mismatch["severity"] == "warning"


def test_every_format_says_what_named_the_round(cli, v60_copy, tmp_path):
    sarif = json.loads(cli("check", str(v60_copy), "--format", "sarif", "--no-cache").out)
    properties = sarif["runs"][0]["invocations"][0]["properties"]
    assert properties["rulesetNamedBy"] == "not named: the newest round allowing every benchmark"
    markdown = cli("check", str(v60_copy), "--format", "markdown", "--no-cache").out
    assert "<code>training-6.1.0</code> (not named: the newest round allowing every benchmark)" in markdown
    score = cli("score", str(v60_copy), "--ruleset", "training-6.0.0", "--no-cache")
    assert "note: ruleset training-6.0.0, named by --ruleset" in score.err


# ------------------------------------------------------------------------------------------------
# Claims: judged under the round of the results they are about, never under a guess.
# ------------------------------------------------------------------------------------------------


@pytest.mark.sample
def test_the_seed_claims_are_judged_under_their_round_from_a_copied_folder(cli, tmp_path):
    """The claims about the v4.1 sample give the same verdicts from a copy in a folder named for no
    round as from the sample's own folder, and say the round they were judged under."""
    copy = tmp_path / "copied"
    shutil.copytree(SAMPLE, copy)
    own = cli("audit", str(SAMPLE), "--claims", str(CLAIMS), "--format", "json", "--no-cache")
    copied = cli("audit", str(copy), "--claims", str(CLAIMS), "--format", "json", "--no-cache")
    assert copied.code == own.code == 1
    mine, theirs = json.loads(copied.out), json.loads(own.out)
    assert mine["ruleset"] == theirs["ruleset"] == "training-4.1.0"
    assert mine["config"]["ruleset_from"]["kind"] == "none" and theirs["config"]["ruleset_from"]["kind"] == "folder"
    assert mine["claims"] == theirs["claims"]
    text = cli("audit", str(copy), "--claims", str(CLAIMS), "--no-cache").out
    assert "Claims:\n  judged under training-4.1.0 (not named: the newest round allowing every benchmark)" in text


@pytest.mark.sample
def test_no_claim_is_judged_under_a_guessed_round(cli, tmp_path):
    """Only the llama2_70b_lora results of the v4.1 sample, copied: 6.1 is the newest round allowing
    them, but they were logged in 4.1's window. The claims are not judged under 6.1's RCPs (exit 2,
    naming 4.1); named, 4.1 gives the verdict the sample's own folder gives."""
    copy = tmp_path / "copied"
    shutil.copytree(SAMPLE, copy)
    for folder in sorted(copy.glob("*/results/*/*")):
        if folder.name != "llama2_70b_lora":
            shutil.rmtree(folder)
    claims = tmp_path / "claims.yaml"
    claims.write_text(
        "claims:\n  - id: h200-lora\n    benchmark: llama2_70b_lora\n"
        "    faster: {submitter: NVIDIA, system: h200_ngc24.09_nemo}\n"
        "    than: {submitter: Dell, system: XE9680x8H100-SXM-80GB}\n    speedup: 1.1\n"
    )
    guessed = cli("audit", str(copy), "--claims", str(claims), "--no-cache")
    assert guessed.code == 2 and "--ruleset training-4.1.0" in guessed.err and "claims are not judged" in guessed.err
    named = cli("audit", str(copy), "--claims", str(claims), "--ruleset", "training-4.1.0", "--format", "json")
    own = cli("audit", str(SAMPLE), "--claims", str(claims), "--format", "json", "--no-cache")
    assert json.loads(named.out)["claims"] == json.loads(own.out)["claims"]
    assert json.loads(named.out)["config"]["ruleset_from"]["kind"] == "option"


ROUNDS = published_rounds()


@pytest.mark.skipif("3.1" not in ROUNDS, reason="the v3.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_a_claim_about_a_v31_result_is_judged_under_31(cli, tmp_path):
    """v3.1 Clemson's bert results copied out of the round's folder: the newest round allowing its benchmarks
    is later than 3.1, its runs date from 3.1's window. A claim about it is not judged under the
    later round's rules; named, 3.1 recomputes the number the round's own folder gives."""
    source = ROUNDS["3.1"] / "Clemson"
    copy = tmp_path / "Clemson"
    shutil.copytree(source, copy)
    benchmark = "bert"
    system = next(p.parent.name for p in sorted(copy.glob(f"results/*/{benchmark}")))
    claims = tmp_path / "claims.yaml"
    claims.write_text(
        f"claims:\n  - id: v31\n    benchmark: {benchmark}\n"
        f"    result: {{submitter: Clemson, system: {system}}}\n    minutes: 1\n"
    )
    guessed = cli("audit", str(copy), "--claims", str(claims), "--no-cache")
    assert guessed.code == 2 and "--ruleset training-3.1.0" in guessed.err, guessed.err
    named = json.loads(
        cli("audit", str(copy), "--claims", str(claims), "--ruleset", "training-3.1.0", "--format", "json").out
    )
    own = json.loads(cli("audit", str(source), "--claims", str(claims), "--format", "json", "--no-cache").out)
    assert own["ruleset"] == "training-3.1.0" and named["claims"] == own["claims"]


# ------------------------------------------------------------------------------------------------
# A whole real submitter copied anywhere: one screen before its first true problem.
# ------------------------------------------------------------------------------------------------

SCREEN = 40


@pytest.mark.skipif("5.1" not in ROUNDS, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
@pytest.mark.parametrize("submitter", ["AMD", "Krai", "Oracle", "HPE"])
def test_a_v51_submitter_copied_anywhere_shows_one_screen_first(cli, tmp_path, monkeypatch, submitter):
    """Issue 34: a v5.1 submitter copied into a folder with any name, checked with the defaults:
    at most one screen (40 lines at 80 columns) before its first true problem, and training-5.1.0
    named within it (AMD: 546 errors under training-6.1.0 before, PKG020 last)."""
    source = ROUNDS["5.1"] / submitter
    if not source.is_dir():
        pytest.skip(f"no {submitter} in the v5.1 round here")
    copy = tmp_path / "anything" / submitter
    shutil.copytree(source, copy)
    monkeypatch.chdir(tmp_path)
    text = _text(cli, monkeypatch, str(copy))
    _, report = _json(cli, str(copy))
    _, own = _json(cli, str(source))
    # the true problems: what the round's own folder reports at warning or above
    true = {(f["rule"], f["message"]) for f in own["findings"] if f["severity"] != "info"}
    found = [i for i, line in enumerate(text) for rule, _ in true if re.search(rf"\b(error|warning) {rule}\b", line)]
    before = min(found) if found else len(text)
    assert before <= SCREEN, "\n".join(text[:before])
    assert "training-5.1.0" in "\n".join(text[:SCREEN])
    assert os.linesep.join(text).count("--ruleset training-5.1.0") >= 1
    assert report["summary"]["error"] >= own["summary"]["error"]  # nothing is dropped, only folded


def test_no_objection_is_filed_under_a_guessed_round(cli, v60_copy):
    """`--format objection` files findings against a submitter: not those of a round guessed against
    the logs' dates (exit 2, naming the round they fit); named, the objection is written."""
    guessed = cli("check", str(v60_copy), "--format", "objection", "--no-cache")
    assert guessed.code == 2 and "--ruleset training-6.0.0" in guessed.err and not guessed.out
    named = cli("check", str(v60_copy), "--format", "objection", "--ruleset", "training-6.1.0", "--no-cache")
    assert named.code == 1 and "named by --ruleset" in named.out


def test_score_says_the_round_once_and_what_the_dates_fit(cli, v60_copy, tmp_path):
    """`score` names the round and what named it in one note; where nothing named it and the dates
    fit another round, it says so before the table (its validity marks come from the round's rules)."""
    notes = [line for line in cli("score", str(v60_copy), "--no-cache").err.splitlines() if line.startswith("note:")]
    assert notes[0] == "note: ruleset training-6.1.0, not named: the newest round allowing every benchmark"
    assert notes[1].startswith("note: the logs were written in training-6.0.0's window, not training-6.1.0's")
    assert "--ruleset training-6.0.0" in notes[1]
    named = tmp_path / "training_results_v6.0"
    shutil.copytree(v60_copy, named)
    notes = [line for line in cli("score", str(named), "--no-cache").err.splitlines() if line.startswith("note:")]
    assert notes == ["note: ruleset training-6.0.0, named by the folder 'training_results_v6.0'"]
