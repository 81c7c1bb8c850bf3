"""Two PATHs' best scores per benchmark as text and JSON (document kind `comparison`).

Names come from the packages: both renderings show them `visible`, and no line of the text can
start a CI workflow command.
"""

from __future__ import annotations

from .. import terminal
from ..review.comparison import BenchmarkComparison
from ..safety import json_document, no_workflow_commands, visible
from ..scores import MEASURE_HEADERS, BenchmarkScore, measures_legend
from ..terminal import Screen
from .documents import ComparisonDocument


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _side(score: BenchmarkScore | None) -> list[str]:
    if score is None:
        return ["-", _fmt(None), "-"]
    return [
        visible(f"{score.submitter}/{score.system}"),
        _fmt(score.score_minutes),
        visible(str(score.accelerators)) if score.accelerators else "-",
    ]


def render_text(rows: list[BenchmarkComparison], screen: Screen | None = None) -> str:
    table = [
        [
            visible(row.benchmark),
            *_side(row.a),
            *_side(row.b),
            _fmt(row.speedup),
            _fmt(row.accelerator_minutes_ratio),
            _fmt(row.work_rate_ratio),
        ]
        for row in rows
    ]
    header = [
        "benchmark",
        "A",
        "A min",
        "A accel.",
        "B",
        "B min",
        "B accel.",
        "speedup (A/B)",
        *MEASURE_HEADERS,
    ]
    table_text = terminal.table(table, header, screen)
    return no_workflow_commands(f"{table_text}\n\n{terminal.wrapped(measures_legend('A', 'B'), screen)}\n")


def render_json(rows: list[BenchmarkComparison], a: str, b: str) -> str:
    return json_document({"schema_version": 1, "a": a, "b": b, "benchmarks": [row.to_dict() for row in rows]})


def text_document(document: ComparisonDocument) -> str:
    return render_text(document.rows, document.screen)


def json_document_of(document: ComparisonDocument) -> str:
    return render_json(document.rows, document.a, document.b)
