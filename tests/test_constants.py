"""HYP003's reference dataset constants (`data/constants.json`, bench/constants.py): the shipped table is
what the script computes (the rules' and references' part always, the published majorities where the
rounds are under $MLPERF_AUDIT_ROUNDS), and the rule finds what differs on real data."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import REPO, published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit_rules.support.constants import dataset_constants


def _bench():
    spec = importlib.util.spec_from_file_location("bench_constants", REPO / "bench" / "constants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_constants"] = module
    spec.loader.exec_module(module)
    return module


def _entries(table: dict) -> dict[tuple[str, str, str], dict]:
    return {
        (version, benchmark, key): entry
        for version, benchmarks in table["rounds"].items()
        for benchmark, keys in benchmarks.items()
        for key, entry in keys.items()
    }


def test_the_rules_and_references_part_regenerates():
    """Without the rounds, the script names what the pinned rules and the reference implementations do:
    every such entry is shipped with the same values, requirement and source."""
    built = _entries(_bench().build(None))
    shipped = _entries(dataset_constants())
    assert built, "the pinned rules require some constants (dlrm_dcnv2's eval_samples from 3.0)"
    for place, entry in built.items():
        assert place in shipped, place
        assert {k: shipped[place].get(k) for k in ("values", "required", "source", "placeholders")} == {
            k: entry.get(k) for k in ("values", "required", "source", "placeholders")
        }
    assert _bench().build(None)["eval_frequency"] == dataset_constants()["eval_frequency"]
    majorities = {place for place, entry in shipped.items() if "majority" in entry["source"]}
    assert majorities.isdisjoint(built)
    assert all(shipped[place]["peers"] for place in majorities), "a majority is counted from the rounds"


def test_a_required_value_comes_from_the_rules():
    entry = dataset_constants()["rounds"]["4.1.0"]["dlrm_dcnv2"]["eval_samples"]
    assert entry["values"] == [89137319] and entry["required"] is True
    assert "training_4.1.0/closed_dlrm_dcnv2.yaml" in entry["source"]


ROUNDS = published_rounds()
EVERY_ROUND = {"1.0", "1.1", "2.0", "2.1", "3.0", "3.1", "4.0", "4.1", "5.0", "5.1"}


@pytest.mark.skipif(not EVERY_ROUND <= set(ROUNDS), reason="every round v1.0-v5.1 under $MLPERF_AUDIT_ROUNDS")
def test_the_whole_table_regenerates_from_the_rounds():
    folders = {Path(path).parent for path in ROUNDS.values()}
    assert len(folders) == 1, "the rounds of one folder"
    built = _bench().build(folders.pop())
    assert json.dumps(built, indent=1, sort_keys=True) + "\n" == (
        REPO / "rules" / "mlperf_audit_rules" / "data" / "constants.json"
    ).read_text(encoding="utf-8")


@pytest.mark.sample
def test_the_real_sample_differs_only_where_tinycorp_evaluates_10002(sample):
    """v4.1: tinycorp's bert logs eval_samples 10002 (result_0.txt:25 of both tinybox folders), the reference
    (mlp_logging.py:83) and the 12 other submitters 10000."""
    report = check(sample, Config(select=("HYP003",)))
    found = sorted((f.path, f.line) for f in report.findings if f.rule == "HYP003")
    assert found == [
        ("tinycorp/results/tinybox_green/bert/result_0.txt", 25),
        ("tinycorp/results/tinybox_red/bert/result_0.txt", 25),
    ]
    assert all(
        "eval_samples is 10002 (and 9 other run(s)); the reference of v4.1 bert is 10000" in f.message
        for f in report.findings
        if f.rule == "HYP003"
    )


@pytest.mark.sample
def test_a_planted_training_set_size_is_found(sample, tmp_path):
    """Dell's stable_diffusion with one run's train_samples cut to the v3.1 Habana value (1)."""
    folder = "Dell/results/XE9680x8H100-SXM-80GB/stable_diffusion"
    root = tmp_path / "round"
    shutil.copytree(sample / "Dell" / "systems", root / "Dell" / "systems")
    shutil.copytree(sample / folder, root / folder)
    run = root / folder / "result_4.txt"
    text = run.read_text(encoding="utf-8")
    assert text.count('"key": "train_samples", "value": 6513144') == 1
    run.write_text(text.replace('"key": "train_samples", "value": 6513144', '"key": "train_samples", "value": 1'))
    line = next(i for i, text in enumerate(run.read_text().split("\n"), 1) if '"key": "train_samples"' in text)
    report = check(root, Config(select=("HYP003",), ruleset="training-4.1.0"))
    found = [(Path(f.path).name, f.line, f.severity.value) for f in report.findings if f.rule == "HYP003"]
    assert found == [("result_4.txt", line, "warning")]


def test_the_reference_placeholder_is_data_with_its_source():
    """v3.1's stable_diffusion reference logged train_samples 1, "a placeholder until a dataset is picked"
    (mlcommons/training stable_diffusion/main.py:613 until d36f544a, 2024-02-29); v4.0's logged 6513144."""
    rounds = dataset_constants()["rounds"]
    (placeholder,) = rounds["3.1.0"]["stable_diffusion"]["train_samples"]["placeholders"]
    assert placeholder["value"] == 1 and "main.py:613" in placeholder["source"] and "d36f544a" in placeholder["source"]
    assert "placeholders" not in rounds["4.0.0"]["stable_diffusion"]["train_samples"]


def _diffusion_with_train_samples(sample: Path, tmp_path: Path, value: int) -> Path:
    """Dell's v4.1 stable_diffusion (real logs) with every run's train_samples set to `value`."""
    folder = "Dell/results/XE9680x8H100-SXM-80GB/stable_diffusion"
    root = tmp_path / "round"
    shutil.copytree(sample / "Dell" / "systems", root / "Dell" / "systems")
    shutil.copytree(sample / folder, root / folder)
    for run in (root / folder).glob("result_*.txt"):
        text = run.read_text(encoding="utf-8")
        run.write_text(
            text.replace('"key": "train_samples", "value": 6513144', f'"key": "train_samples", "value": {value}')
        )
    return root


@pytest.mark.sample
@pytest.mark.parametrize(
    ("ruleset", "value", "reported"),
    [
        ("training-3.1.0", 1, False),  # the v3.1 reference's own placeholder
        ("training-3.1.0", 2, True),  # not the placeholder
        ("training-4.0.0", 1, True),  # the v4.0 reference logs 6513144
    ],
)
def test_the_reference_placeholder_is_not_reported(sample, tmp_path, ruleset, value, reported):
    report = check(_diffusion_with_train_samples(sample, tmp_path, value), Config(select=("HYP003",), ruleset=ruleset))
    found = [f for f in report.findings if f.rule == "HYP003"]
    assert bool(found) == reported, [f.message for f in found]


@pytest.mark.skipif("3.1" not in ROUNDS, reason="the v3.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_the_published_diffusion_run_logs_the_reference_placeholder():
    """v3.1 Intel-HabanaLabs HLS-Gaudi2-N8-PT logs train_samples 1, as the v3.1 reference did (a placeholder
    of mlcommons/training stable_diffusion/main.py:613): not HYP003's to report; its eval_samples 30000 agrees."""
    folder = ROUNDS["3.1"] / "Intel-HabanaLabs" / "results" / "HLS-Gaudi2-N8-PT" / "stable_diffusion"
    assert '"key": "train_samples", "value": 1,' in (folder / "result_0.txt").read_text(encoding="utf-8")
    report = check(folder, Config(select=("HYP003",), ruleset="training-3.1.0"))
    assert [f.message for f in report.findings if f.rule == "HYP003"] == []
