"""Writes only where asked, never into a checked PATH, links followed before deciding (issue 13,
attack 5, for `check`, `score` and `compare`; `audit` and `report`: test_output.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


@pytest.fixture
def package(tmp_path: Path, fixtures: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(fixtures / "demo", root)
    return root


def system_description(package: Path) -> Path:
    return next(package.rglob("systems/*.json"))


def refused(result, what: str = "inside the checked PATH") -> bool:
    return result.code == 2 and what in result.err and "Traceback" not in result.err


@pytest.mark.parametrize("option", ["-o", "--write-baseline", "--report=json:"])
def test_check_never_writes_through_a_link_into_path(cli, package, tmp_path, option):
    victim = system_description(package)
    before = victim.read_bytes()
    link = tmp_path / "report.out"
    link.symlink_to(victim)
    argv = [f"{option}{link}"] if option.endswith(":") else [option, str(link)]
    assert refused(cli("check", str(package), *argv))
    assert victim.read_bytes() == before


def test_score_checks_both_files_of_a_csv_pair(cli, package, tmp_path):
    victim = system_description(package)
    before = victim.read_bytes()
    (tmp_path / "scores_detailed.csv").symlink_to(victim)
    result = cli("score", str(package), "--format", "csv", "-o", str(tmp_path / "scores.csv"))
    assert refused(result)
    assert victim.read_bytes() == before
    assert not (tmp_path / "scores.csv").exists()  # refused before anything was written


def test_compare_never_writes_into_either_side(cli, package, tmp_path, fixtures):
    other = tmp_path / "other"
    shutil.copytree(fixtures / "demo", other)
    assert refused(cli("compare", str(package), str(other), "-o", str(other / "comparison.txt")))
    assert not (other / "comparison.txt").exists()


def test_check_of_one_log_never_writes_beside_it(cli, package):
    log = next(package.rglob("result_*.txt"))
    assert refused(cli("check", str(log), "-o", str(log.parent / "report.txt")))
    assert not (log.parent / "report.txt").exists()


def test_output_into_a_missing_folder_or_onto_a_folder_is_a_usage_error(cli, package, tmp_path):
    assert refused(cli("check", str(package), "-o", str(tmp_path / "missing" / "r.txt")), "does not exist")
    assert refused(cli("check", str(package), "-o", str(tmp_path)), "is a folder")
    assert refused(cli("score", str(package), "-o", str(tmp_path)), "is a folder")


def test_output_outside_path_is_written(cli, package, tmp_path):
    result = cli("check", str(package), "-o", str(tmp_path / "report.txt"))
    assert result.code == 1 and "error(s)" in (tmp_path / "report.txt").read_text()


def test_a_baseline_written_from_escaped_findings_accepts_them(cli, package, tmp_path):
    """The report shows data escaped; the baseline it writes must still match the findings."""
    folder = next(package.rglob("result_*.txt")).parent
    (folder / "odd \x1b[2J name.txt").write_text("x\n")
    baseline = tmp_path / "baseline.json"
    first = cli("check", str(package), "--write-baseline", str(baseline), "--format", "json")
    assert any("\\x1b" in f["message"] for f in json.loads(first.out)["findings"])
    again = cli("check", str(package), "--baseline", str(baseline), "--format", "json")
    assert again.code == 0 and [f["rule"] for f in json.loads(again.out)["findings"]] == ["CHK004"]


def test_an_output_hard_linked_to_a_file_of_path_is_replaced_not_written_through(cli, package, tmp_path):
    victim = system_description(package)
    before = victim.read_bytes()
    linked = tmp_path / "notes.txt"
    linked.hardlink_to(victim)
    result = cli("check", str(package), "-o", str(linked))
    assert result.code == 1 and "error(s)" in linked.read_text()
    assert victim.read_bytes() == before
