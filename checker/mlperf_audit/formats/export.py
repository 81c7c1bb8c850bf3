"""`export`'s tidy table (document kind `export`): a row per result, or per run, of one or more
PATHs, as CSV or JSON; and the official summarizer's JSON summary of the same results.

The columns are listed once here (`RESULT_COLUMNS`, `RUN_COLUMNS`), with their meaning and unit,
which docs/export.md repeats and a test holds to them. Where the official result summarizer
(mlperf-logging) has a column, its name and value are kept: `division` to `private_id` (its
system columns), `time_to_train`, `Energy`, `GBS`, `samples_to_converge`, `RCP`,
`rcp_scaling_factor` (the metrics of its detailed table, there `<benchmark>:<metric>`),
`details_url` and `code_url`; a dashboard built on its CSV renames nothing.

Every text cell comes from a package: JSON shows it `visible`, CSV as `spreadsheet_text` (never
the start of a formula), and no line of either starts a CI workflow command.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Iterator

from ..reference import hardware
from ..safety import json_document, no_workflow_commands
from ..scores import SCHEMA_VERSION, SPEC_COLUMNS, BenchmarkScore, RunScore
from .documents import ExportDocument, ExportedTree, SeverityCounts
from .score_tables import csv_value, sorted_rows, summary_tables

#: The columns of a result's row, in order: what an analyst filters and plots first, then the
#: official summarizer's columns, then where the result is.
RESULT_COLUMNS = [
    "round",
    "submitter",
    "system",
    "benchmark",
    "division",
    "availability",
    "accelerator",
    "accelerators",
    "score_minutes",
    "accelerator_minutes",
    "energy_joules",
    "rcp_factor",
    "valid",
    "invalid_reason",
    "errors",
    "warnings",
    "infos",
    "waived",
    "runs",
    "runs_counted",
    "runs_required",
    *(column for column in SPEC_COLUMNS if column not in ("division", "availability", "submitter", "system")),
    "time_to_train",
    "Energy",
    "GBS",
    "samples_to_converge",
    "RCP",
    "rcp_scaling_factor",
    "details_url",
    "code_url",
    "ruleset",
    "path",
    "note",
]
#: A run's row (`--runs`): its result's columns, then its own.
RUN_COLUMNS = [
    *RESULT_COLUMNS,
    "run_file",
    "run_minutes",
    "run_status",
    "run_counted",
    "run_dropped",
    "run_units",
    "run_energy_joules",
    "run_errors",
    "run_warnings",
    "run_infos",
    "run_waived",
]
_NO_FINDINGS: SeverityCounts = {}


def round_of(ruleset: str) -> str:
    """The round a ruleset is of, as the results repositories name it ("training-4.1.0": "v4.1");
    a ruleset named otherwise (a plugin's) as it is."""
    usage, _, version = ruleset.partition("-")
    parts = version.split(".")
    if not usage or len(parts) < 2 or not all(part.isdigit() for part in parts):
        return ruleset
    return f"v{parts[0]}.{parts[1]}"


def _count(value: Any) -> int | None:
    """A count of the description (accelerators) if it is a whole number: a hostile one may be anything."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _accelerator_minutes(score: BenchmarkScore) -> float | None:
    accelerators = _count(score.accelerators)
    if (
        score.score_minutes is None or accelerators is None or accelerators <= 0
    ):  # a description's count may be anything
        return None
    return score.score_minutes * accelerators


def _accelerator(name: Any) -> str | None:
    matched = hardware.match(name)
    return matched.model if matched is not None else None


def _severities(counts: SeverityCounts, prefix: str = "") -> dict[str, int]:
    return {
        f"{prefix}errors": counts.get("error", 0),
        f"{prefix}warnings": counts.get("warning", 0),
        f"{prefix}infos": counts.get("info", 0),
        f"{prefix}waived": counts.get("waived", 0),
    }


def result_row(tree: ExportedTree, score: BenchmarkScore) -> dict[str, Any]:
    """The row of one result (a benchmark folder's score)."""
    info = score.system_info
    # the summarizer's values, from the system description; without one, the folders' names
    official = {column: info.get(column) for column in SPEC_COLUMNS}
    official["submitter"] = info.get("submitter", score.submitter)
    official["system"] = info.get("system", score.system)
    counts = tree.folder_findings.get((score.submitter, score.system, score.benchmark), _NO_FINDINGS)
    row = {
        "round": round_of(tree.ruleset),
        "benchmark": score.benchmark,
        "accelerator": _accelerator(info.get("accelerator_model_name")),
        "accelerators": score.accelerators,
        "score_minutes": score.score_minutes,
        "accelerator_minutes": _accelerator_minutes(score),
        "energy_joules": score.energy_joules,
        "rcp_factor": score.rcp_factor,
        "valid": score.valid,
        "invalid_reason": score.invalid_reason,
        **_severities(counts),
        "runs": len(score.runs),
        "runs_counted": sum(1 for run in score.runs if run.counted),
        "runs_required": score.required_runs,
        **official,
        "time_to_train": score.score_minutes,
        "Energy": score.energy_joules,
        "GBS": score.gbs,
        "samples_to_converge": score.samples_to_converge,
        "RCP": score.rcp_status,
        "rcp_scaling_factor": score.scaling_factor,
        "details_url": info.get("details_url"),
        "code_url": info.get("code_url"),
        "ruleset": tree.ruleset,
        "path": score.path,
        "note": score.note,
    }
    return {column: row[column] for column in RESULT_COLUMNS}


def run_row(tree: ExportedTree, result: dict[str, Any], score: BenchmarkScore, run: RunScore) -> dict[str, Any]:
    """The row of one run: its result's row, then the run's own columns."""
    name = run.file.rsplit("/", 1)[-1]
    return {
        **result,
        "run_file": run.file,
        "run_minutes": run.minutes,
        "run_status": run.status,
        "run_counted": run.counted,
        "run_dropped": name in score.dropped,
        "run_units": run.units,
        "run_energy_joules": run.energy_joules,
        **_severities(tree.file_findings.get(run.file, _NO_FINDINGS), "run_"),
    }


def rows(document: ExportDocument) -> Iterator[dict[str, Any]]:
    """The table's rows: each PATH's results (or runs) in the order `score` gives them."""
    for tree in document.trees:
        for score in tree.scores:
            result = result_row(tree, score)
            if document.runs:
                yield from (run_row(tree, result, score, run) for run in score.runs)
            else:
                yield result


def columns(document: ExportDocument) -> list[str]:
    return RUN_COLUMNS if document.runs else RESULT_COLUMNS


def csv_document(document: ExportDocument) -> str:
    """The table as CSV: a header row, then a row per result (or run); numbers as Python writes
    them (floats by repr), an empty cell where there is no value."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = columns(document)
    writer.writerow(names)
    for row in rows(document):
        writer.writerow([csv_value(row[column]) for column in names])
    return no_workflow_commands(buffer.getvalue())  # a row starts with the round, but a path may hold a line break


def json_document_of(document: ExportDocument) -> str:
    """The table as JSON: the PATHs and their rounds, the columns, and a row object per result (or run)."""
    from .._version import __version__

    return json_document(
        {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "mlperf-audit", "version": __version__},
            "table": "runs" if document.runs else "results",
            "paths": [
                {
                    "path": tree.path,
                    "ruleset": tree.ruleset,
                    "round": round_of(tree.ruleset),
                    "ruleset_named_by": tree.ruleset_named_by,
                }
                for tree in document.trees
            ],
            "columns": columns(document),
            "rows": list(rows(document)),
        }
    )


#: The types the summarizer gives its strong-scaling table's system columns before it writes them
#: (`_get_column_schema` of mlperf-logging's result_summarizer): text, but two counts.
_SUMMARY_COUNTS = ("host_processors_count", "accelerators_count")


def _summary_value(column: str, value: Any) -> Any:
    if value is None or column not in SPEC_COLUMNS:
        return value
    if column in _SUMMARY_COUNTS:
        return value if _count(value) is not None else str(value)
    return str(value)


def summary_json(document: ExportDocument) -> str:
    """The official result summarizer's JSON summary of the same results: what mlperf-logging
    (4.1.68, `result_summarizer --csv FILE.csv` writes it as FILE.json; mlcommons/logging pull
    request 399) writes, a list of its strong-scaling table's rows (a row per system, a column per
    benchmark holding the score in minutes, null where the system has none), sorted as it sorts
    them; the records of several PATHs one after the other (each with its round's benchmarks)."""
    records: list[dict[str, Any]] = []
    for tree in document.trees:
        tables = summary_tables(list(tree.scores), tree.ruleset)
        names = tables.wide_columns
        records += [
            {column: _summary_value(column, row[column]) for column in names} for row in sorted_rows(tables.wide, names)
        ]
    return json_document(records)
