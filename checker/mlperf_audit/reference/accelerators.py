"""Per accelerator: family, maker, the names descriptions give it, its peaks, memory and power, each
figure with its source (`data/accelerators.json`, decoded strictly: an unknown key is an error).

Matching free text to an entry, utilisation and the speedup bounds are `mlperf_audit.reference.hardware`'s;
this module only holds and validates the data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import msgspec

from .errors import ReferenceDataError

Number = int | float


class _AcceleratorEntry(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    model: str
    accelerator_model_names: list[str]
    peak_dense_bf16_tflops: Number | None
    peak_dense_fp8_tflops: Number | None
    hbm_capacity_gb: Number | None
    hbm_bandwidth_tbs: Number | None
    scaleup_bw_per_accel_gbs: Number | None
    tdp_w: Number | None
    sources: dict[str, str]
    notes: str = ""
    peak_dense_int8_tops: Number | None = None
    fp8_supported: bool | None = None
    fp4_supported: bool | None = None
    peak_dense_fp6_tflops: Number | None = None
    peak_dense_fp4_tflops: Number | None = None


class _FamilyEntry(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    family: str
    maker: str
    spellings: list[str]


class SummarizerName(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A name the official result summarizer shows otherwise than descriptions write it: the
    accelerator `written` as `shown`, a system named `written` as `shown`.<accelerators per node x
    `system_count_factor`>."""

    written: str
    shown: str
    system_count_factor: int
    source: str


class _AcceleratorData(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    note: str
    families_note: str
    families: list[_FamilyEntry]
    variants: list[str]
    summarizer_names: list[SummarizerName]
    accelerators: list[_AcceleratorEntry]


#: The precisions of the hardware reference, widest first.
PRECISIONS = ("BF16", "FP8", "INT8", "FP6", "FP4")


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


def normal_name(text: str) -> str:
    """A name's lowercase ASCII letters and digits: how spellings and aliases are compared."""
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


def _figures(entry: _AcceleratorEntry) -> list[Number]:
    """The figures an entry gives (a CPU-only system's entry gives none, and needs no source)."""
    values = [getattr(entry, field) for field in entry.__struct_fields__]
    return [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def load(text: bytes | str) -> _AcceleratorData:
    """The accelerator reference decoded from JSON `text`; ReferenceDataError names what is wrong
    (an unknown key, a wrong type, a family or model named twice, a figure without a source)."""
    try:
        data = msgspec.json.decode(text, type=_AcceleratorData)
    except msgspec.ValidationError as error:
        raise ReferenceDataError(f"accelerators.json: {error}") from None
    for kind, names in (
        ("family", [f.family for f in data.families]),
        ("model", [a.model for a in data.accelerators]),
    ):
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ReferenceDataError(f"accelerators.json: {kind} named twice: {', '.join(twice)}")
    unsourced = [n.written for n in data.summarizer_names if not n.source.strip()] + [
        a.model for a in data.accelerators if _figures(a) and not any(s.strip() for s in a.sources.values())
    ]
    if unsourced:
        raise ReferenceDataError(f"accelerators.json: no source for {', '.join(unsourced)}")
    return data


@cache
def _data() -> _AcceleratorData:
    return load(resources.files("mlperf_audit").joinpath("data/accelerators.json").read_bytes())


@cache
def families() -> tuple[Family, ...]:
    """Every family of `data/accelerators.json`, in its order: a family one of whose spellings
    contains another's (GB200 and B200, L40S and L40) comes first."""
    return tuple(Family(f.family, f.maker, tuple(normal_name(s) for s in f.spellings)) for f in _data().families)


def maker_of(family: str | None) -> str | None:
    """Who makes an accelerator family: "nvidia", "amd", "intel", "google", ... (None when unknown)."""
    return next((f.maker for f in families() if f.name == family), None)


def summarizer_name(written: object) -> SummarizerName | None:
    """How the official result summarizer shows a system or accelerator a description names
    `written` (anything a description holds), where it renames it."""
    return (
        next((n for n in _data().summarizer_names if n.written == written), None) if isinstance(written, str) else None
    )


def variants() -> tuple[str, ...]:
    """Board variants ("pcie", "nvl", "sxm") that narrow a family's entries."""
    return tuple(_data().variants)


@cache
def table() -> tuple[Accelerator, ...]:
    """Every accelerator of the reference, in its order."""
    return tuple(
        Accelerator(
            model=entry.model,
            names=tuple(entry.accelerator_model_names),
            bf16_tflops=entry.peak_dense_bf16_tflops,
            fp8_tflops=entry.peak_dense_fp8_tflops,
            int8_tops=entry.peak_dense_int8_tops,
            hbm_gb=entry.hbm_capacity_gb,
            hbm_tbs=entry.hbm_bandwidth_tbs,
            scaleup_gbs=entry.scaleup_bw_per_accel_gbs,
            tdp_w=entry.tdp_w,
            sources=dict(entry.sources),
            fp8_supported=entry.fp8_supported,
            fp4_supported=entry.fp4_supported,
            fp6_tflops=entry.peak_dense_fp6_tflops,
            fp4_tflops=entry.peak_dense_fp4_tflops,
        )
        for entry in _data().accelerators
    )


def names() -> frozenset[str]:
    """Every name the reference gives an accelerator: families, models and the aliases descriptions
    write (what the literal gate counts in code outside this layer)."""
    found = {f.name for f in families()}
    for accelerator in table():
        found.add(accelerator.model)
        found.update(accelerator.names)
    return frozenset(found)
