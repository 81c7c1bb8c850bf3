"""The scores as text, JSON and the official summarizer's two CSV tables (document kind `scores`).

Names and description fields come from the packages: shown `visible`, never the start of a CI
workflow command, and in CSV never the start of a spreadsheet formula (`safety.spreadsheet_text`).
"""

from __future__ import annotations

import csv
import io
import math
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..reference import rulesets
from ..safety import json_document, no_workflow_commands, spreadsheet_text, visible
from ..scores import DETAIL_METRICS, SCHEMA_VERSION, SPEC_COLUMNS, BenchmarkScore
from ..terminal import Screen, table, wrapped
from .documents import ScoresDocument


def render_json(scores: Iterable[BenchmarkScore], ruleset: str, extra: dict[str, Any] | None = None) -> str:
    from .._version import __version__

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
    (
        "valid",
        "no when an error was found about the folder (its codes follow; waived ones apart): the score is "
        "computed all the same, but the result is not valid until the errors are fixed; unknown when those "
        "errors follow from a round nothing named that the logs' dates do not fit",
    ),
)


def _unknown(score: BenchmarkScore) -> str:
    """What prefixes the codes of a result whose validity is unknown (its errors follow from a round
    nothing named): they may not apply under the round the package was made for."""
    return "validity unknown, " if score.valid is None else ""


def validity(score: BenchmarkScore) -> str:
    """The `valid` cell of a human-read table: yes, or no with the codes of the errors."""
    return score.validity if score.valid else f"{score.validity}: {', '.join(score.invalid)}"


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
                _shown(validity(s)),
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
                "valid",
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
        if not s.valid:
            shown = "invalid" if s.valid is False else "validity unknown"
            lines.append(f"  {shown}: {_shown(s.invalid_reason)} (see its findings); scored all the same")
        lines.append(f"  spread: {s.spread.describe()}")
        if s.energy_joules is not None or any(r.energy_joules is not None for r in s.runs):
            per_run = ", ".join(
                f"{_shown(r.file.rsplit('/', 1)[-1][:-4])} {_kilojoules(r.energy_joules)}" for r in s.runs
            )
            lines.append(f"  energy (kJ): {_kilojoules(s.energy_joules)} per result; {per_run}")
        if s.note:
            lines.append(f"  note: {_shown(s.note)}")
    return no_workflow_commands("\n".join([lines[0], *(wrapped(line, screen) for line in lines[1:])]) + "\n")


def csv_value(value: Any) -> Any:
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


def sorted_rows(rows: list[dict[str, Any]], columns: list[str]) -> list[dict[str, Any]]:
    """`rows` in the summarizer's order: pandas sort_values(by=all columns), whatever types a column mixes."""
    return sorted(rows, key=lambda row: tuple(_sort_value(row[c]) for c in columns))


def _table(rows: list[dict[str, Any]], columns: list[str], added: tuple[str, ...] = ()) -> str:
    """The table as CSV, sorted by `columns` as the summarizer sorts it; `added` columns (this tool's) last."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns + list(added))
    for row in sorted_rows(rows, columns):
        writer.writerow([csv_value(row[c]) for c in columns] + [csv_value(row[c]) for c in added])
    return no_workflow_commands(buffer.getvalue())  # a row starts with the description's division


@dataclass(frozen=True)
class SummaryTables:
    """The summarizer's two tables, unsorted: its strong-scaling table (a row per system, a column
    per benchmark) and its detailed table, each with its columns in order."""

    wide: list[dict[str, Any]]
    wide_columns: list[str]
    detailed: list[dict[str, Any]]
    detailed_columns: list[str]


def summary_tables(scores: list[BenchmarkScore], ruleset: str) -> SummaryTables:
    """The rows of the summarizer's strong-scaling and detailed tables."""
    benchmarks = list(rulesets.get(ruleset).benchmarks)
    systems: dict[tuple[Any, Any], dict[str, Any]] = {}
    details: dict[tuple[Any, Any], dict[str, Any]] = {}
    for s in scores:
        if not s.system_info:
            continue  # no readable system description: the summarizer skips the system
        key = (s.submitter, s.system)
        base = {c: s.system_info.get(c) for c in SPEC_COLUMNS}
        urls = {"details_url": s.system_info.get("details_url"), "code_url": s.system_info.get("code_url")}
        wide = systems.setdefault(key, {**base, **{b: None for b in benchmarks}, **urls, INVALID_COLUMN: ""})
        detail = details.setdefault(
            key,
            {
                **base,
                **{f"{b}:{m}": ("" if m == "RCP" else None) for b in benchmarks for m in DETAIL_METRICS},
                **urls,
                INVALID_COLUMN: "",
            },
        )
        if not s.valid:  # not a column of the summarizer's: `csv_tables` adds it last
            for row in (wide, detail):
                row[INVALID_COLUMN] = "; ".join(
                    filter(None, [row[INVALID_COLUMN], f"{s.benchmark}: {_unknown(s)}{', '.join(s.invalid)}"])
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
    return SummaryTables(list(systems.values()), wide_columns, list(details.values()), detail_columns)


#: The column the summarizer's tables get last, here only: the system's invalid results, each as
#: `<benchmark>: <codes of its errors>` ("ssd: RCP004; bert: FOR008, FOR009"), empty when none is.
INVALID_COLUMN = "invalid"


def csv_tables(scores: list[BenchmarkScore], ruleset: str) -> tuple[str, str]:
    """The summarizer's strong-scaling table (a row per system) and its detailed table, each with
    its columns and values, and one column of this tool's last: which results are invalid (`INVALID_COLUMN`)."""
    tables = summary_tables(scores, ruleset)
    return (
        _table(tables.wide, tables.wide_columns, (INVALID_COLUMN,)),
        _table(tables.detailed, tables.detailed_columns, (INVALID_COLUMN,)),
    )


def text_document(document: ScoresDocument) -> str:
    return render_text(document.results, document.screen, document.opened)


def json_document_of(document: ScoresDocument) -> str:
    return render_json(document.results, document.ruleset, {"target": document.target, "notes": list(document.notes)})


def csv_document(document: ScoresDocument) -> tuple[str, str]:
    """The two tables, written to FILE.csv and FILE_detailed.csv (`Format.companions`)."""
    return csv_tables(document.results, document.ruleset)
