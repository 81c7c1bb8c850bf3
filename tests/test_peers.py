"""Equivalent-hardware deviation (AUD011) on the real v4.1 sample: the honest results stay quiet,
a result with its times halved stands out from its peers, and the shipped peer table is what
`bench/peers.py` measures. The forgeries are planted in a copy of the sample in tmp_path."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit_rules.support import peers

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost()


def _in_sample(sample: Path) -> list[peers.Peer]:
    return [row for row in peers.published() if row.round == "4.1" and (sample / row.result).is_dir()]


def _halve(result_folder: Path) -> None:
    """Every timestamp of every run moved halfway toward the run's first one: all times / 2."""
    for log in result_folder.glob("result_*.txt"):
        text = log.read_text()
        match = re.search(r'"time_ms": (\d+)', text)
        assert match is not None

        def halfway(found: re.Match[str], first: int = int(match.group(1))) -> str:
            return f'"time_ms": {first + (int(found.group(1)) - first) // 2}'

        log.write_text(re.sub(r'"time_ms": (\d+)', halfway, text))


@pytest.mark.sample
def test_the_honest_sample_stays_quiet(sample, host):
    with_peers = [row for row in _in_sample(sample) if peers.deviation(row, (row,)) is not None]
    assert len(with_peers) >= 10  # the check below compares something
    report = check(sample, Config(select=("AUD011",)), host)
    assert [f.message for f in report.findings if f.rule == "AUD011"] == []


@pytest.mark.sample
@pytest.mark.parametrize(
    "folder",
    [
        "Dell/results/XE9680x8H100-SXM-80GB/bert",
        "NVIDIA/results/h200_ngc24.04_merlin_hugectr/dlrm_dcnv2",
        "NVIDIA/results/h200_ngc24.09_nemo/llama2_70b_lora",
        "Dell/results/XE9680x8H100-SXM-80GB/stable_diffusion",
    ],
)
def test_times_halved_stand_out(sample, tmp_path, host, folder):
    root = tmp_path / "v4.1"
    shutil.copytree(sample, root)
    _halve(root / folder)
    report = check(root, Config(select=("AUD011",)), host)
    [finding] = [f for f in report.findings if f.rule == "AUD011"]
    assert finding.path == folder and finding.severity.value == "warning"
    assert "beyond every one of" in finding.message and "on the same accelerator at a similar scale" in finding.message


@pytest.mark.sample
def test_the_table_is_what_the_generator_measures(sample, tmp_path, monkeypatch):
    """The rows of the sample's results are regenerated from the sample itself (CI has no whole round)."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import peers as generator  # bench/peers.py

    root = tmp_path / "v4.1"
    shutil.copytree(sample, root)
    measured = {row.result: row for row in map(generator.peer_of, generator.measure_round(root))}
    shipped = {row.result: row for row in _in_sample(sample)}
    assert measured == shipped and len(shipped) >= 10


def _peer(result: str, accelerator_minutes: float, round_name: str = "4.1", accelerators: int = 8) -> peers.Peer:
    return peers.Peer(round_name, "bert", 0.72, "H100-SXM5-80GB", accelerators, accelerator_minutes, result)


def test_peers_of_the_checked_tree_count_and_replace_the_published_row():
    table = peers.index_of(
        (
            _peer("A/results/s/bert", 100.0),
            _peer("B/results/s/bert", 100.0, round_name="4.0"),
            _peer("C/results/s/bert", 50.0, accelerators=64),  # another scale: no peer
            _peer("D/results/s/bert", 50.0, round_name="3.1"),  # two rounds before: no peer
        )
    )
    result = _peer("X/results/s/bert", 60.0)
    found = peers.deviation(result, (result,), table)
    assert found is not None and found.peers == 2
    assert found.closest.result == "B/results/s/bert" and found.factor == pytest.approx(100 / 1.84 / 60, rel=1e-3)
    # the checked tree's own A, faster than published, replaces the published row
    checked = (result, _peer("A/results/s/bert", 70.0))
    again = peers.deviation(result, checked, table)
    assert again is not None and again.closest.accelerator_minutes == 70.0 and again.peers == 2
    assert again.factor == pytest.approx(70 / 1.4 / 60, rel=1e-3)
    # beyond every peer: times halved
    halved = replace(result, accelerator_minutes=30.0)
    beyond = peers.deviation(halved, (halved,), table)
    assert beyond is not None and beyond.factor > 1
    assert "from the round before, which allows 1.84x fewer" in beyond.describe()


def test_no_peer_no_verdict():
    result = _peer("X/results/s/bert", 60.0)
    assert peers.deviation(result, (result,), {}) is None
    assert peers.previous_round("3.0") == "2.1" and peers.previous_round("1.0") is None
    assert "4.0" in peers.covered() and "2.0" not in peers.covered()


def test_every_published_result_of_v3_0_to_v5_1_stays_quiet_and_halved_ones_stand_out():
    """The sizing, on the shipped table (every closed result of v2.1-v5.1, measured from the published
    rounds): no honest result is beyond every peer, and nine in ten with their times halved are."""
    checked = [row for row in peers.published() if peers.previous_round(row.round) in peers.covered()]
    assert {row.round for row in checked} == {"3.0", "3.1", "4.0", "4.1", "5.0", "5.1"}
    honest = [found for row in checked if (found := peers.deviation(row, (row,))) is not None]
    assert len(honest) > 900
    assert [d.result.result for d in honest if d.factor > 1] == []
    halved = [replace(d.result, accelerator_minutes=d.result.accelerator_minutes / 2) for d in honest]
    caught = sum(1 for forged in halved if (found := peers.deviation(forged, (forged,))) and found.factor > 1)
    assert caught / len(halved) > 0.9, f"{caught} of {len(halved)}"
