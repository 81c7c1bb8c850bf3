"""`mlperf-audit rules [SELECTOR ...]` lists the rules that codes, prefixes or names select, as
`--select` selects them (issue 26, item 13: `rules AUD` was a usage error)."""

from __future__ import annotations

import json
import subprocess
import sys


def _rules(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", "rules", *args], capture_output=True, text=True, timeout=120
    )


def _every_rule() -> list[dict]:
    result = _rules("--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_prefix_lists_the_rules_whose_codes_it_begins():
    every = _every_rule()
    result = _rules("AUD")
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines()[2:] if line.strip()]
    expected = [rule["code"] for rule in every if rule["code"].startswith("AUD")]
    assert listed == expected and len(expected) >= 10, result.stdout


def test_codes_names_and_lists_combine_in_json():
    result = _rules("AUD006,hidden-or-space-name", "SYS004", "--json")
    assert result.returncode == 0, result.stderr
    assert [rule["code"] for rule in json.loads(result.stdout)] == ["AUD006", "PKG015", "SYS004"]


def test_a_selector_that_names_nothing_is_a_usage_error_with_a_suggestion():
    result = _rules("AUD9")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "'AUD9'" in result.stderr and "did you mean" in result.stderr and "'AUD009'" in result.stderr
    named = _rules("superlinear-scalin")
    assert named.returncode == 2 and "'superlinear-scaling'" in named.stderr, named.stderr
