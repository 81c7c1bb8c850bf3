"""Each result against its peers, and the best results against a baseline's: the tables of `audit`.

Peers are the other results of the same benchmark on the same accelerator model at a similar scale
(between 1/1.5 and 1.5 times the result's accelerators: work per accelerator-minute falls with scale,
so a 72-GPU result is not compared with 512- and 1152-GPU ones); a result whose work per
accelerator-minute is far above their median stands out, and the row says which scale its peers are. Against a baseline, the best
result of each benchmark is held to the speedup its hardware supports (`hardware.speedup_bound`).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any

from ..reference import hardware
from ..scores import BenchmarkScore, accelerator_minutes_ratio, best_of, work_rate_ratio

#: Above this share of peers' median work per accelerator, a result stands out.
STANDS_OUT = 1.5
#: Peers have between 1/SCALE and SCALE times the result's accelerators (as the rules' equivalent-hardware
#: peers, AUD011): work per accelerator-minute falls as a result scales out.
SCALE = 1.5


def scale_range(count: int) -> tuple[int, int]:
    """The accelerator counts of `count`'s peers, both ends included."""
    return math.ceil(count / SCALE - 1e-9), math.floor(count * SCALE + 1e-9)


def hardware_bound(new: BenchmarkScore, old: BenchmarkScore, software: float) -> tuple[float | None, str]:
    """The largest per-accelerator speedup of `new` over `old` that their hardware supports."""
    return hardware.speedup_bound(
        new.system_info.get("accelerator_model_name", ""), old.system_info.get("accelerator_model_name", ""), software
    )


def _model(result: BenchmarkScore) -> str:
    accelerator = hardware.match(str(result.system_info.get("accelerator_model_name", "")))
    return accelerator.model if accelerator else str(result.system_info.get("accelerator_model_name"))


def _median_without(sorted_values: list[float], index: int) -> float | None:
    """The median of `sorted_values` without the one at `index` (None when none is left), as
    `statistics.median` gives it, in constant time."""
    count = len(sorted_values) - 1
    if count < 1:
        return None

    def at(position: int) -> float:
        return sorted_values[position if position < index else position + 1]

    middle = count // 2
    return at(middle) if count % 2 else (at(middle - 1) + at(middle)) / 2


def peer_rows(scores: list[BenchmarkScore], codes: dict[tuple[Any, Any, Any], set[str]]) -> list[dict[str, Any]]:
    """Per benchmark, each result against its peers: the other results on the same accelerator model at a
    similar scale (`SCALE`); a result without a known accelerator count has none."""
    rows = []
    # each result's model once, and the rates of each model and scale sorted once per accelerator count:
    # searching the group for each result's peers made 400 results of one benchmark cost 4.9x 100 in `audit`
    models = {id(s): _model(s) for s in scores}
    by_benchmark: dict[str, list[BenchmarkScore]] = {}
    for s in scores:
        by_benchmark.setdefault(s.benchmark, []).append(s)
    for benchmark in sorted(by_benchmark):
        group = by_benchmark[benchmark]
        rates = {id(s): s.work_rate for s in group}
        counts = {id(s): _count(s) for s in group}
        by_model: dict[str, list[tuple[int, float, int]]] = {}
        for p in group:
            if rates[id(p)] and counts[id(p)]:
                by_model.setdefault(models[id(p)], []).append((counts[id(p)], rates[id(p)] or 0.0, id(p)))
        place: dict[int, tuple[list[float], int]] = {}
        for entries in by_model.values():
            entries.sort()  # by accelerator count
            sizes = [count for count, _, _ in entries]
            window: dict[int, tuple[list[tuple[float, int]], list[float]]] = {}
            for count, own_rate, key in entries:
                if count not in window:
                    low, high = scale_range(count)
                    start, stop = bisect_left(sizes, low), bisect_left(sizes, high + 1)
                    ranked = sorted((r, k) for _, r, k in entries[start:stop])
                    window[count] = (ranked, [r for r, _ in ranked])
                ranked, ranked_rates = window[count]
                place[key] = (ranked_rates, bisect_left(ranked, (own_rate, key)))
        for s in sorted(group, key=lambda s: (s.score_minutes is None, s.score_minutes or 0)):
            rate = rates[id(s)]
            sorted_rates, index = place.get(id(s), ([], 0))
            peers_median = _median_without(sorted_rates, index) if len(sorted_rates) > 1 else None
            relative = rate / peers_median if rate and peers_median is not None else None
            peer_count = max(len(sorted_rates) - 1, 0)
            low, high = scale_range(counts[id(s)]) if counts[id(s)] else (0, 0)
            peer_scale = f"{low} to {high} accelerators" if counts[id(s)] else None
            accelerator = hardware.match(str(s.system_info.get("accelerator_model_name", "")))
            model = hardware.WORK.get(benchmark)
            utilisation = (
                rate * model.flops_per_unit / 60 / (accelerator.best_peak_tflops * 1e12)
                if rate and model and accelerator and accelerator.best_peak_tflops
                else None
            )
            flags = sorted(codes.get((s.submitter, s.system, s.benchmark), set()))
            if relative and relative > STANDS_OUT:
                flags.insert(0, f">{STANDS_OUT:g}x {peer_count} peer(s) at {low}-{high} accelerators")
            rows.append(
                {
                    "benchmark": benchmark,
                    "submitter": s.submitter,
                    "system": s.system,
                    "accelerators": s.accelerators,
                    "accelerator": s.system_info.get("accelerator_model_name"),
                    "score_minutes": s.score_minutes,
                    "work_per_accelerator_minute": rate,
                    "relative_to_peers": relative,
                    "peers": peer_count,
                    "peer_scale": peer_scale,
                    "utilisation": utilisation,
                    # the precision of the peak it is measured against (FP4 on Blackwell: half of FP8's share)
                    "utilisation_precision": accelerator.best_precision
                    if utilisation is not None and accelerator
                    else None,
                    "envelope": s.envelope[0] if s.envelope is not None else None,
                    "stands_out": flags,
                }
            )
    return rows


def _count(result: BenchmarkScore) -> int:
    """The result's accelerator count (0 when unknown)."""
    count = result.accelerators
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def baseline_rows(scores: list[BenchmarkScore], baseline: list[BenchmarkScore]) -> list[dict[str, Any]]:
    rows = []
    for benchmark in sorted({s.benchmark for s in scores} & {s.benchmark for s in baseline}):
        new, old = best_of(scores, benchmark), best_of(baseline, benchmark)
        if new is None or old is None:
            continue
        speedup = work_rate_ratio(old, new)
        bound, basis = hardware_bound(new, old, hardware.SOFTWARE_ACROSS_ROUNDS)
        verdict = (
            "not checkable"
            if speedup is None or bound is None
            else "fits"
            if speedup <= bound
            else "exceeds what the hardware supports"
        )
        rows.append(
            {
                "benchmark": benchmark,
                "new": f"{new.submitter}/{new.system}",
                "baseline": f"{old.submitter}/{old.system}",
                "accelerator_minutes_ratio": accelerator_minutes_ratio(old, new),
                "work_per_accelerator_minute_ratio": speedup,
                "hardware_bound": bound,
                "basis": basis,
                "verdict": verdict,
            }
        )
    return rows
