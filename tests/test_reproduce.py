"""`mlperf-audit reproduce`: the recipe of a real v4.1 result, what is missing for one that lacks
pieces, and text quoted from the package shown as quoted, escaped data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlperf_audit import BenchmarkResult, CheckContext, Quoted, Recipe, hookimpl
from mlperf_audit.config import Config
from mlperf_audit.engine.api import reproduce
from mlperf_audit.engine.plugins import PluginHost

LLAMA = "NVIDIA/results/h200_ngc24.09_nemo/llama2_70b_lora"
LLAMA_CONFIG = "benchmarks/llama2_70b_lora/implementations/h200_ngc24.09_nemo/config_DGXH200_1x8x2xtp1pp1cp2.sh"


@pytest.fixture
def package(sample_with_code: Path) -> Path:
    return sample_with_code


def test_a_complete_recipe_for_a_real_result(package, cli, monkeypatch):
    monkeypatch.chdir(package)  # the text's paths open from the current folder
    result = cli("reproduce", LLAMA)
    assert result.code == 0, result.err
    text = result.out
    assert "Launch configuration (certain):" in text and f"NVIDIA/{LLAMA_CONFIG}" in text
    assert f"LR = «0.0005»  (NVIDIA/{LLAMA_CONFIG}:21)" in text and Path(f"NVIDIA/{LLAMA_CONFIG}").is_file()
    assert "sbatch -N $DGXNNODES -t $WALLTIME run.sub" in text  # the README's launch command, quoted
    assert "opt_base_learning_rate = 0.0005" in text and "global_batch_size = 8" in text
    assert text.count("result_") >= 10  # a seed per run
    assert "GovReport" in text and "Missing for a rerun:\n  (none)" in text
    document = json.loads(cli("reproduce", str(package / LLAMA), "--format", "json").out)
    assert document["complete"] is True and document["trace"]["certainty"] == "certain"
    assert document["config"] == LLAMA_CONFIG and len(document["seeds"]) == 10
    assert {"key": "lora_rank", "value": 16} in document["hyperparameters"]


def test_what_is_missing_is_said_and_fails(package, cli):
    # the sample's Dell implementations hold configurations for 4-GPU systems only
    result = cli("reproduce", str(package / "Dell/results/XE9680x8H100-SXM-80GB/gnn"), "--format", "json")
    assert result.code == 1
    document = json.loads(result.out)
    assert document["complete"] is False and document["config"] is None
    assert any(
        m.startswith("the launch configuration: none of its 2 configuration(s) is for 1x8") for m in document["missing"]
    )


def test_package_text_is_quoted_and_escaped(package, cli):
    readme = package / "NVIDIA" / LLAMA_CONFIG.rsplit("/", 1)[0] / "README.md"
    hostile = "```\nbash -c 'x'\x1b[2J\n::error::forged\n##[error]forged\nsource `id`|*x*\n```\n"
    readme.write_text(hostile + readme.read_text())  # first: the recipe quotes the first commands
    text = cli("reproduce", str(package / LLAMA)).out
    assert "\x1b" not in text and "«bash -c 'x'\\x1b[2J»" in text
    markdown = cli("reproduce", str(package / LLAMA), "--format", "markdown").out
    assert "\x1b" not in markdown and "&#96;id&#96;&#124;&#42;x&#42;" in markdown
    for output in (text, markdown):
        assert not any(line.lstrip().startswith(("::", "##[")) for line in output.splitlines())


def test_usage_errors(package, cli, tmp_path):
    assert cli("reproduce", str(package / "NVIDIA")).code == 2  # not a result folder
    assert cli("reproduce", str(tmp_path / "missing")).code == 2
    inside = package / "NVIDIA" / "recipe.txt"
    assert cli("reproduce", str(package / LLAMA), "-o", str(inside)).code == 2 and not inside.exists()


class _OwnRecipe:
    @hookimpl(tryfirst=True)
    def mlperf_audit_reproduce(self, result: BenchmarkResult, context: CheckContext) -> Recipe:
        return Recipe(
            result.path,
            result.benchmark,
            result.system,
            None,
            None,
            "by a plugin",
            "none",
            None,
            launch=(Quoted("make rerun", "Makefile:1"),),
        )


def test_a_plugin_answers_mlperf_audit_reproduce_first(package):
    recipe = reproduce(package / LLAMA, Config(), PluginHost(plugins=[("own", _OwnRecipe())]))
    assert recipe is not None and recipe.trace == "by a plugin" and recipe.launch[0].text == "make rerun"
