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
    assert errors and all("/fx_8xh100/" in f.path for f in errors)
    assert all(
        "the hardware or software described differs from Fixture/systems/fx_8xh100.json of v4.0: "
        "host_processor_model_name: 'Intel(R) Xeon(R) Platinum 8480C' -> 'Other Intel(R) Xeon(R) Platinum 8480C'"
        in f.message
        for f in errors
    )
    assert all(f.severity is Severity.INFO for f in found if "/fx_8xh100/" not in f.path)


def _describe(root: Path, **changes: object) -> None:
    path = root / "Fixture" / "systems" / "fx_8xh100.json"
    description = json.loads(path.read_text())
    for field, value in changes.items():
        if "." in field:
            outer, inner = field.split(".")
            description[outer][inner] = value
        else:
            description[field] = value
    path.write_text(json.dumps(description, indent=4))


@pytest.mark.parametrize(
    ("changes", "severity", "shown"),
    [
        # v5.1 NVIDIA tyche retinanet: the same NCCL, its version string annotated
        (
            {"other_software_stack.nccl_version": "2.22.3-fix-v2.21.5-1"},
            Severity.WARNING,
            "only in names, notes or annotations (other_software_stack.nccl_version: '2.22.3' -> "
            "'2.22.3-fix-v2.21.5-1' (annotation of the same version)): the hardware and software described are "
            "the same",
        ),
        # v5.1 Nebius llama31_405b: another name and a note
        (
            {"system_name": "Fixture H100 n1 (8x H100)", "hw_notes": "H100 TGP 700W"},
            Severity.WARNING,
            "hw_notes: 'synthetic fixture, not a real system' -> 'H100 TGP 700W' (name or note); system_name: "
            "'fx_8xh100' -> 'Fixture H100 n1 (8x H100)' (name or note)",
        ),
        # a blank field filled in, and a count written as a number
        ({"accelerator_on-chip_memories": "50 MB L2", "accelerators_per_node": 8}, Severity.WARNING, "(filled in)"),
        # another framework release: the software the runs used is not the one described
        (
            {"framework": "PyTorch NVIDIA Release 25.04", "hw_notes": "new note"},
            Severity.ERROR,
            "the hardware or software described differs from Fixture/systems/fx_8xh100.json of v4.0: framework: "
            "'PyTorch NVIDIA Release 24.09' -> 'PyTorch NVIDIA Release 25.04'; hw_notes:",
        ),
        ({"other_software_stack.nccl_version": "2.23.4"}, Severity.ERROR, "nccl_version: '2.22.3' -> '2.23.4'; "),
        ({"number_of_nodes": "2"}, Severity.ERROR, "number_of_nodes: '1' -> '2'"),
    ],
)
def test_from_51_the_severity_follows_what_changed_in_the_description(
    tmp_path, host, fixture_published, changes, severity, shown
):
    root = _republished(tmp_path)
    _describe(root, **changes)
    found = [f for f in _findings(root, host, ruleset="training-5.1.0", rules=("FOR009",)) if "/fx_8xh100/" in f.path]
    assert found and {f.severity for f in found} == {severity}
    assert all(shown in f.message for f in found), found[0].message
    # what is identical is said exactly: the files were not edited beyond the submission lines
    assert all("the same files but for the seed and submission_* lines" in f.message for f in found)


def test_a_resubmission_with_its_files_edited_outside_the_records(tmp_path, host, fixture_published):
    """The MLLOG records are the published ones, but a system dump was edited and the code places moved:
    FOR009 says only the records are the same, FOR010 reports the edits."""
    root = _republished(tmp_path)
    bert = root / "Fixture" / "results" / "fx_8xh100" / "bert"
    for log in bert.glob("result_*.txt"):
        text = log.read_text().replace("/workspace/fixture/", "/workspace/renamed/")
        log.write_text(':::SYSJSON {"system_name": "fx_8xh100", "host_processor_model_name": "edited"}\n' + text)
    found = _findings(root, host, ruleset="training-5.1.0", rules=("FOR009", "FOR010"))
    (edited,) = [f for f in found if f.rule == "FOR010"]
    assert edited.severity is Severity.WARNING and edited.path.startswith("Fixture/results/fx_8xh100/bert/")
    assert "with the same MLLOG records but for the seed and submission_* lines, and the files edited otherwise" in (
        edited.message
    )
    assert "lines outside the MLLOG records, such as a :::SYSJSON system dump, in result_" in edited.message
    assert "the records' code places, the file paths and line numbers they were logged from" in edited.message
    (republished,) = [f for f in found if f.rule == "FOR009" and "/bert/" in f.path]
    assert republished.severity is Severity.INFO  # the same description
    assert (
        "the same MLLOG records, timed from run_start, but for the seed and submission_* lines; the files differ"
        in (republished.message)
    )
    assert "the same files" not in republished.message
    # before 5.1 no rule speaks of resubmission: the edit is information
    found = _findings(root, host, ruleset="training-4.1.0", rules=("FOR010",))
    assert [f.severity for f in found] == [Severity.INFO]


def test_a_resubmission_rescored_under_other_rcps(tmp_path, host, fixture_published, monkeypatch):
    """FOR013 states both scores when the same runs score otherwise under the checked round's rules; the
    scores themselves come from the RCP check (the real case: v5.1 Nebius, below)."""
    from mlperf_audit_rules import forensics

    root = _republished(tmp_path)
    monkeypatch.setattr(
        forensics, "_score", lambda result, context, version: (10.0, 1.0) if version == "4.0.0" else (12.5, 1.25)
    )
    found = _findings(root, host, rules=("FOR013",))
    assert found and {f.severity for f in found} == {Severity.INFO}
    (bert,) = [f for f in found if f.path == "Fixture/results/fx_8xh100/bert"]
    assert bert.message == (
        "the 10 runs published in v4.0 Fixture/results/fx_8xh100/bert score 12.50 min under the RCPs of "
        "training-4.1.0 (scaling factor 1.2500), 10.00 min under those of v4.0 (factor 1.0000): the same times to "
        "train, other reference convergence points"
    )
    monkeypatch.setattr(forensics, "_score", lambda result, context, version: (10.0, 1.0))
    assert _findings(root, host, rules=("FOR013",)) == []


def test_what_changed_in_a_description():
    changes = {
        c.field: c.kind
        for c in published_runs.description_changes(
            {
                "a_version": "2.26.3",
                "cpu": "8562Y+",
                "accelerator_model_name": "NVIDIA H100",
                "n": "8",
                "hw_notes": "",
                "x": "N/A",
                "other_software_stack": [{"cuda": "12.8", "nccl": "2.27"}],
            },
            {
                "a_version": "2.26.3-fix-v2.25.1-1",
                "cpu": "6767P",
                "accelerator_model_name": "NVIDIA H100 NVL",
                "n": 8,
                "hw_notes": "TDP",
                "x": "",
                "other_software_stack": {"cuda": "12.8.0.012", "nccl": "2.27.3"},
            },
        )
    }
    assert changes == {
        "a_version": "annotation of the same version",
        "cpu": "hardware or software",
        # a model name is no version string: "H100 NVL" is another accelerator, not an annotated "H100"
        "accelerator_model_name": "hardware or software",
        "hw_notes": "filled in",
        "x": "blank either way",
        # a build number after zeros names the same release; another patch release is another version
        "other_software_stack.cuda": "annotation of the same version",
        "other_software_stack.nccl": "hardware or software",
    }


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
    assert [(f.rule, f.path) for f in found if f.rule not in ("FOR009", "FOR010")] == [
        ("FOR004", "tinycorp/results/tinybox_green/bert/result_8.txt")
    ]
    # NVIDIA's v4.0 runs published again without the :::SYSJSON line of v4.0's logs: information before 5.1
    edited = [f for f in found if f.rule == "FOR010"]
    assert edited and all(f.severity is Severity.INFO for f in edited)
    assert {f.path.rsplit("/", 1)[0] for f in edited} <= set(REPUBLISHED)
    assert all("lines outside the MLLOG records" in f.message for f in edited)
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
    # the copy's platform label was edited and the logs hold no system dump: which is the copy cannot be told
    (found,) = [f for f in _findings(root, host) if f.rule == "FOR008"]
    assert found.severity is Severity.ERROR and found.path.startswith("NVIDIA/results/h200_ngc24.09_nemo/")
    assert found.message.startswith(f"NVIDIA/results/h200_copy/stable_diffusion and {folder} hold the same runs")
    assert "one of them is a copy, and which the logs do not tell" in found.message
    # a system dump in the copy's logs names the original's host processor: the copy is told, and only it reported
    original_cpu = description["host_processor_model_name"] = json.loads(
        (root / "NVIDIA/systems/h200_ngc24.09_nemo.json").read_text()
    )["host_processor_model_name"]
    for log in sorted(copy.glob("result_*.txt")):
        dump = json.dumps({"system_name": "h200_ngc24.09_nemo", "host_processor_model_name": original_cpu.upper()})
        log.write_text(f"+ echo ':::SYSJSON {dump}'\n:::SYSJSON {dump}\n" + log.read_text())
    (copied,) = [f for f in _findings(root, host) if f.rule == "FOR008"]
    assert copied.severity is Severity.ERROR and copied.path.startswith("NVIDIA/results/h200_copy/stable_diffusion/")
    assert "every run is a copy" in copied.message and "another system of the same submitter" in copied.message
    assert f"of runs of {folder}" in copied.message
    assert (
        "this folder is the copy: the system dump in its logs (:::SYSJSON) names system_name 'h200_ngc24.09_nemo'"
        in (copied.message)
    )
    assert "the other description's, where this folder's description says 'Another CPU'" in copied.message


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
    # the logs do not tell which submitter copied: a warning on each, no error against the original
    assert mine.severity is copied.severity is Severity.WARNING
    assert "another submitter's (Acme)" in mine.message and "another submitter's (NVIDIA)" in copied.message
    assert all("which folder is the copy the logs do not tell" in f.message for f in found)
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
    (found,) = [f for f in _findings(root, host) if f.rule != "FOR010"]  # FOR010: v4.0's :::SYSJSON line dropped
    assert found.rule == "FOR009" and found.severity is Severity.INFO
    assert "every run published before, in v4.0 NVIDIA/results/h200_ngc24.04_pytorch/ssd" in found.message
    shutil.move(root / "NVIDIA", root / "Acme")
    for log in (root / "Acme/results/h200_ngc24.04_pytorch/ssd").glob("result_*.txt"):
        log.write_text(
            log.read_text().replace('"submission_org", "value": "NVIDIA"', '"submission_org", "value": "Acme"')
        )
    (found,) = [f for f in _findings(root, host) if f.rule == "FOR009"]
    assert found.severity is Severity.ERROR and "(submitter NVIDIA)" in found.message
    assert "another submitter's runs are not a resubmission" in found.message


# --- the published rounds ($MLPERF_AUDIT_ROUNDS) ---------------------------------------------------


def _round(name: str) -> Path:
    rounds = published_rounds()
    if name not in rounds:
        pytest.skip(f"$MLPERF_AUDIT_ROUNDS holds no v{name}")
    return rounds[name]


def test_v51_copies_republications_and_rescores(host):
    """v5.1 as reviewed: Dell's XE9780 retinanet and rgat are the copy (not the XE9680L folders they copy);
    NVIDIA's tyche retinanet and Nebius' llama31_405b changed only an annotation, names and notes (warnings
    that show it); Dell's 1xXE9680x8H200 logs had their system dump edited; Nebius' logs score otherwise
    under v5.1's RCPs."""
    root = _round("5.1")
    found = _findings(root, host, ruleset="training-5.1.0", rules=("FOR007", "FOR008", "FOR009", "FOR010", "FOR013"))
    by = {(f.rule, f.path.rsplit("/", 1)[0] if f.path.endswith(".txt") else f.path): f for f in found}
    copies = sorted(folder for rule, folder in by if rule == "FOR008")
    assert copies == [
        "Dell/results/1xXE9780x8B200-SXM-180GB/retinanet",
        "Dell/results/1xXE9780x8B200-SXM-180GB/rgat",
    ]
    copy = by[("FOR008", "Dell/results/1xXE9780x8B200-SXM-180GB/retinanet")]
    assert copy.severity is Severity.ERROR
    assert "this folder is the copy: its logs' submission_platform '1xXE9680Lx8B200-SXM-180GB' names the other" in (
        copy.message
    )
    assert "host processor 'INTEL(R) XEON(R) PLATINUM 8562Y+', the other description's, where this folder's " in (
        copy.message
    )
    assert "description says 'Intel(R) Xeon(R) 6767P'" in copy.message
    for system in ("tyche_ngpu8_ngc25.04_pytorch", "tyche_ngpu512_ngc25.04_pytorch"):
        nccl = by[("FOR009", f"NVIDIA/results/{system}/retinanet")]
        assert nccl.severity is Severity.WARNING
        assert "other_software_stack.nccl_version: '2.26.3' -> '2.26.3-fix-v2.25.1-1' (annotation" in nccl.message
        assert "the same files but for the seed and submission_* lines" in nccl.message
    for nodes in ("64", "128"):
        nebius = by[("FOR009", f"Nebius/results/nebius_h200_n{nodes}/llama31_405b")]
        assert nebius.severity is Severity.WARNING
        assert f"system_name: 'nebius_soperator_8xH200_n{nodes}' -> 'Nebius H200 n{nodes}" in nebius.message
    rescored = by[("FOR013", "Nebius/results/nebius_h200_n64/llama31_405b")]
    assert rescored.severity is Severity.INFO
    assert "score 237.61 min under the RCPs of training-5.1.0" in rescored.message
    assert "244.59 min under those of v5.0" in rescored.message
    # the summarizer's own scores of the two publications are those the finding states
    from mlperf_audit.engine.api import score

    for name, folder, shown in (
        ("5.1", "Nebius/results/nebius_h200_n64/llama31_405b", "237.61"),
        ("5.0", "Nebius/results/nebius_soperator_8xH200_n64_ngc25.01_nemo/llama31_405b", "244.59"),
    ):
        (published,) = score(_round(name) / folder, Config(ruleset=f"training-{name}.0"), host)
        assert f"{published.score_minutes:.2f}" == shown
    dump = by[("FOR010", "Dell/results/1xXE9680x8H200-SXM-141GB/retinanet")]
    assert dump.severity is Severity.WARNING and "lines outside the MLLOG records" in dump.message
    assert "the files differ otherwise" in by[("FOR009", "Dell/results/1xXE9680x8H200-SXM-141GB/retinanet")].message
    counts = sorted((f.rule, f.severity.value) for f in found)
    assert {key: counts.count(key) for key in counts} == {
        ("FOR008", "error"): 2,
        ("FOR009", "error"): 8,
        ("FOR009", "warning"): 4,
        ("FOR009", "info"): 6,
        ("FOR010", "warning"): 2,
        ("FOR013", "info"): 2,
    }
