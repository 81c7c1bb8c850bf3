"""The command line: exit codes, --fail-on, formats, the JSON contract, rules and explain."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from mlperf_audit.config import FAIL_ON_CHOICES

FIXTURE_LOG = (
    Path(__file__).resolve().parent.parent / "fixtures/packages/clean/Fixture/results/fx_8xh100/ssd/result_0.txt"
)
SCHEMA = json.loads(resources.files("mlperf_audit").joinpath("schemas/report-v1.schema.json").read_text())


def validate_report(text: str) -> dict:
    report = json.loads(text)
    jsonschema.validate(report, SCHEMA)
    return report


def test_clean_package_passes(cli, fixtures, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the description on one line
    result = cli("check", str(fixtures / "clean"))
    assert result.code == 0, result.out
    assert "0 error(s), 0 warning(s)" in result.out and "in 58 result file(s): passed" in result.out
    verbose = cli("check", str(fixtures / "clean"), "-v")
    assert "results repository: 1 submitter, 2 systems, 7 benchmark folders, 58 result files" in verbose.out


def test_error_exits_1_and_text_report_locates_it(cli, fixtures):
    result = cli("check", str(fixtures / "broken" / "two-runs-without-run-stop"))
    assert result.code == 1
    assert "Fixture/results/fx_8xh100/ssd/result_3.txt" in result.out and "EVT003" in result.out
    assert "2 runs do not comply (result_1.txt, result_3.txt)" in result.out
    assert "hint:" in result.out
    assert result.err == ""


def test_one_failed_run_is_tolerated_as_a_warning(cli, fixtures):
    result = cli("check", str(fixtures / "broken" / "missing-run-stop"), "--format", "json")
    assert result.code == 0
    (finding,) = [f for f in json.loads(result.out)["findings"] if f["severity"] != "info"]
    assert finding["rule"] == "EVT003" and finding["severity"] == "warning"
    assert "tolerated: the only non-compliant run" in finding["message"]


@pytest.mark.parametrize(
    "case, fail_on, code",
    [
        ("two-runs-without-run-stop", "error", 1),
        ("two-runs-without-run-stop", "never", 0),
        ("missing-run-stop", "error", 0),  # one failed run: tolerated, a warning
        ("missing-run-stop", "warning", 1),
        ("nan-accuracy", "error", 0),  # LOG009 is a warning
        ("nan-accuracy", "warning", 1),
        ("nan-accuracy", "info", 1),
        ("nan-accuracy", "never", 0),
    ],
)
def test_fail_on(cli, fixtures, case, fail_on, code):
    assert cli("check", str(fixtures / "broken" / case), "--fail-on", fail_on).code == code


@pytest.mark.third_party_plugins
def test_info_findings_fail_only_with_fail_on_info(cli, tmp_path):
    log = tmp_path / "result_0.txt"
    log.write_text("+ trace\n+ trace\n+ trace\n" + (FIXTURE_LOG.read_text()))
    noisy = tmp_path / "noisy.txt"
    noisy.write_text("+ trace\n" * 1000 + FIXTURE_LOG.read_text())
    v41 = ("--ruleset", "training-4.1.0")  # a lone log names no round its folders could
    assert cli("check", str(log), "--fail-on", "info", *v41).code == 0  # mostly MLLOG: no EXA001
    assert cli("check", str(noisy), "--fail-on", "warning", *v41).code == 0
    assert cli("check", str(noisy), "--fail-on", "info", *v41).code == 1  # EXA001 is an info finding


def test_json_contract(cli, fixtures):
    result = cli("check", str(fixtures / "broken" / "two-runs-without-run-stop"), "--format", "json")
    assert result.code == 1
    report = validate_report(result.out)
    assert report["schema_version"] == 1
    assert report["tool"]["name"] == "mlperf-audit"
    assert report["mlperf_logging"]["version"] == "4.1.68"
    assert report["ruleset"] == "training-4.1.0"
    assert report["target"]["kind"] == "results repository"
    finding = [f for f in report["findings"] if f["rule"] == "EVT003"][0]
    assert finding == {
        "rule": "EVT003",
        "name": "run-stop-missing",
        "severity": "error",
        "message": finding["message"],
        "path": "Fixture/results/fx_8xh100/ssd/result_1.txt",
        "line": None,
        "submitter": "Fixture",
        "system": "fx_8xh100",
        "benchmark": "ssd",
        "hint": finding["hint"],
        "fingerprint": finding["fingerprint"],
        "waived_by": None,
        "related": [],
        "caused_by": None,
    }
    assert len(finding["fingerprint"]) == 32
    assert report["summary"]["error"] == 4  # two runs, the folder (PKG019) and its RCP check (RCP002)
    assert {p["name"] for p in report["plugins"]} >= {"engine", "log_syntax", "log_structure"}


def test_json_findings_carry_physical_lines(cli, fixtures):
    result = cli("check", str(fixtures / "broken" / "malformed-json"), "--format", "json")
    report = validate_report(result.out)
    (finding,) = [f for f in report["findings"] if f["rule"] == "LOG005"]
    log = fixtures / "broken" / "malformed-json" / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_0.txt"
    lines = log.read_text().splitlines()
    assert finding["rule"] == "LOG005"
    assert '"key": "seed"' in lines[finding["line"] - 1]


def test_output_file(cli, fixtures, tmp_path):
    out = tmp_path / "report.json"
    result = cli("check", str(fixtures / "broken" / "too-few-runs"), "--format", "json", "-o", str(out))
    assert result.code == 1 and result.out == ""
    assert [f["rule"] for f in validate_report(out.read_text())["findings"] if f["severity"] == "error"] == ["PKG012"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "does/not/exist"], "no such file or folder"),
        (["check", "{clean}", "--format", "yaml"], "unknown format 'yaml'"),
        (["check", "{clean}", "--select", "NOPE1"], "unknown rule selector 'NOPE1'"),
        (["check", "{clean}", "-o", "{clean}/report.txt"], "will not write inside the checked PATH"),
        (["explain", "XYZ999"], "no rule 'XYZ999'"),
    ],
)
def test_usage_errors_exit_2(cli, fixtures, argv, message):
    argv = [arg.format(clean=fixtures / "clean") for arg in argv]
    result = cli(*argv)
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err
    assert not (fixtures / "clean" / "report.txt").exists()


@pytest.mark.parametrize("argv", [["check"], ["check", ".", "--fail-on", "sometimes"], ["frobnicate"], []])
def test_argparse_usage_errors_exit_2(cli, argv):
    assert cli(*argv).code == 2


def test_empty_folder_is_a_usage_error(cli, tmp_path):
    result = cli("check", str(tmp_path))
    assert result.code == 2 and "no MLPerf results here" in result.err


def test_fail_on_choices_are_documented(cli):
    assert set(FAIL_ON_CHOICES) == {"error", "warning", "info", "never"}


@pytest.mark.third_party_plugins
def test_rules_lists_plugins(cli):
    result = cli("rules")
    assert result.code == 0
    row = next(line for line in result.out.splitlines() if line.startswith("EXA001"))
    assert "shell-noise" in row and "example" in row
    assert any(line.startswith("EVT003") and "log_structure" in line for line in result.out.splitlines())


@pytest.mark.third_party_plugins
def test_rules_json(cli):
    rules = json.loads(cli("rules", "--json").out)
    codes = [rule["code"] for rule in rules]
    assert codes == sorted(codes) and len(codes) == len(set(codes))
    exa = next(rule for rule in rules if rule["code"] == "EXA001")
    assert exa["plugin"] == "example" and exa["severity"] == "info" and "How to fix:" in exa["doc"]


@pytest.mark.parametrize("selector", ["EVT005", "evt005", "init-order"])
def test_explain(cli, selector):
    result = cli("explain", selector)
    assert result.code == 0
    assert result.out.startswith("EVT005 init-order")
    for section in ("What it checks:", "Why it matters:", "Example:", "How to fix:"):
        assert section in result.out


def test_select_and_ignore(cli, fixtures):
    target = str(fixtures / "demo")
    everything = json.loads(cli("check", target, "--format", "json").out)["findings"]
    assert {f["rule"] for f in everything} >= {"EVT003", "LOG005", "LOG009", "PKG019"}
    only_log = json.loads(cli("check", target, "--format", "json", "--select", "LOG").out)["findings"]
    assert {f["rule"] for f in only_log} == {"LOG005", "LOG009"}
    by_name = json.loads(
        cli(
            "check", target, "--format", "json", "--select", "EVT,LOG,CMP467", "--ignore", "run-stop-missing,LOG009"
        ).out
    )
    # with EVT003 ignored, the official check it covers (common.yaml: exactly one run_stop) speaks for itself
    assert {f["rule"] for f in by_name["findings"]} == {"LOG005", "CMP467"}
    assert by_name["config"]["ignore"] == ["run-stop-missing", "LOG009"]
    assert by_name["config"]["sources"] == ["command line"] and by_name["config"]["select"] == ["EVT", "LOG", "CMP467"]


def test_formats_and_plugins_commands(cli):
    assert {"text", "json"} <= {line.split()[0] for line in cli("formats").out.splitlines()[2:]}
    plugins = json.loads(cli("plugins", "--json").out)
    assert {"name": "engine", "builtin": True}.items() <= plugins[0].items()
    assert "mlperf-logging 4.1.68" in cli("plugins").out


def test_version(cli):
    result = cli("--version")
    assert result.code == 0 and result.out.startswith("mlperf-audit ")


def test_other_rounds_and_unsupported_ones(cli, fixtures):
    result = cli("check", str(fixtures / "clean"), "--ruleset", "training-5.0.0", "--format", "json")
    report = json.loads(result.out)
    assert result.code == 1 and report["ruleset"] == "training-5.0.0"
    unknown = {f["benchmark"] for f in report["findings"] if f["rule"] == "PKG010"}
    assert unknown == {"gnn", "gpt3", "ssd"}  # not benchmarks of 5.0 (bert, dlrm_dcnv2, llama2, SD are)
    for name in ("training-0.7.0", "training-9.9.9", "inference-4.1.0"):  # 0.7 logged another format
        refused = cli("check", str(fixtures / "clean"), "--ruleset", name)
        assert refused.code == 2 and f"unsupported ruleset '{name}'" in refused.err


def test_partial_makes_missing_runs_pending(cli, fixtures):
    target = str(fixtures / "broken" / "too-few-runs")
    assert cli("check", target).code == 1
    result = cli("check", target, "--partial", "--format", "json")
    assert result.code == 0
    pending = [f for f in json.loads(result.out)["findings"] if f["rule"] == "PKG012"]
    assert pending[0]["severity"] == "info" and "1 still required" in pending[0]["message"]


def test_progress_only_on_a_terminal(cli, fixtures, monkeypatch):
    quiet = cli("check", str(fixtures / "clean"))
    assert quiet.err == ""  # not a terminal: silent
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    shown = cli("check", str(fixtures / "clean"), "--format", "json")
    assert "58/58" in shown.err and shown.out.startswith("{")
    assert "58/58" not in shown.out
    assert cli("check", str(fixtures / "clean"), "--no-progress").err == ""


@pytest.mark.sample
@pytest.mark.parametrize("command", ["check", "score"])
def test_output_is_identical_whatever_the_jobs(cli, sample, command):
    outputs = {jobs: cli(command, str(sample), "--format", "json", "--jobs", str(jobs)).out for jobs in (1, 2, 3)}
    assert outputs[1] == outputs[2] == outputs[3] and outputs[1].startswith("{")


def test_one_run_that_did_not_converge_is_information(cli, fixtures):
    """An aborted run is what olympic scoring is for: EVT007 and what follows from it are information."""
    result = cli(
        "check", str(fixtures / "broken" / "run-aborted"), "--format", "json", "--fail-on", "info", "--select", "EVT"
    )
    (finding,) = json.loads(result.out)["findings"]
    assert finding["rule"] == "EVT007" and finding["severity"] == "info"
    assert "tolerated: the run did not converge" in finding["message"]


def test_check_score_gives_findings_and_scores_from_one_parse(cli, fixtures, tmp_path, monkeypatch):
    """`check --score`: the findings of `check` and the scores of `score`, reading each log once."""
    from mlperf_audit.engine import loading

    target = str(fixtures / "clean")
    plain = json.loads(cli("check", target, "--format", "json", "--no-cache", "-j", "1").out)
    scored = json.loads(cli("score", target, "--format", "json", "--no-cache", "-j", "1").out)
    parsed: list[str] = []
    real = loading.parse_log
    monkeypatch.setattr(loading, "parse_log", lambda path, shown, **kw: parsed.append(shown) or real(path, shown, **kw))
    both = json.loads(cli("check", target, "--format", "json", "--score", "--no-cache", "-j", "1").out)
    assert sorted(parsed) == sorted(set(parsed)) and len(parsed) == plain["target"]["result_files"]
    assert {k: v for k, v in both.items() if k != "scores"} == plain
    assert both["scores"] == scored["results"] and scored["results"]
    text = cli("check", target, "--score", "--no-cache", "-j", "1").out
    assert "scores:" in text and scored["results"][0]["benchmark"] in text.split("scores:")[1]
    markdown = cli("check", target, "--score", "--format", "markdown", "--no-cache", "-j", "1").out
    assert "<b>scores</b>" in markdown
    assert "scores" not in cli("check", target, "--format", "markdown", "--no-cache", "-j", "1").out.lower()


def _command(*argv: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", *argv], stdout=stdout, stderr=subprocess.PIPE, timeout=300
    )


def test_the_command_leaves_at_once_with_mains_exit_code_and_all_its_output(cli, sample):
    """`mlperf-audit` skips the interpreter's teardown (`cli.run`): every byte of the output is still
    written, and the exit code is `main`'s, whichever it is."""
    for fail_on, code in (("error", None), ("info", 1)):
        argv = ("check", str(sample), "--format", "json", "--no-cache", "--fail-on", fail_on)
        in_process = cli(*argv)
        command = _command(*argv)
        assert command.returncode == in_process.code and (code is None or code == in_process.code)
        assert json.loads(command.stdout)["findings"] == json.loads(in_process.out)["findings"]
    usage = _command("check", "--no-such-option")
    assert usage.returncode == 2 and b"usage" in usage.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_that_cannot_be_written_exits_2_with_a_message(fixtures):
    with open("/dev/full", "wb") as full:
        command = _command("check", str(fixtures / "clean"), "--no-cache", stdout=full)
    assert command.returncode == 2 and b"No space left on device" in command.stderr


def test_a_reader_that_leaves_early_is_no_error(fixtures):
    process = subprocess.Popen(
        [sys.executable, "-m", "mlperf_audit", "rules"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()  # like `| head -c 10`
    assert process.wait(timeout=120) == 0 and b"Traceback" not in process.stderr.read()


def test_starting_imports_no_numerics_and_no_schema_validator():
    """Every command starts with the plugins loaded; numpy, scipy and jsonschema (a fifth of a
    second together) are imported by the rules that compute with them, when they first do."""
    script = (
        "import sys\n"
        "from mlperf_audit.cli import build_parser\n"
        "from mlperf_audit.engine.plugins import PluginHost\n"
        "build_parser(PluginHost())\n"
        "print(sorted(m for m in ('numpy', 'scipy.special', 'scipy.stats._stats_py', 'jsonschema') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_closed_output_changes_no_exit_code(fixtures):
    """Started with standard output or error closed (`>&-`), the command leaves with main's code."""
    script = (
        "import os, sys\n"
        "os.close(int(sys.argv[1]))\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'mlperf_audit', *sys.argv[2:]])\n"
    )
    check = ["check", "--no-cache", str(fixtures / "clean")]
    # --version writes nothing when stdout is closed; a report that cannot be written is exit 2;
    # without stderr, a check shows no progress
    for closed, argv, code in ((1, ["--version"], 0), (1, check, 2), (2, check, 0)):
        process = subprocess.run([sys.executable, "-c", script, str(closed), *argv], capture_output=True, timeout=300)
        assert process.returncode == code and b"Traceback" not in process.stdout + process.stderr, process
