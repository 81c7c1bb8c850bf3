"""`mlperf-audit compare A B`: the scores of two PATHs per benchmark: the basis of every "X% faster" claim.

For each benchmark scored on both sides, the best (lowest) score of each side is compared:
speedup = A's minutes / B's minutes (above 1: B is faster), and the two per-accelerator measures,
defined once in `mlperf_audit.scores` and shown under the same names by `audit --baseline`: the
accelerator-minutes ratio, (A minutes x A accelerators) / (B minutes x B accelerators), and the
work per accelerator-minute ratio, B's convergence units per accelerator per minute over A's.

Names come from the packages: both renderings show them `visible`, and no line of the text can
start a CI workflow command.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from .. import api, terminal
from ..plugins import PluginHost
from ..safety import json_document, no_workflow_commands, output_path, visible
from ..scores import MEASURE_HEADERS, BenchmarkScore, accelerator_minutes_ratio, measures_legend, work_rate_ratio
from ..terminal import Screen
from . import EXIT_OK, add_reading_options, checked_target, progress, round_config, write


@dataclass(frozen=True)
class BenchmarkComparison:
    benchmark: str
    a: BenchmarkScore | None
    b: BenchmarkScore | None

    @property
    def speedup(self) -> float | None:
        if self.a is None or self.b is None or not self.a.score_minutes or not self.b.score_minutes:
            return None
        return self.a.score_minutes / self.b.score_minutes

    @property
    def accelerator_minutes_ratio(self) -> float | None:
        return accelerator_minutes_ratio(self.a, self.b) if self.a and self.b else None

    @property
    def work_rate_ratio(self) -> float | None:
        return work_rate_ratio(self.a, self.b) if self.a and self.b else None

    def to_dict(self) -> dict[str, Any]:
        def side(s: BenchmarkScore | None) -> dict[str, Any] | None:
            if s is None:
                return None
            return {
                "submitter": s.submitter,
                "system": s.system,
                "score_minutes": s.score_minutes,
                "accelerators": s.accelerators,
                "accelerator": s.system_info.get("accelerator_model_name"),
                "accelerator_minutes": s.accelerator_minutes,
                "work_per_accelerator_minute": s.work_rate,
            }

        return {
            "benchmark": self.benchmark,
            "a": side(self.a),
            "b": side(self.b),
            "speedup": self.speedup,
            "accelerator_minutes_ratio": self.accelerator_minutes_ratio,
            "work_per_accelerator_minute_ratio": self.work_rate_ratio,
        }


def _best(scores: list[BenchmarkScore]) -> dict[str, BenchmarkScore]:
    best: dict[str, BenchmarkScore] = {}
    for score in scores:
        current = best.get(score.benchmark)
        if score.score_minutes is not None and (
            current is None or current.score_minutes is None or score.score_minutes < current.score_minutes
        ):
            best[score.benchmark] = score
        elif current is None:
            best[score.benchmark] = score
    return best


def compare(a: list[BenchmarkScore], b: list[BenchmarkScore]) -> list[BenchmarkComparison]:
    best_a, best_b = _best(a), _best(b)
    return [BenchmarkComparison(name, best_a.get(name), best_b.get(name)) for name in sorted(set(best_a) | set(best_b))]


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


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "compare",
        help="per benchmark: the scores of A and B, speedup, accelerator-minutes and work per accelerator-minute",
    )
    parser.add_argument("a", metavar="A", help="a PATH that `check` accepts (the baseline)")
    parser.add_argument("b", metavar="B", help="a PATH that `check` accepts (compared with A)")
    parser.add_argument("--format", default="text", choices=("text", "json"))
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument("--ruleset-b", metavar="RULESET", help="the round of B, when it differs from A's")
    add_reading_options(parser)

    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    (side_a, _), (side_b, _) = checked_target(args.a), checked_target(args.b)
    if args.output:
        output_path(args.output, [side_a, side_b])
    config_a = round_config(args, side_a)
    config_b = round_config(args, side_b, args.ruleset_b)
    with progress(args, f"scoring {visible(args.a)}") as show:
        scores_a = api.score(side_a, config_a, host, progress=show)
    with progress(args, f"scoring {visible(args.b)}") as show:
        scores_b = api.score(side_b, config_b, host, progress=show)
    rows = compare(scores_a, scores_b)
    screen = Screen.of(None if args.output else sys.stdout)
    text = render_json(rows, str(args.a), str(args.b)) if args.format == "json" else render_text(rows, screen)
    write(text, args.output, [side_a, side_b])
    return EXIT_OK
