"""Scores: equal to the official summarizer's on the real sample, and right on every edge."""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import official_columns, official_output
from mlperf_audit.config import Config
from mlperf_audit.engine.api import score
from mlperf_audit.reference import rulesets
from mlperf_audit_rules.support.work import time_to_train

OFFICIAL = Path(__file__).parent / "data" / "official-summarizer-v4.1-sample"
SUBMITTERS = ["Dell", "Google", "NVIDIA", "tinycorp"]


def official_rows() -> list[dict[str, str]]:
    return [row for s in SUBMITTERS for row in csv.DictReader(official_output(OFFICIAL, f"{s}_detailed.csv").open())]


@pytest.mark.sample
def test_every_sample_score_equals_the_official_one(sample, host):
    results = score(sample, Config(), host)
    assert len(results) == 15
    rows = official_rows()
    for result in results:
        (row,) = [
            r
            for r in rows
            if r["submitter"] == result.submitter and r["details_url"].endswith(f"/systems/{result.system}.json")
        ]
        official = float(row[f"{result.benchmark}:time_to_train"])
        assert abs(result.score_minutes - official) <= 1e-9 * official, result.path
        assert result.scaling_factor == float(row[f"{result.benchmark}:rcp_scaling_factor"])
        assert result.rcp_status == row[f"{result.benchmark}:RCP"]
        assert result.gbs == float(row[f"{result.benchmark}:GBS"])
        assert result.samples_to_converge == float(row[f"{result.benchmark}:samples_to_converge"])


@pytest.mark.sample
@pytest.mark.parametrize("submitter", SUBMITTERS)
def test_csv_tables_are_the_official_ones_byte_for_byte(sample, cli, tmp_path, submitter):
    """The summarizer's columns byte for byte, and one column last: no result of the sample is invalid."""
    out = tmp_path / "scores.csv"
    assert cli("score", str(sample / submitter), "--format", "csv", "-o", str(out)).code == 0
    assert official_columns(out.read_text()) == official_output(OFFICIAL, f"{submitter}.csv").read_text()
    assert (
        official_columns((tmp_path / "scores_detailed.csv").read_text())
        == official_output(OFFICIAL, f"{submitter}_detailed.csv").read_text()
    )


@pytest.mark.sample
def test_one_failed_real_run_counts_as_the_slowest(sample, host):
    (green,) = score(sample / "tinycorp" / "results" / "tinybox_green", Config(), host)
    times = sorted(r.minutes for r in green.runs if r.counted)
    assert len(times) == 9 and green.score_minutes == sum(times[1:]) / 8  # the failed run fills the top slot
    assert "result_2.txt counted as the slowest" in green.note and "result_2.txt" in green.dropped


def run_times(folder: Path) -> list[float]:
    from mlperf_audit.reading.parser import parse_log

    return [time_to_train(parse_log(p, p.name)) for p in sorted(folder.glob("result_*.txt"))]


def test_gpt3_score_is_the_median_of_three(fixtures, host):
    folder = fixtures / "clean" / "Fixture" / "results" / "fx_64xh100" / "gpt3"
    (result,) = score(folder, Config(), host)
    assert result.score_minutes == statistics.median(run_times(folder))
    assert len(result.dropped) == 2


def test_fewer_runs_than_required(fixtures, host):
    folder = fixtures / "broken" / "too-few-runs" / "Fixture" / "results" / "fx_8xh100" / "ssd"
    (result,) = score(folder, Config(), host)
    times = sorted(run_times(folder))
    assert result.score_minutes == (times[1] + times[2]) / 2  # 4 runs: the middle two, as the summarizer
    assert "4 of 5 required runs" in result.note
    (partial,) = score(folder, Config(partial=True), host)
    assert "(--partial: provisional)" in partial.note


def test_two_failed_runs_have_no_score(fixtures, host):
    (result,) = score(fixtures / "broken" / "two-runs-without-run-stop", Config(), host)
    assert result.score_minutes is None
    assert result.note.startswith("no score: 2 runs failed, olympic scoring tolerates 1")


def test_scaling_json_absent_present_and_stale(sample, tmp_path, host):
    source = sample / "Dell"
    tree = tmp_path / "Dell"
    shutil.copytree(source, tree)
    folder = tree / "results" / "XE9680x8H100-SXM-80GB" / "llama2_70b_lora"
    with_file = {r.benchmark: r for r in score(tree, Config(), host)}["llama2_70b_lora"]
    (folder / "scaling.json").unlink()
    without = {r.benchmark: r for r in score(tree, Config(), host)}["llama2_70b_lora"]
    assert with_file.score_minutes == without.score_minutes  # recomputed in memory, not read
    assert without.scaling_factor == 1.0188034188034187
    (folder / "scaling.json").write_text('{"scaling_factor": 1.5}')
    stale = {r.benchmark: r for r in score(tree, Config(), host)}["llama2_70b_lora"]
    assert stale.score_minutes == without.score_minutes
    assert "scaling.json says 1.5; the recomputed factor 1.0188034188034187 is used" in stale.note


def official_scores(tree: Path, submitter: str, tmp_path: Path, ruleset: str = "4.1.0") -> dict[str, str]:
    """The summarizer's detailed row of the submitter (its rows merged when it has several systems)."""
    for module, extra in (("package_checker", []), ("result_summarizer", ["--csv", str(tmp_path / "out.csv")])):
        subprocess.run(
            [sys.executable, "-m", f"mlperf_logging.{module}", submitter, "training", ruleset, *extra],
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
    row: dict[str, str] = {}
    for system_row in csv.DictReader((tmp_path / "out_detailed.csv").open()):
        row.update({key: value for key, value in system_row.items() if value not in ("", None) or key not in row})
    return row


@pytest.mark.parametrize("case", ["missing-run-stop", "too-few-runs", "run-aborted"])
def test_edge_scores_match_the_official_summarizer_live(fixtures, tmp_path, host, case):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "broken" / case, tree)
    row = official_scores(tree, "Fixture", tmp_path)
    (result,) = score(fixtures / "broken" / case, Config(), host)
    if case == "run-aborted":
        # the official summarizer counts the aborted run's time; the rules count it as failed
        assert float(row["ssd:time_to_train"]) != result.score_minutes
        assert "run_stop status 'aborted', the official summarizer counts its time" in result.note
    else:
        assert result.score_minutes == float(row["ssd:time_to_train"])


def test_clean_package_scores_match_the_official_summarizer_live(fixtures, tmp_path, host):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "clean", tree)
    row = official_scores(tree, "Fixture", tmp_path)
    for result in score(fixtures / "clean", Config(), host):
        assert result.score_minutes == float(row[f"{result.benchmark}:time_to_train"]), result.benchmark


@pytest.mark.parametrize("ruleset", ["6.0.0", "6.1.0"])
def test_six_package_scores_match_the_official_summarizer_live(fixtures, tmp_path, host, ruleset):
    """The 6.x rounds, which no published snapshot holds yet: their fixture packages, scored by both."""
    package = fixtures / f"training_results_v{ruleset.rsplit('.', 1)[0]}"
    tree = tmp_path / "tree"
    shutil.copytree(package, tree)
    row = official_scores(tree, "Fixture", tmp_path, ruleset)
    results = score(package, Config(), host)
    assert sorted(r.benchmark for r in results) == sorted(rulesets.get(f"training-{ruleset}").benchmarks)
    for result in results:
        assert result.score_minutes == float(row[f"{result.benchmark}:time_to_train"]), result.benchmark


def test_score_json_contract(cli, fixtures):
    document = json.loads(cli("score", str(fixtures / "clean"), "--format", "json").out)
    assert document["schema_version"] == 1 and document["ruleset"] == "training-4.1.0"
    first = document["results"][0]
    assert set(first) >= {
        "submitter",
        "system",
        "system_name",
        "benchmark",
        "division",
        "availability",
        "accelerator",
        "accelerators",
        "runs",
        "score_minutes",
        "rcp_factor",
        "scaling_factor",
        "note",
    }
    assert set(first["runs"][0]) >= {"file", "minutes", "status"}


@pytest.mark.sample
def test_compare_two_systems_of_the_sample(cli, sample):
    result = cli("compare", str(sample / "Google"), str(sample / "NVIDIA"), "--format", "json")
    rows = {row["benchmark"]: row for row in json.loads(result.out)["benchmarks"]}
    gpt3 = rows["gpt3"]
    a, b = gpt3["a"]["score_minutes"], gpt3["b"]["score_minutes"]
    assert (gpt3["a"]["accelerators"], gpt3["b"]["accelerators"]) == (512, 256)
    # by hand: 102.0795 / 96.6645 = 1.0560; accelerator-minutes ratio x 512/256 = 2.1120
    assert gpt3["speedup"] == pytest.approx(102.07948333333334 / 96.66448333333334) == pytest.approx(a / b)
    assert gpt3["speedup"] == pytest.approx(1.0560, abs=1e-4)
    assert gpt3["accelerator_minutes_ratio"] == pytest.approx(2.1120, abs=1e-4)
    assert rows["bert"]["a"] is None and rows["bert"]["speedup"] is None  # Google has no bert
    text = cli("compare", str(sample / "Dell"), str(sample / "NVIDIA")).out
    assert "speedup (A/B)" in text and "bert" in text
