"""RCP: convergence against the reference convergence points, with the official numbers.

The reference side (the RCP tables, their statistics, the pruning, the interpolation and the
t-test based minimum) is computed by the installed mlperf-logging's own `RCP_Checker`, so the
numbers are identical; its `check_directory` is not called, because it reads the logs again and
writes or deletes `scaling.json` in the package. The submission side mirrors
`read_submission_file` on the already parsed runs: the convergence point of a run is the
`epoch_num` of its last evaluation before `run_stop` (rounded to 3 decimals), the `samples_count`
for the samples-based benchmarks, and for stable diffusion the smallest `samples_count` whose FID
and CLIP reach the target; a run without `run_stop` status `success` counts as 1e9.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import logging
import math
import pickle
import sys
import types
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from mlperf_audit import BenchmarkResult, Finding, Rule, Run, Severity, hookimpl, rulesets
from mlperf_audit.cache import RCP_FOLDER, touch, write_entry
from mlperf_audit.engine import CheckContext

from .package_layout import directive_in_force

NOT_CONVERGED = 1e9
BYPASS = "rcp-bypass"
#: Benchmark folders the official package checker runs no RCP check on (`benchmark != 'minigo'`).
NO_RCP_CHECK = {"minigo"}
#: Benchmarks whose convergence point is `samples_count` (mirrors `read_submission_file`).
SAMPLES_BENCHMARKS = {"llama2_70b_lora", "flux1", "llama31_405b", "llama31_8b", "gpt_oss_20b", "deepseekv3_671b",
                      "qwen35_397b_grpo", "dlrmv4"}
SD_FID_MAX, SD_CLIP_MIN = 90.0, 0.15  # hard-coded in the official reader too
#: A reference whose minimum acceptable mean is below this share of its mean accepts almost anything.
DEGENERATE_SHARE = 0.5


@dataclass(frozen=True)
class RunConvergence:
    run: Run
    point: float  # NOT_CONVERGED when the run did not converge
    batch_size: Any
    benchmark: Any
    problem: str | None = None  # why the point could not be read (the official reader crashes)

    @property
    def converged(self) -> bool:
        return self.point != NOT_CONVERGED


def run_convergence(run: Run, version: str, train_samples: bool = False) -> RunConvergence:
    """The run's convergence point as the official reader reads it; with `train_samples` (the
    package checker's `--rcp_bert_train_samples`), a bert run's point is its last `train_samples`."""
    batch_size: Any = -1
    benchmark: Any = None
    point: Any = None
    result = NOT_CONVERGED
    sd_evals: dict[Any, dict[Any, Any]] = defaultdict(dict)
    step_unit = "step_num" if version == "3.1.0" else "samples_count"
    try:
        for event in run.events:
            if event.key == "global_batch_size":
                batch_size = event.value
            elif event.key == "submission_benchmark":
                benchmark = event.value
            if train_samples and benchmark == "bert":
                if event.key == "train_samples":
                    point = event.value
            elif event.key in ("eval_accuracy", "eval_error"):
                if benchmark == "stable_diffusion":
                    sd_evals[event.metadata[step_unit]][event.metadata["metric"]] = event.value
                elif benchmark in SAMPLES_BENCHMARKS:
                    point = event.metadata["samples_count"]
                else:
                    point = round(event.metadata["epoch_num"], 3)
            if event.key == "run_stop":
                if event.metadata["status"] == "success":
                    if benchmark == "stable_diffusion":
                        passing = [step for step, r in sd_evals.items() if r["FID"] <= SD_FID_MAX and r["CLIP"] >= SD_CLIP_MIN]
                        point = min(passing)
                    if point is None:
                        raise ValueError("no evaluation before run_stop")
                    result = float(point)
                else:
                    result = NOT_CONVERGED
    except (KeyError, ValueError, TypeError, OverflowError) as error:
        detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
        return RunConvergence(run, NOT_CONVERGED, batch_size, benchmark, f"cannot read the convergence point ({detail})")
    return RunConvergence(run, result, batch_size, benchmark)


class _ScipyStatsOnDemand(types.ModuleType):
    """Stands for `scipy.stats` until one of its attributes is used, then imports it.

    (The standard library's LazyLoader does not fit: the `import scipy.stats` statement itself
    reads the module's `__spec__`, which makes a LazyLoader module load at once.)"""

    def __getattr__(self, name: str) -> Any:  # only for what a bare module does not have
        if sys.modules.get("scipy.stats") is self:
            del sys.modules["scipy.stats"]
        real = importlib.import_module("scipy.stats")
        setattr(sys.modules["scipy"], "stats", real)
        return getattr(real, name)


def _rcp_checker_module() -> Any:
    """mlperf-logging's rcp_checker, with `scipy.stats` imported only when first used.

    The module imports scipy.stats (a second of every start) for the t-tests that compute the
    reference statistics; a reference read from the cache does not repeat them."""
    if "scipy.stats" not in sys.modules and "mlperf_logging.rcp_checker.rcp_checker" not in sys.modules:
        import scipy

        stand_in = _ScipyStatsOnDemand("scipy.stats")
        sys.modules["scipy.stats"] = stand_in
        setattr(scipy, "stats", stand_in)
    from mlperf_logging.rcp_checker import rcp_checker

    return rcp_checker


@cache
def reference(version: str, benchmark: str, cache_dir: str | None = None) -> Any:
    """The official RCP_Checker for a round and benchmark (statistics and pruning computed once).

    With a `cache_dir`, the constructed checker's state is kept there (pickled: the RCP tables
    hold numpy numbers, and the cache is the user's own folder), keyed by the RCP file, the
    checker's source and the numpy and Python versions: the next start skips the t-tests."""
    rcp_checker = _rcp_checker_module()
    entry = _reference_entry(version, benchmark, cache_dir)
    state = _load(entry)
    if isinstance(state, dict):
        checker = object.__new__(rcp_checker.RCP_Checker)
        checker.__dict__.update(state)
        return checker
    previous = logging.root.manager.disable
    logging.disable(logging.INFO)  # its constructor logs at INFO level
    try:
        checker = rcp_checker.RCP_Checker(rulesets.USAGE, version, benchmark, False)
    finally:
        logging.disable(previous)
    if entry is not None:
        write_entry(entry, pickle.dumps(checker.__dict__, protocol=pickle.HIGHEST_PROTOCOL))
    return checker


@cache
def _reference_entry(version: str, benchmark: str, cache_dir: str | None) -> Path | None:
    if not cache_dir:
        return None
    rcp_checker = _rcp_checker_module()
    rcp_file = rcp_checker.RCP_Checker._construct_json_filename(None, rulesets.USAGE, version, benchmark)
    digest = hashlib.blake2b(f"{version}\0{benchmark}\0{np.__version__}\0{sys.version}".encode(), digest_size=20)
    try:
        for source in (rcp_checker.__file__, rcp_file):
            digest.update(Path(source).read_bytes())
    except OSError:
        return None  # no RCP file: the constructor reports it
    return Path(cache_dir) / RCP_FOLDER / f"{digest.hexdigest()}.pickle"


def interpolate(checker: Any, batch_size: Any, low: dict[str, Any], high: dict[str, Any], version: str,
                benchmark: str, cache_dir: str | None) -> dict[str, Any]:
    """The official RCP interpolated at `batch_size` between `low` and `high` (its minimum is a
    t-test search, so the record is cached next to the reference it was computed from)."""
    reference_entry = _reference_entry(version, benchmark, cache_dir)
    entry = None
    if reference_entry is not None:
        entry = reference_entry.with_name(f"{reference_entry.stem}-bs{batch_size!r}-{low['BS']!r}-{high['BS']!r}.pickle")
    record = _load(entry)
    if isinstance(record, dict):
        return record
    _, record = checker._create_interp_rcp(batch_size, low, high)
    if entry is not None:
        write_entry(entry, pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
    return record


def _load(entry: Path | None) -> Any:
    if entry is None:
        return None
    try:
        with open(entry, "rb") as stream:
            loaded = pickle.loads(stream.read())
    except (OSError, EOFError, ValueError, TypeError, AttributeError, IndexError, pickle.UnpicklingError):
        return None  # absent or unreadable: computed again
    touch(entry)
    return loaded


@dataclass
class Verdict:
    message: str  # the official wording: 'RCP found', 'RCP Interpolation', 'Missing RCP, ...', ...
    passed: bool
    bypassed: bool = False
    record: dict[str, Any] | None = None
    interpolated_from: tuple[int, int] | None = None
    mean: float | None = None  # olympic mean of the submission's convergence points
    factor: float = 1.0  # normalisation factor max(1, RCP mean / submission mean)
    batch_size: Any = None
    runs: list[RunConvergence] = field(default_factory=list)

    @property
    def minimum(self) -> float | None:
        if self.record is None:
            return None
        return float(self.record["RCP Mean"] / self.record["Max Speedup"])

    @property
    def scaling_factor(self) -> float:
        """What the official flow writes to scaling.json (1.0 when it writes nothing)."""
        if self.passed and not self.bypassed and self.record is not None and self.mean is not None:
            if self.mean < self.record["RCP Mean"]:
                return float(self.factor)
        return 1.0

    def describe(self) -> str:
        if self.record is None or self.mean is None:
            return self.message
        record = self.record
        source = (f"interpolated between BS {self.interpolated_from[0]} and {self.interpolated_from[1]}"
                  if self.interpolated_from else f"at BS {record['BS']}")
        return (f"submission mean {_num(self.mean)} (olympic mean of {len(self.runs)} runs) against the RCP "
                f"{source}: mean {_num(record['RCP Mean'])}, sd {_num(record['RCP Stdev'])}, minimum allowed "
                f"{_num(self.minimum)} (max speedup {float(record['Max Speedup']):.4f})")


def _provisional(result: BenchmarkResult, context: CheckContext) -> str:
    """With --partial, says that the verdict stands on fewer runs than required."""
    required = rulesets.get(context.ruleset).required_runs(result.benchmark)
    if context.config.partial and required and len(result.runs) < required:
        return f" (provisional: {len(result.runs)} of {required} runs; {required - len(result.runs)} still required)"
    return ""


def _num(value: Any) -> str:
    value = float(value)
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:,.0f}"


def convergences(result: BenchmarkResult, version: str, train_samples: bool = False) -> list[RunConvergence]:
    """Every run's convergence point in the unit the RCP check reads: bert in training samples where
    the submitter's flags ask for it or where its epoch_num never progresses."""
    train_samples = train_samples or train_samples_in_force(result, f"{rulesets.USAGE}-{version}") or (
        tuple(map(int, version.split("."))) < (2, 0, 0) and _epochs_do_not_progress(result))
    return [run_convergence(run, version, train_samples) for run in result.runs]


def evaluate(result: BenchmarkResult, version: str, bypass: bool, cache_dir: str | None = None,
             train_samples: bool = False) -> Verdict:
    runs = convergences(result, version, train_samples)
    batch_sizes = {repr(r.batch_size) for r in runs}
    benchmarks = {repr(r.benchmark) for r in runs}  # repr: the logs may hold a list or a dict here
    batch = runs[0].batch_size
    # A batch size that is not a number cannot be looked up among the RCPs (the official checker
    # crashes comparing it); VAL001 reports its type.
    readable = isinstance(batch, (int, float)) and not isinstance(batch, bool) and batch != -1
    if len(batch_sizes) != 1 or not readable or len(benchmarks) != 1:
        return Verdict("Could not detect global_batch_size", False, runs=runs)
    batch_size, benchmark = runs[0].batch_size, runs[0].benchmark
    drop = rulesets.get(f"{rulesets.USAGE}-{version}").olympic_drop(str(benchmark))
    if sum(not r.converged for r in runs) > drop:
        return Verdict("Insufficient convergence", False, batch_size=batch_size, runs=runs)
    if not isinstance(benchmark, str) or not rulesets.get(f"{rulesets.USAGE}-{version}").has_rcps(benchmark):
        return Verdict("Cannot find any RCPs", False, batch_size=batch_size, runs=runs)
    if not official_run_count_known(benchmark):
        return Verdict(NO_RUN_COUNT, False, batch_size=batch_size, runs=runs)
    if len(runs) <= 2 * drop:  # olympic scoring leaves no run (PKG012 reports the missing ones)
        return Verdict(TOO_FEW_RUNS, False, batch_size=batch_size, runs=runs)
    checker = reference(version, benchmark, cache_dir)
    points = sorted(r.point for r in runs)
    mean = float(np.mean(points[drop:len(points) - drop]))
    verdict = Verdict("", False, batch_size=batch_size, runs=runs, mean=mean)
    record = checker._find_rcp(batch_size, "pruned_rcps")
    if record is not None:
        verdict.message = "RCP found"
        _judge(verdict, checker, record, version, benchmark)
    else:
        low = checker._find_top_min_rcp(batch_size, "pruned_rcps")
        high = checker._find_bottom_max_rcp(batch_size, "pruned_rcps")
        if low is not None and high is not None:
            verdict.message = "RCP Interpolation"
            interpolated = interpolate(checker, batch_size, low, high, version, benchmark, cache_dir)
            verdict.interpolated_from = (low["BS"], high["BS"])
            _judge(verdict, checker, interpolated, version, benchmark)
        elif low is not None:
            verdict.message = f"Missing RCP, please submit RCP with BS = {batch_size}"
        elif high is not None:
            _judge(verdict, checker, checker._find_min_rcp("pruned_rcps"), version, benchmark)
            verdict.message = ("RCP not found but slower convergence on smaller batch size" if verdict.passed
                               else f"Missing RCP, please submit RCP with BS = {batch_size}")
        else:
            verdict.message = "Cannot find any RCPs"
    bypassable = verdict.message in ("RCP found", "RCP Interpolation") or verdict.message.startswith("Missing RCP")
    if bypass and not verdict.passed and bypassable:
        verdict.passed, verdict.bypassed = True, True
    return verdict


#: The verdict where olympic scoring leaves no run to average.
TOO_FEW_RUNS = "Too few runs for an RCP mean"


def _epochs_do_not_progress(result: BenchmarkResult) -> bool:
    """bert logs whose evaluations all say the same `epoch_num` (NVIDIA-derived 1.0/1.1 logs write 1)
    but which log `train_samples`: the reviewers of rounds before 2.0 ran the RCP check with
    `--rcp_bert_train_samples` (a command-line option then, recorded nowhere in the package; from 2.0
    the submitter's package_checker_params says it)."""
    if result.benchmark != "bert":
        return False
    for run in result.runs:
        epochs = {repr(e.metadata.get("epoch_num")) for e in run.all("eval_accuracy")}
        if len(run.all("eval_accuracy")) < 2 or len(epochs) != 1 or run.first("train_samples") is None:
            return False
    return bool(result.runs)


#: The verdict where the pinned RCP checker has RCPs for a benchmark but no run count (it raises KeyError).
NO_RUN_COUNT = "The official RCP checker has no run count for this benchmark"


def official_run_count_known(benchmark: str) -> bool:
    """Whether the pinned RCP checker can be built for the benchmark: its `submission_runs` table
    dropped benchmarks of older rounds (dlrm of 1.0-2.1), for which it raises KeyError."""
    return benchmark in _rcp_checker_module().submission_runs.get(rulesets.USAGE, {})


def _judge(verdict: Verdict, checker: Any, record: dict[str, Any], version: str, benchmark: str) -> None:
    record = copy.deepcopy(record)
    if tuple(map(int, version.split("."))) >= (5, 0, 0) and benchmark == "llama31_405b":
        record["Max Speedup"] = record["RCP Mean"] / (record["Min Epochs"] - 46080)
    assert verdict.mean is not None
    verdict.record = record
    verdict.factor = float(checker._find_norm_factor(record, verdict.mean))
    verdict.passed = bool(verdict.mean >= record["RCP Mean"] / record["Max Speedup"])


def bypass_in_force(result: BenchmarkResult, ruleset: str) -> bool:
    return directive_in_force(result, BYPASS, "rcp_bypass", ruleset)


def train_samples_in_force(result: BenchmarkResult, ruleset: str) -> bool:
    """The submitter's options ask for bert's convergence in training samples (`rcp_bert_train_samples`)."""
    return directive_in_force(result, None, "rcp_bert_train_samples", ruleset)


def verdict_for(result: BenchmarkResult, context: CheckContext) -> Verdict | None:
    """The RCP verdict of a closed benchmark folder (None where no RCP check applies)."""
    if context.division_of(result) != "closed" or not result.runs or result.benchmark in NO_RCP_CHECK:
        return None
    version = context.ruleset.split("-", 1)[1]
    return context.memo(result, "rcp", lambda: evaluate(result, version, bypass_in_force(result, context.ruleset),
                                                             context.config.cache_dir))


class _RcpRule(Rule):
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        verdict = verdict_for(result, context)
        if verdict is not None:
            yield from self.judge(result, verdict, context)

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        raise NotImplementedError


class RcpFailed(_RcpRule):
    """The runs converge faster than the reference convergence points allow.

    What it checks: the olympic mean of the runs' convergence points against the minimum that the
    RCP at the submission's batch size allows (or the RCP interpolated between the nearest batch
    sizes): the smallest mean a one-sided t-test (alpha 0.05) cannot tell from the reference mean.

    Why it matters: converging in fewer samples than the reference implementation can means the
    run did not train the benchmark as defined; the official package checker fails the folder.

    Example: ssd at batch 128 with a mean of 3.667 epochs against an RCP minimum of 4.0.

    How to fix: check the hyperparameters and the evaluation against the reference; if the
    convergence is genuine, submit an RCP for the batch size and get an `rcp-bypass` approved.
    """

    code = "RCP001"
    name = "rcp-failed"
    summary = "The runs converge faster than the RCPs allow."
    severity = Severity.ERROR

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if not verdict.passed and verdict.message in ("RCP found", "RCP Interpolation"):
            yield self.finding(f"RCP test failed ({verdict.message}): {verdict.describe()}"
                               f"{_provisional(result, context)}", path=result.path)


class InsufficientConvergence(_RcpRule):
    """More runs did not converge than olympic scoring tolerates.

    What it checks: the number of runs without `run_stop` status `success` (one is tolerated;
    four for unet3d), as the official RCP checker counts them.

    Why it matters: the official RCP check fails with "Insufficient convergence", and no bypass
    can rescue it.

    Example: two runs that end with `status: aborted`.

    How to fix: replace the runs that did not converge.
    """

    code = "RCP002"
    name = "insufficient-convergence"
    summary = "More runs did not converge than olympic scoring tolerates."
    severity = Severity.ERROR

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.message == "Insufficient convergence":
            failed = [r.run.name for r in verdict.runs if not r.converged]
            yield self.finding(f"{len(failed)} runs did not converge ({', '.join(failed)})", path=result.path)


class BatchSizeUndetected(_RcpRule):
    """The runs do not log one common `global_batch_size` and benchmark name.

    What it checks: that every run logs `global_batch_size` and `submission_benchmark`, with the
    same values in all runs.

    Why it matters: the RCP is chosen by batch size; the official RCP check fails with "Could not
    detect global_batch_size".

    Example: nine runs at batch 256 and one at 512.

    How to fix: run every result of a folder with the same configuration.
    """

    code = "RCP003"
    name = "batch-size-undetected"
    summary = "The runs lack one common global_batch_size or benchmark."
    severity = Severity.ERROR

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.message == "Could not detect global_batch_size":
            sizes = sorted({"none" if r.batch_size == -1 else repr(r.batch_size) for r in verdict.runs})
            names = sorted({repr(r.benchmark) for r in verdict.runs})
            yield self.finding(f"the runs log global_batch_size {', '.join(sizes)} and submission_benchmark "
                               f"{', '.join(names)}; one value of each is required", path=result.path)


class MissingRcp(_RcpRule):
    """No RCP covers the submission's batch size.

    What it checks: that the batch size is covered by the pruned RCPs: equal to one, between two,
    or below the smallest with slower convergence than it.

    Why it matters: the official RCP check fails with "Missing RCP, please submit RCP with BS = N";
    a bypass approved by the committee can pass it.

    Example: gpt3 at batch 16384, above the largest RCP (8192).

    How to fix: submit an RCP for the batch size by the deadline, or use a covered batch size.
    """

    code = "RCP004"
    name = "missing-rcp"
    summary = "No RCP covers the submission's batch size."
    severity = Severity.ERROR

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.message.startswith("Missing RCP") and not verdict.bypassed:
            detail = f": {verdict.describe()}" if verdict.record is not None else ""
            yield self.finding(f"{verdict.message}{detail}", path=result.path)


class NoRcps(_RcpRule):
    """The round has no RCPs for the benchmark.

    What it checks: that the installed mlperf-logging ships RCPs for the benchmark in this round.

    Why it matters: the official RCP check fails with "Cannot find any RCPs".

    Example: a closed benchmark of another round in this round's package.

    How to fix: check the benchmark and the ruleset (`--ruleset`).
    """

    code = "RCP005"
    name = "no-rcps"
    summary = "The round has no RCPs for the benchmark."
    severity = Severity.ERROR

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.message == "Cannot find any RCPs":
            yield self.finding(f"no RCPs for {verdict.runs[0].benchmark!r} in {context.ruleset}", path=result.path)


class RcpBypassed(_RcpRule):
    """A failed RCP check passes only because of an `rcp-bypass`.

    What it checks: whether the RCP verdict was turned into a pass by `rcp-bypass`.

    Why it matters: the official checker accepts it with "Please be ready to have this reviewed by
    the submission committee"; a reviewer must see what the bypass hides.

    Example: `rcp-bypass` in the folder's `package_checker_params` and a mean below the minimum.

    How to fix: have the bypass approved, or fix the convergence.
    """

    code = "RCP006"
    name = "rcp-bypassed"
    summary = "A failed RCP check passes through rcp-bypass."
    severity = Severity.WARNING

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.bypassed:
            yield self.finding(f"RCP test failed ({verdict.message}) but passes with rcp-bypass: "
                               f"{verdict.describe()}", path=result.path)


class RcpVerdict(_RcpRule):
    """The RCP verdict of a closed benchmark, explained.

    What it checks: nothing new; it states which RCP was used (found, interpolated, or the smallest),
    the band, the submission's mean and the normalisation factor.

    Why it matters: a reviewer auditing a claim needs the numbers behind a pass, and how much the
    score is scaled: a mean faster than the RCP mean multiplies the time-to-train by
    RCP mean / submission mean.

    Example: "RCP found: submission mean 4032 against the RCP at BS 16 ...; score scaled by 1.0153".

    How to fix: nothing; informational.
    """

    code = "RCP007"
    name = "rcp-verdict"
    summary = "The RCP verdict with its numbers."
    severity = Severity.INFO

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.passed and not verdict.bypassed:
            scaled = (f"; time-to-train is scaled by {verdict.scaling_factor:.6f}" if verdict.scaling_factor > 1
                      else "; no scaling")
            yield self.finding(f"RCP test passed ({verdict.message}): {verdict.describe()}{scaled}"
                               f"{_provisional(result, context)}", path=result.path)


class ScalingJsonMismatch(_RcpRule):
    """`scaling.json` disagrees with the factor the RCP check computes.

    What it checks: the `scaling_factor` in the folder's `scaling.json` against the one recomputed
    in memory (the official flow writes the factor when the runs pass but converge faster than the
    RCP mean, and deletes the file otherwise).

    Why it matters: the official summarizer multiplies the score by whatever `scaling.json` holds
    when it runs; a stale file (from an earlier run of the checker, or edited) changes the
    published score.

    Example: `{"scaling_factor": 1.02}` where the runs now need no scaling.

    How to fix: delete `scaling.json`; mlperf-audit never needs it and the official package checker
    rewrites it.
    """

    code = "RCP008"
    name = "scaling-json-mismatch"
    summary = "scaling.json disagrees with the recomputed RCP factor."
    severity = Severity.WARNING

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if result.scaling is None:
            return
        factor = result.scaling.get("scaling_factor")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)):
            return  # PKG005 reports a scaling.json without a numeric factor
        on_disk = float(factor)
        expected = verdict.scaling_factor
        path = f"{result.path}/scaling.json"
        if not math.isclose(on_disk, expected, rel_tol=1e-9):
            yield self.finding(f"scaling.json says {on_disk!r}, the RCP check gives {expected!r}", path=path)


class DegenerateRcp(_RcpRule):
    """The RCP used accepts almost any convergence.

    What it checks: whether the minimum acceptable mean of the RCP used is below half of its mean
    (its maximum speedup above 2).

    Why it matters: an RCP whose runs include an outlier gets a huge standard deviation (the
    official code computes it on the untrimmed runs), and then its minimum collapses: the gpt3 RCP at
    batch 3072 accepts any mean at all. Such a pass proves nothing.

    Example: gpt3 at batch 3072: RCP mean 1.218e9 tokens, minimum allowed 0.

    How to fix: nothing in the package; a reviewer should judge the convergence by hand.
    """

    code = "RCP009"
    name = "degenerate-rcp"
    summary = "The RCP used accepts almost any convergence."
    severity = Severity.WARNING

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.record is not None and verdict.minimum is not None:
            if verdict.minimum < DEGENERATE_SHARE * float(verdict.record["RCP Mean"]):
                yield self.finding(f"the RCP band is degenerate: {verdict.describe()}", path=result.path)


class ConvergenceUnreadable(_RcpRule):
    """A run's convergence point cannot be read.

    What it checks: that each run's evaluations carry the metadata the RCP reader needs (`epoch_num`,
    or `samples_count`, and for stable diffusion `metric`), and that a successful run has an
    evaluation before `run_stop`.

    Why it matters: the official RCP reader crashes on such a run; here it counts as not converged.

    Example: an `eval_accuracy` without `epoch_num` in a bert log.

    How to fix: log evaluations with the metadata of the reference implementation.
    """

    code = "RCP010"
    name = "convergence-unreadable"
    summary = "A run's convergence point cannot be read."
    severity = Severity.WARNING

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        for run in verdict.runs:
            if run.problem:
                yield self.finding(f"{run.problem}; the run counts as not converged", path=run.run.path)


class RcpUncheckable(_RcpRule):
    """The pinned RCP checker cannot check this benchmark, although the round ships its RCPs.

    What it checks: that mlperf-logging's RCP checker knows how many runs the benchmark needs. Its
    `submission_runs` table lost the benchmarks that later rounds retired (dlrm of rounds 1.0 to
    2.1), so building the checker for them raises `KeyError` and the official package checker
    crashes.

    Why it matters: the convergence of these runs is not checked and no normalisation factor is
    computed (the score is the unscaled olympic mean); the result was reviewed with the
    mlperf-logging of its own round, which had the entry. An official defect, not the package's.

    Example: `training_results_v1.0` dlrm folders checked with `--ruleset training-1.0.0`.

    How to fix: nothing in the package.
    """

    code = "RCP011"
    name = "rcp-uncheckable"
    summary = "The pinned RCP checker cannot check this benchmark (official defect)."
    severity = Severity.INFO

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.message == NO_RUN_COUNT:
            yield self.finding(f"the pinned RCP checker has RCPs for {verdict.runs[0].benchmark!r} in {context.ruleset} "
                               "but no run count for it (it raises KeyError): convergence not checked",
                               path=result.path)


RULES: list[type[Rule]] = [RcpFailed, InsufficientConvergence, BatchSizeUndetected, MissingRcp, NoRcps, RcpBypassed,
                           RcpVerdict, ScalingJsonMismatch, DegenerateRcp, ConvergenceUnreadable, RcpUncheckable]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
