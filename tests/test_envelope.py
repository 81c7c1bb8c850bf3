"""The published-results envelope (AUD008, AUD009) on the real v4.1 sample: the honest results pass,
and the three forgeries a reviewer must catch (times compressed 4x, 8x fewer accelerators claimed,
an older and weaker accelerator named) are caught on each of the seven v4.1 benchmarks. The
forgeries are planted in a copy of the sample in tmp_path."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit_rules.support import envelope

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
RULES = ("AUD008", "AUD009")
#: Volta, 2017: an eighth of an H200's BF16 peak, a fifth of its memory bandwidth; in the hardware reference.
WEAKER = "NVIDIA Tesla V100-SXM2-32GB"


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost()


def _copy(sample: Path, tmp_path: Path, folder: str) -> tuple[Path, Path]:
    """The sample's NVIDIA submission with only `folder`'s results, and that folder's system description."""
    submitter, _, system, benchmark = folder.split("/")
    root = tmp_path / "round"
    shutil.copytree(sample / submitter / "systems", root / submitter / "systems")
    shutil.copytree(sample / folder, root / folder)
    return root, root / submitter / "systems" / f"{system}.json"


def _findings(root: Path, host: PluginHost) -> list:
    report = check(root, Config(select=RULES, ruleset="training-4.1.0"), host)
    return [f for f in report.findings if f.rule in RULES]


def test_the_honest_sample_is_within_the_envelope(sample, host):
    report = check(sample, Config(select=RULES), host)
    assert [f for f in report.findings if f.rule in RULES] == []


def _compress(result_folder: Path, factor: float) -> None:
    """Every timestamp of every run moved toward the run's first one: all times / `factor`."""
    for log in result_folder.glob("result_*.txt"):
        text = log.read_text()
        first = int(re.search(r'"time_ms": (\d+)', text).group(1))

        def squeeze(match: re.Match[str], first: int = first) -> str:
            return f'"time_ms": {first + (int(match.group(1)) - first) // factor}'

        log.write_text(re.sub(r'"time_ms": (\d+)', squeeze, text))


def _edit_system(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("benchmark", sorted(FOLDERS))
def test_times_compressed_4x_are_caught(sample, tmp_path, host, benchmark):
    root, _ = _copy(sample, tmp_path, FOLDERS[benchmark])
    _compress(root / FOLDERS[benchmark], 4)
    found = _findings(root, host)
    assert found, f"{benchmark}: compressed 4x, no AUD008/AUD009"
    assert all(f.path == FOLDERS[benchmark] and "below the published envelope's bound" in f.message for f in found)


@pytest.mark.parametrize("benchmark", sorted(FOLDERS))
def test_8x_fewer_accelerators_are_caught(sample, tmp_path, host, benchmark):
    root, system = _copy(sample, tmp_path, FOLDERS[benchmark])
    data = json.loads(system.read_text())
    if int(data["number_of_nodes"]) >= 8:
        _edit_system(system, number_of_nodes=str(int(data["number_of_nodes"]) // 8))
    else:
        _edit_system(system, accelerators_per_node=str(int(data["accelerators_per_node"]) // 8))
    found = _findings(root, host)
    assert found, f"{benchmark}: 8x fewer accelerators, no AUD008/AUD009"
    # a factor of 8 is beyond what any published result came near: an error
    assert {f.rule for f in found} == {"AUD009"}, [f.message for f in found]


@pytest.mark.parametrize("benchmark", sorted(FOLDERS))
def test_a_weaker_accelerator_named_is_caught(sample, tmp_path, host, benchmark):
    root, system = _copy(sample, tmp_path, FOLDERS[benchmark])
    _edit_system(system, accelerator_model_name=WEAKER)
    found = _findings(root, host)
    assert found, f"{benchmark}: named {WEAKER}, no AUD008/AUD009"
    assert all("x V100-SXM2-32GB" in f.message for f in found)


def test_the_bound_uses_only_earlier_rounds():
    earlier = envelope.earlier("4.1.0", "bert", 0.72)
    assert earlier and all(envelope.round_of(f.round + ".0") < (4, 1) for f in earlier)
    assert not envelope.earlier("1.0.0", "bert", 0.72)


def test_a_floor_of_one_submitter_bounds_nothing():
    lone = envelope.Floor("4.0", "bert", 0.72, "H100-SXM5-80GB", 1.0, 8, 0.125, "X/results/s/bert", submitters=1)
    accelerator = next(a for a in envelope.hardware.table() if a.model == "H100-SXM5-80GB")
    found = envelope.Measure(30.0, 3.75, 8, accelerator)
    assert envelope.bounds(found, "4.1.0", "bert", 0.72, ["4.0", "4.1"], (lone,)) == []
    mature = envelope.Floor(**{**vars(lone), "submitters": 2, "accelerator_minutes": 100.0})
    (bound,) = envelope.bounds(found, "4.1.0", "bert", 0.72, ["4.0", "4.1"], (mature,))
    assert bound.accelerator_minutes == pytest.approx(100.0 / (1.52 * 1.1))


def test_another_quality_target_is_another_benchmark():
    # v1.x's ssd (SSD-ResNet34, mAP 0.23) bounds nothing of v2.0's (RetinaNet, mAP 0.34)
    assert all(f.target != 0.23 for f in envelope.earlier("2.0.0", "ssd", 0.34))


def test_gaps_count_the_rounds_not_published_here_yet():
    # a 6.1 result is two rounds after 5.1 and three after 5.0, whether or not 6.0 is in the data
    assert {"5.0", "5.1", "6.0", "6.1"} <= set(envelope.rounds())
    assert envelope.rounds_between("5.1", "6.1.0", envelope.rounds()) == 2
    assert envelope.rounds_between("5.0", "6.1.0", envelope.rounds()) == 3


def test_an_unknown_quality_target_is_bounded_by_nothing():
    # v1.x's ssd (SSD-ResNet34) and v2.0's (RetinaNet) share a name: a target not known cannot tell them apart
    assert envelope.earlier("2.0.0", "ssd", None) == []


def test_each_floor_of_an_accelerator_gives_its_own_bound_and_the_loosest_is_held():
    h100 = next(a for a in envelope.hardware.table() if a.model == "H100-SXM5-80GB")
    old = envelope.Floor("3.1", "bert", 0.72, h100.model, 30.0, 8, 3.75, "A/results/s/bert", submitters=2)
    new = envelope.Floor("4.0", "bert", 0.72, h100.model, 40.0, 8, 5.0, "B/results/s/bert", submitters=2)
    found = envelope.Measure(20.0, 2.5, 8, h100)
    # 3.1's floor is lower, but two rounds of allowance make 4.0's the tighter: 3.1's is held
    (bound,) = envelope.bounds(found, "4.1.0", "bert", 0.72, envelope.rounds(), (old, new))
    assert bound.floor is old and bound.gap == 2
    # a floor three rounds back bounds nothing
    assert envelope.bounds(found, "5.0.0", "bert", 0.72, envelope.rounds(), (old,)) == []


@pytest.mark.parametrize("factor, severity", [(8, "warning"), (32, "error")])
def test_an_fp4_accelerator_beyond_half_its_own_floor(sample, tmp_path, host, factor, severity):
    """v5.0's B200 bert floor may have trained in FP8; a B200 in FP4 may be 2x faster (its FP4 peak
    over its FP8): beyond half the bound by less than that is a warning, by more an error."""
    root, system = _copy(sample, tmp_path, FOLDERS["bert"])
    _compress(root / FOLDERS["bert"], factor)
    _edit_system(system, accelerator_model_name="NVIDIA Blackwell GPU (B200-SXM-180GB)")
    report = check(root, Config(select=RULES, ruleset="training-5.1.0"), host)
    found = [f for f in report.findings if f.rule in RULES]
    assert found and all(f.rule == "AUD009" and f.severity.value == severity for f in found), found
    assert all("(v5.0) needed" in f.message and "x B200-SXM-180GB" in f.message for f in found)
    if severity == "warning":
        assert all("its FP4 peak is 2.00x its FP8 peak" in f.message for f in found)


def test_an_accelerator_with_floors_of_its_own_is_held_to_them():
    """Another accelerator's floor, scaled by a peak ratio, is looser than the accelerator's own
    (an H200 result halved passed by the H100's floor x 1.43): the own floors alone hold it."""
    h100 = envelope.Floor("4.0", "bert", 0.72, "H100-SXM5-80GB", 40.0, 8, 5.0, "A/results/s/bert", submitters=2)
    h200 = envelope.Floor("4.1", "bert", 0.72, "H200-SXM5-141GB", 40.0, 8, 5.0, "B/results/s/bert", submitters=2)
    accelerator = envelope.hardware.match("NVIDIA H200-SXM5-141GB")
    found = envelope.Measure(20.0, 2.5, 8, accelerator)
    (bound,) = envelope.bounds(found, "5.0.0", "bert", 0.72, envelope.rounds(), (h100, h200))
    assert bound.floor is h200 and bound.accelerator_minutes == pytest.approx(40.0 / (1.52 * 1.1))
    (bound,) = envelope.bounds(found, "5.0.0", "bert", 0.72, envelope.rounds(), (h100,))  # no own floor
    assert bound.floor is h100 and bound.ratio == pytest.approx(4.8 / 3.35)


def test_an_fp4_accelerator_without_a_floor_of_its_own_is_scaled_by_its_fp4_peak():
    h100 = envelope.Floor("4.1", "bert", 0.72, "H100-SXM5-80GB", 40.0, 8, 5.0, "A/results/s/bert", submitters=2)
    b200 = envelope.hardware.match("NVIDIA Blackwell GPU (B200-SXM-180GB)")
    found = envelope.Measure(5.0, 0.625, 8, b200)
    (bound,) = envelope.bounds(found, "5.0.0", "bert", 0.72, envelope.rounds(), (h100,))
    assert bound.ratio == pytest.approx(9000 / 1978.9) and "FP4 peak over the FP8 peak" in bound.describe()
    (wide,) = envelope.bounds(found, "5.0.0", "bert", 0.72, envelope.rounds(), (h100,), envelope.hardware.WIDE)
    assert wide.ratio == pytest.approx(8.0 / 3.35) and "memory bandwidth ratio" in wide.describe()


V50 = published_rounds().get("5.0")


@pytest.mark.skipif(V50 is None, reason="the v5.0 round is not under $MLPERF_AUDIT_ROUNDS")
def test_a_published_h200_bert_result_with_its_times_halved_stands_out(tmp_path, host):
    """ASUSTeK's v5.0 H200 bert passed with information only when its times were halved: the H100
    floor of v4.0 x 1.43 held it. Held to the H200's own v4.1 floor, halved it is 1.14x beyond."""
    folder = "ASUSTeK/results/ESC_N8_E11/bert"
    root = tmp_path / "round"
    shutil.copytree(V50 / "ASUSTeK" / "systems", root / "ASUSTeK" / "systems")
    shutil.copytree(V50 / folder, root / folder)
    config = Config(select=RULES, ruleset="training-5.0.0", cache_dir=None)
    assert [f for f in check(root, config, host).findings if f.rule in RULES] == []
    _compress(root / folder, 2)
    (finding,) = [f for f in check(root, config, host).findings if f.rule in RULES]
    assert finding.rule == "AUD008" and "x H200-SXM5-141GB" in finding.message and "(v4.1) needed" in finding.message
