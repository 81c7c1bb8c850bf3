"""Logs that contradict themselves, planted in copies of real v4.1 runs: a run_stop marked aborted after
the evaluations reached the target (FOR011; EVT007 alone called them runs that "did not converge"),
and a diffusion log whose offline evaluations go back in time (FOR001 left them all out)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost

pytestmark = pytest.mark.sample

FOLDERS = {
    "bert": "NVIDIA/results/h200_ngc23.09_pytorch/bert",
    "dlrm_dcnv2": "NVIDIA/results/h200_ngc24.04_merlin_hugectr/dlrm_dcnv2",
    "gnn": "NVIDIA/results/h200_ngc24.04_dgl/gnn",
    "gpt3": "NVIDIA/results/eos_n32_ngc24.09_nemo/gpt3",
    "llama2_70b_lora": "NVIDIA/results/h200_ngc24.09_nemo/llama2_70b_lora",
    "ssd": "NVIDIA/results/h200_ngc24.04_pytorch/ssd",
    "stable_diffusion": "NVIDIA/results/h200_ngc24.09_nemo/stable_diffusion",
}
_TIME = re.compile(r'"time_ms": (\d+(?:\.\d+)?)')


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost()


def _copy(sample: Path, tmp_path: Path, folder: str) -> Path:
    submitter = folder.split("/")[0]
    root = tmp_path / "round"
    shutil.copytree(sample / submitter / "systems", root / submitter / "systems")
    shutil.copytree(sample / folder, root / folder)
    return root


def _findings(root: Path, host: PluginHost, rule: str) -> list:
    report = check(root, Config(select=(rule,), ruleset="training-4.1.0"), host)
    return [f for f in report.findings if f.rule == rule]


def _record(line: str) -> dict:
    return json.loads(line.split(":::MLLOG ", 1)[1])


def test_no_contradiction_in_the_honest_sample(sample, host):
    report = check(sample, Config(select=("FOR001", "FOR011")), host)
    assert [f for f in report.findings if f.rule in ("FOR001", "FOR011")] == []


@pytest.mark.parametrize("benchmark", sorted(FOLDERS))
def test_aborted_after_reaching_the_target_is_said(sample, tmp_path, host, benchmark):
    """Each benchmark's first converged run, its run_stop status turned to aborted: it reached the
    target, so the log contradicts itself."""
    root = _copy(sample, tmp_path, FOLDERS[benchmark])
    run = sorted((root / FOLDERS[benchmark]).glob("result_*.txt"))[0]
    lines = run.read_text(encoding="utf-8").split("\n")
    stop = next(i for i, line in enumerate(lines) if '"key": "run_stop"' in line)
    assert _record(lines[stop])["metadata"]["status"] == "success"
    lines[stop] = lines[stop].replace('"status": "success"', '"status": "aborted"')
    run.write_text("\n".join(lines), encoding="utf-8")
    found = _findings(root, host, "FOR011")
    assert [(Path(f.path).name, f.line) for f in found] == [(run.name, stop + 1)]
    assert "'aborted', but the eval_accuracy at line" in found[0].message
    assert "not converged while its evaluations say it converged" in found[0].message


def test_an_aborted_run_below_the_target_is_not_a_contradiction(sample, tmp_path, host):
    """The same plant, with every evaluation from the one that reached bert's target on removed."""
    root = _copy(sample, tmp_path, FOLDERS["bert"])
    run = sorted((root / FOLDERS["bert"]).glob("result_*.txt"))[0]
    kept = []
    for line in run.read_text(encoding="utf-8").split("\n"):
        if '"key": "eval_accuracy"' in line and _record(line)["value"] >= 0.72:
            continue
        kept.append(line.replace('"status": "success"', '"status": "aborted"'))
    run.write_text("\n".join(kept), encoding="utf-8")
    assert _findings(root, host, "FOR011") == []


def test_diffusion_evaluations_going_back_in_time(sample, tmp_path, host):
    """A real stable_diffusion log: its last evaluation (eval_start to the last eval_accuracy) moved an
    hour before the one logged above it. Before the fix, FOR001 left every evaluation record out."""
    folder = FOLDERS["stable_diffusion"]
    root = _copy(sample, tmp_path, folder)
    run = sorted((root / folder).glob("result_*.txt"))[0]
    lines = run.read_text(encoding="utf-8").split("\n")
    last_start = max(i for i, line in enumerate(lines) if '"key": "eval_start"' in line)
    before = max(i for i, line in enumerate(lines[:last_start]) if '"key": "eval_accuracy"' in line)
    shift = (
        int(float(_TIME.search(lines[last_start]).group(1)) - float(_TIME.search(lines[before]).group(1))) + 3_600_000
    )
    for i in range(last_start, len(lines)):
        if ":::MLLOG" in lines[i] and any(
            f'"key": "{key}"' in lines[i] for key in ("eval_start", "eval_stop", "eval_accuracy")
        ):
            time_ms = float(_TIME.search(lines[i]).group(1))
            lines[i] = _TIME.sub(f'"time_ms": {int(time_ms) - shift}', lines[i], count=1)
    run.write_text("\n".join(lines), encoding="utf-8")
    found = _findings(root, host, "FOR001")
    assert [(Path(f.path).name, f.line) for f in found] == [(run.name, last_start + 1)]
    assert "in the order of the offline evaluations" in found[0].message
