"""Scores: time-to-train per run and per benchmark, and the tables the official summarizer writes.

The numbers come from the `mlperf_audit_score_benchmark` hook (the built-in implementation is
`mlperf_audit_rules.summarizer`); this module holds the model, the column names of the official
summarizer's two CSV tables and the per-accelerator measures. Energy (power submissions: a benchmark
folder with `power/`) is in joules, per run and per result (the detailed table's
`<benchmark>:Energy` column). `mlperf_audit.formats.score_tables` renders it (text, JSON, CSV).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .model import Finding, Severity

SCHEMA_VERSION = 1
SPEC_COLUMNS = [
    "division",
    "availability",
    "submitter",
    "system",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_count",
    "accelerator_model_name",
    "accelerators_count",
    "framework",
    "notes",
    "private_id",
]
DETAIL_METRICS = ["time_to_train", "Energy", "GBS", "samples_to_converge", "RCP", "rcp_scaling_factor"]


@dataclass(frozen=True)
class RunScore:
    file: str  # relative path of the result file
    minutes: float | None  # None when the run has no usable time-to-train
    status: str  # "ok", or why the run counts as the slowest ("non-compliant: ...")
    units: float | None = None  # its convergence point (samples, tokens or epochs) when it converged
    energy_joules: float | None = None  # energy over its time-to-train (power submissions), None without

    @property
    def counted(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Spread:
    """How much the runs of one benchmark folder differ (population statistics over counted runs)."""

    runs: int
    minutes_cv: float | None  # standard deviation / mean of the time-to-train
    minutes_ratio: float | None  # slowest / fastest time-to-train
    units_cv: float | None  # the same for the convergence points (samples, tokens or epochs)
    units_distinct: int  # how many different convergence points

    @classmethod
    def of(cls, minutes: Sequence[float], units: Sequence[float]) -> "Spread":
        # a log may claim an infinite point or time; it has no spread to speak of
        minutes = [m for m in minutes if math.isfinite(m)]
        units = [u for u in units if math.isfinite(u)]

        def cv(values: Sequence[float]) -> float | None:
            if len(values) < 2:
                return None
            mean = statistics.fmean(values)
            return statistics.pstdev(values) / mean if mean > 0 else None

        ratio = max(minutes) / min(minutes) if len(minutes) >= 2 and min(minutes) > 0 else None
        return cls(len(minutes), cv(minutes), ratio, cv(units), len(set(units)))

    def describe(self) -> str:
        if self.minutes_cv is None:
            return f"{self.runs} counted run(s): no spread"
        text = (
            f"time-to-train varies by {self.minutes_cv:.2%} (coefficient of variation over {self.runs} runs; "
            f"slowest/fastest {self.minutes_ratio:.3f})"
        )
        if self.units_cv is not None:
            text += f"; convergence point by {self.units_cv:.2%} ({self.units_distinct} distinct)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "time_to_train_cv": self.minutes_cv,
            "slowest_over_fastest": self.minutes_ratio,
            "convergence_cv": self.units_cv,
            "convergence_distinct": self.units_distinct,
        }


@dataclass(frozen=True)
class BenchmarkScore:
    submitter: str | None
    system: str | None  # the folder name under results/
    benchmark: str
    path: str
    runs: tuple[RunScore, ...]
    required_runs: int | None
    score_minutes: float | None
    rcp_factor: float  # the normalisation factor the RCP check gives (1.0 when none applies)
    scaling_factor: float  # the factor applied to the score (what scaling.json would hold)
    rcp_status: str = ""  # the summarizer's RCP column: Pass, Fail, Interp. Fail, Missing, No RCP, ...
    gbs: float | None = None
    samples_to_converge: float | None = None
    dropped: tuple[str, ...] = ()  # runs removed by olympic scoring (file names)
    note: str = ""
    system_info: dict[str, Any] = field(default_factory=dict)  # summarizer columns from the description
    #: the summarizer's Energy column: the olympic mean of the kept runs' energies times the scaling
    #: factor, in joules; None without power measurements
    energy_joules: float | None = None
    # What a reviewer's view shows beside the score (the `report` plots), in none of the tables:
    #: the quality target and its direction (">=" or "<="), from the official compliance rule
    quality_target: tuple[float, str] | None = None
    #: the RCP band: the lowest acceptable mean convergence point and the RCP mean
    rcp_band: tuple[float, float] | None = None
    #: the highest utilisation among the runs of the peak the result is held to, and which peak
    #: ("H100-SXM5-80GB's FP8 peak": the precision its configuration evidently uses, else the best)
    peak_utilisation: tuple[float, str] | None = None
    #: against the published envelope (closed results): how far below its bound the result's
    #: accelerator-minutes are (above 1: beyond it), and the bound explained
    envelope: tuple[float, str] | None = None
    #: Why the result is not a valid one: the codes of the errors found about its folder (waived
    #: ones apart), sorted; empty when it has none. The official summarizer scores such a folder
    #: all the same: the score is kept, and every output marks it (`valid`, `invalid_reason`).
    #: Set after the check, from its findings, by `with_validity` alone.
    invalid: tuple[str, ...] = ()
    #: Those errors all follow from a round nothing named, which the logs' dates do not fit (PKG024's
    #: case): under the round the package was made for they may not exist, so validity is unknown.
    undecided: bool = False

    @property
    def valid(self) -> bool | None:
        """No error was found about the result's folder (waived ones apart); None when the errors
        found follow from a round taken against the logs' dates (`undecided`)."""
        if not self.invalid:
            return True
        return None if self.undecided else False

    @property
    def validity(self) -> str:
        """The `valid` column: "yes", "no" or "unknown"."""
        return {True: "yes", False: "no", None: "unknown"}[self.valid]

    @property
    def invalid_reason(self) -> str | None:
        """Why the result is not valid ("error RCP004 in the folder"), None when it is."""
        if not self.invalid:
            return None
        reason = f"error{'s' if len(self.invalid) > 1 else ''} {', '.join(self.invalid)} in the folder"
        if self.undecided:
            reason += ", under a round nothing named that the logs' dates do not fit: name the round"
        return reason

    @property
    def division(self) -> str | None:
        """The description's division if it is text (the tables show whatever it holds)."""
        value = self.system_info.get("division")
        return value if isinstance(value, str) else None

    @property
    def accelerators(self) -> int | None:
        return self.system_info.get("accelerators_count")

    @property
    def accelerator_minutes(self) -> float | None:
        """Time x accelerators: the score's minutes times the accelerators that trained, what a
        result cost in accelerator time (None without a score or a count)."""
        if not self.score_minutes or not self.accelerators:
            return None
        return self.score_minutes * self.accelerators

    @property
    def work_rate(self) -> float | None:
        """Work per accelerator-minute (per-accelerator throughput): convergence units per minute per
        accelerator, the olympic mean over the counted runs."""
        rates = sorted(r.units / r.minutes for r in self.runs if r.counted and r.units and r.minutes and r.minutes > 0)
        if not rates or not self.accelerators:
            return None
        kept = rates[1:-1] if len(rates) >= 3 else rates
        return sum(kept) / len(kept) / self.accelerators

    @property
    def spread(self) -> Spread:
        counted = [r for r in self.runs if r.counted and r.minutes is not None]
        return Spread.of(
            [r.minutes for r in counted if r.minutes is not None], [r.units for r in counted if r.units is not None]
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "submitter": self.submitter,
            "system": self.system,
            "system_name": self.system_info.get("system"),
            "benchmark": self.benchmark,
            "division": self.division,
            "availability": self.system_info.get("availability"),
            "accelerator": self.system_info.get("accelerator_model_name"),
            "accelerators": self.accelerators,
            "runs": [
                {
                    "file": r.file,
                    "minutes": r.minutes,
                    "status": r.status,
                    "units": r.units,
                    "energy_joules": r.energy_joules,
                }
                for r in self.runs
            ],
            "required_runs": self.required_runs,
            "dropped": list(self.dropped),
            "score_minutes": self.score_minutes,
            "energy_joules": self.energy_joules,
            "rcp_factor": self.rcp_factor,
            "scaling_factor": self.scaling_factor,
            "rcp_status": self.rcp_status,
            "gbs": self.gbs,
            "samples_to_converge": self.samples_to_converge,
            "spread": self.spread.to_dict(),
            "note": self.note,
            "valid": self.valid,
            "invalid_reason": self.invalid_reason,
        }


def folder_key(submitter: str | None, system: str | None, benchmark: str | None) -> tuple[str | None, ...]:
    """How a finding and a score name the benchmark folder they are about."""
    return (submitter or None, system or None, benchmark or None)


def with_validity(
    scores: Iterable[BenchmarkScore], findings: Iterable[Finding], round_guessed: bool = False
) -> list[BenchmarkScore]:
    """`scores` with `invalid` set from the check's `findings`: a result is invalid when an error
    that no waiver accepted is about its folder (its submitter, system and benchmark, as `export`
    counts findings per folder). The one place this fact is made; every output reads it.

    `round_guessed`: nothing named the round and the logs' dates fit another one; a result whose
    errors all follow from another finding (linked findings, `caused_by`: there, the round taken)
    is `undecided`, neither valid nor invalid."""
    errors: dict[tuple[str | None, ...], set[str]] = {}
    caused: dict[tuple[str | None, ...], bool] = {}
    for finding in findings:
        if finding.severity is Severity.ERROR and not finding.waived_by and finding.benchmark:
            key = folder_key(finding.submitter, finding.system, finding.benchmark)
            errors.setdefault(key, set()).add(finding.rule)
            caused[key] = caused.get(key, True) and finding.caused_by is not None
    marked = []
    for score in scores:
        key = folder_key(score.submitter, score.system, score.benchmark)
        codes = tuple(sorted(errors.get(key, ())))
        undecided = bool(codes) and round_guessed and caused.get(key, False)
        if codes != score.invalid or undecided != score.undecided:
            score = dataclasses.replace(score, invalid=codes, undecided=undecided)
        marked.append(score)
    return marked


def url_prefix(ruleset: str) -> str:
    version = ruleset.split("-", 1)[1]
    short = version[:3] + version[3:].replace(".0", "")
    return f"https://github.com/mlcommons/training_results_v{short}"


def best_of(scores: Iterable[BenchmarkScore], benchmark: str) -> BenchmarkScore | None:
    """The result of `benchmark` with the lowest score (None when none has a score)."""
    scored = [s for s in scores if s.benchmark == benchmark and s.score_minutes]
    return min(scored, key=lambda s: s.score_minutes or 0) if scored else None


#: The two per-accelerator measures of one result against another, each under one name wherever
#: it is shown (`compare`, `audit --baseline`, claims, `report`); above 1, `new` is better.
ACCELERATOR_MINUTES_RATIO = "accelerator-minutes ratio"
WORK_RATE_RATIO = "work per accelerator-minute ratio"
#: Their names as table headers, over lines of about 20 columns (the legend gives them whole).
MEASURE_HEADERS = ("accelerator-minutes\nratio", "work per\naccelerator-minute\nratio")


def measures_legend(baseline: str, new: str) -> str:
    """The two measures defined in a line each, for the text of a table that shows them."""
    return (
        f"{ACCELERATOR_MINUTES_RATIO} = {baseline}'s minutes x accelerators / {new}'s (time x accelerators, "
        f"convergence included)\n{WORK_RATE_RATIO} = {new}'s convergence units per accelerator per minute / "
        f"{baseline}'s (throughput only)\nabove 1: {new} is better"
    )


def accelerator_minutes_ratio(baseline: BenchmarkScore, new: BenchmarkScore) -> float | None:
    """`baseline`'s accelerator-minutes over `new`'s: how many times fewer accelerator-minutes `new`
    took to reach the target. It holds convergence: a recipe that needs more samples at a larger
    scale costs accelerator-minutes even when each accelerator processes more per minute."""
    old_cost, new_cost = baseline.accelerator_minutes, new.accelerator_minutes
    return old_cost / new_cost if old_cost and new_cost else None


def work_rate_ratio(baseline: BenchmarkScore, new: BenchmarkScore) -> float | None:
    """`new`'s work per accelerator-minute over `baseline`'s: how many times more convergence units
    each accelerator of `new` processes per minute (throughput only; how many units each needed to
    converge is divided out). What the hardware bounds (`hardware.speedup_bound`, AUD007)."""
    old_rate, new_rate = baseline.work_rate, new.work_rate
    return new_rate / old_rate if old_rate and new_rate else None


@dataclass(frozen=True)
class Comparison:
    """The target of rules of scope "comparison" (`audit --baseline`): the scores of PATH and of
    a baseline PATH (an earlier round, another submitter), each in folder order."""

    scores: tuple[BenchmarkScore, ...]
    baseline: tuple[BenchmarkScore, ...]
    path: str = ""
