"""The reference layer (`mlperf_audit.reference`): complete for every round the pinned mlperf-logging
ships, every fact sourced, strict to load, and in agreement with the official tools' own code."""

from __future__ import annotations

import ast
import copy
import inspect
import json
from importlib import resources

import pytest
from mlperf_logging.rcp_checker import rcp_checker

from mlperf_audit import hardware, reference, rulesets
from mlperf_audit.reference import ReferenceDataError
from mlperf_audit.reference import accelerators as accelerator_data
from mlperf_audit.reference import benchmarks as benchmark_data


def shipped(name: str) -> dict:
    return json.loads(resources.files("mlperf_audit").joinpath(f"data/{name}").read_text())


def test_every_benchmark_of_every_shipped_round_has_an_entry() -> None:
    allowed = {name for ruleset in rulesets.SUPPORTED for name in rulesets.get(ruleset).benchmarks}
    listed = {entry.name: entry for entry in benchmark_data.benchmarks()}
    missing = sorted(allowed - set(listed))
    assert not missing, (
        f"benchmarks a shipped round allows but checker/mlperf_audit/data/benchmarks.json does not list: "
        f"{missing} (CONTRIBUTING.md, 'Add a benchmark')"
    )
    assert {"deepseekv3_671b", "gpt_oss_20b"} <= set(listed)  # the 6.x benchmarks
    assert all(listed[name].convergence_key in ("epoch_num", "samples_count") for name in allowed)


def test_every_stated_fact_has_a_source() -> None:
    defaults = benchmark_data.DEFAULTS
    for entry in benchmark_data.benchmarks():
        for field in entry.__struct_fields__:
            if field in ("name", "sources"):
                continue
            if getattr(entry, field) != getattr(defaults, field) or field == "convergence_key":
                assert entry.sources.get(field, "").strip(), (entry.name, field)
    assert set(shipped("benchmarks.json")["default_sources"]) == set(benchmark_data._FACTS)
    for accelerator in accelerator_data.table():
        figures = [accelerator.bf16_tflops, accelerator.fp8_tflops, accelerator.hbm_gb, accelerator.tdp_w]
        assert accelerator.sources or all(figure is None for figure in figures), accelerator.model


def _benchmark_text(edit) -> str:
    data = copy.deepcopy(shipped("benchmarks.json"))
    edit(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda d: d["benchmarks"][0].update(olympic_dorp=4), "olympic_dorp"),
        (lambda d: d.update(comment="x"), "comment"),
        (lambda d: d["benchmarks"][0]["work"].update(flops=1), "flops"),
        (lambda d: d["benchmarks"][0].update(olympic_drop=4), "facts without a source ['olympic_drop']"),
        (lambda d: d["benchmarks"][0]["sources"].update(rcp_checked="x"), "sources without a fact ['rcp_checked']"),
        (lambda d: d["benchmarks"][0]["sources"].pop("convergence_key"), "without a source ['convergence_key']"),
        (
            lambda d: (
                d["benchmarks"][0].update(not_modelled="why"),
                d["benchmarks"][0]["sources"].update(not_modelled="x"),
            ),
            "either a work model",
        ),
        (lambda d: d["benchmarks"].append(d["benchmarks"][0]), "named twice"),
        (lambda d: d["benchmarks"][0].update(convergence_key="steps"), "convergence_key"),
        (lambda d: d["default_sources"].pop("olympic_drop"), "default_sources must name every fact"),
    ],
)
def test_benchmark_data_that_is_wrong_is_refused(edit, said) -> None:
    with pytest.raises(ReferenceDataError) as raised:
        benchmark_data.load(_benchmark_text(edit))
    assert said in str(raised.value)


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda d: d["accelerators"][0].update(peak_dense_bf16=1), "peak_dense_bf16"),
        (lambda d: d["families"][0].update(vendor="x"), "vendor"),
        (lambda d: d["families"].append(d["families"][0]), "family named twice"),
        (lambda d: d["accelerators"][0].update(sources={}), "no source"),
        (lambda d: d["summarizer_names"][0].update(source=" "), "no source"),
        (lambda d: d["summarizer_names"][0].update(chips=2), "chips"),
    ],
)
def test_accelerator_data_that_is_wrong_is_refused(edit, said) -> None:
    data = copy.deepcopy(shipped("accelerators.json"))
    edit(data)
    with pytest.raises(ReferenceDataError) as raised:
        accelerator_data.load(json.dumps(data))
    assert said in str(raised.value)


def test_the_shipped_data_loads_as_shipped() -> None:
    assert benchmark_data.load(_benchmark_text(lambda d: None)) == benchmark_data.benchmarks()
    # figures keep their JSON type: an integer peak stays an integer in every computation
    raw = shipped("accelerators.json")["accelerators"][0]
    assert type(accelerator_data.table()[0].hbm_gb) is type(raw["hbm_capacity_gb"])


def test_an_unlisted_or_hostile_name_gets_the_defaults() -> None:
    for name in ("resnet_v9", ["unet3d"], None, 3):
        assert reference.facts(name) is benchmark_data.DEFAULTS
    assert reference.facts("zz").convergence_key == "epoch_num" and reference.facts("zz").olympic_drop == 1


def test_samples_benchmarks_are_those_of_the_official_rcp_reader() -> None:
    """The pinned `read_submission_file` names the benchmarks it reads samples_count for in a set
    literal, and stable diffusion's step is its samples_count too: the reference says the same."""
    tree = ast.parse(inspect.getsource(rcp_checker.read_submission_file))
    sets = [node for node in ast.walk(tree) if isinstance(node, ast.Set)]
    official = {element.value for node in sets for element in node.elts if isinstance(element, ast.Constant)}
    assert len(official) == 8
    ours = benchmark_data.having(lambda b: b.convergence_key == "samples_count")
    assert ours == official | {"stable_diffusion"}


def test_olympic_drop_and_rcp_exemption_agree_with_the_official_tools() -> None:
    from mlperf_logging.package_checker import package_checker
    from mlperf_logging.result_summarizer import result_summarizer

    summarizer = inspect.getsource(result_summarizer)
    assert 'max_dropped_scores = 4 if benchmark == "unet3d" else 1' in summarizer
    assert benchmark_data.having(lambda b: b.olympic_drop != 1) == {"unet3d"}
    assert reference.facts("unet3d").olympic_drop == 4
    assert "benchmark != 'minigo'" in inspect.getsource(package_checker)
    assert benchmark_data.having(lambda b: not b.rcp_checked) == {"minigo"}
    assert rulesets.get("training-4.1.0").olympic_drop("unet3d") == 4
    assert rulesets.get("training-4.1.0").olympic_drop("bert") == 1


def test_summarizer_names_are_those_the_official_summarizer_renames() -> None:
    """The pinned result summarizer shows a system or accelerator written `tpu-v3` otherwise; the
    reference says how, and a name given as a list or an object is shown as it is."""
    from mlperf_logging.result_summarizer import result_summarizer

    source = inspect.getsource(result_summarizer)
    renamed = accelerator_data.summarizer_name("tpu-v3")
    assert renamed is not None and renamed.shown == "TPUv3" and renamed.system_count_factor == 2
    assert "if system_name == 'tpu-v3':" in source and "if accelerator_model_name == 'tpu-v3':" in source
    assert "int(system_desc['accelerators_per_node']) * 2" in source and "return 'TPUv3'" in source
    assert [n.written for n in accelerator_data._data().summarizer_names] == ["tpu-v3"]
    for other in ("TPU-v3", "tpu-v4", ["tpu-v3"], None):
        assert accelerator_data.summarizer_name(other) is None


def _llm_sample(matmul_parameters, layers, width, sequence):
    return sequence * (6 * matmul_parameters + 12 * layers * width * sequence)


#: Bytes of training state per parameter: mixed-precision Adam 2+2+4+4+4; a LoRA's frozen base in
#: FP8; a mixture of experts with BF16 moments (DeepSeek-V3, arXiv 2412.19437, section 3.3.3).
FULL, FROZEN, MOE = 16, 1, 12
DEEPSEEK_V3_MATMUL = (
    61 * (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168)
    + 3 * 3 * 7168 * 18432
    + 58 * 9 * 3 * 7168 * 2048
    + 7168 * 129_280
)
GPT_OSS_20B_MATMUL = 24 * (2 * 2880 * 4096 + 2 * 2880 * 512) + 24 * 4 * 3 * 2880 * 2880 + 2880 * 201_088


def test_the_work_data_is_its_derivation_to_the_last_bit() -> None:
    """The work models are data now; the arithmetic they came from stays here, and must give the
    same numbers exactly (and of the same type: an integer FLOP count stays one)."""
    expected = {
        "gpt3": (1.079e12, 175e9 * FULL),
        "llama2_70b_lora": (2.78e15, 68.98e9 * FROZEN),
        "bert": (1.1e12, None),
        "llama31_8b": (_llm_sample(7.50e9, 32, 4096, 8192), 8.03e9 * FULL),
        "llama31_405b": (_llm_sample(403.7e9, 126, 16384, 8192), 405.9e9 * FULL),
        "deepseekv3_671b": (4096 * (6 * DEEPSEEK_V3_MATMUL + 6 * 61 * 4096 * 128 * (192 + 128)), 671e9 * MOE),
        "gpt_oss_20b": (
            8192 * (6 * GPT_OSS_20B_MATMUL + 12 * 12 * 4096 * 8192 + 12 * 12 * 4096 * 128),
            20.9e9 * MOE,
        ),
        "resnet": (1_281_167 * 3 * 8.2e9, None),
    }
    assert list(hardware.WORK) == list(expected)
    for name, (flops, state) in expected.items():
        work = hardware.WORK[name]
        assert (work.flops_per_unit, type(work.flops_per_unit)) == (flops, type(flops)), name
        assert work.state_bytes == state, name
