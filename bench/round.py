#!/usr/bin/env python3
"""Round-scale benchmark: mlperf-audit against the official tools and a bare parsing loop.

Builds a round-sized results tree in a temporary folder (the real v4.1 sample's submitters copied
under new names until it holds --files result files), or uses --tree (a clone of
github.com/mlcommons/training_results_v4.1, say), then times on it, in the same run:

- the official tools as the verify script runs them, per submitter: package_checker, then
  result_summarizer (on the temporary tree, or a temporary copy of --tree: they write into it);
- mlperf-audit `check` then `score` (JSON output, --jobs as given), with an empty cache of parsed
  files that `check` fills and `score` reads (as a user's first check and score of a new tree),
  then both again with --no-cache, and `check` once more on the unchanged tree;
- two bare loops that read every result file and decode every MLLOG line, skipping malformed
  ones: `json.loads`, and msgspec's compiled decoder into a typed struct (the two floors).

Prints wall times, ratios, peak memory and MLLOG lines per second.

Usage: python bench/round.py [--files 1300] [--tree PATH] [--jobs N] [--skip-official]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mlperf-training-v4.1-sample"
#: The floors: read every result file and decode every MLLOG line, nothing else. A real round has
#: malformed lines (Lambda's v4.1 logs), which the loops count and skip instead of stopping at.
BARE_LOOP = """
import json, sys
from pathlib import Path
records = malformed = 0
for path in sorted(Path(sys.argv[1]).glob("*/results/*/*/result_*.txt")):
    with open(path, "rb") as stream:
        for line in stream:
            start = line.find(b":::MLLOG ")
            if start >= 0:
                try:
                    json.loads(line[start + 9:])
                    records += 1
                except ValueError:
                    malformed += 1
print(records, malformed)
"""
#: The same loop with a compiled, typed decoder (msgspec into a frozen struct of the MLLOG fields).
MSGSPEC_LOOP = """
import sys
from pathlib import Path
from typing import Any
import msgspec

class Record(msgspec.Struct, frozen=True):
    key: str
    value: Any = None
    time_ms: Any = None
    event_type: str = ""
    namespace: str = ""
    metadata: dict = {}

decode = msgspec.json.Decoder(Record).decode
records = malformed = 0
for path in sorted(Path(sys.argv[1]).glob("*/results/*/*/result_*.txt")):
    with open(path, "rb") as stream:
        for line in stream:
            start = line.find(b":::MLLOG ")
            if start >= 0:
                try:
                    decode(line[start + 9:])
                    records += 1
                except (msgspec.DecodeError, msgspec.ValidationError):
                    malformed += 1
print(records, malformed)
"""


def build_tree(target: Path, files: int) -> None:
    submitters = sorted(p for p in SAMPLE.iterdir() if (p / "results").is_dir())
    copy, count = 0, 0
    while count < files:
        for submitter in submitters:
            if count >= files:
                break
            destination = target / f"{submitter.name}{copy}"
            shutil.copytree(submitter, destination)
            count += sum(1 for _ in destination.glob("results/*/*/result_*.txt"))
        copy += 1
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


#: Runs a command and prints its peak resident memory (its own and its children's) after its output.
MEASURE = """
import resource, subprocess, sys
result = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
sys.stdout.write(result.stdout + "\\n" + str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
"""


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, str, float]:
    """Wall seconds, standard output and peak memory (MB) of one command."""
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", MEASURE, *command], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output, _, peak = result.stdout.rpartition("\n")
    return seconds, output, int(peak or 0) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1300, help="result files in the generated tree")
    parser.add_argument("--tree", help="an existing results repository instead of the generated tree")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-official", action="store_true", help="do not time the official tools")
    args = parser.parse_args()
    audit = [sys.executable, "-m", "mlperf_audit"]
    with tempfile.TemporaryDirectory(prefix="mlperf-audit-round-") as temp:
        tree = Path(temp) / "tree"
        if args.tree:
            shutil.copytree(args.tree, tree, symlinks=True)
        else:
            build_tree(tree, args.files)
        logs = sorted(tree.glob("*/results/*/*/result_*.txt"))
        size = sum(p.stat().st_size for p in logs) / 1e6
        submitters = sorted(p.name for p in tree.iterdir() if (p / "results").is_dir())
        print(
            f"tree: {len(submitters)} submitters, {len(logs)} result files, {size:.0f} MB; "
            f"{os.cpu_count()} cores; mlperf-audit --jobs {args.jobs}"
        )

        bare, out, bare_peak = timed([sys.executable, "-c", BARE_LOOP, str(tree)])
        records, malformed = (int(n) for n in (out.split() or ["0", "0"]))
        compiled, compiled_out, compiled_peak = timed([sys.executable, "-c", MSGSPEC_LOOP, str(tree)])
        print(f"MLLOG lines: {records:,} decoded, {malformed:,} malformed (skipped by the bare loops)")
        cache = ["--cache-dir", f"{temp}/cache"]  # empty: the first check parses every file
        jobs = ["--jobs", str(args.jobs)]
        check_s, _, check_peak = timed(audit + ["check", str(tree), "--format", "json", "--no-progress", *jobs, *cache])
        score_s, _, score_peak = timed(audit + ["score", str(tree), "--format", "json", *jobs, *cache])
        again_s, _, _ = timed(audit + ["check", str(tree), "--format", "json", "--no-progress", *jobs, *cache])
        plain_check, _, _ = timed(
            audit + ["check", str(tree), "--format", "json", "--no-progress", *jobs, "--no-cache"]
        )
        plain_score, _, _ = timed(audit + ["score", str(tree), "--format", "json", *jobs, "--no-cache"])
        audit_s = check_s + score_s
        audit_peak = max(check_peak, score_peak)
        rows = [
            ("bare read + json.loads loop", bare, bare_peak),
            ("bare read + msgspec typed-decoder loop", compiled, compiled_peak),
            (f"mlperf-audit check + score (check {check_s:.1f} s, score {score_s:.1f} s)", audit_s, audit_peak),
            (
                f"  same, --no-cache (check {plain_check:.1f} s, score {plain_score:.1f} s)",
                plain_check + plain_score,
                None,
            ),
            ("  check again, nothing changed (an edit-check loop)", again_s, None),
        ]
        if not args.skip_official:
            official, official_peak = 0.0, 0.0
            for submitter in submitters:
                for module, extra in (
                    ("package_checker", ["--log_output", f"{temp}/{submitter}.log"]),
                    ("result_summarizer", ["--csv", f"{temp}/{submitter}.csv"]),
                ):
                    seconds, _, peak = timed(
                        [sys.executable, "-m", f"mlperf_logging.{module}", submitter, "training", "4.1.0", *extra],
                        cwd=tree,
                    )
                    official += seconds
                    official_peak = max(official_peak, peak)
            rows.append(("official package_checker + result_summarizer (per submitter)", official, official_peak))
        print(f"\n{'':62s} {'wall s':>8s} {'peak MB':>8s} {'MLLOG lines/s':>14s}")
        for label, seconds, peak in rows:
            memory = f"{peak:8.0f}" if peak is not None else f"{'':8s}"
            print(f"{label:62s} {seconds:8.1f} {memory} {records / seconds:14,.0f}")
        print(
            f"\nmlperf-audit / bare json.loads loop: {audit_s / bare:.1f}x; / msgspec loop: {audit_s / compiled:.1f}x"
        )
        if not args.skip_official:
            print(f"official / mlperf-audit: {rows[-1][1] / audit_s:.1f}x faster (target: at least 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
