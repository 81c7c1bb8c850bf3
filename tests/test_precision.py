"""The precision a result is held to (AUD002, AUD003, the report's utilisation), on real code:
Google's TPU v5p gpt3 launch scripts switch MaxText's int8 quantization on, so those results are
measured against the INT8 peak, and the finding says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit.reference import hardware
from mlperf_audit_rules.support import precision


def test_the_best_precision_of_each_kind_of_accelerator():
    v5p, h100, a100 = (hardware.match(n) for n in ("TPU-v5p", "NVIDIA H100-SXM5-80GB", "NVIDIA A100-SXM4-80GB"))
    assert v5p is not None and v5p.best_precision == "INT8" and v5p.peak("int8") == 918
    assert h100 is not None and h100.best_precision == "FP8"
    assert a100 is not None and a100.best_precision == "BF16" and a100.peak("FP8") is None


def test_a_precision_the_reference_lacks_falls_back_to_the_best_and_says_so():
    a100 = hardware.match("NVIDIA A100-SXM4-80GB")
    assert a100 is not None
    peak = precision.peak_for(a100, precision.Evidence("FP8", "config.sh sets FP8=1"))
    assert peak is not None and peak.precision == "BF16" and "whose peak the hardware reference lacks" in peak.why


def _v40_with_code() -> Path | None:
    folder = published_rounds().get("4.0")
    return folder if folder is not None and (folder / "Google" / "benchmarks").is_dir() else None


@pytest.mark.skipif(_v40_with_code() is None, reason="the v4.0 round with its code is not under $MLPERF_AUDIT_ROUNDS")
def test_google_v5p_gpt3_is_held_to_the_int8_peak_its_script_switches_on(tmp_path):
    root = tmp_path / "round"
    shutil.copytree(_v40_with_code() / "Google", root / "Google")
    system = root / "Google" / "systems" / "cloud-tpu-v5p-1024-maxtext.json"
    data = json.loads(system.read_text())
    data["number_of_nodes"] = str(int(data["number_of_nodes"]) // 2)  # half the chips: 81% of the INT8 peak
    system.write_text(json.dumps(data))
    report = check(root, Config(select=("AUD003",)), PluginHost())
    (finding,) = [f for f in report.findings if "v5p-1024" in (f.path or "")]
    assert "INT8 peak 918 TFLOP/s (v5p-1024.sh sets quantization=int8)" in finding.message


def _v51_with_code() -> Path | None:
    folder = published_rounds().get("5.1")
    return folder if folder is not None and (folder / "NVIDIA" / "benchmarks").is_dir() else None


@pytest.mark.skipif(_v51_with_code() is None, reason="the v5.1 round with its code is not under $MLPERF_AUDIT_ROUNDS")
def test_nvidia_v51_gb300_llama31_405b_is_held_to_the_fp4_peak_its_config_switches_on(tmp_path):
    """NVIDIA's v5.1 NVFP4 recipe (config_common_fp4.sh sets FP4=True) on GB300: the utilisation is
    of the FP4 peak, and the report says so; llama2_70b_lora's configuration switches FP8 on."""
    from mlperf_audit.engine.api import score

    system = "theia_ngpu512_ngc25.09_nemo"
    root = tmp_path / "round" / "NVIDIA"
    shutil.copytree(_v51_with_code() / "NVIDIA" / "systems", root / "systems")
    for benchmark in ("llama31_405b", "llama2_70b_lora"):
        shutil.copytree(
            _v51_with_code() / "NVIDIA" / "results" / system / benchmark, root / "results" / system / benchmark
        )
        shutil.copytree(_v51_with_code() / "NVIDIA" / "benchmarks" / benchmark, root / "benchmarks" / benchmark)
    scores = {
        s.benchmark: s for s in score(root.parent, Config(ruleset="training-5.1.0", cache_dir=None), PluginHost())
    }
    value, peak = scores["llama31_405b"].peak_utilisation
    assert peak == "GB300 (Blackwell Ultra GPU in GB300, 1400W)'s FP4 peak" and 0.1 < value < 0.5
    assert scores["llama2_70b_lora"].peak_utilisation[1].endswith("'s FP8 peak")
