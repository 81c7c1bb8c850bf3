"""Checking in worker processes is correct by construction: only indices go to a worker and only
plain results come back, so any package (power folders included) checks and scores the same with
--jobs 2 as with --jobs 1, and two processes really share the work."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path

import pytest

from conftest import FIXTURES, POWER_SAMPLE, SAMPLE
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check, score
from mlperf_audit.reading.discovery import discover


def _packages() -> list[Path]:
    """Every fixture package (each case of the case families) and the real samples that are here."""
    packages = [FIXTURES / "clean", FIXTURES / "demo"]
    for family in ("broken", "forged", "irreproducible"):
        packages += sorted(p for p in (FIXTURES / family).iterdir() if p.is_dir())
    return packages + [p for p in (SAMPLE, POWER_SAMPLE) if p.is_dir()]


def _comparable(report) -> list[dict]:
    return [finding.to_dict() for finding in report.findings]


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_two_processes_check_and_score_like_one(package: Path, host) -> None:
    config = Config(cache_dir=None)
    one = check(package, config, host, jobs=1)
    two = check(package, config, host, jobs=2)
    assert _comparable(two) == _comparable(one)
    assert one.processes == 1
    folders = len(discover(package).benchmark_folders)
    if folders >= 2:
        assert two.processes == 2, f"{folders} benchmark folders but {two.processes} process(es) did the work"
    assert [s.to_dict() for s in score(package, config, host, jobs=2)] == [
        s.to_dict() for s in score(package, config, host, jobs=1)
    ]


def test_power_folders_are_plain_data(power_sample) -> None:
    tree = discover(power_sample)
    folders = [folder for folder in tree.benchmark_folders if folder.power is not None]
    assert folders, "the power sample has power folders"
    for folder in folders:
        assert pickle.loads(pickle.dumps(folder)) == folder


def test_the_fallback_to_one_process_is_said(monkeypatch, host) -> None:
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    report = check(FIXTURES / "clean", Config(cache_dir=None), host, jobs=2)
    assert report.processes == 1
    assert any("cannot fork" in note for note in report.config.notes)
    assert not any(
        "cannot fork" in note for note in check(FIXTURES / "clean", Config(cache_dir=None), host, jobs=1).config.notes
    )
