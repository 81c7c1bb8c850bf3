"""The power logs of published rounds, measured: what the thresholds of PWR005-PWR007 are sized on.

For every benchmark folder with `power/` in the rounds given, the node logs' sampling as the core
reads it (`mlperf_audit.power_logs`): the median intervals, the share of intervals longer than
1 s, the longest interval, how much of each run the readings of the measurement window leave
uncovered at its start and its end, the mean interval (first to last reading over their number), and the node and switch logs against `number_of_nodes`.

    .venv/bin/python bench/power_logs.py /work/rounds/v4.0 /work/rounds/v4.1 /work/rounds/v5.0

Reads the rounds, writes nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Sequence

from mlperf_audit import power_logs
from mlperf_audit.engine.loading import load_benchmark
from mlperf_audit.reading.discovery import discover


def _span(values: Sequence[float], unit: str = "") -> str:
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:g}{unit}" if low == high else f"{low:g} to {high:g}{unit}"


def measure(root: Path) -> list[str]:
    rows = []
    tree = discover(root)
    for submission in tree.submissions:
        for folder in submission.benchmarks:
            if folder.power is None:
                continue
            description = submission.system(folder.system) if folder.system else None
            nodes = description.count("number_of_nodes") if description is not None else None
            result = load_benchmark(folder)
            runs = {run.name.split(".")[0]: run for run in result.runs}
            logs = [log for log in power_logs(result) if log.name.startswith("node_")]
            medians = [log.sampling.median_interval_ms for log in logs if log.sampling.median_interval_ms is not None]
            over = sum(log.sampling.over_one_second for log in logs)
            intervals = sum(log.sampling.intervals for log in logs)
            means = [
                round((log.sampling.last_ms - log.sampling.first_ms) / (log.sampling.readings - 1))
                for log in logs
                if log.sampling.readings > 1 and log.sampling.first_ms is not None and log.sampling.last_ms is not None
            ]
            longest = max((b - a for log in logs for a, b in log.sampling.gaps), default=0.0)
            late, early = [], []
            for log in logs:
                run = runs.get(log.run)
                start, stop = (run.first("run_start"), run.first("run_stop")) if run is not None else (None, None)
                window = log.sampling.window_readings
                if start is None or stop is None or window is None:
                    continue
                late.append(round((window[0] - start.time_ms) / 1000, 1))
                early.append(round((stop.time_ms - window[1]) / 1000, 1))
            node_counts = sorted({sum(1 for n in files if n.startswith("node_")) for _, files in folder.power})
            switch_counts = sorted({sum(1 for n in files if n.startswith("sw_")) for _, files in folder.power})
            rows.append(
                f"| {folder.path} | {len(folder.power)} | {nodes} | {_span(node_counts)} | {_span(switch_counts)} "
                f"| {_span(medians, ' ms')} | {statistics.median(medians) if medians else '-'} ms "
                f"| {_span(means, ' ms')} | {over / intervals if intervals else 0:.1%} of {intervals} "
                f"| {f'{longest / 1000:g} s' if longest else '3 s or less'} "
                f"| {_span(late, ' s')} | {_span(early, ' s')} |"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for root in args.rounds:
        print(f"\n### {root.name}\n")
        print(
            "| folder | runs | number_of_nodes | node logs per run | sw logs per run | median interval per log "
            "| median of medians | mean interval per log | intervals > 1 s | longest interval over 3 s | first reading - run_start "
            "| run_stop - last reading |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        rows = measure(root)
        print("\n".join(rows) if rows else "| (no power/ folder) |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
