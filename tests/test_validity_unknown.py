"""A result's validity under a round nothing named (issue 34): when the logs' dates fit another
round than the one taken, the errors of the round's rules follow from that choice (PKG024), and the
result is neither valid nor invalid but of unknown validity, in every output that marks it. Named,
the same errors make it invalid. On a copy of the real v6.0 sample (its runs logged in 6.0's window)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DATA, shared_data


@pytest.fixture
def v60_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout" / "results-copy"
    shutil.copytree(shared_data(SHARED_DATA / "mlperf-training-v6.0-sample", "v6.0 sample"), copy)
    return copy


def test_errors_of_a_guessed_round_leave_validity_unknown(cli, v60_copy, tmp_path):
    results = json.loads(cli("score", str(v60_copy), "--format", "json", "--no-cache").out)["results"]
    unknown = [r for r in results if r["valid"] is None]
    assert unknown and not [r for r in results if r["valid"] is False]
    assert all("nothing named" in r["invalid_reason"] for r in unknown)
    text = cli("score", str(v60_copy), "--no-cache").out
    assert "  validity unknown: errors " in text and "unknown: CMP" in text, text
    table = tmp_path / "scores.csv"
    cli("score", str(v60_copy), "--format", "csv", "-o", str(table), "--no-cache")
    cells = [row["invalid"] for row in csv.DictReader(table.open(newline=""))]
    assert any(cell.startswith(f"{r['benchmark']}: validity unknown, ") for r in unknown for cell in cells), cells
    # named, the same errors are the round's verdict: invalid
    named = json.loads(cli("score", str(v60_copy), "--format", "json", "--no-cache", "--ruleset", "training-6.1.0").out)
    assert {r["valid"] for r in named["results"] if r["invalid_reason"]} == {False}


def test_export_and_the_job_summary_say_unknown(cli, v60_copy):
    rows = json.loads(cli("export", str(v60_copy), "--format", "json", "--no-cache").out)["rows"]
    assert [row for row in rows if row["valid"] is None]
    summary = cli("check", str(v60_copy), "--score", "--format", "markdown", "--no-cache").out
    assert "of unknown validity" in summary and "**unknown**" in summary and "**no**" not in summary
