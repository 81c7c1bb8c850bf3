#!/usr/bin/env python3
"""The launch-configuration tracer against the hand-labelled ground truth.

`tests/data/launch-configs-v4.1.yaml` lists real v4.1 result folders and the configuration each
ran (or none in the package), labelled by reading the round, not by the tracer. This measures the
tracer (`mlperf_audit_rules.support.tracing.trace`) against it:

- recall: of the folders whose configuration is in the package, how many are traced to it with
  certainty (the goal: 95% or more), and how many only as likely; measured over every such folder
  and over those the labeller was certain of (a `probable` label marks a folder where even a
  careful reader is not sure the configuration that ran is in the package: the file its log names
  is absent, or no log is there to compare);
- precision: how many certain traces name another configuration than the label (the goal: none),
  and how many folders labelled "none in the package" get a certain trace anyway.

A trace to a file with the same bytes as the labelled one counts as a trace to it: which of two
identical copies ran cannot be told, and does not change the recipe.

Usage: python bench/trace_accuracy.py ROUND_DIR [--truth FILE] [--verbose]
ROUND_DIR is the round extracted with its code (`extract_round.py --code GITDIR DEST`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mlperf_audit.engine.loading import load_benchmark
from mlperf_audit.reading.discovery import discover
from mlperf_audit_rules.support import tracing

TRUTH = Path(__file__).resolve().parent.parent / "tests" / "data" / "launch-configs-v4.1.yaml"


@dataclass
class Outcome:
    result: str
    expected: str | None
    traced: str | None
    certainty: str
    reason: str
    label: str = "certain"  # how sure the labeller was: certain | probable
    same: bool = False  # traced to the labelled file, or to a copy with the same bytes


@dataclass
class Accuracy:
    outcomes: list[Outcome] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # labelled folders not in the tree (another tree, a snapshot gap)

    def certain_right(self, label: str | None = None) -> list[Outcome]:
        return [o for o in self.with_config(label) if o.certainty == "certain" and o.same]

    def certain_wrong(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.certainty == "certain" and not o.same]

    def likely_right(self) -> list[Outcome]:
        return [o for o in self.with_config() if o.certainty == "likely" and o.same]

    def with_config(self, label: str | None = None) -> list[Outcome]:
        return [o for o in self.outcomes if o.expected is not None and label in (None, o.label)]

    def recall(self, label: str | None = None) -> float:
        wanted = self.with_config(label)
        return len(self.certain_right(label)) / len(wanted) if wanted else 1.0


def load_truth(path: Path = TRUTH) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["folders"])


def measure(round_dir: Path, truth: list[dict[str, Any]]) -> Accuracy:
    """Traces every labelled folder found under `round_dir` (a round, or a tree holding some of its submitters)."""
    tree = discover(round_dir)
    by_path = {folder.path: (submission, folder) for submission in tree.submissions for folder in submission.benchmarks}
    accuracy = Accuracy()
    for entry in truth:
        found = by_path.get(entry["result"])
        if found is None:
            accuracy.absent.append(entry["result"])
            continue
        submission, folder = found
        result = load_benchmark(folder)
        trace = tracing.trace(folder, submission, result.runs)
        traced = trace.config.entry.path if trace.config is not None else None
        certainty = trace.certainty.value if trace.config is not None else "none"
        expected = entry.get("config")
        same = traced == expected or (
            traced is not None and expected is not None and _same_bytes(round_dir / traced, round_dir / expected)
        )
        accuracy.outcomes.append(
            Outcome(entry["result"], expected, traced, certainty, trace.config_reason, entry.get("label", ""), same)
        )
    return accuracy


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def report(accuracy: Accuracy, verbose: bool = False) -> str:
    with_config = accuracy.with_config()
    nulls = [o for o in accuracy.outcomes if o.expected is None]
    lines = [
        f"labelled folders traced: {len(accuracy.outcomes)} ({len(accuracy.absent)} not in this tree)",
        f"configuration in the package: {len(with_config)}; traced to it with certainty: "
        f"{len(accuracy.certain_right())} ({accuracy.recall():.1%}); as likely: {len(accuracy.likely_right())}",
        f"  of them labelled certain: {len(accuracy.with_config('certain'))}; traced to it with certainty: "
        f"{len(accuracy.certain_right('certain'))} ({accuracy.recall('certain'):.1%})",
        f"certain traces to another configuration than the label: {len(accuracy.certain_wrong())}",
        f"labelled none in the package: {len(nulls)}; traced to none: "
        f"{sum(1 for o in nulls if o.traced is None)}; likely: {sum(1 for o in nulls if o.certainty == 'likely')}",
    ]
    for outcome in accuracy.outcomes:
        wrong = not outcome.same
        if verbose or wrong or (outcome.expected is not None and outcome.certainty != "certain"):
            mark = "WRONG" if wrong and outcome.certainty == "certain" else ("miss" if wrong else outcome.certainty)
            lines.append(
                f"  [{mark}] {outcome.result}: traced {outcome.traced} ({outcome.certainty}); "
                f"label {outcome.expected} ({outcome.label}) -- {outcome.reason}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("round", type=Path, help="the round extracted with its code")
    parser.add_argument("--truth", type=Path, default=TRUTH)
    parser.add_argument("--verbose", action="store_true", help="every folder, not only misses and likely traces")
    args = parser.parse_args(argv)
    accuracy = measure(args.round, load_truth(args.truth))
    print(report(accuracy, args.verbose))
    return 0 if not accuracy.certain_wrong() else 1


if __name__ == "__main__":
    sys.exit(main())
