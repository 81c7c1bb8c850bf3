"""What must be redone when the mlperf-logging pin moves (docs/maintaining.md): each test names the step."""

from __future__ import annotations

import importlib.metadata
import json
import re
from importlib import resources
from pathlib import Path

from mlperf_audit.reference import rulesets
from mlperf_audit_rules.support import compliance_data, official_compliance, policies

REPO = Path(__file__).resolve().parent.parent


def pinned() -> str:
    text = (REPO / "pyproject.toml").read_text()
    match = re.search(r'"mlperf-logging==([^"]+)"', text)
    assert match, "pyproject.toml pins mlperf-logging with =="
    return match.group(1)


def test_the_installed_mlperf_logging_is_the_pinned_one() -> None:
    assert importlib.metadata.version("mlperf-logging") == pinned()


def test_every_family_of_every_round_has_its_own_code() -> None:
    """Step 2: `python -m mlperf_audit_rules.compliance --update` appends codes for new rounds' families."""
    table = set(official_compliance.code_table().values())
    missing = [family.id for family in official_compliance.all_families() if family not in table]
    assert not missing, f"run `python -m mlperf_audit_rules.compliance --update`: {missing[:5]}"
    assert official_compliance.FALLBACK_CODE not in official_compliance.code_table()


def test_the_generated_compliance_docs_are_current() -> None:
    assert (REPO / "docs" / "compliance-rules.md").read_text() == compliance_data.markdown_table()


def test_every_supported_round_has_a_publication_day() -> None:
    """Step 4: a new round gets its (estimated, `~`) publication day in rulesets.PUBLISHED."""
    for name in rulesets.SUPPORTED:
        assert name.split("-", 1)[1] in rulesets.PUBLISHED, name


def test_every_supported_round_has_the_rules_in_force_at_its_deadline() -> None:
    """Step 6: a new round gets its training_policies commit in data/policies.json (bench/policies.py), or the
    rules that cite the training rules have no text of the round to quote."""
    for name in rulesets.SUPPORTED:
        version = name.split("-", 1)[1]
        if int(version.split(".")[0]) >= 1:
            assert version in policies.policies()["rounds"], name


def test_the_later_checks_were_reviewed_for_the_pinned_version() -> None:
    """Step 5: read mlperf-logging's history since the last pin for checks applied to rounds
    published before them; add them to later_checks.json and set reviewed_for_mlperf_logging."""
    data = json.loads(resources.files("mlperf_audit_rules").joinpath("data/later_checks.json").read_text())
    assert data["reviewed_for_mlperf_logging"] == pinned()
    for entry in data["checks"]:
        assert entry["since"] in rulesets.SUPPORTED and re.fullmatch(r"[0-9a-f]{7,40}", entry["commit"])
