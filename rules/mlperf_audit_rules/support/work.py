"""Support for rule packs: the work a run did and how fast, as the official result summarizer reads it.

Time-to-train is read as `_query_run_start_stop` reads it (the first pair of `run_start` and
`run_stop` records); a converged run's work is its convergence point (`support.convergence`); the
quality target is the one the official compliance rule sets. The scoring pack scores with them, the
plausibility pack holds the work to what the hardware and the published envelope allow.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mlperf_audit import BenchmarkResult, CheckContext, Run, hardware, reference
from mlperf_audit_rules.support import envelope
from mlperf_audit_rules.support.convergence import run_convergence
from mlperf_audit_rules.support.official_compliance import load_config


def time_to_train_ms(run: Run) -> float | None:
    """Milliseconds between run_start and run_stop, read as `_query_run_start_stop` reads them."""
    return run.cached("summarizer.time_to_train_ms", lambda: _time_to_train_ms(run))


def _time_to_train_ms(run: Run) -> float | None:
    start = stop = None
    for event in run.events:
        if event.key == "run_start":
            start = event.time_ms
        if event.key == "run_stop":
            stop = event.time_ms
        if start is not None and stop is not None:
            break
    if start is None or stop is None:
        return None
    elapsed = float(stop) - float(start)
    return elapsed if math.isfinite(elapsed) else None  # two finite times ~1e308 apart overflow


def time_to_train(run: Run) -> float | None:
    """Minutes between run_start and run_stop, read as `_query_run_start_stop` reads them."""
    milliseconds = time_to_train_ms(run)
    return None if milliseconds is None else milliseconds / 60 / 1000


@dataclass(frozen=True)
class RunWork:
    """A converged run's convergence point and time-to-train: the work it did, and how fast."""

    run: Run
    units: float
    minutes: float

    @property
    def rate(self) -> float:
        return self.units / self.minutes


def run_work(result: BenchmarkResult, version: str) -> list[RunWork]:
    """The work of every converged run with a positive time-to-train, in folder order."""
    works = []
    for run in result.runs:
        convergence = run_convergence(run, version)
        minutes = time_to_train(run)
        if convergence.converged and minutes and minutes > 0:
            works.append(RunWork(run, float(convergence.point), minutes))
    return works


def quality_target(version: str, benchmark: str, division: str) -> tuple[float, str] | None:
    """The quality target and its direction (">=" or "<="), read from the official compliance rule."""
    config = load_config(version, f"{division}_{benchmark}")
    key = reference.benchmarks.facts(benchmark).quality_key
    record = config.keys.get(key) if config else None
    if record is None or record.at_least_one is None:
        return None
    match = re.search(r"(>=|<=)\s*([0-9.]+)", record.at_least_one[0])
    return (float(match.group(2)), match.group(1)) if match else None


def envelope_verdict(
    result: BenchmarkResult, context: CheckContext, precisions: tuple[str, ...] = hardware.PRECISIONS
) -> envelope.Verdict | None:
    """`result` against the envelope of the rounds before the checked one, computed once per result
    and shared by AUD008, AUD009 and the score's `envelope` (AUD012 asks for it without FP6 and
    FP4: `hardware.WIDE`)."""

    def compute() -> envelope.Verdict | None:
        version = context.ruleset.split("-", 1)[1]
        target = quality_target(version, result.benchmark, "closed")
        return envelope.verdict(
            result,
            context.system_description(result.submitter, result.system),
            [w.minutes for w in run_work(result, version)],
            version,
            target[0] if target else None,
            precisions,
        )

    return context.memo(result, "envelope.verdict" + ("" if precisions == hardware.PRECISIONS else ".wide"), compute)
