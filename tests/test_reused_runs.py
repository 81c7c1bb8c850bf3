"""Reused runs (FOR004, FOR007-FOR010) and the published-runs index they read.

The index (`data/published_runs.json.gz`) is regenerated from the real v4.1 sample, a subset of
v4.1, and from every published round under `$MLPERF_AUDIT_ROUNDS`, and compared with the shipped
one. The defects are planted in copies of the sample in tmp_path: ten copies of one run with new
seeds, a system folder copied to a second system of the same submission, another submitter's runs
with the organisation and seeds changed, a v4.0 folder republished in a v4.1 tree with the
organisation and platform edited. FOR009's logic is also checked on CI, against an index made of a
fixture package.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import REPO, published_rounds
from mlperf_audit import Severity
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit_rules.support import published_runs

_spec = importlib.util.spec_from_file_location("published_runs_bench", REPO / "bench" / "published_runs.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["published_runs_bench"] = bench
_spec.loader.exec_module(bench)

RULES = ("FOR004", "FOR007", "FOR008", "FOR009", "FOR010")
CLEAN = REPO / "fixtures" / "packages" / "clean"
#: The sample's folders published before v4.1 (the shipped index says where; checked by hand: each
#: file is the earlier round's but for the submission lines).
REPUBLISHED = {
    "Dell/results/XE9680x8H100-SXM-80GB/bert": "v3.1 Dell/results/XE9680x8H100-SXM-80GB/bert",
    "Dell/results/XE9680x8H100-SXM-80GB/ssd": "v3.1 Dell/results/XE9680x8H100-SXM-80GB/ssd",
    "NVIDIA/results/h200_ngc23.09_pytorch/bert": "v4.0 NVIDIA/results/h200_ngc23.09_pytorch/bert",
    "NVIDIA/results/h200_ngc24.04_dgl/gnn": "v4.0 NVIDIA/results/h200_ngc24.04_dgl/gnn",
    "NVIDIA/results/h200_ngc24.04_merlin_hugectr/dlrm_dcnv2": "v4.0 NVIDIA/results/h200_ngc24.04_merlin_hugectr/dlrm_dcnv2",
    "NVIDIA/results/h200_ngc24.04_pytorch/ssd": "v4.0 NVIDIA/results/h200_ngc24.04_pytorch/ssd",
}


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost()


def _shipped() -> dict:
    return json.loads(
        gzip.decompress((REPO / "rules" / "mlperf_audit_rules" / "data" / published_runs.DATA).read_bytes())
    )


def _findings(root: Path, host: PluginHost, ruleset: str = "training-4.1.0", rules: tuple[str, ...] = RULES) -> list:
    report = check(root, Config(select=rules, ruleset=ruleset), host)
    return [f for f in report.findings if f.rule in rules]


# --- the index -----------------------------------------------------------------------------------


@pytest.mark.sample
def test_the_index_holds_the_sample_as_the_bench_script_computes_it(sample):
    measured = bench.measure(sample)
    shipped = _shipped()["rounds"]["4.1"]
    runs = 0
    for submitter, systems in measured.items():
        for system, described in systems.items():
            assert described["system"] == shipped[submitter][system]["system"], (submitter, system)
            for benchmark, entries in described["runs"].items():
                assert entries == shipped[submitter][system]["runs"][benchmark], (submitter, system, benchmark)
                runs += len(entries)
    assert runs == 126  # the sample's runs, every one in the index


@pytest.mark.parametrize("name", sorted(published_rounds()) or ["none"])
def test_the_index_regenerates_from_each_published_round(name):
    rounds = published_rounds()
    if name not in rounds:
        pytest.skip(f"${'MLPERF_AUDIT_ROUNDS'} holds no published round")
    assert bench.measure(rounds[name]) == _shipped()["rounds"][name]


def test_the_index_file_is_compact_and_reads_once():
    path = REPO / "rules" / "mlperf_audit_rules" / "data" / published_runs.DATA
    assert path.stat().st_size < 1_000_000
    document = _shipped()
    assert set(document["rounds"]) == {"1.0", "1.1", "2.0", "2.1", "3.0", "3.1", "4.0", "4.1", "5.0", "5.1"}
    assert published_runs.index() is published_runs.index()
    assert sum(len(v) for v in published_runs.index().by_records.values()) == sum(
        1 for _ in published_runs.entries(document)
    )


def test_the_fingerprint_ignores_what_a_copier_edits_and_nothing_else(tmp_path, host):
    from mlperf_audit.reading.parser import parse_log

    original = (CLEAN / "Fixture" / "results" / "fx_8xh100" / "bert" / "result_0.txt").read_text()
    edited = re.sub(r'"key": "seed", "value": \d+', '"key": "seed", "value": 4242', original)
    edited = edited.replace('"value": "Fixture"', '"value": "Copier"')
    shift = 86_400_000  # a day later: relative times are the same
    shifted = re.sub(r'"time_ms": (\d+)', lambda m: f'"time_ms": {int(m.group(1)) + shift}', edited)
    other = re.sub(
        r'("key": "eval_accuracy", "value": )([0-9.]+)', lambda m: m.group(1) + m.group(2) + "1", original, count=1
    )
    prints = {}
    for name, text in {"original": original, "edited": edited, "shifted": shifted, "other": other}.items():
        (tmp_path / f"{name}.txt").write_text(text)
        prints[name] = published_runs.fingerprint(parse_log(tmp_path / f"{name}.txt", f"{name}.txt"))
    assert edited != original and other != original
    assert prints["original"].records == prints["edited"].records == prints["shifted"].records
    assert prints["shifted"].start_ms == prints["original"].start_ms + shift
    assert prints["other"].records != prints["original"].records
    assert prints["other"].trace != prints["original"].trace
    assert prints["original"].comparable()


def test_one_submitter_under_several_names():
    assert published_runs.same_submitter("Krai", "krai")
    assert published_runs.same_submitter("NVIDIA_CoreWeave", "NVIDIA")
    assert published_runs.same_submitter("smc-ac-power", "smc")
    assert published_runs.same_submitter("smc-ac-power", "smc-dc-power")
    assert not published_runs.same_submitter("", "")
    assert not published_runs.same_submitter("Dell", "NVIDIA")
    assert not published_runs.same_submitter("smc", "smcx")


# --- FOR009 against an index made of a fixture (CI) -----------------------------------------------


@pytest.fixture
def fixture_published(monkeypatch):
    """The clean fixture published in "v4.0", as the only published round."""
    document = {"rounds": {"4.0": bench.measure(CLEAN)}}
    index = published_runs.index_of(document)
    monkeypatch.setattr(published_runs, "index", lambda: index)
    return index


def _republished(tmp_path: Path, submitter: str = "Fixture") -> Path:
    root = tmp_path / "tree"
    shutil.copytree(CLEAN / "Fixture", root / submitter)
    for log in (root / submitter / "results").glob("*/*/result_*.txt"):
        text = log.read_text().replace('"value": "Fixture"', f'"value": "{submitter}"')
        log.write_text(re.sub(r'("key": "submission_platform", "value": )"[^"]*"', r'\1"edited"', text))
    return root


def test_a_run_republished_by_its_submitter_before_51_is_information(tmp_path, host, fixture_published):
    found = _findings(_republished(tmp_path), host, rules=("FOR009",))
    folders = {f.path.rsplit("/", 1)[0] for f in found}
    assert len(folders) == len(list((CLEAN / "Fixture" / "results").glob("*/*"))) >= 7
    assert {f.severity for f in found} == {Severity.INFO}
    assert all("published before, in v4.0 Fixture/results/" in f.message for f in found)
    assert all("no provision on resubmission" in f.message for f in found)


def test_a_run_checked_in_its_own_round_is_not_reused(tmp_path, host, fixture_published):
    assert _findings(_republished(tmp_path), host, ruleset="training-4.0.0", rules=("FOR009",)) == []


def test_from_51_the_system_description_decides(tmp_path, host, fixture_published):
    root = _republished(tmp_path)
    found = _findings(root, host, ruleset="training-5.1.0", rules=("FOR009",))
    assert found and {f.severity for f in found} == {Severity.INFO}
    assert all("allowed as a resubmission" in f.message and "Results Resubmission" in f.message for f in found)
    description = root / "Fixture" / "systems" / "fx_8xh100.json"
    description.write_text(
        description.read_text().replace('"host_processor_model_name": "', '"host_processor_model_name": "Other ')
    )
    found = _findings(root, host, ruleset="training-5.1.0", rules=("FOR009",))
    errors = [f for f in found if f.severity is Severity.ERROR]
    assert errors and all("/fx_8xh100/" in f.path and "system description differs" in f.message for f in errors)
    assert all(f.severity is Severity.INFO for f in found if "/fx_8xh100/" not in f.path)


def test_another_submitters_published_runs_are_an_error(tmp_path, host, fixture_published):
    found = _findings(_republished(tmp_path, "Copier"), host, rules=("FOR009",))
    assert found and {f.severity for f in found} == {Severity.ERROR}
    assert all("another submitter's runs are not a resubmission" in f.message for f in found)


def test_a_republished_run_with_a_record_renamed(tmp_path, host, fixture_published):
    root = _republished(tmp_path)
    bert = root / "Fixture" / "results" / "fx_8xh100" / "bert"
    for log in bert.glob("result_*.txt"):
        log.write_text(log.read_text().replace('"key": "opt_base_learning_rate"', '"key": "opt_learning_rate"'))
    found = _findings(root, host, rules=("FOR009", "FOR010"))
    edited = [f for f in found if f.rule == "FOR010"]
    assert edited and all(f.path.startswith("Fixture/results/fx_8xh100/bert/") for f in edited)
    assert {f.severity for f in edited} == {Severity.WARNING}
    assert "the same run_start to the millisecond and the same evaluations" in edited[0].message
    assert not any(f.rule == "FOR009" and "/bert/" in f.path for f in found)  # one finding per run, not two
    assert all(f.rule == "FOR009" for f in found if "/bert/" not in f.path)


# --- the real sample, and defects planted in copies of it -----------------------------------------


@pytest.mark.sample
def test_the_sample_holds_runs_published_before_and_no_copies(sample, host):
    found = _findings(sample, host)
    # tinybox_green's result_8.txt repeats result_3.txt (FOR004, reviewed): one copy is not a copied folder
    assert [(f.rule, f.path) for f in found if f.rule not in ("FOR009",)] == [
        ("FOR004", "tinycorp/results/tinybox_green/bert/result_8.txt")
    ]
    found = [f for f in found if f.rule == "FOR009"]
    by_folder = {f.path.rsplit("/", 1)[0]: f for f in found}
    assert {
        folder: f.message.split(" (submitter")[0].split("in ", 1)[1] for folder, f in by_folder.items()
    } == REPUBLISHED
    assert all(f.severity is Severity.INFO and f.message.startswith("every run published before") for f in found)
    # v4.1's own runs are in the index too, and are not reported as reused from v4.1
    assert not any(f.path.startswith("NVIDIA/results/h200_ngc24.09_nemo/") for f in found)


def _copy(sample: Path, tmp_path: Path, folders: list[str]) -> Path:
    root = tmp_path / "v4.1"
    for folder in folders:
        submitter, _, system, _ = folder.split("/")
        shutil.copytree(sample / folder, root / folder)
        (root / submitter / "systems").mkdir(parents=True, exist_ok=True)
        shutil.copy(sample / submitter / "systems" / f"{system}.json", root / submitter / "systems")
    return root


def _reseed(log: Path, seed: int) -> None:
    log.write_text(re.sub(r'("key": "seed", "value": )\d+', rf"\g<1>{seed}", log.read_text()))


@pytest.mark.sample
def test_ten_copies_of_one_run_with_new_seeds(sample, tmp_path, host):
    folder = "NVIDIA/results/h200_ngc24.09_nemo/llama2_70b_lora"
    root = _copy(sample, tmp_path, [folder])
    runs = sorted((root / folder).glob("result_*.txt"))
    assert len(runs) == 10
    for number, run in enumerate(runs[1:], start=1):
        shutil.copy(runs[0], run)
        _reseed(run, 1000 + number)
    found = _findings(root, host)
    (error,) = [f for f in found if f.rule == "FOR007"]
    assert error.severity is Severity.ERROR and error.path == folder
    assert "the 10 runs are one run" in error.message and "(10 different seed(s))" in error.message
    assert len([f for f in found if f.rule == "FOR004"]) == 9


@pytest.mark.sample
def test_a_system_folder_copied_to_a_second_system(sample, tmp_path, host):
    folder = "NVIDIA/results/h200_ngc24.09_nemo/stable_diffusion"
    root = _copy(sample, tmp_path, [folder])
    copy = root / "NVIDIA/results/h200_copy/stable_diffusion"
    shutil.copytree(root / folder, copy)
    description = json.loads((root / "NVIDIA/systems/h200_ngc24.09_nemo.json").read_text())
    description["host_processor_model_name"] = "Another CPU"
    (root / "NVIDIA/systems/h200_copy.json").write_text(json.dumps(description))
    for number, log in enumerate(sorted(copy.glob("result_*.txt"))):
        log.write_text(
            log.read_text().replace('"submission_platform", "value": "', '"submission_platform", "value": "copy-')
        )
        _reseed(log, 77 + number)
    found = [f for f in _findings(root, host) if f.rule == "FOR008"]
    assert sorted((f.path.rsplit("/", 1)[0], f.severity) for f in found) == [
        ("NVIDIA/results/h200_copy/stable_diffusion", Severity.ERROR),
        (folder, Severity.ERROR),
    ]
    (copied,) = [f for f in found if "/h200_copy/" in f.path]
    assert "every run is a copy" in copied.message and "another system of the same submitter" in copied.message
    assert f"of runs of {folder}" in copied.message


@pytest.mark.sample
def test_another_submitters_runs_with_org_and_seeds_changed(sample, tmp_path, host):
    folder = "NVIDIA/results/h200_ngc24.09_nemo/stable_diffusion"
    root = _copy(sample, tmp_path, [folder])
    theirs = root / "Acme/results/acme_h200/stable_diffusion"
    shutil.copytree(root / folder, theirs)
    (root / "Acme/systems").mkdir(parents=True)
    shutil.copy(root / "NVIDIA/systems/h200_ngc24.09_nemo.json", root / "Acme/systems/acme_h200.json")
    logs = sorted(theirs.glob("result_*.txt"))
    for number, log in enumerate(logs):
        log.write_text(
            log.read_text().replace('"submission_org", "value": "NVIDIA"', '"submission_org", "value": "Acme"')
        )
        _reseed(log, 5 + number)
    found = [f for f in _findings(root, host) if f.rule == "FOR008"]
    mine, copied = sorted(found, key=lambda f: f.path.startswith("NVIDIA"), reverse=True)
    assert mine.severity is copied.severity is Severity.ERROR
    assert "another submitter's (Acme)" in mine.message and "another submitter's (NVIDIA)" in copied.message
    # one run of their own: the rest are still copies, a warning
    shutil.copy(sample / "Dell/results/XE9680x8H100-SXM-80GB/ssd/result_0.txt", logs[0])
    found = [f for f in _findings(root, host) if f.rule == "FOR008"]
    assert {f.severity for f in found} == {Severity.WARNING}
    assert all(f"{len(logs) - 1} of {len(logs)} runs are copies" in f.message for f in found)


@pytest.mark.sample
def test_a_v40_folder_republished_in_a_v41_tree(sample, tmp_path, host):
    """Copies of the sample's NVIDIA ssd runs, which v4.0 published first, with the organisation and
    platform edited: as its own resubmission (information before 5.1), and as another submitter's."""
    folder = "NVIDIA/results/h200_ngc24.04_pytorch/ssd"
    root = _copy(sample, tmp_path, [folder])
    for log in (root / folder).glob("result_*.txt"):
        text = log.read_text().replace('"submission_platform", "value": "', '"submission_platform", "value": "edited-')
        log.write_text(text)
    (found,) = _findings(root, host)
    assert found.rule == "FOR009" and found.severity is Severity.INFO
    assert "every run published before, in v4.0 NVIDIA/results/h200_ngc24.04_pytorch/ssd" in found.message
    shutil.move(root / "NVIDIA", root / "Acme")
    for log in (root / "Acme/results/h200_ngc24.04_pytorch/ssd").glob("result_*.txt"):
        log.write_text(
            log.read_text().replace('"submission_org", "value": "NVIDIA"', '"submission_org", "value": "Acme"')
        )
    (found,) = _findings(root, host)
    assert found.severity is Severity.ERROR and "(submitter NVIDIA)" in found.message
    assert "another submitter's runs are not a resubmission" in found.message
