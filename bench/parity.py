#!/usr/bin/env python3
"""Parity harness: the official verdicts against mlperf-audit's, per benchmark folder.

Runs, on a temporary copy of ROOT (the official tools write scaling.json into the tree they
check), what `scripts/verify_for_v4.1_training.sh` runs per submitter: `package_checker` with the
flags of the submitter's `package_checker_params`, then `result_summarizer`. Then runs
mlperf-audit on ROOT itself (it writes nothing) and prints, per system/benchmark folder, both
verdicts and where they differ.

Usage: python bench/parity.py [ROOT] [--ruleset training-4.1.0] [--json FILE]
ROOT is a results repository (one folder per submitter); it defaults to the real v4.1 sample.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check, score

DEFAULT_ROOT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mlperf-training-v4.1-sample"
SECTION = re.compile(r"Running compliance checks in dir (\S+)")


@dataclass
class Folder:
    key: str  # submitter/system/benchmark
    official: str = "pass"
    official_errors: list[str] = field(default_factory=list)
    audit: str = "pass"
    audit_errors: list[str] = field(default_factory=list)
    official_score: float | None = None
    audit_score: float | None = None


def official_scores(csv_path: Path, submitter: str, folders: dict[str, "Folder"]) -> None:
    """Reads the summarizer's detailed table: time_to_train per system (from details_url) and benchmark."""
    if not csv_path.is_file():
        return
    for row in csv.DictReader(csv_path.open()):
        system = row["details_url"].rsplit("/", 1)[-1][: -len(".json")]
        for column, value in row.items():
            if column.endswith(":time_to_train") and value:
                key = f"{submitter}/{system}/{column.split(':')[0]}"
                folders.setdefault(key, Folder(key, official="(not checked)")).official_score = float(value)


def official_flags(submission: Path) -> list[str]:
    """As the verify script does: each line of the top-level package_checker_params is a --flag."""
    params = submission / "package_checker_params"
    if not params.is_file():
        return []
    return [f"--{line.strip()}" for line in params.read_text().splitlines() if line.strip()]


def run_official(tree: Path, submitter: str, version: str, logs: Path) -> tuple[str, str, float]:
    """Runs package_checker then result_summarizer: the checker's log, the summarizer's state, the time."""
    log = logs / f"{submitter}.package_checker.log"
    start = time.perf_counter()
    command = [
        sys.executable,
        "-m",
        "mlperf_logging.package_checker",
        submitter,
        "training",
        version,
        *official_flags(tree / submitter),
        "--log_output",
        str(log),
    ]
    checker = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    summarizer = subprocess.run(
        [
            sys.executable,
            "-m",
            "mlperf_logging.result_summarizer",
            submitter,
            "training",
            version,
            "--csv",
            str(logs / f"{submitter}.csv"),
        ],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    text = log.read_text() if log.is_file() else ""
    if "Traceback" in checker.stderr:
        text += "\nERROR - package_checker crashed: " + checker.stderr.strip().splitlines()[-1]
    summary = "crashed: " + summarizer.stderr.strip().splitlines()[-1] if "Traceback" in summarizer.stderr else "ok"
    return text, summary, elapsed


def official_verdicts(text: str, submitter: str, folders: dict[str, Folder]) -> str:
    """Reads ERROR lines per 'Running compliance checks in dir' section; returns the package verdict."""
    current: Folder | None = None
    for line in text.splitlines():
        match = SECTION.search(line)
        if match:
            parts = match.group(1).strip("/").split("/")
            key = "/".join([submitter, parts[-2], parts[-1]])
            current = folders.setdefault(key, Folder(key))
            continue
        if line.startswith("ERROR") and current is not None:
            current.official = "fail"
            current.official_errors.append(line[len("ERROR - ") :].strip()[:120])
    if "package_checker crashed" in text:
        return "crash"
    return "fail" if "FOUND ERRORS" in text or "SUCCESS" not in text else "pass"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(DEFAULT_ROOT))
    parser.add_argument("--ruleset", default="training-4.1.0")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    version = args.ruleset.split("-", 1)[1]
    submitters = sorted(p.name for p in root.iterdir() if (p / "results").is_dir())

    folders: dict[str, Folder] = {}
    packages: dict[str, tuple[str, str]] = {}
    official_seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="mlperf-audit-parity-") as temp:
        tree = Path(temp) / "tree"
        shutil.copytree(root, tree, symlinks=True)
        for path in [tree, *tree.rglob("*")]:
            if not path.is_symlink():
                os.chmod(path, 0o755 if path.is_dir() else 0o644)
        for submitter in submitters:
            text, summary, seconds = run_official(tree, submitter, version, Path(temp))
            official_seconds += seconds
            packages[submitter] = (official_verdicts(text, submitter, folders), summary)
            official_scores(Path(temp) / f"{submitter}_detailed.csv", submitter, folders)

    start = time.perf_counter()
    report = check(root, Config(ruleset=args.ruleset))
    for result in score(root, Config(ruleset=args.ruleset)):
        key = f"{result.submitter}/{result.system}/{result.benchmark}"
        folders.setdefault(key, Folder(key, official="(not checked)")).audit_score = result.score_minutes
    audit_seconds = time.perf_counter() - start
    audit_package: dict[str, str] = {s: "pass" for s in submitters}
    for finding in report.findings:
        if finding.severity.value != "error" or finding.submitter is None:
            continue
        audit_package[finding.submitter] = "fail"
        if finding.system and finding.benchmark:
            key = f"{finding.submitter}/{finding.system}/{finding.benchmark}"
            folder = folders.setdefault(key, Folder(key, official="(not checked)"))
            folder.audit = "fail"
            folder.audit_errors.append(finding.rule)

    rows = []
    for key in sorted(folders):
        folder = folders[key]
        agree = folder.official == folder.audit
        rows.append(
            [
                key,
                folder.official,
                folder.audit,
                "yes" if agree else "NO",
                ", ".join(sorted(set(folder.audit_errors))) or "-",
                "; ".join(folder.official_errors[:2]) or "-",
            ]
        )
    for submitter in submitters:
        official = packages[submitter][0]
        rows.append(
            [
                f"{submitter} (package)",
                official,
                audit_package[submitter],
                "yes" if official == audit_package[submitter] else "NO",
                "-",
                f"summarizer {packages[submitter][1]}"[:120],
            ]
        )
    print(
        tabulate(
            rows, headers=["folder", "official", "mlperf-audit", "agree", "mlperf-audit errors", "official errors"]
        )
    )
    differing = sum(1 for row in rows if row[3] == "NO")
    print(
        f"\n{len(rows) - differing} of {len(rows)} verdicts agree; official tools {official_seconds:.1f} s, "
        f"mlperf-audit check + score {audit_seconds:.1f} s\n"
    )
    score_rows = []
    for key in sorted(folders):
        folder = folders[key]
        official, audit = folder.official_score, folder.audit_score
        if official is None and audit is None:
            continue
        relative = (abs(audit - official) / official) if official and audit is not None else None
        score_rows.append([key, official, audit, "-" if relative is None else f"{relative:.1e}"])
    print(
        tabulate(
            score_rows,
            headers=["folder", "official score (min)", "mlperf-audit score (min)", "rel. diff"],
            floatfmt=".9f",
        )
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                [
                    dict(zip(["folder", "official", "audit", "agree", "audit_errors", "official_errors"], row))
                    for row in rows
                ],
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
