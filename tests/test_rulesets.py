"""Every round the pinned mlperf-logging ships is supported, and `auto` finds the package's round."""

from __future__ import annotations

import datetime
import json
import re
import shutil
from importlib import resources
from pathlib import Path

import pytest

from conftest import FIXTURES, published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check, resolve_ruleset
from mlperf_audit.reading.discovery import discover
from mlperf_audit.reference import rulesets
from mlperf_audit_rules.support import official_compliance


def test_every_shipped_round_from_1_0_is_supported() -> None:
    root = Path(str(resources.files("mlperf_logging.compliance_checker")))
    shipped = sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir()
        and p.name.startswith("training_")
        and not p.name.startswith(("training_0.", "training_0_"))
        and p.name.count(".") == 2
        and p.name.split("_", 1)[1].replace(".", "").isdigit()
    )
    assert [f"training_{name.split('-', 1)[1]}" for name in rulesets.SUPPORTED] == sorted(
        shipped, key=lambda n: tuple(map(int, n.split("_", 1)[1].split(".")))
    )
    assert "training-1.0.0" in rulesets.SUPPORTED and "training-6.1.0" in rulesets.SUPPORTED
    assert rulesets.DEFAULT == "auto" and rulesets.CHOICES[0] == "auto"
    for name in rulesets.SUPPORTED:  # every supported round has a publication day to date packages by
        assert name.split("-", 1)[1] in rulesets.PUBLISHED


def test_publication_days_are_ordered() -> None:
    days = [rulesets.published(name.split("-", 1)[1]) for name in rulesets.SUPPORTED]
    assert days == sorted(days) and len(set(days)) == len(days)


@pytest.mark.parametrize(
    "benchmarks, day, expected",
    [
        (["gpt3", "llama2_70b_lora"], None, "training-4.1.0"),  # 4.0 and 4.1 fit: no date, the newest
        (["gpt3", "llama2_70b_lora"], "2024-05-20", "training-4.0.0"),
        (["bert", "resnet"], "2021-06-01", "training-1.0.0"),  # 1.0 to 2.1 allow the same eight
        (["bert", "resnet"], "2022-10-01", "training-2.1.0"),
        (["bert", "resnet"], None, "training-4.0.0"),
        (["retinanet"], "2025-10-01", "training-5.1.0"),
        (["maskrcnn", "gnn"], "2023-10-01", "training-3.1.0"),  # no round has both: the most, then the date
    ],
)
def test_infer_from_benchmarks_and_the_newest_run(tmp_path, benchmarks, day, expected) -> None:
    logs = []
    if day:
        when = datetime.datetime.fromisoformat(day).replace(tzinfo=datetime.UTC).timestamp() * 1000
        log = tmp_path / "result_0.txt"
        log.write_text(
            ':::MLLOG {"key": "init_start", "value": null, "time_ms": %d, "event_type": "INTERVAL_START", '
            '"metadata": {}}\n' % when
        )
        logs = [log]
    inference = rulesets.infer(benchmarks, logs)
    assert inference.ruleset == expected, inference.reason
    assert expected.split("-", 1)[1] in inference.reason


def test_a_clock_in_the_future_or_a_broken_record_dates_nothing(tmp_path) -> None:
    log = tmp_path / "result_0.txt"
    log.write_text(':::MLLOG {"key": "x", "time_ms": 9999999999999}\n:::MLLOG [[[[\n:::MLLOG ' + "[" * 5000 + "\n")
    inference = rulesets.infer(["bert"], [log])
    assert inference.dated is None and "no log gives a date" in inference.reason


@pytest.mark.sample
def test_the_real_samples_are_recognised(sample) -> None:
    assert rulesets.infer_tree(discover(sample)).ruleset == "training-4.1.0"
    # NVIDIA's v4.1 package reuses runs logged in April 2024; its newest run dates it
    assert rulesets.infer_tree(discover(sample / "NVIDIA")).ruleset == "training-4.1.0"


def test_the_power_sample_is_recognised(power_sample) -> None:
    assert rulesets.infer_tree(discover(power_sample)).ruleset == "training-5.0.0"


def test_auto_is_said_and_a_named_ruleset_is_kept(host) -> None:
    report = check(FIXTURES / "clean", Config(cache_dir=None), host)
    assert report.ruleset == "training-4.1.0"
    assert any(note.startswith("ruleset training-4.1.0 inferred (--ruleset auto)") for note in report.config.notes)
    named = resolve_ruleset(discover(FIXTURES / "clean"), Config(ruleset="training-4.0.0"))
    assert named.ruleset == "training-4.0.0" and not named.notes


def test_json_report_names_the_resolved_ruleset(cli) -> None:
    report = json.loads(cli("check", str(FIXTURES / "clean"), "--format", "json").out)
    assert report["ruleset"] == "training-4.1.0" and report["config"]["ruleset"] == "training-4.1.0"


def test_cross_round_rule_files_are_followed() -> None:
    """4.0.0's closed_resnet enqueues training_3.1.0/closed_resnet_{}.yaml (the official checker follows it)."""
    files = official_compliance.rule_files_of_round("4.0.0")
    assert ("3.1.0", "closed_resnet_sgd") in files and ("3.1.0", "closed_resnet_lars") in files
    assert ("1.0.0", "open_bert") in official_compliance.rule_files_of_round("1.1.0")
    assert rulesets.version_of("training_3.1.0") == "3.1.0" and rulesets.version_of("training_0.7.0") is None
    assert rulesets.version_of("../etc") is None


@pytest.mark.parametrize("version", sorted(published_rounds()))
def test_each_published_round_is_inferred_as_itself(version) -> None:
    inference = rulesets.infer_tree(discover(published_rounds()[version]))
    assert inference.ruleset == f"training-{version}.0", inference.reason


def test_a_ruleset_that_does_not_fit_is_the_first_finding(cli) -> None:
    report = json.loads(cli("check", str(FIXTURES / "clean"), "--ruleset", "training-5.0.0", "--format", "json").out)
    first = report["findings"][0]
    assert first["rule"] == "PKG020" and first["severity"] == "error" and "training-4.1.0 fits" in first["message"]


def _moved(tmp_path: Path, name: str, days: int) -> Path:
    """The clean fixture under `tmp_path/name`, every `time_ms` moved by `days`."""
    copy = tmp_path / name
    shutil.copytree(FIXTURES / "clean", copy)
    for log in copy.rglob("result_*.txt"):
        log.write_text(
            re.sub(r'"time_ms": (\d+)', lambda m: f'"time_ms": {int(m.group(1)) + days * 86_400_000}', log.read_text())
        )
    return copy


@pytest.mark.parametrize("days", [-153, -400, 0, 300])
def test_the_logs_dates_never_choose_the_rules(tmp_path, days) -> None:
    """Issue 25, attack 3: dates moved back chose 4.0 for a 4.1 package, whose rules are laxer.
    `auto` takes the newest round its benchmarks fit; the dates only feed PKG020."""
    tree = discover(_moved(tmp_path, "package", days))
    chosen = rulesets.choose(tree)
    assert chosen.ruleset == "training-4.1.0", chosen.reason
    assert "dates never choose" in chosen.reason
    if days == -153:  # what the dates suggest, and what chose the rules before
        assert rulesets.infer_tree(tree).ruleset == "training-4.0.0"


@pytest.mark.parametrize(
    "place, expected",
    [
        ("training_results_v4.0", "training-4.0.0"),
        ("submissions_training_4.0", "training-4.0.0"),
        ("mlperf-training-v4.0-sample", "training-4.0.0"),
        ("v3.1/reviews", "training-3.1.0"),  # the nearest folder that names a round
        ("python3.11", None),
        ("v9.9", None),  # no such round
    ],
)
def test_a_folder_above_the_submissions_names_the_round(tmp_path, place, expected) -> None:
    root = tmp_path / place
    root.mkdir(parents=True)
    shutil.copytree(FIXTURES / "clean", root, dirs_exist_ok=True)
    named = rulesets.named_by_place(root, discover(root).kind.value)
    assert (named[0] if named else None) == expected
    if expected:
        assert rulesets.choose(discover(root)).ruleset == expected
        # ... and from below: a submitter, a system and a benchmark folder of that repository
        for below in ("Fixture", "Fixture/results/fx_8xh100", "Fixture/results/fx_8xh100/bert"):
            assert rulesets.choose(discover(root / below)).ruleset == expected, below


def test_the_package_cannot_name_its_own_round(tmp_path) -> None:
    """A submitter's folder, its system and benchmark folders and an archive's name are the
    package's own: none of them names the round."""
    submitter = tmp_path / "Acme_v4.0"
    shutil.copytree(FIXTURES / "clean" / "Fixture", submitter)
    assert rulesets.named_by_place(submitter, discover(submitter).kind.value) is None
    system = tmp_path / "x" / "Acme" / "results" / "v4.0"
    shutil.copytree(FIXTURES / "clean" / "Fixture" / "results" / "fx_8xh100", system)
    assert rulesets.named_by_place(system, discover(system).kind.value) is None
    archive = shutil.make_archive(str(tmp_path / "Acme_v4.0"), "gztar", FIXTURES / "clean")
    assert rulesets.named_by_place(Path(archive), "results repository") is None


def test_a_lone_log_is_judged_by_a_round_that_has_its_benchmark(tmp_path) -> None:
    """A log checked alone has no benchmark folder: the benchmark it logs stands for one (bert:
    the newest round with bert is 5.0, not 6.1, which has no bert)."""
    log = tmp_path / "result_0.txt"
    shutil.copy(FIXTURES / "clean" / "Fixture" / "results" / "fx_8xh100" / "bert" / "result_0.txt", log)
    chosen = rulesets.choose(discover(log))
    assert chosen.ruleset == "training-5.0.0" and "(bert)" in chosen.reason, chosen.reason


def test_the_six_rounds_are_dated():
    """v6.0 was published in June 2026; v6.1 is under review, so its day is an estimate (`~`)."""
    assert rulesets.published("6.0.0").strftime("%Y-%m") == "2026-06"
    assert rulesets.PUBLISHED["6.1.0"].startswith("~") and rulesets.published("6.1.0").year == 2026
    assert rulesets.published("5.1.0") < rulesets.published("6.0.0") < rulesets.published("6.1.0")
