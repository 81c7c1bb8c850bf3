"""`mlperf-audit export`: every result of one or more PATHs as one table, against `score` and `check`
of the same trees, the columns its documentation lists, and its exit codes."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mlperf_audit.cli import build_parser
from mlperf_audit.commands.export import Export
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit.formats.export import RESULT_COLUMNS, RUN_COLUMNS, round_of
from test_plugins import RulesPlugin, _Rule

REPO = Path(__file__).resolve().parent.parent
SEVERITIES = {"error": "errors", "warning": "warnings", "info": "infos"}


def _json(cli: Any, *argv: str) -> dict[str, Any]:
    result = cli(*argv, "--format", "json", "--no-progress")
    assert result.code in (0, 1), result.err
    document: dict[str, Any] = json.loads(result.out)
    return document


def _documented(heading: str, after: str | None = None) -> list[str]:
    """The columns of the first table under `heading` of docs/export.md (after the line `after`)."""
    page = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
    section = page.split(heading, 1)[1]
    if after is not None:
        section = section.split(after, 1)[1]
    table = re.search(r"\| column \|.*?\n((?:\|.*\n)+)", section)
    assert table, f"no table of columns under {heading!r}"
    return re.findall(r"^\| `([^`]+)` \|", table.group(1), re.MULTILINE)[0:]


def _header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)))


def test_the_documentation_lists_exactly_the_columns_written(cli, fixtures):
    """docs/export.md's two tables are the header rows `export` writes, in order."""
    tree = str(fixtures / "training_results_v6.0")
    results = cli("export", tree, "--no-progress", "--no-cache")
    runs = cli("export", tree, "--runs", "--no-progress", "--no-cache")
    assert results.code == runs.code == 0, results.err + runs.err
    assert _header(results.out) == _documented("## Columns") == RESULT_COLUMNS
    own = _documented("## Columns", after="With `--runs`")
    assert _header(runs.out) == RESULT_COLUMNS + own == RUN_COLUMNS


def test_round_of_names_a_round_as_the_results_repositories_do():
    assert round_of("training-4.1.0") == "v4.1"
    assert round_of("training-1.0.0") == "v1.0"
    assert round_of("my-plugin-round") == "my-plugin-round"  # not a numbered ruleset: as it is


@pytest.mark.sample
def test_rows_of_the_real_sample_hold_the_scores_and_counts_of_score_and_check(cli, sample):
    """A row per result of the v4.1 sample, each with the score `score` gives it and the findings
    `check` reports about its folder, counted by severity."""
    exported = _json(cli, "export", str(sample))
    scores = _json(cli, "score", str(sample))["results"]
    report = _json(cli, "check", str(sample))
    rows = exported["rows"]
    assert exported["table"] == "results" and exported["columns"] == RESULT_COLUMNS
    assert exported["paths"] == [
        {
            "path": str(sample),
            "ruleset": "training-4.1.0",
            "round": "v4.1",
            "ruleset_named_by": "named by the folder 'mlperf-training-v4.1-sample'",
        }
    ]
    assert len(rows) == len(scores) == 15
    by_folder = Counter(
        (f["submitter"], f["system"], f["benchmark"], f["severity"]) for f in report["findings"] if f["benchmark"]
    )
    for row, score in zip(rows, scores):
        assert row["path"] == f"{score['submitter']}/results/{score['system']}/{score['benchmark']}"
        assert row["round"] == "v4.1" and row["ruleset"] == "training-4.1.0"
        assert row["benchmark"] == score["benchmark"] and row["division"] == score["division"]
        assert row["system"] == score["system_name"] and row["accelerator_model_name"] == score["accelerator"]
        assert row["score_minutes"] == row["time_to_train"] == score["score_minutes"] is not None
        assert row["energy_joules"] == score["energy_joules"]
        assert row["rcp_factor"] == score["rcp_factor"] and row["rcp_scaling_factor"] == score["scaling_factor"]
        assert row["RCP"] == score["rcp_status"] and row["GBS"] == score["gbs"]
        assert row["accelerators"] == row["accelerators_count"] == score["accelerators"]
        assert row["accelerator_minutes"] == pytest.approx(score["score_minutes"] * score["accelerators"])
        assert row["runs"] == len(score["runs"]) and row["runs_required"] == score["required_runs"]
        for severity, column in SEVERITIES.items():
            key = (score["submitter"], score["system"], score["benchmark"], severity)
            assert row[column] == by_folder[key], (row["path"], column)
    # every finding about a benchmark folder is counted in exactly one row
    for severity, column in SEVERITIES.items():
        about_folders = sum(n for key, n in by_folder.items() if key[3] == severity)
        assert sum(row[column] for row in rows) == about_folders
    # the sample's 7 warnings are all about results; some infos are about a submitter (REP001), in no row
    assert sum(row["warnings"] for row in rows) == report["summary"]["warning"] == 7
    assert sum(row["infos"] for row in rows) < report["summary"]["info"]
    assert {row["accelerator"] for row in rows} >= {"H100-SXM5-80GB"}


@pytest.mark.sample
def test_two_paths_of_different_rounds_make_one_table(cli, sample, power_sample, tmp_path):
    out = tmp_path / "both.csv"
    result = cli("export", str(sample), str(power_sample), "-o", str(out), "--no-progress")
    assert result.code == 0, result.err
    assert result.out == ""
    assert result.err.count("note: ruleset") == 2  # each PATH's round, said as check says it
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    rounds = Counter(row["round"] for row in rows)
    power_scores = _json(cli, "score", str(power_sample))["results"]
    assert rounds == {"v4.1": 15, "v5.0": len(power_scores)}
    energies = [row["energy_joules"] for row in rows if row["round"] == "v5.0"]
    assert energies and all(float(e) > 0 for e in energies)
    assert [float(e) for e in energies] == [s["energy_joules"] for s in power_scores]
    assert all(row["energy_joules"] == "" for row in rows if row["round"] == "v4.1")


@pytest.mark.sample
def test_runs_gives_a_row_per_result_file(cli, sample):
    exported = _json(cli, "export", str(sample), "--runs")
    scores = _json(cli, "score", str(sample))["results"]
    report = _json(cli, "check", str(sample))
    runs = [(score, run) for score in scores for run in score["runs"]]
    rows = exported["rows"]
    assert exported["table"] == "runs" and exported["columns"] == RUN_COLUMNS
    assert len(rows) == len(runs) > 15
    by_file = Counter((f["path"], f["severity"]) for f in report["findings"])
    for row, (score, run) in zip(rows, runs):
        assert row["run_file"] == run["file"] and row["run_minutes"] == run["minutes"]
        assert row["run_units"] == run["units"] and row["run_status"] == run["status"]
        assert row["run_dropped"] == (run["file"].rsplit("/", 1)[-1] in score["dropped"])
        assert row["score_minutes"] == score["score_minutes"]  # the result's columns beside the run's
        for severity, column in SEVERITIES.items():
            assert row[f"run_{column}"] == by_file[(run["file"], severity)]
    dropped = Counter(row["path"] for row in rows if row["run_dropped"])
    folder = "{submitter}/results/{system}/{benchmark}"
    assert dropped == {folder.format(**score): len(score["dropped"]) for score in scores if score["dropped"]}


@pytest.mark.sample
def test_summary_json_holds_the_summarizers_strong_scaling_table(cli, sample, tmp_path):
    """The records `--format summary-json` writes are the rows of the summarizer's strong-scaling
    table that `score --format csv` writes byte-identical to the official one (tests/test_scores.py)."""
    result = cli("export", str(sample), "--format", "summary-json", "--no-progress")
    assert result.code == 0, result.err
    records = json.loads(result.out)
    assert cli("score", str(sample), "--format", "csv", "-o", str(tmp_path / "s.csv")).code == 0
    table = list(csv.DictReader((tmp_path / "s.csv").open(encoding="utf-8", newline="")))
    assert len(records) == len(table) > 1
    for record, row in zip(records, table):
        # the summarizer's own shape: without the column the CSV adds last (`invalid`)
        assert list(record) + ["invalid"] == list(row) and row.pop("invalid") == ""
        for column, value in row.items():
            got = record[column]
            if got is None:
                assert value == "", column
            elif isinstance(got, (int, float)):
                assert float(value) == got, column
            else:
                assert value == got, column


def test_exit_codes(cli, fixtures, tmp_path):
    tree = fixtures / "training_results_v6.0"
    assert cli("export", str(tmp_path / "missing"), "--no-progress").code == 2
    assert cli("export", str(tree), "--format", "sarif", "--no-progress").code == 2  # renders no table
    inside = cli("export", str(tree), "-o", str(tree / "table.csv"), "--no-progress")
    assert inside.code == 2 and not (tree / "table.csv").exists()
    # findings, even errors, do not fail an export: the table was written
    broken = fixtures / "broken" / "too-few-runs"
    assert _json(cli, "check", str(broken))["summary"]["error"] > 0
    result = cli("export", str(broken), "--no-progress", "--no-cache")
    assert result.code == 0, result.err
    (row,) = csv.DictReader(io.StringIO(result.out))
    assert int(row["errors"]) > 0


def test_a_second_path_is_refused_before_the_first_is_read(cli, fixtures, tmp_path):
    """Every PATH must exist and the output lie outside each before minutes of checking start."""
    result = cli("export", str(fixtures / "training_results_v6.0"), str(tmp_path / "missing"), "--no-progress")
    assert result.code == 2 and "missing" in result.err and result.out == ""


def test_a_rule_that_crashes_exits_2_with_the_table_written(fixtures, tmp_path, capsys):
    """A crash is no verdict: the exit code says the counts are incomplete (CHK001 among them)."""

    class Crashing(_Rule):
        """Crashes.

        How to fix: nothing.
        """

        code = "TST002"
        name = "crashing"

        def check(self, run: Any, context: object) -> Any:
            raise ZeroDivisionError("boom")

    host = PluginHost(plugins=[("adhoc", RulesPlugin(Crashing))])
    out = tmp_path / "table.csv"
    tree = fixtures / "training_results_v6.0"
    args = build_parser(host).parse_args(["export", str(tree), "-o", str(out), "--no-cache", "--jobs", "1"])
    assert Export().run(args, host) == 2
    assert "a rule crashed while checking" in capsys.readouterr().err
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert rows and all(int(row["errors"]) > 0 for row in rows)  # each folder's CHK001, counted
