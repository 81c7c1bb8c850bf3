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

The derivations are those of `../shared/reference/hardware.md` section 2.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from .model import SystemDescription


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
    #: True: the architecture has FP4 (Blackwell, CDNA 4); its peak is `fp4_tflops` where sourced
    fp4_supported: bool | None = None
    fp6_tflops: float | None = None
    fp4_tflops: float | None = None

    @property
    def low_precision_known(self) -> bool:
        """Whether the best peak is the accelerator's best: an FP8 or INT8 peak is sourced (or it has
        no FP8) and, where it has FP4, the FP4 peak is sourced. Without, the best peak may be
        understated (Gaudi2 trained gpt3 in FP8 in v4.0; Blackwell trains in NVFP4 in v5.1)."""
        if self.fp4_supported and self.fp4_tflops is None:
            return False
        return self.fp8_tflops is not None or self.int8_tops is not None or self.fp8_supported is False

    def peak(self, precision: str) -> float | None:
        """The dense peak of "BF16", "FP8", "INT8", "FP6" or "FP4" (TFLOP/s or TOP/s), None when not sourced."""
        return dict(zip(PRECISIONS, self._peaks())).get(precision.upper())

    def _peaks(self) -> tuple[float | None, ...]:
        return (self.bf16_tflops, self.fp8_tflops, self.int8_tops, self.fp6_tflops, self.fp4_tflops)

    @property
    def best_precision(self) -> str | None:
        """The precision of `best_peak_tflops` (the wider one when two are equal, as TPU v5p's BF16
        and FP8, or Blackwell's FP8 and FP6)."""
        best = self.best_peak_tflops
        return next((p for p in PRECISIONS if best is not None and self.peak(p) == best), None)

    @property
    def best_peak_tflops(self) -> float | None:
        """The highest dense peak of BF16, FP8, INT8, FP6 and FP4: the logs do not say which a run
        used (Google's v5p gpt3 trains with INT8 matmuls, whose peak is twice its BF16 and FP8 peak;
        NVIDIA's v5.1 llama31_405b trains in NVFP4)."""
        peaks = [p for p in self._peaks() if p is not None]
        return max(peaks) if peaks else None


#: The precisions of the hardware reference, widest first; `WIDE`, those every generation since
#: Hopper trains in (FP6 and FP4 are Blackwell's and CDNA 4's).
PRECISIONS = ("BF16", "FP8", "INT8", "FP6", "FP4")
WIDE = ("BF16", "FP8", "INT8")


@dataclass(frozen=True)
class Work:
    flops_per_unit: float
    unit: str
    derivation: str
    #: The utilisation of the best peak above which a run asks for an explanation (AUD003): the
    #: best honest v4.x results reach 44.5% (gpt3) and 38.7% (llama2_70b_lora) of the FP8 peak;
    #: bert's work is an upper bound (implementations unpad), so its ceiling is higher.
    ceiling: float
    #: "exact" (above 100% of peak is impossible: AUD002), "an upper bound" or "approximate"
    #: (above the ceiling is no evidence: information only)
    kind: str = "exact"
    #: The training state the accelerators hold between them, in bytes, where the benchmark fixes
    #: the model's size (AUD010): parameters x `FULL_TRAINING_BYTES` or `FROZEN_BASE_BYTES`.
    state_bytes: float | None = None


#: Bytes of training state per parameter that Megatron-style mixed-precision Adam keeps on the
#: accelerators (BF16 weights and gradients, FP32 master weights and two FP32 moments: 2+2+4+4+4),
#: sharded over every accelerator at best; a LoRA fine-tune keeps its frozen base in FP8 at least
#: (1 byte). Offloading to the host could lower it; no published run does.
FULL_TRAINING_BYTES = 16
FROZEN_BASE_BYTES = 1
#: The least a mixture of experts trained from scratch keeps per parameter: DeepSeek-V3's own recipe
#: (arXiv 2412.19437, section 3.3.3) tracks AdamW's moments in BF16 (2+2), with BF16 weights and
#: gradients (2+2) and FP32 master weights (4). Every expert is trained, so every parameter counts.
MOE_TRAINING_BYTES = 12


def _llm_sample(matmul_parameters: float, layers: int, width: int, sequence: int) -> float:
    """Training FLOPs of one `sequence`-token sample of a dense decoder: (6·Nmm + 12·L·d·s) per token
    (PaLM, appendix B: weight matmuls forward and backward, attention scores and values without
    the causal discount)."""
    return sequence * (6 * matmul_parameters + 12 * layers * width * sequence)


#: DeepSeek-V3's matmul parameters a token passes through: attention, the 3 dense FFNs, 8 routed
#: and 1 shared expert in each of the 58 MoE layers, the output layer (derivation at WORK).
_DEEPSEEK_V3_MATMUL = (
    61 * (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168)
    + 3 * 3 * 7168 * 18432
    + 58 * 9 * 3 * 7168 * 2048
    + 7168 * 129_280
)
#: gpt-oss-20b's: attention, 4 of 32 experts in each of the 24 layers, the output layer.
_GPT_OSS_20B_MATMUL = 24 * (2 * 2880 * 4096 + 2 * 2880 * 512) + 24 * 4 * 3 * 2880 * 2880 + 2880 * 201_088

WORK: dict[str, Work] = {
    "gpt3": Work(
        1.079e12,
        "token",
        "6N + 12·L·d·s per token, N = 175e9, L = 96, d = 12288, s = 2048",
        0.60,
        state_bytes=175e9 * FULL_TRAINING_BYTES,
    ),
    "llama2_70b_lora": Work(
        2.78e15,
        "8192-token sample",
        "(4·Nmm + 12·L·d·s) x 8192 tokens, Nmm = 68.71e9, L = 80, d = 8192, s = 8192",
        0.60,
        state_bytes=68.98e9 * FROZEN_BASE_BYTES,
    ),
    "bert": Work(
        1.1e12,
        "512-token sequence",
        "6N·512 + 12·L·d·s·512, N = 335e6 (an upper bound: unpadding)",
        0.75,
        "an upper bound",
    ),
    # Llama 3.1 (arXiv 2407.21783, table 3): 8B has 32 layers of width 4096, FFN 14336, 32 query and
    # 8 key/value heads of 128; Nmm = 32 x (2·4096² + 2·4096·1024 + 3·4096·14336) + 4096·128256
    # (the output layer) = 7.50e9. The logged unit (samples_count) is 8192-token samples. Best
    # honest v5.1 result: 46.3% of the B200 FP8 peak; ceiling 1.35x that.
    "llama31_8b": Work(
        _llm_sample(7.50e9, 32, 4096, 8192),
        "8192-token sample",
        "(6·Nmm + 12·L·d·s) x 8192 tokens, Nmm = 7.50e9, L = 32, d = 4096, s = 8192",
        0.65,
        state_bytes=8.03e9 * FULL_TRAINING_BYTES,
    ),
    # 405B: 126 layers of width 16384, FFN 53248, 128 query and 8 key/value heads of 128;
    # Nmm = 126 x (2·16384² + 2·16384·1024 + 3·16384·53248) + 16384·128256 = 403.7e9. Best honest
    # (v5.0-v5.1): 54.3% of the GB200 FP8 peak; ceiling 1.35x that.
    "llama31_405b": Work(
        _llm_sample(403.7e9, 126, 16384, 8192),
        "8192-token sample",
        "(6·Nmm + 12·L·d·s) x 8192 tokens, Nmm = 403.7e9, L = 126, d = 16384, s = 8192",
        0.75,
        state_bytes=405.9e9 * FULL_TRAINING_BYTES,
    ),
    # DeepSeek-V3 (arXiv 2412.19437, section 4.2 and its config.json): 61 layers of width 7168;
    # multi-head latent attention, 128 heads, q rank 1536, kv rank 512, query/key head 128+64, value
    # 128: q 7168·1536 + 1536·128·192, kv 7168·576 + 512·128·256, o 128·128·7168 = 187.0e6 a layer;
    # 3 dense layers of FFN 18432 and 58 MoE layers activating 8 routed and 1 shared expert of FFN
    # 2048 (3·7168·2048 each); output layer 7168·129280. Nmm = 36.5e9 of the paper's 37B activated
    # (the rest is the input embedding, a lookup). Attention scores and values: 2·s·128·(192+128)
    # FLOPs a token a layer forward, x3 for training. The logged unit (samples_count) is
    # 4096-token sequences. Approximate (routing, no published round): the dense ceiling.
    "deepseekv3_671b": Work(
        4096 * (6 * _DEEPSEEK_V3_MATMUL + 6 * 61 * 4096 * 128 * (192 + 128)),
        "4096-token sample",
        "(6·Nmm + 6·L·s·heads·(dqk + dv)) x 4096 tokens, Nmm = 36.5e9 active of 671e9, L = 61, 128 heads, "
        "dqk = 192, dv = 128",
        0.60,
        "approximate",
        state_bytes=671e9 * MOE_TRAINING_BYTES,
    ),
    # gpt-oss-20b (model card, arXiv 2508.10925, table 1 and section 2.1): 24 layers of width 2880;
    # 64 query and 8 key/value heads of 64 (q and o 2880·4096, k and v 2880·512): 26.5e6 a layer;
    # 32 experts of SwiGLU FFN 2880 (3·2880·2880), 4 active; output layer 2880·201088.
    # Nmm = 0.637e9 + 2.389e9 + 0.579e9 = 3.605e9, the card's 3.6B active (its 20.9B total less
    # the embedding). Attention alternates dense layers and 128-token bands: 12·d·s a token in the
    # 12 dense layers, 12·d·128 in the 12 banded ones, d = 4096. The logged unit is 8192-token
    # sequences. Approximate (routing, no published round): the dense ceiling.
    "gpt_oss_20b": Work(
        8192 * (6 * _GPT_OSS_20B_MATMUL + 12 * 12 * 4096 * 8192 + 12 * 12 * 4096 * 128),
        "8192-token sample",
        "(6·Nmm + 12·L·d·s over 12 dense and 12 banded layers) x 8192 tokens, Nmm = 3.605e9 active of "
        "20.9e9, d = 4096, s = 8192 (128 in a band)",
        0.60,
        "approximate",
        state_bytes=20.9e9 * MOE_TRAINING_BYTES,
    ),
    # ResNet-50 v1.5 at 224x224: 4.1e9 multiply-adds forward (torchvision's 4.09 GMACs; He et al.
    # 2016 give 3.8e9 for v1), 8.2e9 FLOPs; training about 3x forward; an epoch is ImageNet's
    # 1,281,167 training images (the logged unit is epochs). Best honest (v1.0-v3.1): 33.5% of the
    # Gaudi2 BF16 peak; convolutions' FLOPs are approximate (cuDNN may choose Winograd), so a
    # ceiling only, never an error.
    "resnet": Work(
        1_281_167 * 3 * 8.2e9, "epoch", "3 x 8.2e9 FLOPs per 224x224 image x 1,281,167 images", 0.45, "approximate"
    ),
}

#: The benchmarks without a FLOP model, and why: the published-results envelope (AUD008, AUD009)
#: judges them instead.
NOT_MODELLED: dict[str, str] = {
    "dlrm": "bound by embedding-table lookups (memory), not FLOPs",
    "dlrm_dcnv2": "bound by embedding-table lookups (memory), not FLOPs",
    "dlrmv4": "bound by embedding-table lookups (memory), not FLOPs",
    "gnn": "bound by neighbour sampling and feature gathering, not FLOPs",
    "rgat": "bound by neighbour sampling and feature gathering, not FLOPs",
    "minigo": "bound by self-play (inference and tree search on the host), not training FLOPs",
    "ssd": "the cost per image depends on RetinaNet's resized inputs and the anchors kept; no sourced figure",
    "retinanet": "the cost per image depends on RetinaNet's resized inputs and the anchors kept; no sourced figure",
    "maskrcnn": "COCO images of varying size and a data-dependent number of proposals: no fixed cost per image",
    "rnnt": "utterances of varying length: no fixed cost per sample",
    "unet3d": "random crops of varying volumes in training, whole volumes in evaluation: no fixed cost per sample",
    "stable_diffusion": "UNet, VAE and text-encoder costs at 512x512 without a sourced figure per sample",
    "flux1": "MMDiT cost per sample depends on image and text token counts; no sourced figure",
    "qwen35_397b_grpo": "reinforcement learning: rollouts of up to 65536 tokens (generation, whose length the "
    "logs do not give) dominate, not training FLOPs per sample",
}


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class Family:
    """An accelerator family as free text names it (a system description, a platform, a
    configuration's file name): its `spellings` are matched on the text's letters and digits."""

    name: str
    maker: str
    spellings: tuple[str, ...]

    def named_in(self, text: str) -> bool:
        """Whether `text` names this family: a spelling matches the text's letters and digits, and
        one that ends (starts) with a digit must not run on into a digit the text writes right after
        (before) it: "gaudi-384", 384 Gaudi2s, is no Gaudi 3; "config_DGXH100_1x8" is an H100."""
        kept = [(c, i) for i, ch in enumerate(text) for c in ch.lower() if c.isascii() and c.isalnum()]
        normal = "".join(c for c, _ in kept)
        for spelling in self.spellings:
            for found in re.finditer(re.escape(spelling), normal):
                first, last = kept[found.start()][1], kept[found.end() - 1][1]
                runs_on = spelling[-1].isdigit() and last + 1 < len(text) and text[last + 1].isdigit()
                runs_in = spelling[0].isdigit() and first > 0 and text[first - 1].isdigit()
                if not runs_on and not runs_in:
                    return True
        return False


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("mlperf_audit").joinpath("data/accelerators.json").read_text())
    return data


@cache
def families() -> tuple[Family, ...]:
    """Every family of `data/accelerators.json`, in its order: a family one of whose spellings
    contains another's (GB200 and B200, L40S and L40) comes first."""
    return tuple(
        Family(entry["family"], entry["maker"], tuple(_normal(s) for s in entry["spellings"]))
        for entry in _data()["families"]
    )


def maker_of(family: str | None) -> str | None:
    """Who makes an accelerator family: "nvidia", "amd", "intel", "google", ... (None when unknown)."""
    return next((f.maker for f in families() if f.name == family), None)


@cache
def table() -> tuple[Accelerator, ...]:
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
            fp4_supported=entry.get("fp4_supported"),
            fp6_tflops=entry.get("peak_dense_fp6_tflops"),
            fp4_tflops=entry.get("peak_dense_fp4_tflops"),
        )
        for entry in _data()["accelerators"]
    )


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
    normal = _normal(name)
    for accelerator in table():
        if any(_normal(alias) == normal for alias in accelerator.names) or _normal(accelerator.model) == normal:
            return accelerator
    family = _family(name)
    if family is None:
        return None
    candidates = [a for a in table() if any(_family(n) == family for n in a.names + (a.model,))]
    variant = next((v for v in _data()["variants"] if v in normal), None)
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
