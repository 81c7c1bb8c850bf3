"""Two PATHs' scores per benchmark: the basis of every "X% faster" claim (`mlperf-audit compare`).

For each benchmark scored on both sides, the best (lowest) score of each side is compared:
speedup = A's minutes / B's minutes (above 1: B is faster), and the two per-accelerator measures,
defined once in `mlperf_audit.scores` and shown under the same names by `audit --baseline`: the
accelerator-minutes ratio, (A minutes x A accelerators) / (B minutes x B accelerators), and the
work per accelerator-minute ratio, B's convergence units per accelerator per minute over A's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scores import BenchmarkScore, accelerator_minutes_ratio, work_rate_ratio


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
