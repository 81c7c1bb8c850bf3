"""Runs every YAML rule case (tests/rule_cases/<CODE>.yaml), one test per case."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlperf_audit.testing import assert_case, collect_case_files, load_cases

# The example plugin's cases are its own: `pytest plugins/mlperf-audit-example` runs them
# (tests/test_plugins.py runs that).
CASE_DIRS = [Path(__file__).with_name("rule_cases")]
CASES = [case for folder in CASE_DIRS for path in collect_case_files(folder) for case in load_cases(path)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rule_case(case, tmp_path, host):
    if case.skip:
        pytest.skip(case.skip)
    assert_case(case, tmp_path, host)


def test_every_builtin_rule_with_logic_has_cases(host):
    """Rules that do more than relay a parser issue need their own cases file."""
    from mlperf_audit.rule import IssueRule
    from mlperf_audit_rules.compliance import ComplianceRule  # generated; tests/test_compliance.py covers them

    covered = {path.stem for folder in CASE_DIRS for path in collect_case_files(folder)}
    missing = [
        rule.code
        for rule in host.rules
        # CHK rules are the checker's own (tests/test_plugins.py, test_waivers.py); AUD007 needs two trees
        if not issubclass(rule, (IssueRule, ComplianceRule))
        and not rule.code.startswith("CHK")
        and rule.code != "AUD007"
        and rule.code not in covered
    ]
    assert missing == []


def test_a_case_with_an_unknown_key_is_refused(tmp_path):
    cases = tmp_path / "AUD008.yaml"
    cases.write_text("rule: AUD008\ncases:\n  - name: typo\n    base: .\n    ruleset: training-4.1.0\n    expect: []\n")
    with pytest.raises(ValueError, match="unknown key.*ruleset"):
        load_cases(cases)
