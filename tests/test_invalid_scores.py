"""A result whose folder has an error is invalid: scored as the official summarizer scores it, and
marked so in every output (`score` text, JSON and CSV; `check --score`; the Markdown summary of the
Action; `export`; the HTML report), from one fact, `BenchmarkScore.invalid`, set by
`scores.with_validity` from the check's findings."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
from pathlib import Path

import pytest

from conftest import published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import review, scored
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit.model import Finding, Severity
from mlperf_audit.scores import folder_key, with_validity

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "packages"
ROUNDS = published_rounds()
FOLDER = "Fixture/results/fx_8xh100/ssd"


@pytest.fixture
def too_few_runs(tmp_path: Path) -> Path:
    """The shape of Clemson's v4.1 llama2_70b_lora (PKG012 on a published round): a folder with too
    few runs, which the official summarizer scores all the same."""
    root = tmp_path / "round"
    shutil.copytree(FIXTURES / "broken" / "too-few-runs" / "Fixture", root / "Fixture")
    return root


def _unmarked(result: dict) -> dict:
    return {key: value for key, value in result.items() if key not in ("valid", "invalid_reason")}


def test_an_invalid_folder_is_marked_in_every_output_and_scored_the_same(cli, too_few_runs, tmp_path):
    root = str(too_few_runs)
    # score, JSON: the fact and its reason; every number as without the mark
    (result,) = json.loads(cli("score", root, "--format", "json", "--no-progress").out)["results"]
    assert result["valid"] is False and result["invalid_reason"] == "error PKG012 in the folder"
    config, (plain,) = scored(too_few_runs, Config(cache_dir=None), PluginHost())
    assert plain.invalid == ("PKG012",) and plain.score_minutes == result["score_minutes"]
    assert _unmarked(result) == _unmarked(dataclasses.replace(plain, invalid=()).to_dict())
    # score, text: the valid column and a line under the folder's runs
    text = cli("score", root, "--no-progress").out
    assert "valid" in text.splitlines()[0] and "no: PKG012" in text.splitlines()[2]
    assert "  invalid: error PKG012 in the folder (see its findings); scored all the same" in text
    # score, CSV: the summarizer's columns, then `invalid`: per system, the benchmark and its codes
    out = tmp_path / "s.csv"
    assert cli("score", root, "--format", "csv", "-o", str(out), "--no-progress").code == 0
    for table in (out, tmp_path / "s_detailed.csv"):
        (row,) = csv.DictReader(table.open(newline=""))
        assert list(row)[-1] == "invalid" and row["invalid"] == "ssd: PKG012"
    (row,) = csv.DictReader(out.open(newline=""))
    assert float(row["ssd"]) == result["score_minutes"]
    # check --score, JSON and the Markdown summary (what the Action writes to its job summary)
    checked = json.loads(cli("check", root, "--score", "--format", "json", "--no-cache").out)
    assert [(s["valid"], s["invalid_reason"]) for s in checked["scores"]] == [(False, "error PKG012 in the folder")]
    markdown = cli("check", root, "--score", "--format", "markdown", "--no-cache").out
    assert "| valid " in markdown and "| **no**: PKG012 " in markdown
    assert "1 benchmark result(s), 1 invalid (an error about the folder: scored all the same)" in markdown
    # export: the valid and invalid_reason columns beside the errors counted
    (exported,) = csv.DictReader(io.StringIO(cli("export", root, "--no-progress").out))
    assert (exported["valid"], exported["invalid_reason"], exported["errors"]) == (
        "False",
        "error PKG012 in the folder",
        "1",
    )
    assert float(exported["score_minutes"]) == result["score_minutes"]
    # the HTML report: in its data, which report.js shows beside the score
    page = tmp_path / "report.html"
    assert cli("report", root, "-o", str(page), "--no-progress").code in (0, 1)
    assert '"valid": false, "invalid_reason": "error PKG012 in the folder"' in page.read_text()


def test_a_valid_folder_is_marked_valid_everywhere(cli, tmp_path):
    root = str(FIXTURES / "broken" / "run-aborted")  # a failed run, tolerated: no error about the folder
    (result,) = json.loads(cli("score", root, "--format", "json", "--no-progress").out)["results"]
    assert result["valid"] is True and result["invalid_reason"] is None
    assert "no:" not in cli("score", root, "--no-progress").out.splitlines()[2]
    (exported,) = csv.DictReader(io.StringIO(cli("export", root, "--no-progress").out))
    assert (exported["valid"], exported["invalid_reason"]) == ("True", "")


def test_only_errors_not_waived_about_the_folder_make_it_invalid(too_few_runs):
    outcome = review(too_few_runs, Config(cache_dir=None), PluginHost(), score=True)
    (score,) = outcome.scores
    assert score.invalid == ("PKG012",)
    findings = outcome.report.findings
    waived = [dataclasses.replace(f, waived_by="accepted") if f.severity is Severity.ERROR else f for f in findings]
    assert with_validity([score], waived)[0].valid
    # a warning, an info, or an error about another folder or about no folder: still valid
    base = dict(name="x", message="m", submitter="Fixture", system="fx_8xh100")
    others = [
        Finding(rule="X001", severity=Severity.WARNING, benchmark="ssd", **base),
        Finding(rule="X002", severity=Severity.INFO, benchmark="ssd", **base),
        Finding(rule="X003", severity=Severity.ERROR, benchmark="bert", **base),
        Finding(rule="X004", severity=Severity.ERROR, benchmark=None, **base),
    ]
    assert with_validity([dataclasses.replace(score, invalid=())], others)[0].valid
    both = others + [Finding(rule="X000", severity=Severity.ERROR, benchmark="ssd", **base)] + list(findings)
    assert with_validity([score], both)[0].invalid == ("PKG012", "X000")
    assert with_validity([score], both)[0].invalid_reason == "errors PKG012, X000 in the folder"


@pytest.mark.skipif(not {"4.1", "5.1"} & set(ROUNDS), reason="neither v4.1 nor v5.1 is under $MLPERF_AUDIT_ROUNDS")
@pytest.mark.parametrize("round_name", ["4.1", "5.1"])
def test_the_invalid_results_of_a_published_round_are_its_folders_with_an_error(round_name):
    """Every result of the round is marked by the one rule: invalid exactly where an error is about
    its folder (as the published-rounds harness counts "folders with an error"), valid elsewhere;
    v4.1's Dell R760x2H100NVL-PCIe-94GB/ssd (RCP004) keeps the summarizer's 172.839 minutes."""
    if round_name not in ROUNDS:
        pytest.skip(f"v{round_name} is not under $MLPERF_AUDIT_ROUNDS")
    outcome = review(ROUNDS[round_name], Config(cache_dir=None), PluginHost(), jobs=2, score=True)
    with_error: dict[tuple, set[str]] = {}
    for f in outcome.report.findings:
        if f.severity is Severity.ERROR and not f.waived_by and f.benchmark:
            with_error.setdefault(folder_key(f.submitter, f.system, f.benchmark), set()).add(f.rule)
    marked = {folder_key(s.submitter, s.system, s.benchmark): set(s.invalid) for s in outcome.scores if not s.valid}
    assert marked == with_error and marked
    if round_name == "4.1":
        (dell,) = [s for s in outcome.scores if s.path.endswith("Dell/results/R760x2H100NVL-PCIe-94GB/ssd")]
        assert dell.invalid == ("RCP004",) and round(dell.score_minutes, 3) == 172.839
