"""RCP: convergence against the reference convergence points, with the official numbers.

`support.convergence` computes the verdict as mlperf-logging's `RCP_Checker` does (its module
docstring says how); these rules report it. `python -m mlperf_audit_rules.rcp --write` regenerates
the reference statistics shipped in `data/rcp/`.
"""

from __future__ import annotations

import math
import sys
from typing import Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    Rule,
    Severity,
    hookimpl,
    rulesets,
)
from mlperf_audit_rules.support import convergence
from mlperf_audit_rules.support.causes import DAMAGED_LOG, ROUND_NOT_NAMED
from mlperf_audit_rules.support.convergence import NO_RUN_COUNT, Verdict, shown, verdict_for

#: A reference whose minimum acceptable mean is below this share of its mean accepts almost anything.
DEGENERATE_SHARE = 0.5


def _provisional(result: BenchmarkResult, context: CheckContext) -> str:
    """With --partial, says that the verdict stands on fewer runs than required."""
    required = rulesets.get(context.ruleset).required_runs(result.benchmark)
    if context.config.partial and required and len(result.runs) < required:
        return f" (provisional: {len(result.runs)} of {required} runs; {required - len(result.runs)} still required)"
    return ""


class _RcpRule(BenchmarkRule):
    scope = "benchmark"
    follows_from = ROUND_NOT_NAMED  # each round has its own RCPs

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
            yield self.finding(
                f"RCP test failed ({verdict.message}): {verdict.describe()}{_provisional(result, context)}",
                path=result.path,
            )


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
    follows_from = DAMAGED_LOG | ROUND_NOT_NAMED
    name = "batch-size-undetected"
    summary = "The runs lack one common global_batch_size or benchmark."
    severity = Severity.ERROR

    def judge(self, result: BenchmarkResult, verdict: Verdict, context: CheckContext) -> Iterable[Finding]:
        if verdict.message == "Could not detect global_batch_size":
            sizes = sorted({"none" if r.batch_size == -1 else shown(r.batch_size) for r in verdict.runs})
            names = sorted({shown(r.benchmark) for r in verdict.runs})
            yield self.finding(
                f"the runs log global_batch_size {', '.join(sizes)} and submission_benchmark "
                f"{', '.join(names)}; one value of each is required",
                path=result.path,
            )


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
            yield self.finding(f"no RCPs for {shown(verdict.runs[0].benchmark)} in {context.ruleset}", path=result.path)


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
            yield self.finding(
                f"RCP test failed ({verdict.message}) but passes with rcp-bypass: {verdict.describe()}",
                path=result.path,
            )


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
            scaled = (
                f"; time-to-train is scaled by {verdict.scaling_factor:.6f}"
                if verdict.scaling_factor > 1
                else "; no scaling"
            )
            yield self.finding(
                f"RCP test passed ({verdict.message}): {verdict.describe()}{scaled}{_provisional(result, context)}",
                path=result.path,
            )


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
            yield self.finding(
                f"the pinned RCP checker has RCPs for {verdict.runs[0].benchmark!r} in {context.ruleset} "
                "but no run count for it (it raises KeyError): convergence not checked",
                path=result.path,
            )


RULES: list[type[Rule]] = [
    RcpFailed,
    InsufficientConvergence,
    BatchSizeUndetected,
    MissingRcp,
    NoRcps,
    RcpBypassed,
    RcpVerdict,
    ScalingJsonMismatch,
    DegenerateRcp,
    ConvergenceUnreadable,
    RcpUncheckable,
]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES


if __name__ == "__main__":
    sys.exit(convergence.main(sys.argv[1:]))
