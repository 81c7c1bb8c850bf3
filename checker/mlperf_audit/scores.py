"""Scores: time-to-train per run and per benchmark, and the tables the official summarizer writes.

The numbers come from the `mlperf_audit_score_benchmark` hook (the built-in implementation is
`mlperf_audit_rules.summarizer`); this module holds the model and renders it: a text table, JSON
(schema_version 1) and the official summarizer's two CSV tables with their column names. Energy
(power submissions: a benchmark folder with `power/`) is in joules, per run and per result (the
detailed table's `<benchmark>:Energy` column).

Names and system description fields are the package's: every rendering shows them `visible`, and
no line of the text or CSV can start a CI workflow command, nor any CSV text cell a spreadsheet formula.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from . import rulesets
from .safety import json_document, no_workflow_commands, spreadsheet_text, visible
from .terminal import Screen, table, wrapped

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
        }


def render_json(scores: Iterable[BenchmarkScore], ruleset: str, extra: dict[str, Any] | None = None) -> str:
    from ._version import __version__

    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "mlperf-audit", "version": __version__},
        "ruleset": ruleset,
        **(extra or {}),
        "results": [score.to_dict() for score in scores],
    }
    return json_document(document)


def _shown(value: Any) -> str:
    return visible(str(value))


def _minutes(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _kilojoules(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:.1f}"


#: What the columns of the text table mean: printed under it, and in `mlperf-audit score --help`.
LEGEND = (
    ("runs", "result files in the folder (/ the number the round requires, when it differs; failed: not compliant)"),
    (
        "RCP factor",
        "the RCP check's normalisation: the reference convergence points' mean over this result's "
        "(olympic mean of its runs), at least 1 (1.0000: no reference applies, or the runs converge no "
        "faster than the reference)",
    ),
    (
        "scaling",
        "what the score is multiplied by (what scaling.json holds): the RCP factor when the runs pass the "
        "RCP check yet converge faster than the reference mean, else 1",
    ),
    ("score (min)", "the olympic mean of the runs' minutes to train (fastest and slowest dropped) x scaling"),
    ("spread", "the runs' time-to-train, standard deviation over mean"),
)


def legend_text(indent: str = "", width: int = 100) -> str:
    """The column legend, a paragraph a column, wrapped to `width`."""
    return "\n".join(
        textwrap.fill(f"{column}: {meaning}", width, initial_indent=indent, subsequent_indent=indent + "    ")
        for column, meaning in LEGEND
    )


def render_text(scores: list[BenchmarkScore], screen: Screen | None = None, opened: Callable[[str], str] = str) -> str:
    """The scores table (fitted to `screen` where someone reads it at a width), then its legend and
    each folder's runs; `opened` turns a folder's path into one that opens from where the reader is."""
    rows = []
    for s in scores:
        counted = sum(1 for r in s.runs if r.counted)
        runs = f"{len(s.runs)}" + (f"/{s.required_runs}" if s.required_runs and s.required_runs != len(s.runs) else "")
        if counted != len(s.runs):
            runs += f" ({len(s.runs) - counted} failed)"
        rows.append(
            [
                _shown(s.submitter or "-"),
                _shown(s.system or "-"),
                _shown(s.benchmark),
                _shown(s.division or "-"),
                _shown(s.system_info.get("availability", "-")),
                _shown(s.system_info.get("accelerators_count", "?"))
                + " x "
                + _shown(s.system_info.get("accelerator_model_name", "?")),
                runs,
                f"{s.rcp_factor:.4f}",
                f"{s.scaling_factor:.4f}",
                _minutes(s.score_minutes),
                "-" if s.spread.minutes_cv is None else f"{s.spread.minutes_cv:.1%}",
            ]
        )
    lines = [
        table(
            rows,
            [
                "submitter",
                "system",
                "benchmark",
                "division",
                "availability",
                "accelerators",
                "runs",
                "RCP factor",
                "scaling",
                "score (min)",
                "spread",
            ],
            screen,
        ),
        "",
        legend_text(width=screen.width if screen is not None and screen.fitted else 100),
    ]
    for s in scores:
        times = ", ".join(
            f"{_shown(r.file.rsplit('/', 1)[-1][:-4])} {_minutes(r.minutes)}"
            + ("" if r.counted else f" [{_shown(r.status)}]")
            + (" (dropped)" if r.file.rsplit("/", 1)[-1] in s.dropped else "")
            for r in s.runs
        )
        lines.append(f"\n{_shown(opened(s.path))}: {times}")
        lines.append(f"  spread: {s.spread.describe()}")
        if s.energy_joules is not None or any(r.energy_joules is not None for r in s.runs):
            per_run = ", ".join(
                f"{_shown(r.file.rsplit('/', 1)[-1][:-4])} {_kilojoules(r.energy_joules)}" for r in s.runs
            )
            lines.append(f"  energy (kJ): {_kilojoules(s.energy_joules)} per result; {per_run}")
        if s.note:
            lines.append(f"  note: {_shown(s.note)}")
    return no_workflow_commands("\n".join([lines[0], *(wrapped(line, screen) for line in lines[1:])]) + "\n")


def _csv_value(value: Any) -> Any:
    """As pandas writes it: floats by repr, None as an empty cell. A number (the tool's own, or a
    JSON number of a description) stays a number, a negative one included; anything else is text
    from the package (a description's field may hold anything, a list included) and is written as
    `spreadsheet_text`: visible, so that no cell adds a line, and never the start of a formula.
    An infinite or NaN float is no number a spreadsheet reads, so it is text too."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else spreadsheet_text(repr(value))
    if isinstance(value, int):
        return value
    return spreadsheet_text(str(value))


def _sort_value(value: Any) -> tuple[Any, ...]:
    """A sort key for any value a package holds, total over every JSON type: numbers by value,
    then NaN, then text, then lists and objects by their text, then missing values (pandas puts
    them last). A description's field holds whatever its author wrote, and one system's division
    given as a number beside another's as text must not stop the table (`<` between int and str)."""
    if value is None:
        return (4,)
    if isinstance(value, (int, float)):  # bool included: pandas orders True with 1
        return (0, 0, value) if value == value else (0, 1, 0)
    if isinstance(value, str):
        return (1, value)
    return (2, _shown(value))


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        # pandas sort_values(by=all columns), whatever types a column mixes
        return tuple(_sort_value(row[c]) for c in columns)

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in sorted(rows, key=key):
        writer.writerow([_csv_value(row[c]) for c in columns])
    return no_workflow_commands(buffer.getvalue())  # a row starts with the description's division


def csv_tables(scores: list[BenchmarkScore], ruleset: str) -> tuple[str, str]:
    """The summarizer's strong-scaling table (a row per system) and its detailed table."""
    benchmarks = list(rulesets.get(ruleset).benchmarks)
    systems: dict[tuple[Any, Any], dict[str, Any]] = {}
    details: dict[tuple[Any, Any], dict[str, Any]] = {}
    for s in scores:
        if not s.system_info:
            continue  # no readable system description: the summarizer skips the system
        key = (s.submitter, s.system)
        base = {c: s.system_info.get(c) for c in SPEC_COLUMNS}
        urls = {"details_url": s.system_info.get("details_url"), "code_url": s.system_info.get("code_url")}
        wide = systems.setdefault(key, {**base, **{b: None for b in benchmarks}, **urls})
        detail = details.setdefault(
            key,
            {**base, **{f"{b}:{m}": ("" if m == "RCP" else None) for b in benchmarks for m in DETAIL_METRICS}, **urls},
        )
        if s.benchmark in benchmarks:
            wide[s.benchmark] = s.score_minutes
            detail[f"{s.benchmark}:time_to_train"] = s.score_minutes
            detail[f"{s.benchmark}:Energy"] = s.energy_joules
            detail[f"{s.benchmark}:GBS"] = s.gbs
            detail[f"{s.benchmark}:samples_to_converge"] = s.samples_to_converge
            detail[f"{s.benchmark}:RCP"] = s.rcp_status
            detail[f"{s.benchmark}:rcp_scaling_factor"] = s.scaling_factor
    wide_columns = SPEC_COLUMNS + benchmarks + ["details_url", "code_url"]
    detail_columns = (
        SPEC_COLUMNS + [f"{b}:{m}" for b in benchmarks for m in DETAIL_METRICS] + ["details_url", "code_url"]
    )
    return _table(list(systems.values()), wide_columns), _table(list(details.values()), detail_columns)


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
