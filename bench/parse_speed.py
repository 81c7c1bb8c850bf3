#!/usr/bin/env python3
"""Parse speed of mlperf-audit's parser against a bare read-and-json.loads loop, on real logs.

Usage: python bench/parse_speed.py [FOLDER] [--repeat N]
FOLDER defaults to the real v4.1 sample in ../shared/data. Prints MB/s and MLLOG lines/s, best of N.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mlperf_audit.reading.parser import TOKEN, parse_log

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mlperf-training-v4.1-sample"


def bare_loop(files: list[Path]) -> int:
    records = 0
    for path in files:
        with open(path, "rb") as stream:
            for line in stream:
                start = line.rfind(TOKEN)
                if start >= 0:
                    json.loads(line[start + len(TOKEN) :])
                    records += 1
    return records


def audit_parser(files: list[Path]) -> int:
    return sum(len(parse_log(path, path.name).events) for path in files)


def best_of(repeat: int, function, files) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(files)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = sorted(Path(args.folder).rglob("result_*.txt"))
    size = sum(path.stat().st_size for path in files)
    print(f"{len(files)} result files, {size / 1e6:.2f} MB, best of {args.repeat}")
    for label, function in (("bare json.loads loop", bare_loop), ("mlperf-audit parser", audit_parser)):
        seconds, records = best_of(args.repeat, function, files)
        print(
            f"{label:22s} {seconds:7.3f} s  {size / 1e6 / seconds:7.1f} MB/s  {records / seconds:10,.0f} MLLOG lines/s"
            f"  ({records} records)"
        )


if __name__ == "__main__":
    main()
