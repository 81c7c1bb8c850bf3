"""The hardware reference as data: families, makers and spellings (`data/accelerators.json`), the
FP4 and FP6 peaks, the memory capacities; and what they let the rules see on the published rounds
(FOR006 on v5.1's Blackwell Ultra systems, SYS006 and SYS007 on the descriptions of every round)."""

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
from mlperf_audit.reference import hardware

ROUNDS = published_rounds()
V51 = ROUNDS.get("5.1")

#: Spellings of accelerators as logs, platforms and descriptions write them, none of them an
#: alias of the reference: each must resolve to its entry (v5.1's platforms and system names).
SPELLINGS = {
    "NVIDIA B300": "B300 (HGX, Blackwell Ultra, 1100W)",
    "1xXE9780x8B300-SXM-270GB": "B300 (HGX, Blackwell Ultra, 1100W)",
    "ThinkSystem SR680a V4 with 8x B300-SXM": "B300 (HGX, Blackwell Ultra, 1100W)",
    "GB300 NVL72": "GB300 (Blackwell Ultra GPU in GB300, 1400W)",
    "Theia (1x NVIDIA GB300 NVL72)": "GB300 (Blackwell Ultra GPU in GB300, 1400W)",
    "128xNVIDIA GB200": "GB200 (Blackwell GPU in GB200, 1200W)",
    "XE9712x4GB200": "GB200 (Blackwell GPU in GB200, 1200W)",
    "1xSR780aV3-8xB200_SXM_180GB": "B200-SXM-180GB (HGX, 1000W)",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX PRO 6000 Blackwell Server Edition",
    "1xXE7745x8RTXPro6000-PCIe-96GB": "RTX PRO 6000 Blackwell Server Edition",
    "G893-ZX1-AAX4_MI355X": "MI355X",
    "AMD Instinct MI 350X": "MI350X",
    "NVIDIA H200 NVL": "H200-NVL-141GB",
    "Intel Gaudi 3": "Gaudi 3",
    "TPU v4": "TPU v4",
    "NVIDIA A100-PCIE-80GB (300W)": "A100-PCIe-80GB",  # "80GB (300W)" is no GB300
    "NVIDIA A10G": "A10G (AWS)",  # "10G" is no capacity
}


@pytest.mark.parametrize("text, model", sorted(SPELLINGS.items()))
def test_spellings_resolve_to_their_entry(text, model):
    found = hardware.match(text)
    assert found is not None and found.model == model, (text, found)


@pytest.mark.parametrize(
    "text, family",
    [
        ("gaudi-8", None),  # Habana's platform for eight Gaudi2s (v2.0-v4.0), not the first Gaudi
        ("gaudi-384", None),  # 384 Gaudi2s, not a Gaudi 3
        ("config_DGXH100_1x8x4", "h100"),  # a configuration's file name
        ("config_GB300_18x4x1xtp1pp1cp8", "gb300"),
        ("tpu-v5l-4096", "v5e"),  # v5l is v5e's internal name (Google's v3.1 gpt3 logs)
        ("tinybox_8xMI300X", "mi300x"),
        ("1xXE9680Lx8H200-SXM-141GB", "h200"),
        ("NVIDIA A100-PCIE-80GB (300W)", "a100"),
    ],
)
def test_family_of_text(text, family):
    assert hardware.family_of_text(text) == family


def test_families_and_makers_are_data():
    data = json.loads((Path(hardware.__file__).parents[1] / "data" / "accelerators.json").read_text())
    names = [f["family"] for f in data["families"]]
    assert [f.name for f in hardware.families()] == names and len(set(names)) == len(names)
    assert {"b300", "gb300", "rtxpro6000", "gh200", "mi350x", "mi355x"} <= set(names)
    assert hardware.maker_of("gh200") == "nvidia" and hardware.maker_of("mi355x") == "amd"
    assert hardware.maker_of("gaudi3") == "intel" and hardware.maker_of("trillium") == "google"
    assert hardware.maker_of("npu9000") is None and hardware.maker_of(None) is None
    # a family one of whose spellings contains another family's comes first, or it is never found
    order = {f.name: i for i, f in enumerate(hardware.families())}
    for first in hardware.families():
        for second in hardware.families():
            if first is not second and any(b in a for a in first.spellings for b in second.spellings):
                assert order[first.name] < order[second.name], (first.name, second.name)
    # every entry of the table belongs to a family (but the CPU-only one, named "N/A", and the bare "TPU")
    for accelerator in hardware.table():
        if accelerator.names != ("N/A",):
            assert any(hardware.family_of_text(n) for n in accelerator.names), accelerator.model


def test_fp4_peaks_are_sourced_where_published():
    for accelerator in hardware.table():
        if accelerator.fp4_tflops is not None or accelerator.fp6_tflops is not None:
            assert accelerator.fp4_supported and "fp4/fp6" in accelerator.sources, accelerator.model
            assert accelerator.fp4_tflops is None or accelerator.fp4_tflops >= (accelerator.fp8_tflops or 0)
        if accelerator.fp4_supported:
            assert accelerator.fp4_tflops is not None, f"{accelerator.model}: FP4 without a peak"
    b200 = hardware.match("NVIDIA Blackwell GPU (B200-SXM-180GB)")
    assert b200.peak("FP4") == 9000 and b200.peak("fp6") == 4500 and b200.best_precision == "FP4"
    h100 = hardware.match("NVIDIA H100-SXM5-80GB")
    assert h100.peak("FP4") is None and h100.best_precision == "FP8"


def test_speedups_are_scaled_by_the_precision_the_result_could_use():
    b200, h100 = hardware.match("NVIDIA Blackwell GPU (B200-SXM-180GB)"), hardware.match("NVIDIA H100-SXM5-80GB")
    gb200, gb300 = hardware.match("NVIDIA Blackwell GPU (GB200)"), hardware.match("NVIDIA Blackwell Ultra GPU (GB300)")
    ratio, basis = hardware.speedup_ratio(b200, h100)
    assert ratio == pytest.approx(9000 / 1978.9) and "FP4 peak over the FP8 peak" in basis
    ratio, basis = hardware.speedup_ratio(gb300, gb200)  # both have FP4: like for like
    assert ratio == pytest.approx(1.5) and "FP4 peak ratio" in basis
    ratio, _ = hardware.speedup_ratio(h100, b200)  # without FP4, an H100 is not scaled by B200's FP4
    assert ratio == pytest.approx(1978.9 / 4500)  # its FP8 peak ratio, the largest like for like


@pytest.mark.parametrize(
    "written, nominal, agree",
    [
        ("80 GB", 80, True),
        ("81559 MiB", 80, True),  # nvidia-smi's H100
        ("275040 MiB", 270, True),  # B300: 288e9 bytes, 268.6 GiB
        ("284208 MiB", 279, True),  # GB300
        ("22.056640625 GB", 24, True),  # an A10G's usable memory
        ("46068 MiB", 48, True),  # L40S
        ("143771 MiB", 186, False),  # an H200's, for a GB200
        ("143771 MiB", 180, False),  # ... for a B200
        ("96000 MiB", 141, False),  # an RTX PRO 6000's, for an H200 NVL
        ("40 GB", 80, False),
    ],
)
def test_capacities(written, nominal, agree):
    assert hardware.capacities_agree(hardware.capacity_bytes(written), nominal) is agree


@pytest.mark.parametrize(
    "text", ["", "N/A", "2x 24 GB", "80 parsecs", "1e400 GB", None, True, [80], {"GB": 80}, "0 GB"]
)
def test_what_is_not_one_capacity(text):
    assert hardware.capacity_bytes(text) is None


def _descriptions() -> list[Path]:
    return sorted(p for folder in ROUNDS.values() for p in folder.glob("*/systems/*.json"))


@pytest.mark.skipif(not ROUNDS, reason="no published round under $MLPERF_AUDIT_ROUNDS")
def test_every_published_accelerator_is_known():
    names = set()
    for path in _descriptions():
        try:
            data = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(data, dict):
            names.add(data.get("accelerator_model_name"))
    unknown = sorted(str(n) for n in names if hardware.match(n) is None)
    assert unknown == []
    without_family = sorted(str(n) for n in names if hardware.family_of_text(n) is None)
    # a CPU-only system; Google's v1.0 TPU v4 and the first Gaudi, aliases: "Gaudi" alone is no family (Habana
    # logs "gaudi-8" for eight Gaudi2s)
    assert without_family == ["Habana Gaudi", "N/A", "TPU"]


def _findings(root: Path, rules: tuple[str, ...], ruleset: str) -> list:
    report = check(root, Config(select=rules, ruleset=ruleset, cache_dir=None), PluginHost())
    return [f for f in report.findings if f.rule in rules]


@pytest.mark.skipif(V51 is None, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_v51_blackwell_ultra_systems_whose_logs_name_blackwell(tmp_path):
    """Published: Lenovo's B300 system logs a B200 platform, NVIDIA's GB300 (theia) logs GB200."""
    folders = {
        "Lenovo": ("SR680aV4-8xB300_SXM", "b200"),
        "NVIDIA": ("theia_ngpu72_ngc25.09_nemo", "gb200"),
    }
    root = tmp_path / "round"
    for submitter, (system, _) in folders.items():
        shutil.copytree(V51 / submitter / "systems", root / submitter / "systems")
        shutil.copytree(V51 / submitter / "results" / system, root / submitter / "results" / system)
    found = _findings(root, ("FOR006",), "training-5.1.0")
    for system, family in folders.values():
        mine = [f for f in found if f"/results/{system}/" in (f.path or "")]
        assert mine and all(f"names {family}, the system description" in f.message for f in mine), (system, found)


@pytest.mark.skipif(V51 is None, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_a_b200_platform_planted_in_a_b300_run_is_seen(tmp_path):
    system = "1xXE9780x8B300-SXM-270GB"
    root = tmp_path / "round"
    shutil.copytree(V51 / "Dell" / "systems", root / "Dell" / "systems")
    shutil.copytree(V51 / "Dell" / "results" / system, root / "Dell" / "results" / system)
    assert _findings(root, ("FOR006",), "training-5.1.0") == []  # as published: its own platform
    (log, *_) = sorted((root / "Dell" / "results" / system).glob("*/result_*.txt"))
    log.write_text(re.sub(r"1xXE9780x8B300-SXM-270GB", "1xXE9680Lx8B200-SXM-180GB", log.read_text()))
    (finding,) = _findings(root, ("FOR006",), "training-5.1.0")
    assert finding.path.endswith(log.name) and "names b200" in finding.message


@pytest.mark.skipif(not ROUNDS, reason="no published round under $MLPERF_AUDIT_ROUNDS")
def test_memory_contradictions_on_the_published_descriptions(tmp_path):
    """Every description of every round: only those that contradict their accelerator are found
    (Oracle's v5.0 B200 and GB200 with an H200's 143771 MiB, Dell's v1.1 A100-PCIE-80GB with
    40 GB, Dell's v5.1 H200 NVL with 96000 MiB); the variants and units of the others stay quiet.
    SYS007 is an error where a result folder uses the description, info where none does (Dell's
    v5.1 H200 NVL description, published without results)."""
    found: dict[str, set[str]] = {"SYS006": set(), "SYS007": set()}
    unused: set[str] = set()
    for round_name, folder in ROUNDS.items():
        root = tmp_path / round_name
        for systems in folder.glob("*/systems"):
            shutil.copytree(systems, root / systems.parent.name / "systems")
            for used in (systems.parent / "results").glob("*/"):  # which descriptions results use, not their logs
                (root / systems.parent.name / "results" / used.name).mkdir(parents=True)
        for finding in _findings(root, tuple(found), "auto"):
            found[finding.rule].add(f"v{round_name}/{finding.path}")
            if finding.rule == "SYS007" and finding.severity.value == "info":
                unused.add(f"v{round_name}/{finding.path}")
            elif finding.rule == "SYS007":
                assert finding.severity.value == "error", finding
    expected_sys006 = {
        f"v5.0/Oracle/systems/{n}.json" for n in ("1xBM.GPU.GB200.4", "2xBM.GPU.GB200.4", "18xBM.GPU.GB200.4")
    }
    expected_sys007 = {f"v5.0/Oracle/systems/{n}.json" for n in ("1xBM.GPU.B200.8", "8xBM.GPU.B200.8")}
    expected_sys007 |= {"v5.1/Dell/systems/1xXE7745x8H200-NVL-141GB.json"}
    expected_sys007 |= {
        f"v1.1/Dell/systems/{n}.json"
        for n in (
            "4xR750xax4A100-PCIE-80GB",
            "8xR750xax4A100-PCIE-80GB",
            "DSS8440x10A100-PCIE-80GB",
            "DSS8440x8A100-PCIE-80GB",
        )
    }
    present = {f"v{r}" for r in ROUNDS}
    assert found["SYS006"] == {p for p in expected_sys006 if p.split("/")[0] in present}
    assert found["SYS007"] == {p for p in expected_sys007 if p.split("/")[0] in present}
    assert unused == {p for p in {"v5.1/Dell/systems/1xXE7745x8H200-NVL-141GB.json"} if p.split("/")[0] in present}
