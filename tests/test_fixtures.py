"""The fixture packages: reproducible to the byte, clean where they say so, broken as documented."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.reference import rulesets

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = ["bert", "dlrm_dcnv2", "gnn", "gpt3", "llama2_70b_lora", "ssd", "stable_diffusion"]
CASES = json.loads((REPO / "fixtures" / "packages" / "broken" / "cases.json").read_text())


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_regenerating_gives_the_same_bytes(tmp_path, fixtures):
    command = [sys.executable, str(REPO / "fixtures" / "generate.py"), str(tmp_path / "packages")]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    assert files(tmp_path / "packages") == files(fixtures)


def test_clean_package_has_every_benchmark_with_the_required_runs(fixtures):
    results = fixtures / "clean" / "Fixture" / "results"
    counts = {folder.name: len(list(folder.glob("result_*.txt"))) for folder in results.glob("*/*")}
    # gpt3's training state needs 64 H100s (AUD010): it has its own system
    assert sorted(p.name for p in results.iterdir()) == ["fx_64xh100", "fx_8xh100"]
    assert [p.name for p in (results / "fx_64xh100").iterdir()] == ["gpt3"]
    assert counts == {
        "bert": 10,
        "dlrm_dcnv2": 10,
        "gnn": 10,
        "gpt3": 3,
        "llama2_70b_lora": 10,
        "ssd": 5,
        "stable_diffusion": 10,
    }


def test_clean_package_has_no_findings(fixtures, host):
    report = check(fixtures / "clean", Config(), host)
    assert [f for f in report.findings if f.severity.value != "info"] == []
    passed = {f.benchmark for f in report.findings if f.rule == "RCP007" and "RCP test passed (RCP found)" in f.message}
    assert passed == set(BENCHMARKS)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_clean_logs_pass_the_official_compliance_checker(fixtures, benchmark):
    (folder,) = (fixtures / "clean" / "Fixture" / "results").glob(f"*/{benchmark}")
    log = folder / "result_0.txt"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mlperf_logging.compliance_checker",
            "--usage",
            "training",
            "--ruleset",
            "4.1.0",
            "--log_output",
            "/dev/null",
            str(log),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout + result.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_case_raises_exactly_its_documented_codes(fixtures, host, case):
    # the fixture packages are 4.1 packages: pinned, so that a misnamed folder is judged by 4.1's list
    report = check(fixtures / "broken" / case, Config(ruleset="training-4.1.0"), host)
    found = {f.rule for f in report.findings if f.severity.value != "info"}
    assert sorted(found) == sorted(CASES[case]["expect"]), CASES[case]["description"]


def test_demo_has_findings(cli, fixtures):
    result = cli("check", str(fixtures / "demo"), "--fail-on", "never")
    assert result.code == 0
    assert "6 error(s), 3 warning(s), 3 info" in result.out  # info: RCP007, REP003 x2
    assert cli("check", str(fixtures / "demo")).code == 1


FORGED = json.loads((REPO / "fixtures" / "packages" / "forged" / "cases.json").read_text())


@pytest.mark.parametrize("case", sorted(FORGED))
def test_forged_case_is_caught_by_its_rule(fixtures, host, case):
    # the fixtures are v4.1 packages; one benchmark (llama2_70b_lora) alone fits every round up to 6.1
    report = check(fixtures / "forged" / case, Config(ruleset="training-4.1.0"), host)
    found = {f.rule for f in report.findings if f.severity.value != "info"}
    assert set(FORGED[case]["expect"]) <= found, FORGED[case]["description"]
    assert (
        not {code for code in found if code[:3] in ("AUD", "FOR")} - set(FORGED[case]["expect"]) - {"AUD005", "FOR006"}
    )


IRREPRODUCIBLE = json.loads((REPO / "fixtures" / "packages" / "irreproducible" / "cases.json").read_text())


@pytest.mark.parametrize("case", sorted(IRREPRODUCIBLE))
def test_irreproducible_case_raises_exactly_its_documented_codes(fixtures, host, case):
    """The consistent package stays silent; each disagreement raises its rule and nothing else."""
    report = check(fixtures / "irreproducible" / case, Config(), host)
    found = {f.rule for f in report.findings if f.severity.value != "info"}
    assert sorted(found) == sorted(IRREPRODUCIBLE[case]["expect"]), IRREPRODUCIBLE[case]["description"]
    traced = [f for f in report.findings if f.rule == "REP003"]
    if case != "no-implementation":
        assert len(traced) == 1 and "implementations/pytorch" in traced[0].message


def test_disagreements_name_both_files_and_lines(fixtures, host):
    """A configuration that disagrees with the logs or the description points at both."""
    for case, rule, other in (
        ("config-learning-rate", "REP011", "results/fx_8xh100/ssd/result_0.txt"),
        ("config-node-count", "REP010", "systems/fx_8xh100.json"),
    ):
        report = check(fixtures / "irreproducible" / case, Config(select=(rule,)), host)
        finding = report.findings[0]
        assert finding.path.endswith("config_fx_8xh100.sh") and finding.line
        assert finding.related and finding.related[0][0].endswith(other) and finding.related[0][1]
        assert f"{finding.related[0][0]}:{finding.related[0][1]}" in finding.message


# ----------------------------------------------------------------------------------------------
# The 6.x rounds: no published snapshot yet; a clean package per ruleset, built from its rules.
# ----------------------------------------------------------------------------------------------

SIX = {"6.0.0": "training_results_v6.0", "6.1.0": "training_results_v6.1"}


def official_package_check(package: Path, ruleset: str, tmp_path: Path) -> str:
    """The official package checker's log for a temporary copy of `package` (it writes into the
    results it checks, and its log into the working directory): run as a submitter runs it."""
    tree = tmp_path / "tree"
    shutil.copytree(package, tree / "Fixture")
    log = tmp_path / "package_checker.log"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mlperf_logging.package_checker",
            "Fixture",
            "training",
            ruleset,
            "--log_output",
            str(log),
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return log.read_text()


@pytest.mark.parametrize("ruleset", sorted(SIX))
def test_six_package_has_every_benchmark_of_its_round_with_the_required_runs(fixtures, ruleset):
    results = fixtures / SIX[ruleset] / "Fixture" / "results"
    counts = {folder.name: len(list(folder.glob("result_*.txt"))) for folder in results.glob("*/*")}
    round_ = rulesets.get(f"training-{ruleset}")
    assert sorted(counts) == sorted(round_.benchmarks)
    assert counts == {name: round_.required_runs(name) for name in counts}


@pytest.mark.parametrize("ruleset", sorted(SIX))
def test_six_package_passes_the_official_package_checker(fixtures, tmp_path, ruleset):
    log = official_package_check(fixtures / SIX[ruleset] / "Fixture", ruleset, tmp_path)
    assert "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS" in log
    assert "ERROR -" not in log and "WARNING -" not in log
    benchmarks = rulesets.get(f"training-{ruleset}").benchmarks
    assert log.count("RCP Test Passed") == len(benchmarks)
    assert log.count("Running compliance on file") == sum(rulesets.get(f"training-{ruleset}").run_counts.values())


def test_the_official_checker_rejects_a_six_one_package_without_its_disclosure(fixtures, tmp_path, host):
    """The check has teeth: 6.1 makes config_filename mandatory; two runs without it fail the folder."""
    package = tmp_path / "package"
    shutil.copytree(fixtures / SIX["6.1.0"] / "Fixture", package)
    for index in (0, 1):
        path = package / "results" / "fx_8xb200" / "llama31_8b" / f"result_{index}.txt"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if '"key": "config_filename"' not in line))
    log = official_package_check(package, "6.1.0", tmp_path / "official")
    assert "2 files do not comply, directory cannot be accepted" in log
    assert "PACKAGE CHECKER FOUND ERRORS" in log
    # mlperf-audit agrees: the same two runs, and the folder
    report = check(package, Config(ruleset="training-6.1.0"), host)
    errors = sorted((f.rule, f.path.rsplit("/", 1)[-1]) for f in report.findings if f.severity.value == "error")
    assert errors == [("CMP1010", "result_0.txt"), ("CMP1010", "result_1.txt"), ("PKG019", "llama31_8b")]
    assert all("config_filename" in f.message for f in report.findings if f.rule == "CMP1010")


@pytest.mark.parametrize("ruleset", sorted(SIX))
def test_six_package_has_no_errors_or_warnings_in_mlperf_audit(fixtures, host, ruleset):
    report = check(fixtures / SIX[ruleset], Config(), host)
    assert report.ruleset == f"training-{ruleset}"  # named by the folder above the submission
    assert [f for f in report.findings if f.severity.value != "info"] == []
    passed = {f.benchmark for f in report.findings if f.rule == "RCP007" and "RCP test passed" in f.message}
    assert passed == set(rulesets.get(f"training-{ruleset}").benchmarks)
    traced = {f.benchmark for f in report.findings if f.rule == "REP003" and "certain" in f.message}
    assert traced == passed


def test_six_runs_are_dated_inside_their_rounds(fixtures):
    """PKG020 would report a package whose runs were logged outside its round's window."""
    for ruleset, folder in SIX.items():
        for path in (fixtures / folder).rglob("result_0.txt"):
            first = json.loads(path.read_text().splitlines()[0].split(":::MLLOG ", 1)[1])
            day = datetime.datetime.fromtimestamp(first["time_ms"] / 1000, datetime.UTC).date().isoformat()
            assert rulesets.within(day, f"training-{ruleset}"), (path, day)
