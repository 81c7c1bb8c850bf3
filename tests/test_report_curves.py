"""The HTML report draws a convergence curve for every run of every benchmark of v5.1.

It once kept its own list of benchmarks measured in samples (llama2_70b_lora and stable_diffusion)
and so read `epoch_num` from llama31_8b, llama31_405b and flux1 logs, which NVIDIA's do not write:
no curve. The logs below have the shapes the published v5.1 logs have (the keys of their
evaluation records, the types of their values, the rank prefix some launchers write), as counted
over every `result_*.txt` of /work/rounds/v5.1, so that CI needs no published round:

    benchmark        eval_accuracy metadata         value   rank prefix
    dlrm_dcnv2       epoch_num (a float)            float   with and without
    flux1            samples_count                  float   with and without
    llama2_70b_lora  samples_count                  float   with and without
    llama31_405b     samples_count                  float   with and without
    llama31_8b       samples_count (NVIDIA),        float   with and without
                     epoch_num and samples_count (AMD)
    retinanet        epoch_num (an integer)         float   with and without
    rgat             epoch_num (a float)            float   with and without
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlperf_audit import reference, rulesets
from mlperf_audit.commands.report import curves
from mlperf_audit.model import BenchmarkFolder, BenchmarkResult
from mlperf_audit.reading.parser import parse_log
from report_browser import Page
from test_report import page_data

ROUND = "training-5.1.0"
#: Three evaluations per benchmark, as a real log of it writes them: (metadata, value). The figures
#: are those of the first evaluations of one published v5.1 log per benchmark.
EVALUATIONS: dict[str, list[tuple[dict[str, int | float], float]]] = {
    "dlrm_dcnv2": [
        ({"epoch_num": 0.04992372234935164}, 0.786396324634552),
        ({"epoch_num": 0.09988558352402746}, 0.7911930084228516),
        ({"epoch_num": 0.14984744469870329}, 0.794052004814148),
    ],
    "flux1": [
        ({"samples_count": 262656}, 0.8334603594918536),
        ({"samples_count": 525312}, 0.7005419608874198),
        ({"samples_count": 787968}, 0.6736945779914529),
    ],
    "llama2_70b_lora": [
        ({"samples_count": 1536}, 0.9382773041725159),
        ({"samples_count": 1920}, 0.9339746236801147),
        ({"samples_count": 2304}, 0.9312129616737366),
    ],
    "llama31_405b": [
        ({"samples_count": 288000}, 5.726355075836182),
        ({"samples_count": 307200}, 5.653839588165283),
        ({"samples_count": 326400}, 5.58192777633667),
    ],
    "llama31_8b": [
        ({"samples_count": 12256}, 5.652895927429199),
        ({"samples_count": 24544}, 4.426892280578613),
        ({"samples_count": 36832}, 4.063647747039795),
    ],
    "retinanet": [
        ({"epoch_num": 1}, 0.22832215450786145),
        ({"epoch_num": 2}, 0.2938313731259645),
        ({"epoch_num": 3}, 0.32784553259652705),
    ],
    "rgat": [
        ({"epoch_num": 0.05}, 0.6673338413238525),
        ({"epoch_num": 0.1}, 0.6834695935249329),
        ({"epoch_num": 0.15}, 0.6927468776702881),
    ],
}
#: AMD's llama31_8b logs write the sample count in epoch_num too.
AMD_LLAMA31_8B = [({"epoch_num": m["samples_count"], **m}, v) for m, v in EVALUATIONS["llama31_8b"]]
START_MS = 1_759_845_328_511


def record(key: str, value: object, time_ms: int, metadata: dict[str, object] | None = None) -> str:
    event = {
        "namespace": "",
        "time_ms": time_ms,
        "event_type": "POINT_IN_TIME",
        "key": key,
        "value": value,
        "metadata": {"file": "/workspace/code/src/callbacks.py", "lineno": 128, **(metadata or {})},
    }
    return ":::MLLOG " + json.dumps(event)


def log_text(benchmark: str, evaluations: list[tuple[dict[str, int | float], float]], rank_prefix: bool) -> str:
    """A v5.1 result file: the submission records, a run of three evaluations, a successful stop."""
    lines = [
        record("submission_benchmark", benchmark, START_MS),
        record("submission_org", "Fixture", START_MS),
        record("submission_division", "closed", START_MS),
        record("submission_status", "onprem", START_MS),
        record("submission_platform", "1xFixture", START_MS),
        record("global_batch_size", 16, START_MS),
        record("init_start", None, START_MS),
        record("init_stop", None, START_MS + 60_000),
        record("run_start", None, START_MS + 60_000),
    ]
    time_ms = START_MS + 60_000
    for metadata, value in evaluations:
        time_ms += 120_000
        lines.append(record("eval_start", None, time_ms, metadata))
        lines.append(record("eval_accuracy", value, time_ms + 1_000, metadata))
        lines.append(record("eval_stop", None, time_ms + 1_000, metadata))
    lines.append(record("run_stop", None, time_ms + 2_000, {**evaluations[-1][0], "status": "success"}))
    prefix = "0: " if rank_prefix else ""
    return "".join(f"{prefix}{line}\n" for line in lines)


def runs_of(benchmark: str) -> list[str]:
    """The logs of one benchmark folder: one without and one with the rank prefix, and for
    llama31_8b AMD's shape besides NVIDIA's."""
    logs = [log_text(benchmark, EVALUATIONS[benchmark], rank_prefix) for rank_prefix in (False, True)]
    if benchmark == "llama31_8b":
        logs.append(log_text(benchmark, AMD_LLAMA31_8B, False))
    return logs


def write_package(root: Path) -> dict[str, int]:
    """A v5.1 package with a folder per benchmark; the number of runs of each folder, by path."""
    runs: dict[str, int] = {}
    for benchmark in EVALUATIONS:
        folder = root / "Fixture" / "results" / "fixture_8x" / benchmark
        folder.mkdir(parents=True)
        for index, text in enumerate(runs_of(benchmark)):
            (folder / f"result_{index}.txt").write_text(text)
        runs[f"Fixture/results/fixture_8x/{benchmark}"] = len(runs_of(benchmark))
    return runs


def test_the_logs_cover_every_benchmark_of_v5_1() -> None:
    assert set(EVALUATIONS) == set(rulesets.get(ROUND).benchmarks)


@pytest.mark.parametrize("benchmark", sorted(EVALUATIONS))
def test_every_run_of_each_v5_1_benchmark_gives_a_curve(benchmark: str, tmp_path: Path) -> None:
    logs = runs_of(benchmark)
    parsed = []
    for index, text in enumerate(logs):
        path = tmp_path / f"result_{index}.txt"
        path.write_text(text)
        parsed.append(parse_log(path, f"{benchmark}/result_{index}.txt", benchmark=benchmark))
    folder = BenchmarkFolder(None, None, benchmark, benchmark, ())
    drawn = curves(BenchmarkResult(folder, tuple(parsed)))
    assert [c.name for c in drawn] == [f"result_{i}" for i in range(len(logs))]
    unit = reference.benchmarks.facts(benchmark).convergence_key
    expected = sorted((float(m[unit]), v) for m, v in EVALUATIONS[benchmark])
    assert all(c.points == expected for c in drawn)


def test_the_report_draws_a_curve_for_every_run(cli, tmp_path: Path) -> None:
    runs = write_package(tmp_path / "v5.1")
    page = tmp_path / "report.html"
    cli("report", str(tmp_path / "v5.1"), "--ruleset", ROUND, "-o", str(page))
    folders = page_data(page)["folders"]
    assert sorted(f["path"] for f in folders) == sorted(runs)
    with Page(page, tmp_path / "profile") as browser:
        assert browser.errors() == []
        for folder in folders:
            assert [c["run"] for c in folder["curves"]] == [f"result_{i}" for i in range(runs[folder["path"]])]
            # drawn: one path per run in the folder's convergence chart, titled with its run
            titles = browser.evaluate(
                f"[...document.querySelectorAll('#{folder['id']} g.run-curve path')].map(p => p.textContent)"
            )
            # (a run not counted says so after its name)
            assert sorted(t.split(" ")[0] for t in titles) == [f"result_{i}" for i in range(runs[folder["path"]])]
            unit = reference.benchmarks.facts(folder["benchmark"]).convergence_key
            axis = browser.evaluate(f"document.querySelector('#{folder['id']} svg[aria-label]').textContent")
            assert f"({unit})" in axis or f"{unit} →" in axis, folder["path"]
