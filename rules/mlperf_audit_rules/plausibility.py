"""AUD: claims the hardware cannot support.

Utilisation is the training work a run did (its convergence point times the FLOPs per unit of
`hardware.WORK`) divided by its time-to-train and its accelerator count, against the dense peak of
the precision the result's launch configuration evidently switches on (`support.precision`: FP8,
INT8, FP4), else the best of the accelerator's BF16, FP8, INT8, FP6 and FP4 peaks (FP4 on
Blackwell and CDNA 4: half the share of the FP8 peak); the finding says which and why. Thresholds, derived from the honest v4.0-v4.1 results (hardware.md R1 and
the real sample, `python -m mlperf_audit_rules.plausibility` prints them):

- above 100% is impossible (error), where the work model is exact (gpt3, llama2_70b_lora, llama31_8b,
  llama31_405b);
- above the ceiling is suspicious (warning): 60% for gpt3 and llama2_70b_lora, 1.35 x the best
  honest result (44.5% of FP8, NVIDIA H100 gpt3 at 256 GPUs; llama2 reaches 38.7%); 75% for bert,
  whose work is an upper bound (unpadding) and whose best honest figure is 55.5%; 65% and 75% for
  llama31_8b and llama31_405b (best honest: 46.3% and 54.3% of the FP8 peak); 45% for resnet
  (33.5%, an approximate model: never an error); 60% for the mixtures of experts deepseekv3_671b
  and gpt_oss_20b (approximate until a published round calibrates them: never an error).

The published-results envelope (AUD008, AUD009; `support.envelope`) needs no work model: it holds
every closed result's accelerator-minutes to the most efficient use of hardware that the earlier
rounds published, and so covers every benchmark. The equivalent-hardware peers (AUD011;
`support.peers`) hold the same measure against the results of the same accelerator at a similar
scale in the result's own round and the one before.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    Channel,
    CheckContext,
    Comparison,
    ComparisonRule,
    Finding,
    Rule,
    Severity,
    SystemDescription,
    SystemRule,
    Tree,
    TreeRule,
    best_of,
    hardware,
    hookimpl,
    reference,
)
from mlperf_audit_rules.support import envelope, peers, precision
from mlperf_audit_rules.support.work import RunWork, envelope_verdict, run_work

EXACT_WORK = {benchmark for benchmark, work in hardware.WORK.items() if work.kind == "exact"}
#: Units per second over time-to-train may exceed the logged throughput by this much (honest: 0.87-1.004).
THROUGHPUT_TOLERANCE = 1.25
#: A run processing units this much faster than the median of the other runs stands out.
RATE_OUTLIER = 1.3
#: Larger systems may process this much more per accelerator than smaller ones (hardware.md R3).
SUPERLINEAR_MARGIN = 1.05
#: ... and this much on another chassis (other accelerators per node or host processor): equal-size
#: configurations on different chassis vary by up to 1.07 (hardware.md R3, Supermicro v4.0 and v4.1).
CHASSIS_MARGIN = 1.07


class UnknownAccelerator(SystemRule):
    """The accelerator of a system is not in the hardware reference, or has no peak figure there.

    What it checks: that `accelerator_model_name` maps to an entry of `data/accelerators.json` with
    a dense BF16, FP8 or INT8 peak.

    Why it matters: without a peak, utilisation and cross-hardware speedups cannot be checked;
    the report says so rather than passing silently.

    Example: `"accelerator_model_name": "NPU-9000"`, or Huawei's Ascend 910 Pro A (Huawei's peak is
    for another clock than the described one, so none is sourced).

    How to fix: nothing in the package; extend the hardware reference with a sourced figure.
    """

    code = "AUD001"
    name = "unknown-accelerator"
    summary = "The accelerator has no entry or no peak in the hardware reference."
    severity = Severity.INFO
    scope = "system"

    def check(self, system: SystemDescription, context: CheckContext) -> Iterable[Finding]:
        if system.data is None:
            return
        name = system.get("accelerator_model_name")
        accelerator = hardware.match(name)
        line = system.field_lines.get("accelerator_model_name")
        if accelerator is None:
            yield self.finding(
                f"accelerator {name!r} is not in the hardware reference: utilisation is not checked",
                path=system.path,
                line=line,
            )
        elif accelerator.best_peak_tflops is None:
            yield self.finding(
                f"{accelerator.model} has no sourced peak figure: utilisation is not checked",
                path=system.path,
                line=line,
            )


#: Said when only a BF16 peak is sourced: a run in FP8 or INT8 may use up to twice that.
UNKNOWN_LOW_PRECISION = (
    "no FP8 or INT8 peak (or, where the accelerator has FP4, no FP4 peak) is sourced for this accelerator, so its "
    "best peak may be understated (a run in a precision of half the width can reach twice the peak)"
)


class _UtilisationRule(BenchmarkRule):
    scope = "benchmark"

    def measured(self, result: BenchmarkResult, context: CheckContext) -> tuple[float, RunWork, str] | None:
        count, accelerator = hardware.of_system(context.system_description(result.submitter, result.system))
        if count is None or accelerator is None or result.benchmark not in hardware.WORK:
            return None
        peak = precision.peak_for(accelerator, precision.evident(result, context))
        if peak is None:
            return None
        best = None
        for work in run_work(result, context.ruleset.split("-", 1)[1]):
            value = hardware.utilisation(work.units, work.minutes, result.benchmark, count, accelerator, peak.tflops)
            if value is not None and (best is None or value > best[0]):
                best = (value, work, f"{count} x {accelerator.model}, {peak.describe()}")
        return best

    def peak_known(self, result: BenchmarkResult, context: CheckContext) -> bool:
        """The peak the result is held to is the accelerator's best, and that is sourced: its FP8
        or INT8 peak is known and it has no FP4 without one. A lower peak chosen from the launch
        configuration's evident precision is evidence, not certainty: above it is a warning."""
        _, accelerator = hardware.of_system(context.system_description(result.submitter, result.system))
        if accelerator is None or not accelerator.low_precision_known:
            return False
        peak = precision.peak_for(accelerator, precision.evident(result, context))
        return peak is not None and peak.tflops == accelerator.best_peak_tflops

    def explain_measure(self, value: float, work: RunWork, hardware_text: str, benchmark: str) -> str:
        model = hardware.WORK[benchmark]
        achieved = value * float(hardware_text.split(" peak ", 1)[1].split(" ")[0])
        return (
            f"{work.run.name}: {work.units:,.0f} {model.unit}s x {model.flops_per_unit:.3g} FLOP in "
            f"{work.minutes:.2f} min on {hardware_text}: {achieved:,.0f} TFLOP/s per accelerator, "
            f"{value:.0%} of peak"
        )


class UtilisationImpossible(_UtilisationRule):
    """A run did more training work per second than its accelerators can compute.

    What it checks: the utilisation of every converged run (see the module doc) against 100% of
    the peak the result is held to (module doc), for the benchmarks whose work model is exact
    (gpt3, llama2_70b_lora, llama31_8b, llama31_405b).

    Why it matters: more than 100% of peak is physically impossible: the timestamps were
    compressed, the accelerator count understated, or the accelerator is not the one described.

    Example: gpt3 on 256 H100 in 24 minutes (176% of the FP8 peak): timestamps compressed 4x.

    Where the hardware reference has no FP8 or INT8 peak for the accelerator (or no FP4 peak where
    it has FP4), its best peak may be understated, and where the peak held to is the lower one of a
    precision the configuration evidently uses, the configuration may not tell all: more than 100%
    of it is then a warning, not an error.

    How to fix: correct the system description or the logs; if both are right, report the
    hardware figure that is wrong.
    """

    code = "AUD002"
    name = "utilisation-impossible"
    summary = "A run computed faster than its accelerators' peak."
    severity = Severity.ERROR

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        measured = self.measured(result, context)
        if measured and result.benchmark in EXACT_WORK and measured[0] > 1.0:
            if self.peak_known(result, context):
                yield self.finding(
                    f"impossible utilisation: {self.explain_measure(*measured, result.benchmark)}",
                    path=measured[1].run.path,
                )
            else:
                yield self.finding(
                    f"above the peak: {self.explain_measure(*measured, result.benchmark)}; {UNKNOWN_LOW_PRECISION}, "
                    "or the run used a precision with a higher peak than its configuration shows",
                    path=measured[1].run.path,
                    severity=Severity.WARNING,
                )


class UtilisationSuspicious(_UtilisationRule):
    """A run's utilisation is above what the best honest results reach.

    What it checks: the highest utilisation of a benchmark's runs against the ceiling of its
    benchmark (`hardware.WORK`): 60% for gpt3 and llama2_70b_lora, 65% for llama31_8b, 75% for
    llama31_405b, 75% for bert (whose work is an upper bound), 45% for resnet.

    Why it matters: the best honest v4.x results reach 44.5% (gpt3) and 38.7% (llama2) of the FP8
    peak; a result far above them asks for an explanation.

    Example: llama2_70b_lora on 8 H200 in 12 minutes (77% of the FP8 peak).

    Where the hardware reference has no FP8 or INT8 peak for the accelerator (or no FP4 peak where
    it has FP4), the best peak may be understated, and for bert the work is an
    upper bound (every sequence counted at 512 tokens; A100 results of v2.0-v3.0 reach 77-85% of
    the BF16 peak by it): the finding is then information, not a warning.

    How to fix: check the system description (accelerator model and count) and the logs' times.
    """

    code = "AUD003"
    name = "utilisation-suspicious"
    summary = "A run's utilisation is above the best honest results."
    severity = Severity.WARNING

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        measured = self.measured(result, context)
        if measured is None:
            return
        ceiling = hardware.WORK[result.benchmark].ceiling
        impossible = result.benchmark in EXACT_WORK and measured[0] > 1.0  # AUD002's
        if measured[0] > ceiling and not impossible:
            known = self.peak_known(result, context)
            exact = result.benchmark in EXACT_WORK
            yield self.finding(
                f"above the {ceiling:.0%} ceiling: {self.explain_measure(*measured, result.benchmark)}"
                + ("" if known else f"; {UNKNOWN_LOW_PRECISION}")
                + (
                    ""
                    if exact
                    else f"; {result.benchmark}'s work model is {hardware.WORK[result.benchmark].kind}, so this is no evidence"
                ),
                path=measured[1].run.path,
                severity=None if known and exact else Severity.INFO,
            )


class ThroughputMismatch(BenchmarkRule):
    """A run's time-to-train is shorter than its own logged throughput allows.

    What it checks: the samples a run trained divided by its time-to-train against the median
    `throughput` it logs in `tracked_stats` (bert, llama2_70b_lora, stable_diffusion, whose
    convergence unit is samples). Honest runs stay between 0.87 and 1.004 (evaluation takes time);
    above 1.25 the two cannot both be true.

    Why it matters: compressing timestamps shortens time-to-train but leaves the logged throughput
    as it was.

    Example: 3,072 samples in 6 minutes (8.5/s) while the run logs 2.4 samples/s.

    How to fix: the logs must come from the run as it ran; regenerate them.
    """

    code = "AUD004"
    name = "throughput-mismatch"
    summary = "Time-to-train is shorter than the logged throughput allows."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if not reference.benchmarks.facts(result.benchmark).throughput_in_convergence_units:
            return
        for work in run_work(result, context.ruleset.split("-", 1)[1]):
            logged = [
                e.value["throughput"]
                for e in work.run.all("tracked_stats")
                if isinstance(e.value, dict) and isinstance(e.value.get("throughput"), (int, float))
            ]
            if not logged:
                continue
            ratio = (work.units / (work.minutes * 60)) / statistics.median(logged)
            if ratio > THROUGHPUT_TOLERANCE:
                yield self.finding(
                    f"{work.units:,.0f} samples in {work.minutes:.2f} min is {ratio:.2f}x the throughput the run logs "
                    f"({statistics.median(logged):,.2f} samples/s)",
                    path=work.run.path,
                )


class RateOutlier(BenchmarkRule):
    """One run processed its samples much faster than the other runs of the same benchmark.

    What it checks: each run's convergence units per minute against the median of the other runs
    of the folder; above 1.3x stands out (honest runs of one system and configuration differ by a
    few percent in speed; they differ in how many samples they need, not in how fast they go).

    Why it matters: a run whose timestamps were compressed, or that ran on other hardware, stands
    out from its siblings.

    Example: nine runs at 130 samples/min and one at 260.

    How to fix: check the run's log and its system; all runs of a result must run the same way.
    """

    code = "AUD005"
    name = "rate-outlier"
    summary = "One run was much faster per sample than its siblings."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        works = run_work(result, context.ruleset.split("-", 1)[1])
        if len(works) < 3:
            return
        for work in works:
            others = statistics.median(w.rate for w in works if w is not work)
            if work.rate > RATE_OUTLIER * others:
                yield self.finding(
                    f"{work.rate:,.4g} units/min, {work.rate / others:.2f}x the median of the other runs "
                    f"({others:,.4g})",
                    path=work.run.path,
                )


class SuperlinearScaling(TreeRule):
    """A larger system of the same submitter and accelerator does more work per accelerator.

    What it checks: for each submitter, benchmark and accelerator model with results at several
    accelerator counts (two systems whose descriptions name only different frameworks are not
    compared: another framework may count its convergence point in another unit), the work per accelerator per minute (olympic mean of the runs' units per
    minute, divided by the count) of the larger system against the smaller; more than 5% above is
    super-linear (hardware.md R3: honest results stay within 1%, up to 2.6% by convergence luck),
    7% where the two systems are different chassis (other accelerators per node or host
    processor: equal-size configurations on different chassis vary by up to 7%).

    A larger batch per accelerator explains a gap up to its own size: it gives each accelerator more
    work per step for the same per-step overheads, so the work per accelerator grows at most in
    proportion to it (a step takes no less time for more samples). Each result's per-accelerator
    batch is its logged `global_batch_size` over its accelerators; where the larger system's is at
    least the work ratio times the smaller's, nothing is reported (Dell's v5.0 bert: 192 per GB200
    against 48, 4x, for 1.13x the work). The message states both batch sizes.

    Nor is a larger system that needs as many accelerator-minutes as the smaller one, or more
    (olympic mean of the runs' times-to-train times the accelerators), reported: it trains no
    faster per accelerator, it only processes more units per minute because it needs more units
    to converge (a larger global batch converges later). The message states both.

    Why it matters: adding accelerators adds communication; doing more per accelerator on a bigger
    system, with no more work per accelerator per step, needs an explanation (a memory-bound small
    configuration can give one).

    Example: 8 GPUs at 1,000 samples/min per GPU, 64 GPUs at 1,200, both at a batch of 2 per GPU.

    How to fix: explain it in the submission notes, or check the accelerator counts and the logged
    `global_batch_size`.
    """

    code = "AUD006"
    name = "superlinear-scaling"
    summary = "A larger system does more work per accelerator than a smaller one."
    severity = Severity.WARNING
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        groups: dict[tuple[str, str, str], list[FolderRate]] = {}
        for rate in context.received(RATES):
            groups.setdefault((rate.submitter, rate.benchmark, rate.accelerator), []).append(rate)
        for (submitter, benchmark, model), entries in sorted(groups.items(), key=lambda item: item[0]):
            entries.sort(key=lambda entry: (entry.count, entry.per_accelerator, entry.path))
            for small, large in zip(entries, entries[1:]):
                # another framework may log its convergence point in another unit (Google's v1.1
                # bert, TensorFlow against JAX: 4.8e7x): two systems that name only other ones are
                # not compared
                mine, theirs = (self.frameworks(submitter, entry.path, context) for entry in (small, large))
                if mine and theirs and not mine & theirs:
                    continue
                margin = (
                    SUPERLINEAR_MARGIN
                    if self.same_chassis(submitter, small.path, large.path, context)
                    else CHASSIS_MARGIN
                )
                if large.count > small.count and large.per_accelerator > margin * small.per_accelerator:
                    if large.accelerator_minutes >= small.accelerator_minutes:
                        continue  # no faster to train per accelerator: it only needed more units to converge
                    ratio = large.per_accelerator / small.per_accelerator
                    batches = self.batches(small, large, ratio)
                    if batches is None:
                        continue  # a larger batch per accelerator accounts for the gap
                    yield self.finding(
                        f"{benchmark} on {large.count} x {model} does {ratio:.2f}x the work per accelerator "
                        f"of {small.count} x {model} ({small.path}), in {large.accelerator_minutes:,.4g} "
                        f"accelerator-minutes against {small.accelerator_minutes:,.4g}; {batches}",
                        path=large.path,
                    )

    @staticmethod
    def batches(small: FolderRate, large: FolderRate, ratio: float) -> str | None:
        """The per-accelerator batch sizes of the two results, said; None where the larger system's
        is large enough to account for `ratio`."""
        if small.batch is None or large.batch is None:
            return "the logs give no global_batch_size to compare the batch per accelerator"
        per_small, per_large = small.batch / small.count, large.batch / large.count
        if per_large >= ratio * per_small:
            return None
        return (
            f"batch per accelerator {per_large:g} against {per_small:g} (global_batch_size {large.batch:g} on "
            f"{large.count}, {small.batch:g} on {small.count}): "
            + (
                "the same work per step, so the batch does not explain it"
                if per_large == per_small
                else "a smaller batch per accelerator"
                if per_large < per_small
                else f"{per_large / per_small:.2f}x larger, too little to explain it"
            )
        )

    @staticmethod
    def frameworks(submitter: str, path: str, context: CheckContext) -> set[str]:
        """The framework families a system description names ("NGC MXNet 23.04, NGC Pytorch 23.04"
        names mxnet and pytorch), without releases; empty when it names none."""
        parts = path.split("/")
        description = context.system_description(submitter, parts[-2]) if len(parts) >= 2 else None
        text = str(description.get("framework") or "").lower() if description is not None else ""
        return {family for family in FRAMEWORKS if family in text}

    @staticmethod
    def same_chassis(submitter: str, small: str, large: str, context: CheckContext) -> bool:
        def chassis(path: str) -> tuple[Any, Any] | None:
            parts = path.split("/")
            description = context.system_description(submitter, parts[-2]) if len(parts) >= 2 else None
            if description is None:
                return None
            return (
                str(description.get("accelerators_per_node")).strip(),
                str(description.get("host_processor_model_name")).strip().lower(),
            )

        return chassis(small) is not None and chassis(small) == chassis(large)


#: Framework families, as a description's `framework` names them.
FRAMEWORKS = ("tensorflow", "mxnet", "paddle", "mindspore", "jax", "pytorch", "hugectr", "dgl", "tinygrad")


@dataclass(frozen=True)
class FolderRate:
    """What AUD006 compares of one result folder, published while checking it (runs are not kept)."""

    submitter: str
    benchmark: str
    accelerator: str  # the hardware reference's model
    count: int
    per_accelerator: float  # olympic mean of the runs' convergence units per minute, over the count
    accelerator_minutes: float  # olympic mean of the runs' times-to-train, times the count
    path: str
    batch: float | None  # the logged global_batch_size


#: Each folder's work per accelerator per minute, read by AUD006.
RATES: Channel[FolderRate] = Channel("plausibility.rates")


@dataclass(frozen=True)
class MeasuredPeer:
    """A closed result of the checked tree as AUD011 compares it, and where it is."""

    peer: peers.Peer
    path: str


#: Each closed result's accelerator-minutes, read by AUD011.
PEERS: Channel[MeasuredPeer] = Channel("plausibility.peers")


def measured_peer(result: BenchmarkResult, context: CheckContext, works: list[RunWork]) -> MeasuredPeer | None:
    """`result` measured as the published table measures its results (None: not closed, or no score)."""
    description = context.system_description(result.submitter, result.system)
    found = envelope.measure(result, description, [w.minutes for w in works])
    if found is None or result.submitter is None or result.system is None:
        return None
    version = context.ruleset.split("-", 1)[1]
    return MeasuredPeer(peers.Peer.of(result, version, found), result.path)


def global_batch(result: BenchmarkResult) -> float | None:
    """The `global_batch_size` the runs log (the most common value; None when none logs a positive number)."""
    values = []
    for run in result.runs:
        event = run.first("global_batch_size")
        value = event.value if event is not None else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf"):
            values.append(float(value))
    return statistics.mode(values) if values else None


@hookimpl
def mlperf_audit_check_benchmark(result: BenchmarkResult, context: CheckContext) -> None:
    """Keeps each folder's work per accelerator per minute for SuperlinearScaling and its
    accelerator-minutes for EquivalentHardwareDeviation (runs are not kept)."""
    works = run_work(result, context.ruleset.split("-", 1)[1])
    measured = measured_peer(result, context, works)
    if measured is not None:
        context.publish(PEERS, measured)
    count, accelerator = hardware.of_system(context.system_description(result.submitter, result.system))
    if not count or accelerator is None or result.submitter is None:
        return
    if len(works) >= 3:
        rates = sorted(w.rate for w in works)[1:-1]
        minutes = sorted(w.minutes for w in works)[1:-1]
        context.publish(
            RATES,
            FolderRate(
                result.submitter,
                result.benchmark,
                accelerator.model,
                count,
                sum(rates) / len(rates) / count,
                sum(minutes) / len(minutes) * count,
                result.path,
                global_batch(result),
            ),
        )


#: A result beyond the envelope's bound by more than this is beyond what the hardware allows: the
#: closest any published result of v1.0-v5.1 comes to its bound, checked against the earlier
#: rounds only, is 0.74 of it (`python bench/envelope.py --check`): half the bound is 2.7x away.
HARDWARE_FACTOR = 2.0


class BeyondEnvelope(BenchmarkRule):
    """A result needed less accelerator time than any earlier published result allows.

    What it checks: a closed-division result's accelerator-minutes (the olympic mean of its runs'
    times-to-train x the accelerators its system description declares) against the envelope of
    the rounds published before its own (`mlperf_audit_rules.support.envelope`): for every
    accelerator on which at least two submitters published the benchmark at the same quality
    target, its fewest accelerator-minutes, scaled by how much faster the result's accelerator
    can be (the largest of the BF16, FP8, INT8, FP6, FP4 and memory-bandwidth ratios, and of its
    FP4 peak over the best peak of an accelerator without FP4) and by an allowance of 1.52x
    software progress per round and 1.1x noise (the largest honest step below the same
    accelerator's floor a round later is 1.67x: 1.52 x 1.1); floors of the two rounds before the
    result's count (older ones would only loosen the bound). Where the result's accelerator has
    such floors of its own, they alone hold it (another's, scaled by peak ratios no real result
    reaches, would always be looser); else the loosest of the other accelerators' bounds is the
    one held: a result below it needed less accelerator time than the most efficient published
    use of any hardware, scaled, allows. The finding names the floor and the precisions whose
    peaks scaled it.

    Why it matters: compressed timestamps, an understated accelerator count and a weaker
    accelerator named in the system description all make a result cheaper than the hardware can
    be; unlike the utilisation checks, this needs no work model, so it covers every benchmark. A
    genuine advance (new software, a new precision) can also pass the bound; the warning asks
    for the explanation.

    Example: 20 accelerator-minutes for bert on H200 where the best H200 result of the previous
    round needed 38, and the allowance is 1.67x: at least 22.8, so 1.14x beyond.

    How to fix: check the system description's accelerator count and model and the logs'
    timestamps; if they are right, explain the gain in the submission's notes.
    """

    code = "AUD008"
    name = "beyond-published-envelope"
    summary = "A result needed less accelerator time than the published envelope allows."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        verdict = envelope_verdict(result, context)
        if verdict is not None and 1.0 < verdict.factor <= HARDWARE_FACTOR:
            yield self.finding(verdict.describe(), path=result.path)


class BeyondHardware(BenchmarkRule):
    """A result needed less than half the accelerator time the published envelope allows.

    What it checks: the bound of AUD008 (the most efficient published use of any hardware in the
    earlier rounds, scaled to the result's accelerator, with the software and noise allowance);
    a result below half of it is beyond what the hardware allows. The closest any published
    result of v1.0-v5.1 comes, each checked against the rounds before it, is 0.74 of the bound:
    half of it is 2.7x away from every published result.

    Why it matters: no published result, on any hardware, came near such a gain; timestamps
    compressed, accelerators left out of the count or a weaker accelerator named give it.

    Example: gpt3 on "256 x H100" in a time that 2,048 of them needed: 8x fewer accelerators
    claimed.

    An accelerator with FP4 (Blackwell, CDNA 4) is scaled by its FP4 peak against the best peak
    of another floor's accelerator, so a switch from FP8 to FP4 is within that bound; a floor on
    the same accelerator may have trained in FP8, so beyond it by less than 2x its FP4 over FP8
    peak (2x on B200, 3.1x on B300) is a warning, as is any where its FP4 peak is not in the
    hardware reference.

    How to fix: correct the system description (accelerator count and model) or the logs.
    """

    code = "AUD009"
    name = "beyond-hardware-bound"
    summary = "A result needed less than half the accelerator time the published envelope allows."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        verdict = envelope_verdict(result, context)
        if verdict is None or verdict.factor <= HARDWARE_FACTOR:
            return
        accelerator, headroom = verdict.measure.accelerator, verdict.bound.headroom
        if accelerator.fp4_supported and accelerator.fp4_tflops is None:  # FP4 alone may double the speed
            yield self.finding(
                f"{verdict.describe()}; {accelerator.model} has FP4, whose peak is not sourced, so this is a warning",
                path=result.path,
                severity=Severity.WARNING,
            )
        elif verdict.factor <= HARDWARE_FACTOR * headroom:
            yield self.finding(
                f"{verdict.describe()}; the floor is on the same accelerator and may have trained in FP8, and its "
                f"FP4 peak is {headroom:.2f}x its FP8 peak: FP4 alone could gain that much, so this is a warning",
                path=result.path,
                severity=Severity.WARNING,
            )
        else:
            yield self.finding(verdict.describe(), path=result.path)


class BeyondEnvelopeWithoutFp4(BenchmarkRule):
    """A result is within the published envelope only if it trained in FP4, and its configuration
    does not show FP4.

    What it checks: on an accelerator with an FP4 peak (Blackwell, CDNA 4), a closed result that
    AUD008 passes, against the same envelope with the hardware ratio limited to BF16, FP8, INT8
    and memory bandwidth (as if the result trained as the floor's accelerator could: another
    accelerator's floor is otherwise scaled by the FP4 peak, 4.5x an H100's FP8 for a B200);
    beyond that bound, the result is plausible only in FP4, and the launch configuration traced
    with certainty must switch FP4 on (`FP4=True`, NVIDIA's v5.1 NVFP4 recipes).

    Why it matters: FP4 peaks make the envelope loose for the newest accelerators; a result that
    needs that looseness without training in FP4 is a forgery's way through: times compressed
    2x, a stronger accelerator's runs described as a B200's.

    Example: a B200 bert result at 0.6x the accelerator-minutes that the best H200 result of the
    round before, scaled by their FP8 peak ratio (2.27) and the allowance, allows; no
    configuration says FP4.

    How to fix: if the runs trained in FP4, publish the configuration that switches it on; else
    check the logs' times and the system description's accelerator count and model.
    """

    code = "AUD012"
    name = "envelope-needs-fp4"
    summary = "A result is within the envelope only in FP4, and its configuration does not show FP4."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        full = envelope_verdict(result, context)
        if full is None or full.factor > 1.0 or not full.measure.accelerator.fp4_tflops:
            return  # beyond the envelope even in FP4: AUD008 and AUD009 say so
        wide = envelope_verdict(result, context, hardware.WIDE)
        if wide is None or wide.factor <= 1.0:
            return
        evidence = precision.evident(result, context)
        if evidence is not None and evidence.precision == "FP4":
            return
        shown = (
            f"the launch configuration switches {evidence.precision} on ({evidence.why}), not FP4"
            if evidence is not None
            else "no launch configuration traced with certainty shows it"
        )
        yield self.finding(
            f"{wide.describe()}, with the hardware ratio of BF16, FP8, INT8 and memory bandwidth; within the "
            f"envelope only if the runs trained in FP4 ({full.bound.basis}), and {shown}",
            path=result.path,
        )


class EquivalentHardwareDeviation(TreeRule):
    """A result needed far less accelerator time than every peer on the same accelerator at its scale.

    What it checks: a closed-division result's accelerator-minutes (the olympic mean of its runs'
    times-to-train x the accelerators its system description declares) against its peers: the
    results of the same benchmark and quality target on the same accelerator with between 1/1.5
    and 1.5 times its accelerators, in its own round (the published ones in `data/peers.json`,
    generated by `bench/peers.py`, and the other results of the checked tree) and in the round
    before. A result that needs fewer than every peer allows is reported: a peer of its own round
    allows 1.4x fewer (the largest honest lead in v3.0-v5.1 is 1.28x), one of the round before
    1.84x (one round of software and noise, 1.67x, with that noise once more; the largest honest
    step is 1.74x). Only rounds whose round before the table holds are checked (v3.0 onwards):
    without it, a new software release in the round cannot be told from a deviation.

    Why it matters: the MLPerf Training rules name "significant deviations from other results
    obtained on equivalent hardware/software" as a reason to suspect cherry-picking or an unfair
    advantage (training_rules.adoc). Times compressed, accelerators left out of the count or a
    weaker accelerator named all make a result stand out from its peers; on the published rounds
    v3.0-v5.1, no honest result does, and a result with its times halved does in 927 of 988 cases.

    Example: bert on 8 H100 in 95 accelerator-minutes where the closest of its peers, 8 H100 of
    the same round, needed 160: it allows at least 114, so 1.2x beyond.

    How to fix: check the system description's accelerator count and model and the logs'
    timestamps; if they are right, explain the gain (software, configuration) in the submission's
    notes.
    """

    code = "AUD011"
    name = "equivalent-hardware-deviation"
    summary = "A result needed far less accelerator time than every peer on the same accelerator."
    severity = Severity.WARNING
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        measured = list(context.received(PEERS))
        checked = tuple(entry.peer for entry in measured)
        for entry in measured:
            if peers.previous_round(entry.peer.round) not in peers.covered():
                continue
            found = peers.deviation(entry.peer, checked)
            if found is not None and found.factor > 1:
                yield self.finding(found.describe(), path=entry.path)


class StateExceedsMemory(BenchmarkRule):
    """The model's training state cannot fit in the described accelerators' memory.

    What it checks: for the benchmarks whose model size is fixed (`hardware.WORK`'s
    `state_bytes`: gpt3, llama31_8b and llama31_405b trained with mixed-precision Adam at 16 bytes
    a parameter, BF16 weights and gradients, FP32 master weights and two moments; the mixtures of
    experts deepseekv3_671b and gpt_oss_20b at 12 bytes for every parameter, all experts, with
    DeepSeek-V3's BF16 moments; llama2_70b_lora's
    frozen 70B base at 1 byte, FP8), that this state, sharded perfectly over every accelerator the
    system description declares, fits in the memory the hardware reference gives for the
    accelerator. The published results of v2.1-v5.1 use at most a quarter of it.

    Why it matters: fewer accelerators, or a smaller one, than the run used may be claimed; the
    training state has to live somewhere.

    Example: gpt3 on "32 x H100-SXM5-80GB": 2.8 TB of state is 87.5 GB per accelerator.

    Offloading the optimizer to the host would lower the need; no published run does, so this is a
    warning.

    How to fix: correct the accelerator count or model in the system description, or explain the
    offloading in the submission's notes.
    """

    code = "AUD010"
    name = "state-exceeds-memory"
    summary = "The model's training state cannot fit in the described accelerators' memory."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        work = hardware.WORK.get(result.benchmark)
        count, accelerator = hardware.of_system(context.system_description(result.submitter, result.system))
        if work is None or work.state_bytes is None or not count or accelerator is None or not accelerator.hbm_gb:
            return
        per_accelerator = work.state_bytes / count / 1e9
        if per_accelerator > accelerator.hbm_gb:
            yield self.finding(
                f"{result.benchmark}'s training state, {work.state_bytes / 1e12:,.2f} TB, is {per_accelerator:,.1f} GB "
                f"per accelerator even sharded over all {count}; a {accelerator.model} has {accelerator.hbm_gb:g} GB",
                path=result.path,
            )


class CrossResultSpeedup(ComparisonRule):
    """A result is faster per accelerator than its baseline by more than the hardware supports.

    What it checks: in `audit --baseline PATH`, for each benchmark, the best result's work per
    accelerator per minute against the baseline's best, and that against the larger of the
    accelerators' compute ratio (best dense peaks) and memory-bandwidth ratio, times a software
    allowance of 1.3 (one round of software gains; hardware.md R2: same-hardware gains of 1.02x to
    1.26x were observed across a round) and a measurement margin of 1.1.

    Why it matters: "X% faster than the previous generation" is only believable within what the new
    hardware and a round of software can deliver; beyond it, something else changed (the
    convergence, the accelerator count, or the logs).

    Example: H200 against H100 at 2.1x per accelerator (the bound is 1.43 x 1.3 x 1.1 = 2.04).

    How to fix: nothing in the package; a reviewer should ask where the gain comes from.
    """

    code = "AUD007"
    name = "cross-result-speedup"
    summary = "A speedup per accelerator over the baseline exceeds what the hardware supports."
    severity = Severity.WARNING
    scope = "comparison"

    def check(self, comparison: Comparison, context: CheckContext) -> Iterable[Finding]:
        for benchmark in sorted({s.benchmark for s in comparison.scores} & {s.benchmark for s in comparison.baseline}):
            new, old = best_of(comparison.scores, benchmark), best_of(comparison.baseline, benchmark)
            if new is None or old is None:
                continue
            rate_new, rate_old = new.work_rate, old.work_rate
            bound, basis = hardware.speedup_bound(
                new.system_info.get("accelerator_model_name", ""),
                old.system_info.get("accelerator_model_name", ""),
                hardware.SOFTWARE_ACROSS_ROUNDS,
            )
            if rate_new and rate_old and bound is not None and rate_new / rate_old > bound:
                yield self.finding(
                    f"{benchmark}: {new.submitter}/{new.system} is {rate_new / rate_old:.2f}x faster per accelerator "
                    f"than the baseline {old.submitter}/{old.system}, above what the hardware supports ({basis})"
                )


RULES: list[type[Rule]] = [
    UnknownAccelerator,
    UtilisationImpossible,
    UtilisationSuspicious,
    ThroughputMismatch,
    RateOutlier,
    SuperlinearScaling,
    CrossResultSpeedup,
    BeyondEnvelope,
    BeyondHardware,
    StateExceedsMemory,
    EquivalentHardwareDeviation,
    BeyondEnvelopeWithoutFp4,
]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
