"""The launch-configuration tracer and `reproduce` against hostile packages (found by a red-team
pass): a package cannot switch REP errors off with a stray file, cannot make a check hang or
crash with a few small files, and `reproduce` never follows a link out of the package."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from conftest import FIXTURES
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import PluginHost

IMPLEMENTATION = "Fixture/benchmarks/ssd/implementations/pytorch"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "package"
    shutil.copytree(FIXTURES / "irreproducible" / "config-learning-rate", root)
    return root


def _rep_errors(package: Path) -> list[str]:
    report = check(package, Config(select=("REP",)), PluginHost())
    return [f"{f.rule} {f.message}" for f in report.findings if f.severity.value == "error"]


def test_the_edited_learning_rate_is_an_error(package):
    assert any(e.startswith("REP011") for e in _rep_errors(package))


@pytest.mark.parametrize("stray", ["implementations/README.md", "implementations/LICENSE", "LICENSE"])
def test_a_stray_file_does_not_switch_the_error_off(package, stray):
    (package / "Fixture/benchmarks/ssd" / stray).write_text("see the folders below\n")
    assert any(e.startswith("REP011") for e in _rep_errors(package))


def test_a_common_file_sourcing_the_configuration_does_not_hide_it(package):
    (package / IMPLEMENTATION / "config_common.sh").write_text(
        "if false; then\n  source config_fx_8xh100.sh\nfi\nsource config_fx_8xh100.sh\n"
    )
    assert any(e.startswith("REP011") for e in _rep_errors(package))


def test_a_fan_out_of_sources_is_read_once_per_file(package):
    (package / IMPLEMENTATION / "common.sh").write_text("source common.sh\n" * 40)
    config = package / IMPLEMENTATION / "config_fx_8xh100.sh"
    config.write_text(config.read_text() + "source common.sh\n" * 40)
    started = time.monotonic()
    _rep_errors(package)
    assert time.monotonic() - started < 30  # 40^5 reads before; a few now


def test_deeply_nested_defaults_are_no_crash(package):
    config = package / IMPLEMENTATION / "config_fx_8xh100.sh"
    config.write_text(config.read_text() + "export Q=" + "${A:-" * 3000 + "1" + "}" * 3000 + "\n")
    report = check(package, Config(select=("REP", "CHK")), PluginHost())
    assert not [f for f in report.findings if f.rule == "CHK001"]


def test_a_count_in_the_system_name_is_its_own_word(tmp_path):
    from mlperf_audit.model import FileEntry
    from mlperf_audit_rules.support.tracing import _names_system

    def entry(name: str) -> FileEntry:
        return FileEntry(f"impl/{name}", tmp_path / name, 1)

    assert _names_system(entry("config_AS-8125GS-TNHR_001x08x032.sh"), "AS-8125GS-TNHR-1")
    assert not _names_system(entry("config_hpg.dgxh100x8.n1.sh"), "hpg.dgxh100x8.n16")


def test_reproduce_never_follows_a_linked_result_folder(tmp_path, cli):
    inside = tmp_path / "package"
    shutil.copytree(FIXTURES / "irreproducible" / "consistent", inside)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(inside / "Fixture/results/fx_8xh100/ssd", elsewhere)
    (inside / "Fixture/results/fx_8xh100/ssd").symlink_to(elsewhere, target_is_directory=True)
    written = inside / "Fixture" / "written.txt"
    result = cli("reproduce", str(inside / "Fixture/results/fx_8xh100/ssd"), "-o", str(written))
    assert result.code == 2 and not written.exists()


LLAMA = "Fixture/benchmarks/llama2_70b_lora/implementations/pytorch/config_fx_8xh100.sh"


@pytest.mark.parametrize(
    "text",
    [
        "export FP8_AMAX_HISTORY=1\nexport DISABLE_FP8=1\nx=1  # --fp8\n# quantization=int8\n",  # no switch
        "export FP8=" + "1" * 200_000 + "\n",  # a value of 200 KB
        "quantization" + " =" * 100_000 + "\n",  # near-matches for the text pattern, one long line
        "--fp8" * 50_000,  # no newline at all
        "export FP8=\x00\x1b[31mTrue\n",  # control characters
    ],
    ids=["mentions", "huge-value", "near-matches", "one-line", "control"],
)
def test_hostile_precision_switches_are_no_evidence_and_no_crash(tmp_path, text):
    """The configuration a result is traced to names the precision its utilisation is held to
    (support/precision.py): what merely mentions FP8 or INT8, or is not a switch, is no evidence,
    and nothing in it makes the check crash or stall."""
    package = tmp_path / "package"
    shutil.copytree(FIXTURES / "forged" / "compressed-timestamps", package)
    config = package / LLAMA
    config.parent.mkdir(parents=True, exist_ok=True)
    (config.parent / "train.py").write_text("print('train')\n")
    config.write_text("export DGXNNODES=1\nexport DGXNGPU=8\n" + text)
    started = time.monotonic()
    report = check(package, Config(select=("AUD002", "CHK")), PluginHost())
    assert time.monotonic() - started < 60
    assert not [f for f in report.findings if f.rule.startswith("CHK")]
    (finding,) = [f for f in report.findings if f.rule == "AUD002"]
    if text.startswith("export FP8_AMAX"):
        assert "(the best the accelerator offers" in finding.message  # no evidence: the best peak
    assert "\x1b" not in finding.message
