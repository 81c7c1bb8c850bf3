"""FOR006 says what the runs' speed shows (issue 34, item 6): a platform label left over from another system,
in runs as fast as the described accelerator's peers, is not worded as reused runs; every run that logs the
label is named ("all 10 runs" when every run does)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit_rules.support import peers

ROUNDS = published_rounds()


def _relabelled(sample: Path, tmp_path: Path, submitter: str, system: str, benchmark: str, platform: str) -> Path:
    """One real v4.1 folder whose logs' submission_platform names `platform`."""
    root = tmp_path / "v4.1"
    shutil.copytree(sample / submitter / "systems", root / submitter / "systems")
    folder = root / submitter / "results" / system / benchmark
    shutil.copytree(sample / submitter / "results" / system / benchmark, folder)
    for log in folder.glob("result_*.txt"):
        text = log.read_text(encoding="utf-8")
        log.write_text(re.sub(r'("key": "submission_platform", "value": )"[^"]*"', rf'\1"{platform}"', text))
    return root


def _for006(root: Path) -> list:
    report = check(root, Config(select=("FOR006",), ruleset="training-4.1.0", cache_dir=None))
    return [f for f in report.findings if f.rule == "FOR006"]


@pytest.mark.sample
def test_a_leftover_label_on_runs_as_fast_as_the_described_accelerator(sample, tmp_path):
    """NVIDIA's v4.1 llama2_70b_lora on 8 H200 (192.3 accelerator-minutes; the six other H200 results at 6 to 12
    GPUs: a median of 186.7; the H100 ones: 219.9) with its logs relabelled as a DGX H100."""
    root = _relabelled(sample, tmp_path, "NVIDIA", "h200_ngc24.09_nemo", "llama2_70b_lora", "1xDGX H100")
    (finding,) = _for006(root)
    assert finding.message.startswith("submission_platform '1xDGX H100' in all 10 runs names h100")
    assert "the runs' speed fits the described H200-SXM5-141GB better than the logged H100-SXM5-80GB" in finding.message
    assert "not a sign of reused runs" in finding.message and "may come from" not in finding.message
    assert finding.path.endswith("result_0.txt") and len(finding.related) == 9  # the nine other runs


@pytest.mark.sample
def test_without_peers_of_the_logged_accelerator_the_speed_only_fits_the_described(sample, tmp_path):
    root = _relabelled(sample, tmp_path, "Dell", "XE9680x8H100-SXM-80GB", "bert", "1xTPU v5p")
    (finding,) = _for006(root)
    assert "the runs' speed fits the described H100-SXM5-80GB, with no TPU v5p result to compare (" in finding.message
    assert "H100-SXM5-80GB a median of" in finding.message and "reused" not in finding.message


@pytest.mark.sample
def test_the_published_trillium_runs_labelled_v5p_tell_nothing(sample):
    """Google's v4.1 Trillium gpt3 on 512 chips logs "tpu-v5p": no Trillium result at 342 to 768 chips, one
    v5p result of v4.0 (58,774.5 accelerator-minutes against its 52,264.7): which ran, the speed cannot say."""
    (finding,) = _for006(sample / "Google")
    assert finding.message.startswith("submission_platform 'tpu-v5p' in all 3 runs names v5p")
    assert "the runs' speed does not tell which accelerator ran" in finding.message
    assert "no TPU Trillium (v6e) result, TPU v5p a median of 58,774.5 (1 result(s) of v4.0)" in finding.message


@pytest.mark.sample
def test_runs_that_fit_only_the_logged_accelerator_may_come_from_it(sample, tmp_path, monkeypatch):
    """The published table holding, at the result's scale, H100 results as fast as it and H200 results twice as
    fast: described H200, logged H100, the speed fits the label, and the message says so."""
    root = _relabelled(sample, tmp_path, "NVIDIA", "h200_ngc24.09_nemo", "llama2_70b_lora", "1xDGX H100")
    table = (
        peers.Peer("4.1", "llama2_70b_lora", 0.925, "H100-SXM5-80GB", 8, 190.0, "A/results/a/llama2_70b_lora"),
        peers.Peer("4.1", "llama2_70b_lora", 0.925, "H200-SXM5-141GB", 8, 90.0, "B/results/b/llama2_70b_lora"),
    )
    monkeypatch.setattr(peers, "_published_index", lambda: peers.index_of(table))
    (finding,) = _for006(root)
    assert "the runs' speed fits the logged H100-SXM5-80GB, not the described H200-SXM5-141GB" in finding.message
    assert finding.message.endswith("the runs may come from a H100-SXM5-80GB system")


@pytest.mark.skipif("5.1" not in ROUNDS, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_the_published_gb300_runs_labelled_gb200(tmp_path):
    """v5.1 NVIDIA theia (GB300 NVL72) logs "18xNVIDIA GB200": at 72 GPUs its flux1, llama2_70b_lora and
    llama31_8b are as fast as the GB300 results and faster than the GB200 ones; no folder is worded as reuse."""
    root = tmp_path / "v5.1"
    shutil.copytree(ROUNDS["5.1"] / "NVIDIA" / "systems", root / "NVIDIA" / "systems")
    for system in ("theia_ngpu72_ngc25.09_nemo", "theia_ngpu8_ngc25.09_nemo"):
        shutil.copytree(ROUNDS["5.1"] / "NVIDIA" / "results" / system, root / "NVIDIA" / "results" / system)
    report = check(root, Config(select=("FOR006",), ruleset="training-5.1.0", cache_dir=None))
    found = {Path(f.path).parent.name + "@" + Path(f.path).parent.parent.name: f.message for f in report.findings}
    assert len(found) == 5, found
    for name, message in found.items():
        assert " in all " in message and "may come from" not in message, (name, message)
        if name.endswith("@theia_ngpu72_ngc25.09_nemo"):
            assert "fits the described GB300" in message and "not a sign of reused runs" in message, (name, message)


@pytest.mark.skipif("4.0" not in ROUNDS, reason="the v4.0 round is not under $MLPERF_AUDIT_ROUNDS")
def test_one_published_run_labelled_a100_among_h100_runs():
    """v4.0 JuniperNetworks llama2_70b_lora: result_9.txt alone logs "A100"; its 42.12 min lie within the nine
    H100 runs' 42.04 to 46.91 min."""
    folder = ROUNDS["4.0"] / "JuniperNetworks"
    report = check(folder, Config(select=("FOR006",), ruleset="training-4.0.0", cache_dir=None))
    (finding,) = [f for f in report.findings if f.rule == "FOR006"]
    assert finding.path.endswith("llama2_70b_lora/result_9.txt")
    assert "'A100' in result_9.txt (1 of 10 runs) names a100" in finding.message
    assert "time-to-train: result_9.txt 42.12 min, within the other runs' 42.04 to 46.91 min" in finding.message


def test_labelled_runs_outside_the_others_times_are_said_to_be(monkeypatch):
    """Two runs of five labelled A100 in an H100 system, each slower than the three others."""
    from mlperf_audit_rules import forensics

    class _Run:
        def __init__(self, name: str, minutes: float) -> None:
            self.name, self.minutes = name, minutes

    runs = [_Run(f"result_{i}.txt", m) for i, m in enumerate((20.0, 21.0, 35.0, 22.0, 36.0))]
    monkeypatch.setattr(forensics, "time_to_train", lambda run: run.minutes)
    text = forensics._time_among_others([runs[2], runs[4]], runs)  # type: ignore[arg-type]
    assert text == (
        "; time-to-train: result_2.txt 35.00, result_4.txt 36.00 min, outside the other runs' 20.00 to 22.00 min"
    )
