"""Verdict parity with the official tools.

`tests/data/parity-v4.1-sample.json` holds the official verdicts on the real sample, recorded by
`python bench/parity.py --json ...` (package_checker then result_summarizer on a temporary copy);
mlperf-audit's live verdicts must match them. Where the official tools crash or accept what the
rules forbid (docs/official-defects.md), a live run of the official package checker on a copy of
the fixture shows the defect, and mlperf-audit's finding is asserted instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check

RECORDED = json.loads((Path(__file__).parent / "data" / "parity-v4.1-sample.json").read_text())


def audit_verdicts(root: Path, host) -> dict[str, str]:
    report = check(root, Config(), host)
    verdicts: dict[str, str] = {}
    for finding in report.findings:
        if finding.severity.value == "error" and finding.submitter:
            verdicts[f"{finding.submitter} (package)"] = "fail"
            if finding.system and finding.benchmark:
                verdicts[f"{finding.submitter}/{finding.system}/{finding.benchmark}"] = "fail"
    return verdicts


@pytest.mark.sample
def test_sample_verdicts_match_the_official_ones(sample, host):
    verdicts = audit_verdicts(sample, host)
    expected = {row["folder"]: row["official"] for row in RECORDED}
    assert {folder: verdicts.get(folder, "pass") for folder in expected} == expected
    assert len(expected) == 19 and set(expected.values()) == {"pass"}


def official_package_checker(tree: Path) -> subprocess.CompletedProcess[str]:
    submitter = next(p.name for p in tree.iterdir())
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mlperf_logging.package_checker",
            submitter,
            "training",
            "4.1.0",
            "--log_output",
            str(tree.parent / "official.log"),
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "case, official_failure, audit_codes",
    [
        # the RCP reader reads metadata['status'] unguarded: the official package checker crashes
        ("run-stop-no-status", "KeyError: 'status'", {"EVT006", "RCP010"}),
        # a log line without metadata: the official parser raises KeyError and the checker crashes
        ("missing-metadata", "KeyError: 'metadata'", {"LOG006", "SEED006"}),
        # closed_common.yaml allows names with no rule file: FileNotFoundError
        ("wrong-benchmark-name", "FileNotFoundError", {"PKG011", "RCP003"}),
    ],
)
def test_official_crashes_where_mlperf_audit_reports(tmp_path, fixtures, host, case, official_failure, audit_codes):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "broken" / case, tree)
    official = official_package_checker(tree)
    assert "Traceback" in official.stderr and official_failure in official.stderr
    report = check(fixtures / "broken" / case, Config(), host)
    assert audit_codes <= {f.rule for f in report.findings}


def test_official_skips_an_unknown_benchmark_folder(tmp_path, fixtures, host):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "broken" / "unknown-benchmark-folder", tree)
    official_package_checker(tree)
    log = (tmp_path / "official.log").read_text()
    assert "Skipping benchmark: retinanet" in log and "PACKAGE CHECKER FOUND NO ERRORS" in log
    report = check(fixtures / "broken" / "unknown-benchmark-folder", Config(ruleset="training-4.1.0"), host)
    assert "PKG010" in {f.rule for f in report.findings if f.severity.value == "error"}
