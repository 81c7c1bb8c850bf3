"""Tracing results to their launch configurations, on real packages: the v4.1 sample with its
implementations (`../shared/data`, laid over each other in tmp_path, as CI has them) against the
hand-labelled ground truth (`tests/data/launch-configs-v4.1.yaml`), edits of real configurations,
and the whole published round when `$MLPERF_AUDIT_ROUNDS` holds it with its code."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost

_spec = importlib.util.spec_from_file_location("trace_accuracy", REPO / "bench" / "trace_accuracy.py")
assert _spec is not None and _spec.loader is not None
trace_accuracy = importlib.util.module_from_spec(_spec)
sys.modules["trace_accuracy"] = trace_accuracy  # its dataclasses look their module up
_spec.loader.exec_module(trace_accuracy)


def test_the_sample_is_traced_as_labelled(sample_with_code):
    truth = trace_accuracy.load_truth()
    accuracy = trace_accuracy.measure(sample_with_code, truth)
    assert len(accuracy.outcomes) == 15  # the sample's result folders that are labelled
    assert not accuracy.certain_wrong(), trace_accuracy.report(accuracy)
    # the shared implementations hold each folder's top level only: a label in a subfolder
    # (`configs/`) or of another submitter's code is not there to find
    present = [o for o in accuracy.with_config() if (sample_with_code / o.expected).is_file()]
    assert len(present) == 9
    assert [o for o in present if o.certainty != "certain" or o.traced != o.expected] == []
    assert all(o.traced is None for o in accuracy.outcomes if o.expected is None)


EDITS = [
    # (result folder, variable, new value, rule, what the finding says)
    ("NVIDIA/results/h200_ngc24.09_nemo/llama2_70b_lora", "DGXNNODES", "2", "REP010", "number_of_nodes '1'"),
    ("NVIDIA/results/h200_ngc24.04_dgl/gnn", "DGXNGPU", "4", "REP010", "accelerators_per_node '8'"),
    ("NVIDIA/results/eos_n32_ngc24.09_nemo/gpt3", "MINIBS", "128", "REP011", "logs global_batch_size 2048"),
    ("NVIDIA/results/h200_ngc24.04_merlin_hugectr/dlrm_dcnv2", "BATCHSIZE", "13824", "REP011", "global_batch_size"),
    ("Dell/results/XE9680x8H100-SXM-80GB/ssd", "LR", "0.0005", "REP011", "logs opt_base_learning_rate"),
    ("Dell/results/XE9680x8H100-SXM-80GB/bert", "LR", "0.001", "REP011", "logs opt_base_learning_rate"),
    ("NVIDIA/results/h200_ngc24.09_nemo/stable_diffusion", "BASE_LR", "0.0000002", "REP011", "BASE_LR"),
]


@pytest.mark.parametrize(("folder", "variable", "value", "rule", "said"), EDITS, ids=[e[0] + ":" + e[1] for e in EDITS])
def test_a_real_configuration_edited_to_disagree_is_an_error(sample_with_code, folder, variable, value, rule, said):
    truth = {entry["result"]: entry for entry in trace_accuracy.load_truth()}
    config = sample_with_code / truth[folder]["config"]
    text = config.read_text()
    edited, count = re.subn(
        rf"^(export\s+)?{variable}=.*$", rf"\g<1>{variable}={value}", text, count=1, flags=re.MULTILINE
    )
    assert count == 1, f"{config} sets no {variable}"
    host = PluginHost()
    before = check(sample_with_code, Config(select=("REP010", "REP011")), host)
    assert not [f for f in before.findings if f.path and f.path.startswith(truth[folder]["config"])]
    config.write_text(edited)
    after = check(sample_with_code, Config(select=("REP010", "REP011")), host)
    found = [f for f in after.findings if f.rule == rule and f.path == truth[folder]["config"]]
    assert found, [f"{f.rule} {f.path} {f.message}" for f in after.findings]
    assert all(f.severity.value == "error" for f in found)
    assert any(said in f.message and f"{variable}={value}" in f.message for f in found), [f.message for f in found]


def _round_with_code() -> Path | None:
    folder = published_rounds().get("4.1")
    return folder if folder is not None and any(folder.glob("*/benchmarks")) else None


@pytest.mark.skipif(_round_with_code() is None, reason="the v4.1 round with its code is not under $MLPERF_AUDIT_ROUNDS")
def test_the_whole_round_against_the_ground_truth():
    accuracy = trace_accuracy.measure(_round_with_code(), trace_accuracy.load_truth())
    assert not accuracy.absent
    assert not accuracy.certain_wrong(), trace_accuracy.report(accuracy)
    # measured on 2026-12-01: 65 of the 66 folders labelled certain (98.5%), 73 of all 79 (92.4%);
    # the misses are listed in the issue-15 note. Since issue 34, 72 of 79 (91.1%): Dell
    # XE8640x4H100-SXM-80GB/llama2_70b_lora, labelled probable, is a likely trace, as
    # config_XE9640x4H100-SXM-80GB.sh (another system's) gives the logged batch the chosen one does not
    assert accuracy.recall("certain") >= 0.95, trace_accuracy.report(accuracy)
    assert accuracy.recall() >= 0.91, trace_accuracy.report(accuracy)
    assert all(o.traced is None for o in accuracy.outcomes if o.expected is None)
