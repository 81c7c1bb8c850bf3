"""Compare the scores of two PATHs per benchmark: the basis of every "X% faster" claim.

For each benchmark scored on both sides, the best (lowest) score of each side is compared:
speedup = A's minutes / B's minutes (above 1: B is faster), and the speedup per accelerator,
which also divides out the accelerator counts: (A minutes x A accelerators) / (B minutes x B
accelerators), the ratio of throughput per accelerator.

Names come from the packages: both renderings show them `visible`, and no line of the text can
start a CI workflow command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from .safety import json_document, no_workflow_commands, visible
from .scores import BenchmarkScore


@dataclass(frozen=True)
class Comparison:
    benchmark: str
    a: BenchmarkScore | None
    b: BenchmarkScore | None

    @property
    def speedup(self) -> float | None:
        if self.a is None or self.b is None or not self.a.score_minutes or not self.b.score_minutes:
            return None
        return self.a.score_minutes / self.b.score_minutes

    @property
    def speedup_per_accelerator(self) -> float | None:
        speedup = self.speedup
        if speedup is None or not self.a or not self.b or not self.a.accelerators or not self.b.accelerators:
            return None
        return speedup * self.a.accelerators / self.b.accelerators

    def to_dict(self) -> dict[str, Any]:
        def side(s: BenchmarkScore | None) -> dict[str, Any] | None:
            if s is None:
                return None
            return {"submitter": s.submitter, "system": s.system, "score_minutes": s.score_minutes,
                    "accelerators": s.accelerators, "accelerator": s.system_info.get("accelerator_model_name")}

        return {"benchmark": self.benchmark, "a": side(self.a), "b": side(self.b), "speedup": self.speedup,
                "speedup_per_accelerator": self.speedup_per_accelerator}


def _best(scores: list[BenchmarkScore]) -> dict[str, BenchmarkScore]:
    best: dict[str, BenchmarkScore] = {}
    for score in scores:
        current = best.get(score.benchmark)
        if score.score_minutes is not None and (current is None or current.score_minutes is None
                                                or score.score_minutes < current.score_minutes):
            best[score.benchmark] = score
        elif current is None:
            best[score.benchmark] = score
    return best


def compare(a: list[BenchmarkScore], b: list[BenchmarkScore]) -> list[Comparison]:
    best_a, best_b = _best(a), _best(b)
    return [Comparison(name, best_a.get(name), best_b.get(name)) for name in sorted(set(best_a) | set(best_b))]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _side(score: BenchmarkScore | None) -> list[str]:
    if score is None:
        return ["-", _fmt(None), "-"]
    return [visible(f"{score.submitter}/{score.system}"), _fmt(score.score_minutes),
            visible(str(score.accelerators)) if score.accelerators else "-"]


def render_text(rows: list[Comparison]) -> str:
    table = [[visible(row.benchmark), *_side(row.a), *_side(row.b), _fmt(row.speedup),
              _fmt(row.speedup_per_accelerator)] for row in rows]
    header = ["benchmark", "A", "A min", "A accel.", "B", "B min", "B accel.", "speedup (A/B)", "per accelerator"]
    return no_workflow_commands(tabulate(table, headers=header, disable_numparse=True) + "\n")


def render_json(rows: list[Comparison], a: str, b: str) -> str:
    return json_document({"schema_version": 1, "a": a, "b": b, "benchmarks": [row.to_dict() for row in rows]})
