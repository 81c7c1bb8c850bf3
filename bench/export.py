#!/usr/bin/env python3
"""Every published round in one command: `mlperf-audit export` against a bare read loop.

Times, on the rounds given (extracted trees named vX.Y, read in place: nothing is written into
them), in the same run:

- the bare loop of bench/round.py over every result file of every round (read each, decode every
  MLLOG line with `json.loads`, skip malformed ones), in one process;
- `mlperf-audit export ROUND... --format csv` with an empty cache of parsed files (a first look),
  `--jobs` as given (the number of cores by default), as one command;
- the same export again on the unchanged rounds (answered from the kept checks).

Each measure is taken --repeat times, the measures in turn (a shared machine's slow moments fall on
all of them alike), and the median is shown with the range, with the peak memory summed over each
command's process tree (bench/round.py's discipline). Prints the figures side by side and the ratio
of the export to the bare loop (the goal: at most 2x).

Usage: python bench/export.py [ROUND ...] [--rounds-dir DIR] [--jobs N] [--repeat 3]
ROUNDS default to every vX.Y folder under --rounds-dir (default: $MLPERF_AUDIT_ROUNDS).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

GOAL = 2.0


def _round_bench() -> ModuleType:
    """bench/round.py, whose loop, measuring wrapper and compile step this bench shares."""
    spec = importlib.util.spec_from_file_location("round_bench", Path(__file__).with_name("round.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rounds_under(folder: Path) -> list[Path]:
    found = [p for p in folder.iterdir() if p.is_dir() and re.fullmatch(r"v\d+\.\d+", p.name)]
    return sorted(found, key=lambda p: tuple(int(n) for n in p.name[1:].split(".")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="*", type=Path)
    parser.add_argument("--rounds-dir", type=Path, default=os.environ.get("MLPERF_AUDIT_ROUNDS"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure (the median is shown)")
    args = parser.parse_args()
    rounds = list(args.rounds) or (rounds_under(args.rounds_dir) if args.rounds_dir else [])
    if not rounds:
        parser.error("no round given (ROUND arguments, --rounds-dir or $MLPERF_AUDIT_ROUNDS)")
    bench = _round_bench()
    # the loop of bench/round.py, over the result files of every round instead of one tree's
    one_tree = 'Path(sys.argv[1]).glob("*/results/*/*/result_*.txt")'
    assert one_tree in bench.BARE_LOOP
    bare_loop = bench.BARE_LOOP.replace(
        one_tree, '(p for root in sys.argv[1:] for p in Path(root).glob("*/results/*/*/result_*.txt"))'
    )
    audit = [sys.executable, "-m", "mlperf_audit"]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *(str(Path(m.__file__).parent) for m in bench._packages())],
        check=True,
    )
    logs = [p for root in rounds for p in root.glob("*/results/*/*/result_*.txt")]
    size = sum(p.stat().st_size for p in logs) / 1e6
    print(
        f"{len(rounds)} rounds ({', '.join(r.name for r in rounds)}): {len(logs):,} result files, {size:,.0f} MB; "
        f"{os.cpu_count()} cores; mlperf-audit --jobs {args.jobs}"
    )
    paths = [str(r) for r in rounds]
    runs: dict[str, list[tuple[float, str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="mlperf-audit-export-") as temp:
        for repetition in range(args.repeat):
            cache = ["--cache-dir", f"{temp}/cache{repetition}"]  # empty until the first export names it
            export = audit + ["export", *paths, "--format", "csv", "--no-progress", "--jobs", str(args.jobs), *cache]
            for name, command in (
                ("bare", [sys.executable, "-c", bare_loop, *paths]),
                ("cold", export),
                ("again", export),
            ):
                runs.setdefault(name, []).append(bench.timed(command))
                print(f"  run {repetition + 1} {name}: {runs[name][-1][0]:.1f} s", file=sys.stderr, flush=True)
    records, malformed = (int(n) for n in (runs["bare"][0][1].split() or ["0", "0"]))
    table = list(csv.DictReader(io.StringIO(runs["cold"][0][1])))
    scored = sum(1 for row in table if row["score_minutes"])
    print(
        f"MLLOG lines: {records:,} decoded, {malformed:,} malformed (skipped by the bare loop); "
        f"export: {len(table):,} results, {scored:,} with a score"
    )

    def measured(name: str) -> tuple[float, float, float, float]:
        seconds = [run[0] for run in runs[name]]
        return statistics.median(seconds), min(seconds), max(seconds), max(run[2] for run in runs[name])

    bare = measured("bare")[0]
    print(f"\nmedian of {args.repeat} runs")
    print(f"{'':52s} {'wall s':>8s} {'range s':>13s} {'peak MB':>8s} {'/ bare loop':>12s}")
    for label, name in (
        ("bare read + json.loads loop, every round", "bare"),
        ("mlperf-audit export, every round, empty cache", "cold"),
        ("  again, nothing changed", "again"),
    ):
        seconds, fastest, slowest, peak = measured(name)
        print(f"{label:52s} {seconds:8.1f} {fastest:6.1f}-{slowest:<6.1f} {peak:8.0f} {seconds / bare:11.2f}x")
    ratio = measured("cold")[0] / bare
    print(f"\nexport / bare json.loads loop: {ratio:.2f}x (goal: at most {GOAL:.0f}x)")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
