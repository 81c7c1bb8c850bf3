"""Round-faithful verdicts: checks added to the official rules after a round was published are
information for that round, naming the later rule (commit and date from mlperf-logging's history)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit_rules.support.history import later_check, later_checks

CLEAN = FIXTURES / "clean"


def test_every_later_check_names_its_rule_commit_and_round(host) -> None:
    codes = {rule.code for rule in host.rules}
    for entry in later_checks().values():
        assert (
            any(code.startswith(entry.rule) for code in codes)
            and entry.commit
            and entry.date[:2] == "20"
            and entry.since.startswith("training-")
        )
    assert later_check("seed-always-logged", "training-4.0.0") is not None
    assert later_check("seed-always-logged", "training-4.1.0") is None
    assert later_check("status-enforced", "training-3.1.0") is not None
    assert later_check("status-enforced", "training-4.0.0") is None


def _package(tmp_path, edit):
    target = tmp_path / "pkg"
    shutil.copytree(CLEAN, target)
    edit(target)
    return target


def _findings(target, host, ruleset, code):
    report = check(target, Config(ruleset=ruleset, select=(code,), cache_dir=None), host)
    return [f for f in report.findings if f.rule == code]


def _drop_seeds(target, everywhere: bool):
    for log in sorted(target.glob("Fixture/results/*/bert/result_*.txt")):
        if everywhere or log.name == "result_0.txt":
            log.write_text(
                "".join(line for line in log.read_text().splitlines(keepends=True) if '"key": "seed"' not in line)
            )


@pytest.mark.parametrize(
    "ruleset, everywhere, severity",
    [
        ("training-4.1.0", True, "error"),  # seeds mandatory from 4.1
        ("training-4.0.0", True, "info"),  # no run logs a seed: the earlier rule accepted it
        ("training-4.0.0", False, "error"),  # one run lacks a seed the others log: an error then too
    ],
)
def test_seed_rule_of_the_round(tmp_path, host, ruleset, everywhere, severity):
    target = _package(tmp_path, lambda t: _drop_seeds(t, everywhere))
    found = _findings(target, host, ruleset, "SEED001")
    assert found and {f.severity.value for f in found} == {severity}
    if severity == "info":
        assert "ac0096c" in found[0].message and "2024-09-13" in found[0].message


def _status(value):
    def edit(target):
        for path in target.glob("Fixture/systems/*.json"):
            data = json.loads(path.read_text())
            data["status"] = value
            path.write_text(json.dumps(data, indent=1))

    return edit


@pytest.mark.parametrize(
    "value, ruleset, severity",
    [
        ("onprem", "training-4.1.0", "error"),
        ("onprem", "training-4.0.0", "info"),  # the lenient list of 9d75268; exact wording from 4.1 (191ed2c)
        ("anything", "training-4.0.0", "error"),
        ("anything", "training-3.1.0", "info"),  # no status check before 4.0
    ],
)
def test_status_rule_of_the_round(tmp_path, host, value, ruleset, severity):
    target = _package(tmp_path, _status(value))
    found = [f for f in _findings(target, host, ruleset, "SYS002") if f.message.startswith("status")]
    assert found and {f.severity.value for f in found} == {severity}, [f.message for f in found]


def _run(tmp_path, keys):
    from mlperf_audit.reading.parser import parse_log

    log = tmp_path / "result_0.txt"
    log.write_text(
        "".join(
            ':::MLLOG {"namespace": "", "time_ms": %d, "event_type": "POINT_IN_TIME", "key": "%s", '
            '"value": 1e-06, "metadata": {"file": "x.py", "lineno": 1}}\n' % (1700000000000 + i, key)
            for i, key in enumerate(keys)
        )
    )
    return parse_log(log, "result_0.txt")


@pytest.mark.parametrize(
    "ruleset, later", [("training-1.0.0", False), ("training-1.1.0", True), ("training-2.0.0", False)]
)
def test_weights_initialization_failures_were_warnings_when_1_1_was_reviewed(tmp_path, ruleset, later):
    from mlperf_audit_rules.compliance import later_rule
    from mlperf_audit_rules.support.official_compliance import Family, Message

    run = _run(tmp_path, ["run_start"])
    for message in (
        Message(Family("closed_bert", "weights_initialization", "REQ"), "at least one ... found none"),
        Message(
            Family("closed_resnet", "*", "END"),
            "the END check `sorted(s['initialized_tensors']) == sorted([...])` fails",
        ),
    ):
        found = later_rule(message, run, ruleset)
        assert (found is not None) == later
        if later:
            assert found.commit == "4c04112" and "63c9709" in found.note(ruleset)
    other_end = Message(Family("closed_resnet", "*", "END"), "the END check `s['x'] > 1` fails")
    assert later_rule(other_end, run, ruleset) is None


def test_bert_opt_epsilon_was_the_key_when_2_1_was_published(tmp_path):
    from mlperf_audit_rules.compliance import later_rule
    from mlperf_audit_rules.support.official_compliance import Family, Message

    message = Message(Family("closed_bert", "opt_lamb_epsilon", "REQ"), "exactly one 'opt_lamb_epsilon' ... found 0")
    assert later_rule(message, _run(tmp_path, ["opt_epsilon"]), "training-2.1.0").commit == "d82b94d"
    assert later_rule(message, _run(tmp_path, ["seed"]), "training-2.1.0") is None  # the old rule fails too
    assert later_rule(message, _run(tmp_path, ["opt_epsilon"]), "training-3.0.0") is None
