"""How a finding names the runs it is about (support/affected.py): every one, folded when all are,
and never more than a line's worth, however many result files a hostile folder holds."""

from __future__ import annotations

from types import SimpleNamespace

from mlperf_audit_rules.support.affected import NAMED, which_runs


def _runs(count: int) -> list:
    return [SimpleNamespace(name=f"result_{i}.txt") for i in range(count)]


def test_all_runs_are_folded_some_are_named():
    runs = _runs(10)
    assert which_runs(runs, runs) == "all 10 runs"
    assert which_runs([runs[3], runs[7]], runs) == "result_3.txt, result_7.txt (2 of 10 runs)"
    assert which_runs(runs[:1], runs[:1]) == "result_0.txt"


def test_thousands_of_affected_runs_stay_one_line():
    runs = _runs(5000)
    text = which_runs(runs[:4999], runs)
    assert text.endswith(f"and {4999 - NAMED} more (4999 of 5000 runs)")
    assert text.count("result_") == NAMED and len(text) < 600
