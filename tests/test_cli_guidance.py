"""A command line that forgives and guides (issue 26, "Misuse"): "did you mean" for a mistyped
command, option, choice, rule code, ruleset, format, benchmark folder and system name; no
abbreviated options; a subcommand's own usage on its own errors; `results/` and `systems/` as
PATH; a file that is not a log refused with the reason; `-o -` and `-o /dev/stdout`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlperf_audit.cli import build_parser


def _usage_error(result, usage: str) -> list[str]:
    """The lines of an argparse usage error: the command's own usage, then one error line."""
    assert result.code == 2, result.err
    assert "Traceback" not in result.err
    assert result.err.startswith(f"usage: {usage} "), result.err
    errors = [line for line in result.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, result.err
    return errors


def test_a_mistyped_command_is_answered_with_the_closest(cli):
    [error] = _usage_error(cli("chek", "."), "mlperf-audit")
    assert "invalid choice: 'chek' (did you mean 'check'" in error


def test_a_mistyped_option_is_the_subcommands_error_with_its_own_usage(cli, fixtures):
    [error] = _usage_error(cli("check", "--formt", "x", str(fixtures / "clean")), "mlperf-audit check")
    assert error == "mlperf-audit check: error: unrecognized option --formt (did you mean '--format'?)"


@pytest.mark.parametrize(
    ("command", "abbreviation", "option"),
    [
        ("check", "--form", "--format"),
        ("score", "--form", "--format"),
        ("audit", "--form", "--format"),
        ("compare", "--form", "--format"),
        ("report", "--no-cach", "--no-cache"),
        ("check", "--trust", "--trust-tree-config"),
    ],
)
def test_no_option_is_taken_from_an_abbreviation(cli, fixtures, command, abbreviation, option, tmp_path):
    """`--form` is not `--format`: with abbreviations on, a typo silently becomes another option."""
    paths = [str(fixtures / "clean")] * (2 if command == "compare" else 1)
    values = ["text"] if option == "--format" else []
    result = cli(command, abbreviation, *values, *paths, "-o", str(tmp_path / "out"))
    [error] = _usage_error(result, f"mlperf-audit {command}")
    assert f"unrecognized option {abbreviation} (did you mean {option!r}?)" in error
    assert not list(tmp_path.iterdir())


def test_a_choice_names_the_closest(cli, fixtures):
    [error] = _usage_error(cli("score", "--format", "jsn", str(fixtures / "clean")), "mlperf-audit score")
    assert "invalid choice: 'jsn' (did you mean 'json'?)" in error
    [error] = _usage_error(cli("cache", "prnue"), "mlperf-audit cache")
    assert "invalid choice: 'prnue' (did you mean 'prune'?)" in error


def test_a_plugins_command_guides_the_same_way(capsys):
    from mlperf_audit import Command, hookimpl
    from mlperf_audit.engine.plugins import PluginHost

    class Stats(Command):
        name = "stats"
        help = "a plugin's command"
        document = "scores"  # --format among the formats that render scores

    class StatsPlugin:
        @hookimpl
        def mlperf_audit_register_commands(self) -> list[Command]:
            return [Stats()]

    parser = build_parser(PluginHost(plugins=[("stats", StatsPlugin())]))
    for argv, wanted in (
        (["stats", "--formt", "x"], "did you mean '--format'?"),
        (["stats", "--form", "x"], "--form"),
        (["stats", "--format", "jsn"], "invalid choice: 'jsn' (did you mean 'json'?)"),
    ):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: mlperf-audit stats ") and wanted in err


def test_an_unknown_format_names_the_closest(cli, fixtures, tmp_path):
    result = cli("check", str(fixtures / "clean"), "--format", "jsn")
    assert result.code == 2 and "unknown format 'jsn' (did you mean 'json'?)" in result.err
    result = cli("check", str(fixtures / "clean"), "--report", f"sarf:{tmp_path / 'x.sarif'}")
    assert result.code == 2 and "unknown format 'sarf' (did you mean 'sarif'?)" in result.err


@pytest.mark.parametrize(
    ("option", "selector", "wanted"),
    [
        ("--select", "RCP999", "'RCP009'"),  # the codes of its own prefix
        ("--ignore", "rcp04", "'RCP004'"),
        ("--select", "seed-mising", "'seed-missing'"),
        ("--ignore", "PKG9999", "'PKG"),
    ],
)
def test_an_unknown_rule_code_is_a_usage_error_naming_the_closest(cli, fixtures, option, selector, wanted):
    result = cli("check", str(fixtures / "clean"), option, selector)
    assert result.code == 2 and result.out == ""
    assert f"unknown rule selector {selector!r} (did you mean {wanted}" in result.err
    assert len(result.err.splitlines()) == 1


def test_a_prefix_stays_a_valid_selector(cli, fixtures):
    result = cli("check", str(fixtures / "clean"), "--select", "RCP", "--format", "json")
    assert result.code == 0, result.err
    assert {finding["rule"][:3] for finding in json.loads(result.out)["findings"]} <= {"RCP"}


def test_explain_names_the_closest_rules(cli):
    result = cli("explain", "RCP04")
    assert result.code == 2 and "no rule 'RCP04' (did you mean 'RCP004'" in result.err
    assert cli("explain", "RCP004").code == 0


def test_a_mistyped_ruleset_names_the_closest(cli, fixtures):
    result = cli("check", str(fixtures / "clean"), "--ruleset", "training-4.1")
    assert result.code == 2 and "unsupported ruleset 'training-4.1' (did you mean 'training-4.1.0'" in result.err


@pytest.fixture
def misnamed(tmp_path: Path, fixtures: Path) -> Path:
    """The clean fixture with its benchmark folder in capitals and its system description renamed."""
    package = tmp_path / "package"
    shutil.copytree(fixtures / "clean", package)
    results = package / "Fixture/results/fx_8xh100"
    benchmark = next(folder for folder in results.iterdir() if folder.is_dir())
    benchmark.rename(results / benchmark.name.upper())
    (package / "Fixture/systems/fx_8xh100.json").rename(package / "Fixture/systems/fx_8x_h100.json")
    return package


def test_a_misnamed_benchmark_folder_and_system_name_their_closest(cli, misnamed):
    result = cli("check", str(misnamed), "--format", "json", "--ruleset", "training-4.1.0", "--select", "PKG010,PKG014")
    findings = {finding["rule"]: finding for finding in json.loads(result.out)["findings"]}
    benchmark = next(p.name for p in (misnamed / "Fixture/results/fx_8xh100").iterdir())
    assert (
        f"{benchmark!r} is not a benchmark of training-4.1.0; did you mean {benchmark.lower()!r}?"
        in (findings["PKG010"]["message"])
    )
    assert findings["PKG010"]["hint"] == f"Rename the folder to {benchmark.lower()!r}, the benchmark's official name."
    assert "the closest description is systems/fx_8x_h100.json" in findings["PKG014"]["message"]
    assert "Rename systems/fx_8x_h100.json or results/fx_8xh100/" in findings["PKG014"]["hint"]


def test_a_real_submitters_misnamed_folder_names_the_benchmark(cli, sample, tmp_path):
    """A `GNN` folder in a copy of a real submitter, as a new user would name it."""
    submitter = tmp_path / "Dell"
    shutil.copytree(sample / "Dell", submitter, symlinks=True)
    system = next(folder for folder in (submitter / "results").iterdir() if folder.is_dir())
    benchmark = next(folder for folder in system.iterdir() if folder.is_dir())
    benchmark.rename(system / "GNN")
    result = cli("check", str(submitter), "--format", "json", "--select", "PKG010", "--ruleset", "training-4.1.0")
    [finding] = json.loads(result.out)["findings"]
    assert "'GNN' is not a benchmark of training-4.1.0; did you mean 'gnn'?" in finding["message"]


def _run(*argv: str, cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    # the environment passed whole, without COLUMNS: a library may have set one in this process's
    # C environment (GNU readline does), and a set width lays tables out for a reader, not a pipe
    environment = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", *argv],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=300,
        env=environment,
    )


@pytest.mark.parametrize(
    ("argv", "starts"),
    [
        (["check", "{clean}", "-o", "-"], b"mlperf-audit "),
        (["check", "{clean}", "--format", "json", "-o", "/dev/stdout"], b"{"),
        (["check", "{clean}", "-o", "/dev/null", "--report", "sarif:-"], b"{"),
        (["check", "{clean}", "-o", "/dev/null", "--write-baseline", "-"], b"{"),
        (["score", "{clean}", "--format", "csv", "-o", "-"], b"division,"),
        (["audit", "{clean}", "--format", "json", "-o", "-"], b"{"),
        (["report", "{clean}", "-o", "-"], b"<!DOCTYPE html>"),
        (["compare", "{clean}", "{clean}", "-o", "/dev/stdout"], b"benchmark"),
    ],
)
def test_dash_and_dev_stdout_are_the_standard_output(fixtures, tmp_path, argv, starts):
    result = _run(*(arg.format(clean=fixtures / "clean") for arg in argv), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout.startswith(starts), result.stdout[:200]
    assert b"Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # no file named `-`


def test_dev_stdout_appends_to_a_redirected_file_and_never_replaces_it(fixtures, tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("kept line\n")
    with open(log, "ab") as stdout:
        result = _run("check", str(fixtures / "clean"), "-o", "/dev/stdout", cwd=tmp_path, stdout=stdout)
    assert result.returncode == 0, result.stderr
    text = log.read_text()
    assert text.startswith("kept line\nmlperf-audit ") and "result files" in text


def test_dev_stdout_into_the_checked_path_is_refused(fixtures, tmp_path):
    package = tmp_path / "package"
    shutil.copytree(fixtures / "clean", package)
    inside = package / "report.txt"
    with open(inside, "wb") as stdout:
        result = _run("check", str(package), "-o", "/dev/stdout", cwd=tmp_path, stdout=stdout)
    assert result.returncode == 2
    assert b"will not write inside the checked PATH" in result.stderr
    assert inside.read_bytes() == b""
    link = tmp_path / "out.txt"
    link.symlink_to(package / "Fixture" / "new.txt")
    result = _run("check", str(package), "-o", str(link), cwd=tmp_path)
    assert result.returncode == 2 and not (package / "Fixture" / "new.txt").exists()


@pytest.mark.parametrize("part", ["results", "systems"])
def test_a_submissions_results_or_systems_folder_is_checked_as_the_submission(cli, sample, part, tmp_path):
    whole = cli("check", str(sample / "Dell"), "--format", "json", "-j", "1")
    result = cli("check", str(sample / "Dell" / part), "--format", "json", "-j", "1")
    assert result.code == whole.code, result.err
    report, expected = json.loads(result.out), json.loads(whole.out)
    assert report["target"]["kind"] == "submission"
    assert report["summary"] == expected["summary"]
    assert report["findings"] == expected["findings"]
    assert any(
        f"{part}/ folder of the submission Dell: the whole submission was checked" in note
        for note in report["config"]["notes"]
    )
    text = cli("check", str(sample / "Dell" / part), "-j", "1")
    assert f"is the {part}/ folder of the submission Dell" in " ".join(text.out.split())  # wrapped at 80


def test_output_inside_the_submission_around_a_checked_results_folder_is_refused(cli, fixtures, tmp_path):
    package = tmp_path / "package"
    shutil.copytree(fixtures / "clean", package)
    result = cli("check", str(package / "Fixture" / "results"), "-o", str(package / "Fixture" / "systems" / "x.txt"))
    assert result.code == 2 and "will not write inside the checked PATH" in result.err
    assert not (package / "Fixture" / "systems" / "x.txt").exists()


def test_a_stray_results_folder_of_a_repository_is_not_widened(cli, fixtures, tmp_path):
    """`results/` beside submitter folders is not a submission's: checking it does not check them."""
    repository = tmp_path / "repository"
    shutil.copytree(fixtures / "clean", repository)
    (repository / "results").mkdir()
    result = cli("check", str(repository / "results"))
    assert result.code == 2 and "no MLPerf results here" in result.err


def _one_line_refusal(result, *parts: str) -> None:
    assert result.code == 2 and result.out == ""
    assert len(result.err.splitlines()) == 1, result.err
    for part in parts:
        assert part in result.err, result.err


def test_a_system_description_as_path_is_refused_naming_the_submission(cli, fixtures):
    description = next((fixtures / "clean" / "Fixture" / "systems").glob("*.json"))
    result = cli("check", str(description))
    _one_line_refusal(
        result,
        f"{description} is a system description, not a result log; check the submission folder that holds it: "
        f"{fixtures / 'clean' / 'Fixture'}",
    )


def test_a_real_system_description_readme_and_binary_are_refused(cli, sample, tmp_path):
    description = next((sample / "Dell" / "systems").glob("*.json"))
    copied = tmp_path / "system.json"  # outside any systems/ folder: known by its keys
    copied.write_bytes(description.read_bytes())
    _one_line_refusal(cli("check", str(copied)), "system.json is a system description, not a result log")
    readme = tmp_path / "README.md"
    readme.write_text("# Dell\n\nHow to run.\n")
    _one_line_refusal(cli("check", str(readme)), "README.md is a document, not a result log")
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    _one_line_refusal(cli("check", str(binary)), "model.bin is a binary file, not a result log")
    notes = tmp_path / "notes.txt"
    notes.write_text("no records here\n")
    _one_line_refusal(cli("check", str(notes)), "notes.txt holds no MLLOG record")


def test_a_log_under_any_name_and_a_broken_result_file_are_still_checked(cli, fixtures, tmp_path):
    log = next((fixtures / "clean").rglob("result_0.txt"))
    renamed = tmp_path / "bert.log"
    renamed.write_text("container starting\n" * 100_000 + log.read_text())  # MLLOG after 1.9 MB of noise
    assert cli("check", str(renamed), "--format", "json").code in (0, 1)
    empty = tmp_path / "result_0.txt"
    empty.write_text("")
    result = cli("check", str(empty), "--format", "json")
    assert result.code == 1 and any(
        f["rule"] == "LOG014" or "empty" in f["message"] for f in json.loads(result.out)["findings"]
    )


def test_archives_are_still_checked(cli, fixtures, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "package"), "gztar", fixtures / "clean")
    result = cli("check", archive, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["target"]["result_files"] > 0


def test_the_api_names_the_submission_to_check_for_its_results_folder(fixtures):
    from mlperf_audit.engine import api
    from mlperf_audit.errors import TargetError

    with pytest.raises(TargetError, match="the results/ folder of a submission, not one by itself; check the "):
        api.check(fixtures / "clean" / "Fixture" / "results")
