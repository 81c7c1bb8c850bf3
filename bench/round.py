#!/usr/bin/env python3
"""Round-scale benchmark: mlperf-audit against the official tools and a bare parsing loop.

Builds a round-sized results tree in a temporary folder (the real v4.1 sample's submitters copied
under new names until it holds --files result files), or uses --tree (a clone of
github.com/mlcommons/training_results_v4.1, say), then times on it, in the same run:

- the official tools as the verify script runs them, per submitter: package_checker, then
  result_summarizer (on the temporary tree, or a temporary copy of --tree: they write into it);
- mlperf-audit `check --score` (JSON output, --jobs as given: the number of cores by default)
  with an empty cache of parsed files (a user's first look at a new tree), again on the unchanged
  tree (an edit-check loop), and with --no-cache; then `check` and `score` as two commands sharing
  a new cache;
- two bare loops that read every result file and decode every MLLOG line, skipping malformed
  ones: `json.loads`, and msgspec's compiled decoder into a typed struct (the two floors).

Prints wall times, ratios, peak memory (summed over each command's process tree: a parallel
check's workers count) and MLLOG lines per second.

Usage: python bench/round.py [--files 1300] [--tree PATH] [--jobs N] [--repeat 5] [--skip-official]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mlperf-training-v4.1-sample"
#: The floors: read every result file and decode every MLLOG line, nothing else. A real round has
#: malformed lines (Lambda's v4.1 logs), which the loops count and skip instead of stopping at.
#: `{setup}` defines `decode` and the errors it raises as `Malformed`.
_LOOP = """
import sys
from pathlib import Path
{setup}
records = malformed = 0
for path in sorted(Path(sys.argv[1]).glob("*/results/*/*/result_*.txt")):
    with open(path, "rb") as stream:
        for line in stream:
            start = line.find(b":::MLLOG ")
            if start >= 0:
                try:
                    decode(line[start + 9:])
                    records += 1
                except Malformed:
                    malformed += 1
print(records, malformed)
"""
BARE_LOOP = _LOOP.format(setup="from json import loads as decode\nMalformed = ValueError")
#: The same loop with a compiled, typed decoder (msgspec into a frozen struct of the MLLOG fields).
MSGSPEC_LOOP = _LOOP.format(
    setup="""from typing import Any
import msgspec

class Record(msgspec.Struct, frozen=True):
    key: str
    value: Any = None
    time_ms: Any = None
    event_type: str = ""
    namespace: str = ""
    metadata: dict = {}

decode = msgspec.json.Decoder(Record).decode
Malformed = (msgspec.DecodeError, msgspec.ValidationError)"""
)


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


#: Runs a command and prints, after its output, its peak resident memory summed over its process
#: tree (the workers of a parallel check included), sampled from /proc every 20 ms; where /proc is
#: missing, the largest single process's peak (getrusage) instead.
MEASURE = """
import os, resource, subprocess, sys, tempfile, time

def tree_rss(root):
    parents, rss = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    fields = stat.read().rpartition(")")[2].split()
                parents[int(name)] = int(fields[1])
                rss[int(name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, IndexError, ValueError):
                continue
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total += rss.get(pid, 0)
        pending += [child for child, parent in parents.items() if parent == pid]
    return total

with tempfile.TemporaryFile("w+") as captured:  # a pipe would fill and stall the command while it is sampled
    process = subprocess.Popen(sys.argv[1:], stdout=captured, stderr=subprocess.DEVNULL, text=True)
    peak = 0
    if os.path.isdir("/proc"):
        while process.poll() is None:
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.02)
    process.wait()
    captured.seek(0)
    output = captured.read()
peak = max(peak // 1024, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stdout.write(output + "\\n" + str(peak))
"""


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, str, float]:
    """Wall seconds, standard output and peak memory (MB, summed over the process tree) of one command."""
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", MEASURE, *command], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output, _, peak = result.stdout.rpartition("\n")
    return seconds, output, int(peak or 0) / 1024


def _packages() -> list:
    import mlperf_audit
    import mlperf_audit_rules

    return [mlperf_audit, mlperf_audit_rules]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1300, help="result files in the generated tree")
    parser.add_argument("--tree", help="an existing results repository instead of the generated tree")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-official", action="store_true", help="do not time the official tools")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measure (the median is shown)")
    args = parser.parse_args()
    audit = [sys.executable, "-m", "mlperf_audit"]
    # An installed package has its bytecode compiled (pip does it); an editable checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module at every start instead (0.3 s here).
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *(str(Path(m.__file__).parent) for m in _packages())], check=True
    )
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

        jobs = ["--jobs", str(args.jobs)]
        check = audit + ["check", str(tree), "--format", "json", "--no-progress", *jobs]
        score = audit + ["score", str(tree), "--format", "json", *jobs]

        def cache(name: str) -> list[str]:
            return ["--cache-dir", f"{temp}/{name}"]  # empty until the first command that names it

        # Each measure is taken --repeat times, the measures in turn (a shared machine's slow
        # moments fall on all of them alike), and the median is shown with the range.
        runs: dict[str, list[tuple[float, str, float]]] = {}
        for repetition in range(args.repeat):
            for name, command in (
                ("bare", [sys.executable, "-c", BARE_LOOP, str(tree)]),
                ("compiled", [sys.executable, "-c", MSGSPEC_LOOP, str(tree)]),
                ("cold", check + ["--score", *cache(f"one{repetition}")]),  # a user's first look at a new tree
                ("again", check + ["--score", *cache(f"one{repetition}")]),  # the same tree, nothing changed
                ("plain", check + ["--score", "--no-cache"]),
                ("check", check + cache(f"two{repetition}")),
                ("score", score + cache(f"two{repetition}")),
            ):
                runs.setdefault(name, []).append(timed(command))
        records, malformed = (int(n) for n in (runs["bare"][0][1].split() or ["0", "0"]))
        print(f"MLLOG lines: {records:,} decoded, {malformed:,} malformed (skipped by the bare loops)")

        def measured(name: str) -> tuple[float, float, float, float]:
            """Median, fastest and slowest wall seconds, and the largest peak memory."""
            seconds = [run[0] for run in runs[name]]
            return statistics.median(seconds), min(seconds), max(seconds), max(run[2] for run in runs[name])

        both = [check_run[0] + score_run[0] for check_run, score_run in zip(runs["check"], runs["score"])]
        bare, compiled = measured("bare")[0], measured("compiled")[0]
        cold_s, again_s, check_s, score_s = (measured(name)[0] for name in ("cold", "again", "check", "score"))
        both_s = statistics.median(both)
        rows = [
            ("bare read + json.loads loop", *measured("bare")),
            ("bare read + msgspec typed-decoder loop", *measured("compiled")),
            ("mlperf-audit check --score, empty cache", *measured("cold")),
            ("  same, --no-cache", *measured("plain")),
            ("  again, nothing changed (an edit-check loop)", *measured("again")),
            (
                f"mlperf-audit check then score (check {check_s:.1f} s, score {score_s:.1f} s)",
                both_s,
                min(both),
                max(both),
                max(measured("check")[3], measured("score")[3]),
            ),
        ]
        if not args.skip_official:  # once: it takes minutes
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
            rows.append(
                (
                    "official package_checker + result_summarizer (per submitter)",
                    official,
                    official,
                    official,
                    official_peak,
                )
            )
        print(f"\nmedian of {args.repeat} runs (official tools: 1)")
        print(f"{'':62s} {'wall s':>8s} {'range s':>11s} {'peak MB':>8s} {'MLLOG lines/s':>14s}")
        for label, seconds, fastest, slowest, peak in rows:
            print(f"{label:62s} {seconds:8.1f} {fastest:5.1f}-{slowest:<5.1f} {peak:8.0f} {records / seconds:14,.0f}")
        print(
            f"\ncheck --score / bare json.loads loop: {cold_s / bare:.2f}x (goal: at most 1.5x); "
            f"/ msgspec loop: {cold_s / compiled:.2f}x; check then score / json.loads loop: "
            f"{both_s / bare:.2f}x (goal: at most 1.5x); again / json.loads loop: {again_s / bare:.2f}x "
            "(goal: at most 0.5x)"
        )
        if not args.skip_official:
            print(f"official / mlperf-audit check --score: {rows[-1][1] / cold_s:.0f}x faster (goal: at least 60x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
