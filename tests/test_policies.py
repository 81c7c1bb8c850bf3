"""The rules in force per round (`data/policies.json`, bench/policies.py): each citation quotes the words as they
stand at the round's training_policies commit, and a rule merged after a round's deadline is at most a warning for
it. The shipped data is checked in CI; with a training_policies git directory at hand ($MLPERF_AUDIT_POLICIES or the
mirror), the commits, lines and texts are derived again from it."""

from __future__ import annotations

import copy
import datetime
import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO
from mlperf_audit import Severity
from mlperf_audit.reference import rulesets
from mlperf_audit_rules.support import policies, published_runs
from mlperf_audit_rules.support.constants import dataset_constants

DATA = policies.policies()
MIRROR = Path(os.environ.get("MLPERF_AUDIT_POLICIES", "/work/.mirror/mlcommons+training_policies/repo"))


def _bench():
    spec = importlib.util.spec_from_file_location("bench_policies", REPO / "bench" / "policies.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_policies"] = module
    spec.loader.exec_module(module)
    return module


def _cited():
    return [
        (name, version, found)
        for name, entry in DATA["citations"].items()
        for version, found in entry["rounds"].items()
        if "lines" in found
    ]


def test_every_round_has_the_commit_of_its_deadline_with_a_source():
    published = [version for version in rulesets.PUBLISHED if not version.startswith("0")]
    assert set(published) <= set(DATA["rounds"])
    for version, entry in DATA["rounds"].items():
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), version
        assert entry["deadline_source"].strip(), version
        if entry.get("deadline"):
            # the last commit of the branch before the deadline day
            assert entry["commit_date"] < entry["deadline"], version
            assert "earliest_commit" not in entry
        elif entry.get("deadline_window"):
            low, high = entry["deadline_window"]
            assert low < high <= rulesets.PUBLISHED[version].lstrip("~")
            assert entry["commit_date"] < high
            assert entry.get("earliest_commit_date", entry["commit_date"]) < low
        else:
            assert entry.get("provisional"), version


@pytest.mark.parametrize("name,version,found", _cited(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_citation_holds_its_words_at_the_rounds_commit(name, version, found):
    """The shipped lines at the round's commit contain the quoted words (and the anchor that tells table rows
    apart); the link a message gives is pinned to that commit and those lines."""
    entry = DATA["citations"][name]
    assert " ".join(entry["quote"].split()) in " ".join(found["text"].split())
    assert entry.get("anchor", "") in found["text"]
    first, last = found["lines"]
    assert 1 <= first <= last and found["text"].count("\n") == last - first
    cited = policies.cite(name, version)
    assert cited is not None and cited.text == found["text"]
    commit = DATA["rounds"][version]["commit"]
    assert cited.url == f"https://github.com/mlcommons/training_policies/blob/{commit}/{entry['file']}#L{first}" + (
        f"-L{last}" if last != first else ""
    )
    assert f"{entry['file']}:{first} at {commit[:7]}" in cited.quoted


def test_in_force_follows_the_merge_date_not_the_author_date():
    """Where a round's deadline is one day, a citation is in force exactly when its words were merged into the
    main branch before that day and its text still holds them; a round whose commit lacks the words has none."""
    checked = 0
    for name, entry in DATA["citations"].items():
        merged = entry["merged"]["date"]
        for version, found in entry["rounds"].items():
            deadline = DATA["rounds"][version].get("deadline")
            if deadline:
                checked += 1
                # words merged on or after the deadline day are not in force, however early they were written;
                # words merged before it are, unless the round's text had dropped them again
                assert (found["in_force"] == "yes") == (merged < deadline and "lines" in found), (name, version)
            assert (found["in_force"] == "no") == ("lines" not in found)
    assert checked > 50
    resubmission = DATA["citations"][published_runs.RESUBMISSION_CITATION]["merged"]
    assert (resubmission["date"], resubmission.get("pr")) == ("2025-07-10", 559)


def test_the_results_resubmission_rule_starts_with_the_first_round_after_its_merge():
    merged = datetime.date.fromisoformat(DATA["citations"]["results-resubmission"]["merged"]["date"])
    after = [
        tuple(int(p) for p in version.split(".")[:2])
        for version, entry in DATA["rounds"].items()
        if entry.get("deadline") and datetime.date.fromisoformat(entry["deadline"]) > merged
    ]
    assert published_runs.RESUBMISSION_SINCE == min(after)
    cited = published_runs.resubmission_rule(published_runs.RESUBMISSION_SINCE)
    assert DATA["rounds"]["5.1.0"]["commit"] in cited and "merged 2025-07-10, PR 559" in cited


def test_a_rule_merged_after_a_rounds_deadline_is_at_most_a_warning_for_it():
    for name, entry in DATA["citations"].items():
        for version, found in entry["rounds"].items():
            lowered = policies.at_most_warning(Severity.ERROR, name, version)
            assert lowered == (Severity.ERROR if found["in_force"] == "yes" else Severity.WARNING), (name, version)
            assert policies.at_most_warning(Severity.INFO, name, version) == Severity.INFO
    assert policies.at_most_warning(Severity.ERROR, "results-resubmission", "training-5.0.0") == Severity.WARNING
    assert policies.at_most_warning(Severity.ERROR, "results-resubmission", "training-5.1.0") == Severity.ERROR
    # a round the data does not hold (newer than the data) keeps the rule's severity
    assert policies.at_most_warning(Severity.ERROR, "results-resubmission", "training-9.9.0") == Severity.ERROR


def test_every_evaluation_interval_is_in_the_text_of_its_round():
    """FOR012's intervals (data/constants.json) each name a citation that the round's rules hold."""
    for version, benchmarks in dataset_constants()["eval_frequency"].items():
        for benchmark, entry in benchmarks.items():
            cited = policies.cite(entry["citation"], version)
            assert cited is not None and cited.in_force == "yes", (version, benchmark)
            assert str(entry["samples"]) in cited.text.replace(",", ""), (version, benchmark)


@pytest.mark.skipif(not (MIRROR / "HEAD").is_file(), reason="no training_policies git directory")
def test_the_shipped_data_is_what_the_policies_repository_gives():
    """Derived again from the repository: each round's commit (last on master before its deadline), each citation's
    merge, lines and text. The newest round is provisional (the branch's newest commit): compared up to it."""
    built, shipped = _bench().build(MIRROR), copy.deepcopy(DATA)
    for data in (built, shipped):
        data["rounds"].pop("6.1.0", None)
        for entry in data["citations"].values():
            entry["rounds"].pop("6.1.0", None)
    assert built == shipped
