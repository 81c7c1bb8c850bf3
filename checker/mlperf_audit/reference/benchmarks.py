"""Per benchmark, every MLPerf fact the checks read, each with its source (`data/benchmarks.json`,
decoded strictly: an unknown key, a fact without a source or a source without a fact is an error).

Code asks `facts(name)` and never names a benchmark itself (tests/test_reference_literals.py counts
the names left in code). A benchmark a log names that the reference does not list gets the defaults
the official tools apply to every benchmark they do not single out (`DEFAULTS`): progress counted in
`epoch_num`, the quality target on `eval_accuracy`, one run dropped at each end, RCPs checked.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Callable, Literal

import msgspec

from .errors import ReferenceDataError


class Work(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The training FLOPs of one logged convergence unit, as `derivation` writes them out."""

    flops_per_unit: int | float  # an integer where the derivation is exact in integers (kept: the arithmetic follows)
    unit: str
    derivation: str
    #: The utilisation of the best peak above which a run asks for an explanation (AUD003): the
    #: best honest v4.x results reach 44.5% (gpt3) and 38.7% (llama2_70b_lora) of the FP8 peak;
    #: bert's work is an upper bound (implementations unpad), so its ceiling is higher.
    ceiling: float
    #: "exact" (above 100% of peak is impossible: AUD002), "an upper bound" or "approximate"
    #: (above the ceiling is no evidence: information only)
    kind: Literal["exact", "an upper bound", "approximate"] = "exact"
    #: The training state the accelerators hold between them, in bytes, where the benchmark fixes
    #: the model's size (AUD010).
    state_bytes: float | None = None


class MaxSpeedupOffset(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """From `from_round` on, the RCP checker's Max Speedup is `RCP Mean / (Min Epochs - min_epochs_less)`."""

    from_round: str
    min_epochs_less: int


class MetricBound(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A bound an evaluation metric must meet: `comparison` is "<=" or ">="."""

    comparison: Literal["<=", ">="]
    value: float


class Benchmark(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: str
    #: The log key that counts progress, in the unit of the RCPs: the metadata of the evaluations
    #: the RCP checker reads the convergence point from.
    convergence_key: Literal["epoch_num", "samples_count"] = "epoch_num"
    #: How much `convergence_key` advances per sample of the global batch, where it is known
    #: (forensics checks the evaluations' cadence with it).
    cadence_batch_factor: int | None = None
    #: The key the evaluations' step is logged in, by round, where it is not `convergence_key`.
    evaluation_step_key_by_round: dict[str, str] = {}
    #: The logged `tracked_stats` throughput counts the convergence unit (samples per second).
    throughput_in_convergence_units: bool = False
    #: The compliance key that holds the quality target.
    quality_key: str = "eval_accuracy"
    #: The `metric` of the eval_accuracy records that plot the quality, where records carry several.
    curve_metric: str | None = None
    #: Where convergence is the first evaluation step meeting every bound (metric -> bound).
    convergence_bounds: dict[str, MetricBound] = {}
    #: Runs dropped from each end by olympic scoring (and failures tolerated).
    olympic_drop: int = 1
    #: Whether the official package checker runs the RCP check on it.
    rcp_checked: bool = True
    #: Whether its convergence point may be read in `train_samples` (`rcp_bert_train_samples`).
    rcp_train_samples_option: bool = False
    max_speedup_offset: MaxSpeedupOffset | None = None
    #: Evaluations run on saved checkpoints after training: their records carry the checkpoint's or
    #: the evaluation's time, and run_stop the time the winning checkpoint was saved.
    offline_evaluation: bool = False
    #: (key, metadata field in seconds after run_start) that says when the checkpoint that beat the
    #: target was trained, where an offline evaluator logs it.
    trained_at: tuple[str, str] | None = None
    work: Work | None = None
    #: Why there is no work model: the published-results envelope judges it instead.
    not_modelled: str | None = None
    #: What a speedup claim on it must not be read as.
    claim_caveat: str | None = None
    #: What a reproduction needs besides the code (datasets, checkpoints).
    reproduction_needs: tuple[str, ...] = ()
    #: The per-accelerator batch variable already includes gradient accumulation.
    batch_includes_accumulation: bool = False
    #: The logged global batch counts packed sequences (a packing rate multiplies it).
    batch_counts_packed_sequences: bool = False
    #: How the logged global batch follows from a configuration is not known: never compared.
    batch_meaning_unknown: bool = False
    #: The option, written as `OPTION value` in the configuration's text (NVIDIA's maskrcnn
    #: `EXTRA_CONFIG='... SOLVER.IMS_PER_BATCH 96 ...'`), that gives the logged global batch: the
    #: per-accelerator variable does not; without the option the batch is not compared.
    global_batch_option: str | None = None
    #: The configured base learning rate is per sample (the script multiplies it by the global batch).
    per_sample_learning_rate: bool = False
    #: Logged hyperparameters whose usual configuration variables mean something else here.
    other_meaning_keys: tuple[str, ...] = ()
    #: Where each fact comes from, by field name.
    sources: dict[str, str] = {}


class _BenchmarkData(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    note: str
    #: Where each default comes from, by field name.
    default_sources: dict[str, str]
    benchmarks: list[Benchmark]


#: What a benchmark the reference does not single out gets.
DEFAULTS = Benchmark(name="")
_FACTS = tuple(field for field in Benchmark.__struct_fields__ if field not in ("name", "sources"))


def _check(data: _BenchmarkData) -> None:
    missing_defaults = sorted(set(_FACTS) - set(data.default_sources))
    if missing_defaults or set(data.default_sources) - set(_FACTS):
        raise ReferenceDataError(
            f"benchmarks.json: default_sources must name every fact: missing {missing_defaults}, "
            f"unknown {sorted(set(data.default_sources) - set(_FACTS))}"
        )
    seen: set[str] = set()
    for entry in data.benchmarks:
        if entry.name in seen or not entry.name:
            raise ReferenceDataError(f"benchmarks.json: benchmark {entry.name!r} is empty or named twice")
        seen.add(entry.name)
        stated = {field for field in _FACTS if getattr(entry, field) != getattr(DEFAULTS, field)}
        stated.add("convergence_key")  # the fact every benchmark states, default or not
        unsourced = sorted(f for f in stated if not entry.sources.get(f, "").strip())
        stray = sorted(set(entry.sources) - stated)
        if unsourced or stray:
            raise ReferenceDataError(
                f"benchmarks.json: {entry.name}: facts without a source {unsourced}, sources without a fact {stray}"
            )
        if (entry.work is None) == (entry.not_modelled is None):
            raise ReferenceDataError(f"benchmarks.json: {entry.name}: give either a work model or why it has none")


def load(text: bytes | str) -> tuple[Benchmark, ...]:
    """The benchmarks decoded from JSON `text`, in its order; ReferenceDataError names what is wrong."""
    try:
        data = msgspec.json.decode(text, type=_BenchmarkData)
    except msgspec.ValidationError as error:
        raise ReferenceDataError(f"benchmarks.json: {error}") from None
    _check(data)
    return tuple(data.benchmarks)


@cache
def benchmarks() -> tuple[Benchmark, ...]:
    """Every benchmark of the reference, in the order of `data/benchmarks.json`."""
    return load(resources.files("mlperf_audit").joinpath("data/benchmarks.json").read_bytes())


@cache
def _by_name() -> dict[str, Benchmark]:
    return {entry.name: entry for entry in benchmarks()}


def get(name: Any) -> Benchmark | None:
    """The reference entry of `name` (anything a log holds), or None when it lists no such benchmark."""
    return _by_name().get(name) if isinstance(name, str) else None


def facts(name: Any) -> Benchmark:
    """The facts of `name`: its entry, or `DEFAULTS` for a benchmark the reference does not list."""
    return get(name) or DEFAULTS


def names() -> tuple[str, ...]:
    """Every benchmark name of the reference, in its order."""
    return tuple(_by_name())


def having(predicate: Callable[[Benchmark], bool]) -> frozenset[str]:
    """The benchmarks whose facts satisfy `predicate` (a callable on a `Benchmark`)."""
    return frozenset(entry.name for entry in benchmarks() if predicate(entry))
