"""The hardware reference and the work model: what an accelerator can do and what a benchmark costs.

Reference data of the public rule API (`from mlperf_audit import hardware`), shared by the
plausibility and forensic rules and by the `audit` and `report` commands.

`data/accelerators.json` lists every accelerator that appears in MLPerf Training results v1.0 to
v5.1 (and V100, TPU v3, Gaudi 3 for comparisons) with dense peak BF16, FP8 and INT8 throughput,
memory capacity and bandwidth, scale-up bandwidth and TDP, each figure with its source; an unknown
figure is null, never a guess.

The work model gives the training FLOPs per logged convergence unit, where that is meaningful:

- gpt3: 6N + 12·L·d·s per token (model FLOPs, PaLM appendix B; attention without the causal
  discount, no recomputation) with N = 175e9, L = 96, d = 12288, s = 2048: 1.079e12 FLOP per
  token; the logged unit (`epoch_num`) is tokens.
- llama2_70b_lora: frozen base, so forward 2·Nmm plus backward input gradients 2·Nmm, no weight
  gradients: 4·Nmm + 12·L·d·s per token with Nmm = 68.71e9 matmul parameters, L = 80, d = 8192,
  s = 8192: 3.393e11 FLOP per token, 2.78e15 per packed 8192-token sample (`samples_count`).
- bert: 6N·512 + 12·L·d·s·512 with N = 335e6, L = 24, d = 1024, s = 512: about 1.1e12 FLOP per
  512-token sequence, an upper bound (implementations unpad); the unit (`epoch_num`) is samples.
- llama31_8b and llama31_405b: (6·Nmm + 12·L·d·s) per token, from Llama 3.1's architecture
  (arXiv 2407.21783), per logged 8192-token sample; resnet: 3 x 8.2e9 FLOPs per 224x224 image per
  epoch of ImageNet (approximate: a ceiling, never an error).
- deepseekv3_671b and gpt_oss_20b, mixtures of experts, by their active parameters: (6·Nmm +
  attention) per token with Nmm the matmul parameters a token passes through (DeepSeek-V3: 37B
  activated of 671B, arXiv 2412.19437; gpt-oss-20b: 3.6B active of 20.9B, its model card, arXiv
  2508.10925), per logged sample of `max_sequence_length` tokens (4096 and 8192). Approximate:
  no published round has confirmed the logged unit or calibrated a ceiling yet, so they never
  make an error (information only above the ceiling).
- every other benchmark is in `NOT_MODELLED` with the reason (embedding-bound dlrm, sampling-bound
  gnn and rgat, data-dependent shapes, reinforcement learning): no utilisation check for them; the
  published-results envelope covers them.

The derivations are those of `../shared/reference/hardware.md` section 2. The figures and the
work models are the reference layer's data (`mlperf_audit.reference`, `data/accelerators.json` and
`data/benchmarks.json`, each with its source); this module matches free text to them, measures
utilisation and bounds speedups.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..model import SystemDescription
from . import benchmarks as _benchmarks
from .accelerators import PRECISIONS, Accelerator, Family, families, maker_of, normal_name, table, variants
from .benchmarks import Work

__all__ = [
    "CAPACITY_TOLERANCE",
    "MAX_ACCELERATORS",
    "MEASUREMENT_MARGIN",
    "NOT_MODELLED",
    "PRECISIONS",
    "SOFTWARE_ACROSS_ROUNDS",
    "SOFTWARE_SAME_ROUND",
    "WIDE",
    "WORK",
    "Accelerator",
    "Family",
    "Work",
    "capacities_agree",
    "capacity_bytes",
    "families",
    "family_of_text",
    "maker_of",
    "match",
    "named_capacity_gb",
    "of_system",
    "speedup_bound",
    "speedup_ratio",
    "table",
    "utilisation",
]

#: The precisions every generation since Hopper trains in (FP6 and FP4 are Blackwell's and CDNA 4's).
WIDE = ("BF16", "FP8", "INT8")

#: The work models of the reference (`data/benchmarks.json`), by benchmark.
WORK: dict[str, Work] = {entry.name: entry.work for entry in _benchmarks.benchmarks() if entry.work is not None}

#: The benchmarks without a FLOP model, and why: the published-results envelope (AUD008, AUD009)
#: judges them instead.
NOT_MODELLED: dict[str, str] = {
    entry.name: entry.not_modelled for entry in _benchmarks.benchmarks() if entry.not_modelled is not None
}


#: A capacity or a power written after a number ("80GB", "(300W)", "96 GiB"): dropped before a
#: family is looked for, or "A100-PCIE-80GB (300W)" would read as GB300.
_QUANTITY = re.compile(r"(?<![a-z0-9.])\d+(?:\.\d+)?\s*(?:[gmt]i?b|g|w)(?![a-z0-9])", re.IGNORECASE)


def _family(text: str) -> str | None:
    bare = _QUANTITY.sub(" ", text)
    return next((f.name for f in families() if f.named_in(bare)), None)


def match(name: Any) -> Accelerator | None:
    """The reference entry for a free-text `accelerator_model_name`, or None when unknown (or not
    text at all: a description may hold a list or an object there)."""
    if not isinstance(name, str) or not name.strip():
        return None
    return _match(name)


@cache
def _match(name: str) -> Accelerator | None:
    normal = normal_name(name)
    for accelerator in table():
        if any(normal_name(alias) == normal for alias in accelerator.names) or normal_name(accelerator.model) == normal:
            return accelerator
    family = _family(name)
    if family is None:
        return None
    candidates = [a for a in table() if any(_family(n) == family for n in a.names + (a.model,))]
    variant = next((v for v in variants() if v in normal), None)
    if variant is not None:
        narrowed = [a for a in candidates if any(variant in normal_name(n) for n in a.names + (a.model,))]
        candidates = narrowed or candidates
    memory = [int(m) for m in re.findall(r"(\d{2,3})\s*gb", name.lower())]
    if memory:
        narrowed = [a for a in candidates if a.hbm_gb is not None and int(a.hbm_gb) in memory]
        candidates = narrowed or candidates
    return candidates[0] if candidates else None


def family_of_text(text: Any) -> str | None:
    """The accelerator family a free text (a platform name, say) names, if any."""
    return _family(text) if isinstance(text, str) else None


#: Bytes per unit of a written capacity: (as decimal, as binary). "GB" is ambiguous: vendors write
#: 80 GB for 80 GiB (nvidia-smi's 81559 MiB for an H100 80GB) and 288 GB for 288e9 bytes (275040
#: MiB for a B300), so a capacity is the range of both readings.
_CAPACITY_UNITS = {
    "tb": (1e12, 2.0**40),
    "tib": (2.0**40, 2.0**40),
    "gb": (1e9, 2.0**30),
    "g": (1e9, 2.0**30),
    "gib": (2.0**30, 2.0**30),
    "mb": (1e6, 2.0**20),
    "mib": (2.0**20, 2.0**20),
}
_CAPACITY = re.compile(r"\s*(\d{1,9}(?:\.\d{1,12})?)\s*([a-z]{1,3})?\s*(?:hbm\w{0,8}|gddr\w{0,8})?\s*", re.IGNORECASE)
#: A capacity written in a model name: "A100-PCIE-80GB", "H200 NVL 141GB", "(B300-SXM-270GB)".
_NAMED_CAPACITY = re.compile(r"(?<![0-9.])(\d{2,3})\s*gb(?![a-z0-9])", re.IGNORECASE)


def capacity_bytes(text: Any) -> tuple[float, float] | None:
    """The bytes a written memory capacity may mean ("80 GB", "143771 MiB", "288GB", "96 GiB",
    80), as (least, most); None when it is not one capacity (empty, "N/A", "2x 24 GB")."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        return None
    found = _CAPACITY.fullmatch(str(text))
    if found is None:
        return None
    units = _CAPACITY_UNITS.get((found.group(2) or "gb").lower())
    value = float(found.group(1))
    if units is None or not 0 < value < 1e12:
        return None
    return value * units[0], value * units[1]


def named_capacity_gb(name: Any) -> float | None:
    """The memory capacity an accelerator's model name writes ("NVIDIA A100-PCIE-80GB (300W)": 80), if one."""
    if not isinstance(name, str):
        return None
    sizes = {int(m) for m in _NAMED_CAPACITY.findall(name)}
    return float(sizes.pop()) if len(sizes) == 1 else None


#: How far apart two capacities may be before they contradict each other: a GPU's usable memory
#: is a few percent below its nominal (an A10G's 24 GB shows as 22.06 GiB; a GB300's 288 GB HBM
#: as 279 GB usable).
CAPACITY_TOLERANCE = 0.10


def capacities_agree(written: tuple[float, float], nominal_gb: float) -> bool:
    """Whether a written capacity (`capacity_bytes`) can be an accelerator's `nominal_gb` (GB or GiB)."""
    low, high = nominal_gb * 1e9, nominal_gb * 2.0**30
    return written[1] >= low * (1 - CAPACITY_TOLERANCE) and written[0] <= high * (1 + CAPACITY_TOLERANCE)


#: Far more accelerators than any submitted system has: a count beyond this is not a count, and
#: dividing a rate by a count of hundreds of digits overflows a float.
MAX_ACCELERATORS = 10**7


def of_system(description: SystemDescription | None) -> tuple[int | None, Accelerator | None]:
    """How many accelerators a system description declares (per node times nodes), and which."""
    if description is None or description.data is None:
        return None, None
    per_node, nodes = description.count("accelerators_per_node"), description.count("number_of_nodes")
    count = per_node * nodes if per_node and nodes else None
    if count is not None and count > MAX_ACCELERATORS:  # no rate per accelerator from such a count
        count = None
    return count, match(description.get("accelerator_model_name"))


def utilisation(
    units: float, minutes: float, benchmark: str, count: int, accelerator: Accelerator, peak: float | None = None
) -> float | None:
    """The share of the accelerators' dense `peak` (TFLOP/s; default: the best they offer) that
    `units` of `benchmark`'s work in `minutes` on `count` accelerators took, or None without a
    work model or a peak."""
    model = WORK.get(benchmark)
    peak = peak if peak is not None else accelerator.best_peak_tflops
    if model is None or peak is None or count <= 0:
        return None
    return units * model.flops_per_unit / (minutes * 60) / count / (peak * 1e12)


#: How much more one round of software gives on the same hardware (reference R2: gains of 1.02x to
#: 1.26x were observed across a round), and the allowance for measurement noise.
SOFTWARE_SAME_ROUND = 1.0
SOFTWARE_ACROSS_ROUNDS = 1.3
MEASUREMENT_MARGIN = 1.10


def speedup_ratio(
    accelerator: Accelerator, other: Accelerator, precisions: tuple[str, ...] = PRECISIONS
) -> tuple[float, str] | None:
    """How much faster `accelerator` can be than `other`: the largest of the ratios of the peaks
    both have (like for like: BF16 with BF16, FP8 with FP8, FP4 with FP4; an H100's FP8 peak is
    6.3x an A100's BF16, its BF16 peak 3.2x, and a run in BF16 gains the latter) and of the memory
    bandwidths (a benchmark may be bound by either); where `accelerator` has an FP4 peak and
    `other` none, also its FP4 peak over the best `other` offers (a result may train in FP4 what
    the other trained in FP8 at best, as NVIDIA's v5.1 llama31_405b did). With the reasoning.
    None when not known: an accelerator with FP4 whose FP4 peak is not sourced is compared with
    itself only. `precisions` limits the peaks compared (`WIDE`: as if neither trained in FP6 or FP4)."""
    if other.model == accelerator.model:
        return 1.0, "the same accelerator"
    if accelerator.fp4_supported and accelerator.fp4_tflops is None and "FP4" in precisions:
        return None
    ratios = []
    for precision in precisions:
        mine, theirs = accelerator.peak(precision), other.peak(precision)
        if mine and theirs:
            ratios.append((mine / theirs, f"{precision} peak"))
    if "FP4" in precisions and accelerator.fp4_tflops and not other.fp4_tflops and other.best_peak_tflops:
        ratios.append(
            (accelerator.fp4_tflops / other.best_peak_tflops, f"FP4 peak over the {other.best_precision} peak")
        )
    if not ratios and accelerator.best_peak_tflops and other.best_peak_tflops:
        ratios.append((accelerator.best_peak_tflops / other.best_peak_tflops, "best dense peak"))
    if accelerator.hbm_tbs and other.hbm_tbs:
        ratios.append((accelerator.hbm_tbs / other.hbm_tbs, "memory bandwidth"))
    if not ratios:
        return None
    ratio, basis = max(ratios)
    return ratio, f"{accelerator.model} over {other.model}: {basis} ratio {ratio:.2f}"


def speedup_bound(new_name: Any, old_name: Any, software: float) -> tuple[float | None, str]:
    """The largest per-accelerator speedup of accelerator `new_name` over `old_name` that the
    hardware supports: `speedup_ratio`, times `software` and the measurement margin; with the
    reasoning, or why there is none."""
    a, b = match(new_name), match(old_name)
    if a is None or b is None:
        return None, "an accelerator is not in the hardware reference"
    found = speedup_ratio(a, b)
    if found is None:
        why = (
            "its FP4 peak is not sourced"
            if a.fp4_supported and a.fp4_tflops is None
            else "no peak or bandwidth figures for both"
        )
        return None, f"{a.model} over {b.model}: {why}"
    ratio, reason = found
    bound = ratio * software * MEASUREMENT_MARGIN
    return bound, f"{reason} x software {software:g} x margin {MEASUREMENT_MARGIN:g} = {bound:.2f}"
