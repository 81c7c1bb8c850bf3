"""`audit`'s peers are results at a similar scale (issue 34, item 6): v5.1 NVIDIA tyche flux1 on 72 GPUs stood
out at 2.57x the median of 512- and 1152-GPU results, whose work per GPU-minute falls as they scale out."""

from __future__ import annotations

import json

import pytest

from conftest import published_rounds
from mlperf_audit.review import peers as peer_statistics
from mlperf_audit.scores import BenchmarkScore, RunScore

ROUNDS = published_rounds()


def _flux(system: str, gpus: int, minutes: float) -> BenchmarkScore:
    """A flux1 result of the real shape: GB300 GPUs, the same samples in every run."""
    runs = tuple(RunScore(f"result_{i}.txt", minutes, "ok", 2_621_440.0) for i in range(10))
    return BenchmarkScore(
        "NVIDIA",
        system,
        "flux1",
        f"NVIDIA/results/{system}/flux1",
        runs,
        10,
        minutes,
        1.0,
        1.0,
        system_info={"accelerator_model_name": "NVIDIA Blackwell Ultra GPU (GB300)", "accelerators_count": gpus},
    )


def test_a_result_is_compared_with_peers_at_its_scale_only():
    # v5.1: 72 GPUs in 47.9 min; 512 in 12.5; 1152 in 7.4 (per GPU-minute, the large ones do far less)
    scores = [_flux("tyche_ngpu72", 72, 47.9), _flux("tyche_ngpu512", 512, 12.5), _flux("tyche_ngpu1152", 1152, 7.4)]
    rows = {row["system"]: row for row in peer_statistics.peer_rows(scores, {})}
    small = rows["tyche_ngpu72"]
    assert small["relative_to_peers"] is None and small["peers"] == 0 and small["stands_out"] == []
    assert small["peer_scale"] == "48 to 108 accelerators"
    # a peer of its scale is one: 64 GPUs, as fast per GPU-minute
    rows = {row["system"]: row for row in peer_statistics.peer_rows([*scores, _flux("other_64", 64, 53.9)], {})}
    assert rows["tyche_ngpu72"]["peers"] == 1
    assert rows["tyche_ngpu72"]["relative_to_peers"] == pytest.approx(53.9 * 64 / (47.9 * 72), rel=1e-6)


def test_a_result_far_above_its_peers_says_their_scale():
    scores = [_flux("fast", 72, 20.0), _flux("a", 64, 50.0), _flux("b", 96, 40.0), _flux("c", 72, 48.0)]
    row = next(row for row in peer_statistics.peer_rows(scores, {}) if row["system"] == "fast")
    assert row["stands_out"][0] == ">1.5x 3 peer(s) at 48-108 accelerators"


def test_an_unknown_count_has_no_peers():
    unknown = _flux("unknown", 0, 10.0)
    rows = {row["system"]: row for row in peer_statistics.peer_rows([unknown, _flux("a", 8, 50.0)], {})}
    assert rows["unknown"]["relative_to_peers"] is None and rows["unknown"]["peer_scale"] is None


@pytest.mark.skipif("5.1" not in ROUNDS, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_the_published_72_gpu_flux_result_is_compared_at_its_scale(cli, tmp_path):
    out = tmp_path / "audit.json"
    cli("audit", str(ROUNDS["5.1"] / "NVIDIA"), "--format", "json", "-o", str(out), "--no-cache", "--fail-on", "never")
    rows = json.loads(out.read_text())["peers"]
    tyche = next(r for r in rows if r["system"] == "tyche_ngpu72_ngc25.09_nemo" and r["benchmark"] == "flux1")
    assert tyche["peer_scale"] == "48 to 108 accelerators"
    assert not any(flag.startswith(">1.5x") for flag in tyche["stands_out"]), tyche
    for row in rows:  # every peer counted is at the result's scale
        if row["relative_to_peers"] is not None:
            assert row["peers"] >= 1 and row["peer_scale"]
