"""The hardware reference and the work model behind the plausibility rules.

`data/accelerators.json` lists every accelerator that appears in MLPerf Training results v3.1 to
v5.0 with dense peak BF16, FP8 and INT8 throughput, HBM capacity and bandwidth, scale-up bandwidth
and TDP, each figure with its source; an unknown figure is null, never a guess.

The work model gives the training FLOPs per logged convergence unit, where that is meaningful:

- gpt3: 6N + 12·L·d·s per token (model FLOPs, PaLM appendix B; attention without the causal
  discount, no recomputation) with N = 175e9, L = 96, d = 12288, s = 2048: 1.079e12 FLOP per
  token; the logged unit (`epoch_num`) is tokens.
- llama2_70b_lora: frozen base, so forward 2·Nmm plus backward input gradients 2·Nmm, no weight
  gradients: 4·Nmm + 12·L·d·s per token with Nmm = 68.71e9 matmul parameters, L = 80, d = 8192,
  s = 8192: 3.393e11 FLOP per token, 2.78e15 per packed 8192-token sample (`samples_count`).
- bert: 6N·512 + 12·L·d·s·512 with N = 335e6, L = 24, d = 1024, s = 512: about 1.1e12 FLOP per
  512-token sequence, an upper bound (implementations unpad); the unit (`epoch_num`) is samples.
- dlrm_dcnv2 and gnn are bound by embedding lookups and neighbour sampling, not FLOPs, and the
  stable_diffusion and ssd figures are too rough (or need a dataset size the logs do not give):
  no utilisation check for them.

The derivations are those of `../shared/reference/hardware.md` section 2.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Accelerator:
    model: str
    names: tuple[str, ...]
    bf16_tflops: float | None
    fp8_tflops: float | None
    int8_tops: float | None
    hbm_gb: float | None
    hbm_tbs: float | None
    scaleup_gbs: float | None
    tdp_w: float | None
    sources: dict[str, str]
    fp8_supported: bool | None = None  # False: the architecture has no FP8 (Ampere), so BF16 is its best training peak

    @property
    def low_precision_known(self) -> bool:
        """Whether an FP8 or INT8 peak is sourced: without one, the best peak may be understated (Gaudi2
        trained gpt3 in FP8 in v4.0, whose FP8 peak is not sourced here)."""
        return self.fp8_tflops is not None or self.int8_tops is not None or self.fp8_supported is False

    @property
    def best_peak_tflops(self) -> float | None:
        """The highest dense peak of BF16, FP8 and INT8: the logs do not say which a run used (Google's
        v5p gpt3 trains with INT8 matmuls, whose peak is twice its BF16 and FP8 peak)."""
        peaks = [p for p in (self.bf16_tflops, self.fp8_tflops, self.int8_tops) if p is not None]
        return max(peaks) if peaks else None


@dataclass(frozen=True)
class Work:
    flops_per_unit: float
    unit: str
    derivation: str


WORK: dict[str, Work] = {
    "gpt3": Work(1.079e12, "token", "6N + 12·L·d·s per token, N = 175e9, L = 96, d = 12288, s = 2048"),
    "llama2_70b_lora": Work(2.78e15, "8192-token sample",
                            "(4·Nmm + 12·L·d·s) x 8192 tokens, Nmm = 68.71e9, L = 80, d = 8192, s = 8192"),
    "bert": Work(1.1e12, "512-token sequence", "6N·512 + 12·L·d·s·512, N = 335e6 (an upper bound: unpadding)"),
}


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_FAMILIES = ["gb200", "b200", "h200", "h100", "a100", "a10g", "a30", "l40s", "l40", "l4", "rtxa5000", "4090",
             "7900xtx", "mi325x", "mi300x", "gaudi2", "gaudi2ai", "v5e", "v5p", "trillium", "v6e"]
_VARIANTS = ["pcie", "nvl", "sxm"]


@cache
def table() -> tuple[Accelerator, ...]:
    data = json.loads(resources.files("mlperf_audit_rules").joinpath("data/accelerators.json").read_text())
    return tuple(
        Accelerator(
            model=entry["model"],
            names=tuple(entry["accelerator_model_names"]),
            bf16_tflops=entry["peak_dense_bf16_tflops"],
            fp8_tflops=entry["peak_dense_fp8_tflops"],
            int8_tops=entry.get("peak_dense_int8_tops"),
            hbm_gb=entry["hbm_capacity_gb"],
            hbm_tbs=entry["hbm_bandwidth_tbs"],
            scaleup_gbs=entry["scaleup_bw_per_accel_gbs"],
            tdp_w=entry["tdp_w"],
            sources=dict(entry.get("sources") or {}),
            fp8_supported=entry.get("fp8_supported"),
        )
        for entry in data["accelerators"]
    )


def _family(text: str) -> str | None:
    normal = _normal(text)
    for family in _FAMILIES:
        if family in normal:
            return "gaudi2" if family == "gaudi2ai" else ("trillium" if family == "v6e" else family)
    return None


def match(name: Any) -> Accelerator | None:
    """The reference entry for a free-text `accelerator_model_name`, or None when unknown (or not
    text at all: a description may hold a list or an object there)."""
    if not isinstance(name, str) or not name.strip():
        return None
    return _match(name)


@cache
def _match(name: str) -> Accelerator | None:
    normal = _normal(name)
    for accelerator in table():
        if any(_normal(alias) == normal for alias in accelerator.names) or _normal(accelerator.model) == normal:
            return accelerator
    family = _family(name)
    if family is None:
        return None
    candidates = [a for a in table() if any(_family(n) == family for n in a.names + (a.model,))]
    variant = next((v for v in _VARIANTS if v in normal), None)
    if variant is not None:
        narrowed = [a for a in candidates if any(variant in _normal(n) for n in a.names + (a.model,))]
        candidates = narrowed or candidates
    memory = [int(m) for m in re.findall(r"(\d{2,3})\s*gb", name.lower())]
    if memory:
        narrowed = [a for a in candidates if a.hbm_gb is not None and int(a.hbm_gb) in memory]
        candidates = narrowed or candidates
    return candidates[0] if candidates else None


def family_of_text(text: Any) -> str | None:
    """The accelerator family a free text (a platform name, say) names, if any."""
    return _family(text) if isinstance(text, str) else None
