"""The audit command: hardware reference, claims, peers and the baseline comparison."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from mlperf_audit.reference import hardware

CLAIMS = Path(__file__).parent / "data" / "claims-v4.1-sample.yaml"
SCHEMA = json.loads(resources.files("mlperf_audit").joinpath("schemas/report-v1.schema.json").read_text())

# every accelerator_model_name of the v3.1-v5.0 results (../shared/reference/hardware.md section 1)
NAMES = {
    "NVIDIA H100-SXM5-80GB": "H100-SXM5-80GB",
    "NVIDIA H100-SXM-80GB": "H100-SXM5-80GB",
    "NVIDIA H100 80GB HBM3": "H100-SXM5-80GB",
    "NVIDIA H100-SXM5-96GB": "H100-SXM5-96GB",
    "NVIDIA H100-PCIe-80GB": "H100-PCIe-80GB",
    "H100 NVL Tensor Core GPU (PCIe)": "H100-NVL-94GB",
    "NVIDIA H200-SXM5-141GB": "H200-SXM5-141GB",
    "NVIDIA H200-NVL-141GB": "H200-NVL-141GB",
    "NVIDIA Blackwell GPU (B200-SXM-180GB)": "B200-SXM-180GB (HGX, 1000W)",
    "NVIDIA Blackwell GPU (GB200)": "GB200 (Blackwell GPU in GB200, 1200W)",
    "NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB",
    "NVIDIA A100-SXM-40GB": "A100-SXM4-40GB",
    "NVIDIA A100-PCIe-80GB": "A100-PCIe-80GB",
    "NVIDIA A100 - PCIe - 80 GB": "A100-PCIe-80GB",
    "NVIDIA A10G": "A10G (AWS)",
    "NVIDIA A30": "A30",
    "NVIDIA L4": "L4",
    "NVIDIA L40": "L40",
    "NVIDIA L40S": "L40S",
    "NVIDIA RTX A5000": "RTX A5000",
    "NVIDIA GeForce RTX 4090": "GeForce RTX 4090 (tinybox green)",
    "AMD Radeon RX 7900 XTX": "Radeon RX 7900 XTX (tinybox red)",
    "AMD Instinct MI300X 192GB HBM3": "MI300X",
    "AMD Instinct MI325X 256GB HBM3e": "MI325X",
    "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X",
    "Intel Gaudi2": "Gaudi2",
    "Intel(R) Gaudi(R) 2 AI Accelerator": "Gaudi2",
    "TPU-v5e": "TPU v5e",
    "TPU-v5p": "TPU v5p",
    "TPU-trillium": "TPU Trillium (v6e)",
    "N/A": "Xeon Platinum 8480+ (CPU-only)",
}


@pytest.mark.parametrize("name, model", sorted(NAMES.items()))
def test_every_accelerator_name_maps_to_its_entry(name, model):
    assert hardware.match(name).model == model


def test_unknown_accelerator_is_none_and_every_figure_has_a_source():
    assert hardware.match("NPU-9000") is None and hardware.match("") is None
    for accelerator in hardware.table():
        figures = [accelerator.bf16_tflops, accelerator.fp8_tflops, accelerator.hbm_tbs]
        assert not any(figures) or accelerator.sources, accelerator.model


@pytest.mark.sample
def test_claims_about_the_sample(cli, sample):
    result = cli("audit", str(sample), "--claims", str(CLAIMS), "--format", "json")
    assert result.code == 1, result.err  # some claims are overstated
    document = json.loads(result.out)
    jsonschema.validate(document, SCHEMA)  # the check report's contract, with keys added
    verdicts = {claim["id"]: claim for claim in document["claims"]}
    assert {key: claim["verdict"] for key, claim in verdicts.items()} == {
        "h200-bert-5pct": "supported",  # 5.5088 / 5.21165 = 1.0570
        "h200-bert-28pct": "overstated",
        "gpt3-minutes": "supported",  # 96.6645 minutes on 256 accelerators
        "gpt3-90-minutes": "overstated",
        "trillium-per-chip": "overstated",  # 0.47x per chip, and 4x exceeds the hardware bound
        "unknown-result": "not checkable",
    }
    assert verdicts["h200-bert-5pct"]["recomputed"] == pytest.approx((5.5088 / 5.21165 - 1) * 100, abs=0.01)
    assert verdicts["trillium-per-chip"]["hardware"].startswith("exceeds what the hardware supports")
    assert "checkpoint" in verdicts["gpt3-minutes"]["caveats"][0]


@pytest.mark.sample
def test_peers_table_on_the_sample(cli, sample):
    document = json.loads(cli("audit", str(sample), "--format", "json").out)
    eos = next(p for p in document["peers"] if p["system"] == "eos_n32_ngc24.09_nemo")
    assert eos["utilisation"] == pytest.approx(0.445, abs=0.005)  # hardware.md R1: 44.4% of FP8
    green = next(p for p in document["peers"] if p["system"] == "tinybox_green")
    assert "FOR004" in green["stands_out"]
    text = cli("audit", str(sample)).out
    assert "Peers (work/acc-min = work per accelerator-minute, convergence units per minute per accelerator" in text


def test_baseline_speedup_beyond_the_hardware(cli, fixtures):
    result = cli(
        "audit",
        str(fixtures / "forged" / "compressed-timestamps"),
        "--baseline",
        str(fixtures / "clean"),
        "--format",
        "json",
        "--fail-on",
        "never",
        "--ruleset",
        "training-4.1.0",  # a v4.1 package of one benchmark, which every round up to 6.1 allows
    )
    document = json.loads(result.out)
    (row,) = document["baseline"]
    assert row["work_per_accelerator_minute_ratio"] == pytest.approx(4.0, rel=0.01) and row["verdict"].startswith(
        "exceeds"
    )
    assert any(f["rule"] == "AUD007" and f["severity"] == "warning" for f in document["findings"])


def test_audit_usage_errors(cli, fixtures, tmp_path):
    assert cli("audit", str(tmp_path / "missing")).code == 2
    bad = tmp_path / "claims.yaml"
    bad.write_text("claims: 3\n")
    result = cli("audit", str(fixtures / "clean"), "--claims", str(bad))
    assert result.code == 2 and "expected a mapping with a list 'claims'" in result.err


@pytest.mark.sample
def test_bert_above_the_ceiling_is_information_only(sample, tmp_path, host):
    """bert's work model is an upper bound: a real H200 bert result described with half its GPUs
    is above the ceiling, which says nothing (information), whereas gpt3 stays a warning."""
    import shutil

    from mlperf_audit.config import Config
    from mlperf_audit.engine.api import check

    target = tmp_path / "NVIDIA"
    shutil.copytree(sample / "NVIDIA" / "systems", target / "systems")
    shutil.copytree(
        sample / "NVIDIA" / "results" / "h200_ngc23.09_pytorch", target / "results" / "h200_ngc23.09_pytorch"
    )
    description = target / "systems" / "h200_ngc23.09_pytorch.json"
    data = json.loads(description.read_text())
    data["accelerators_per_node"] = "5"
    description.write_text(json.dumps(data))
    report = check(target, Config(select=("AUD003",), cache_dir=None), host)
    found = [f for f in report.findings if f.rule == "AUD003"]
    assert found and all(f.severity.value == "info" and "upper bound" in f.message for f in found)
    assert hardware.match("NVIDIA A100-SXM4-80GB").low_precision_known  # Ampere: no FP8, BF16 is its best
    assert hardware.match("Intel Gaudi2").low_precision_known  # its FP8 peak is sourced
    b200 = hardware.match("NVIDIA Blackwell GPU (B200-SXM-180GB)")
    assert b200.low_precision_known and b200.best_precision == "FP4"  # its FP4 peak is sourced
    assert not dataclasses.replace(b200, fp4_tflops=None).low_precision_known  # FP4 without a peak


@pytest.mark.sample
def test_a_speedup_claim_is_split_into_throughput_and_convergence(cli, sample):
    document = json.loads(cli("audit", str(sample), "--claims", str(CLAIMS), "--format", "json").out)
    verdicts = {claim["id"]: claim for claim in document["claims"]}
    # 5.5088 x 8 / (5.21165 x 8): all throughput, the two converge in the same number of samples
    breakdown = verdicts["h200-bert-5pct"]["breakdown"]
    assert breakdown.startswith(
        "1.057x accelerator-minutes ratio (recomputed) ~ 1.057x work per accelerator-minute ratio"
    )
    assert "x 1.000x convergence" in breakdown
    # the hardware bound judges the claim's throughput share, not the time ratio
    assert "the claim's work per accelerator-minute ratio: 4.00x" in verdicts["trillium-per-chip"]["hardware"]
    assert verdicts["gpt3-minutes"]["breakdown"] == ""  # a time claim has no speedup to split
