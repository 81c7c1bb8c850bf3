"""What a person sees: problems first and short, one cause shown once, locations that open from
the current folder, output that fits the terminal, colour only where it belongs, and progress
that is cleared when the work is done.

Process tests: the installed `mlperf-audit` runs in a subprocess, on a pipe or on a
pseudo-terminal (`pty`), with the environment a user would have.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import SAMPLE, published_rounds, shared_data
from mlperf_audit.engine import causes
from mlperf_audit.model import Finding, Severity
from mlperf_audit.rule import Rule

EXECUTABLE = str(Path(sys.executable).with_name("mlperf-audit"))
BERT = "Dell/results/XE9680x8H100-SXM-80GB/bert"
ESCAPE = "\x1b["
INFO_LINE = re.compile(r"^\s+(?:\d+:\s+)?info [A-Z]+\d+ ", re.M)


def run(*argv: str, cwd: Path, columns: int | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """The command on pipes, as a script or CI job runs it (no colour unless asked)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    environ.update(env)
    if columns is not None:
        environ["COLUMNS"] = str(columns)
    return subprocess.run(
        [EXECUTABLE, *argv], cwd=cwd, env=environ, capture_output=True, text=True, timeout=600, check=False
    )


def on_terminal(*argv: str, cwd: Path, columns: int = 100, **env: str) -> tuple[int, str]:
    """The command with standard output and error on one pseudo-terminal: its exit code and every
    byte it wrote there, decoded."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ.update({"TERM": "xterm-256color", "COLUMNS": str(columns), **env})
    main, secondary = pty.openpty()
    process = subprocess.Popen(
        [EXECUTABLE, *argv], cwd=cwd, env=environ, stdin=secondary, stdout=secondary, stderr=secondary
    )
    os.close(secondary)
    written = bytearray()
    while True:
        ready, _, _ = select.select([main], [], [], 600)
        if not ready:
            process.kill()
            pytest.fail("no output for 600 s")
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal's other end is closed: the process has ended
            break
        if not chunk:
            break
        written += chunk
    os.close(main)
    return process.wait(timeout=60), written.decode("utf-8", "replace")


_CONTROL = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


def final_screen(written: str) -> list[str]:
    """What a terminal shows once `written` has been drawn: the lines left after carriage returns,
    cursor moves up and line erasures (the sequences rich uses to draw and clear progress)."""
    lines, row, column = [""], 0, 0
    for match in _CONTROL.finditer(written):
        text = match.group(0)
        if text == "\r":
            column = 0
        elif text == "\n":
            row, column = row + 1, 0
            if row == len(lines):
                lines.append("")
        elif match.group(2):
            params, command = match.group(1), match.group(2)
            count = int(params) if params.isdigit() else 1
            if command == "A":
                row = max(0, row - count)
            elif command == "K":
                lines[row] = "" if params == "2" else lines[row][:column]
        else:
            line = lines[row].ljust(column)
            lines[row] = line[:column] + text + line[column + len(text) :]
            column += len(text)
    return [line.rstrip() for line in lines]


def lines_of(text: str) -> list[str]:
    return text.rstrip("\n").split("\n") if text.strip() else []


@pytest.fixture
def round_copy(tmp_path: Path) -> Path:
    """A copy of the real Dell sample in a folder named for its round (the ruleset is inferred from it)."""
    shared_data(SAMPLE, "v4.1 sample")
    root = tmp_path / "v4.1"
    shutil.copytree(SAMPLE / "Dell", root / "Dell")
    return root


def break_line(log: Path, number: int) -> None:
    """Makes line `number` of `log` invalid JSON (a quote lost), as a truncated copy would."""
    lines = log.read_text().split("\n")
    assert '"value"' in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace('"value"', '"value', 1)
    log.write_text("\n".join(lines))


# -- problems first, short by default ---------------------------------------------------------------


@pytest.mark.sample
def test_a_clean_submitter_says_so_in_a_few_lines(round_copy):
    result = run("check", "Dell", cwd=round_copy)
    assert result.returncode == 0, result.stdout
    assert len(lines_of(result.stdout)) <= 5, result.stdout  # 80 lines before, its infos shown
    # 17 infos of the built-in rules (the suite loads no third-party plugin): RCP007 and SEED003 5
    # each, HYP002 4, REP001 1, and FOR009's 2, the bert and ssd runs published before, in v3.1
    # (allowed before 5.1)
    assert "0 error(s), 0 warning(s), 17 info" in result.stdout and "passed" in result.stdout
    quiet = run("check", "Dell", "-q", cwd=round_copy)
    assert lines_of(quiet.stdout) == [lines_of(result.stdout)[-1]]  # the verdict alone
    shown = run("check", "Dell", "--show-info", cwd=round_copy, columns=200)
    assert len(INFO_LINE.findall(shown.stdout)) == 17
    assert run("check", "Dell", "-v", cwd=round_copy, columns=200).stdout == shown.stdout
    implied = run("check", "Dell", "--fail-on", "info", cwd=round_copy, columns=200)
    assert implied.returncode == 1 and len(INFO_LINE.findall(implied.stdout)) >= 5  # shown, the repeated folded
    assert not INFO_LINE.findall(result.stdout)


@pytest.mark.sample
def test_a_broken_line_is_one_finding_with_what_follows_folded(round_copy):
    break_line(round_copy / BERT / "result_3.txt", 64)
    result = run("check", "Dell", cwd=round_copy)
    assert result.returncode == 1
    out = result.stdout
    assert len(lines_of(out)) <= 15, out  # 88 lines before
    report = json.loads(run("check", "Dell", "--format", "json", cwd=round_copy).stdout)
    problems = [f for f in report["findings"] if f["severity"] != "info"]
    (cause,) = [f for f in problems if f["rule"] == "LOG005"]
    effects = [f for f in problems if f["caused_by"] == cause["fingerprint"]]
    assert {f["rule"] for f in effects} >= {"SEED006", "RCP003"}  # what the broken line causes
    assert all(f is cause or f in effects for f in problems)  # nothing else is wrong with the copy
    for effect in effects:  # shown once, in the fold under the cause, never on a line of their own
        assert not re.search(rf"^\s+(\d+:\s+)?(error|warning)\s+{effect['rule']}\b", out, re.M), out
    assert re.search(r"^\s+64: warning LOG005 ", out, re.M), out
    folded = re.search(r"(\d+) more follows? from it: (.*?)\n\n", out, re.S)
    assert folded and int(folded.group(1)) == len(effects), out
    assert {f["rule"] for f in effects} == set(re.findall(r"[A-Z]+\d+", folded.group(2)))
    assert f"{report['summary']['error']} error(s)" in out  # every finding still counted


@pytest.mark.sample
def test_a_renamed_folder_is_one_finding(round_copy):
    (round_copy / BERT).rename(round_copy / BERT.replace("/bert", "/BERT"))
    out = run("check", "Dell", cwd=round_copy, columns=100).stdout
    assert len(re.findall(r"\b(error|warning) (PKG010|PKG011)\b", out)) == 1, out  # 11 before
    assert "10 more follow from it: PKG011" in out


@pytest.mark.sample
def test_a_rule_repeated_in_one_folder_shows_once_and_counts_the_others(round_copy):
    # bert's logs in a folder of a benchmark the submitter did not run: each log contradicts it
    (round_copy / BERT).rename(round_copy / BERT.replace("/bert", "/gpt3"))
    out = run("check", "Dell", cwd=round_copy, columns=200).stdout
    report = json.loads(run("check", "Dell", "--format", "json", cwd=round_copy).stdout)
    mismatches = [f for f in report["findings"] if f["rule"] == "PKG011"]
    assert len(mismatches) == 10
    assert len(re.findall(r" error PKG011 ", out)) == 1, out
    assert "and 9 more like it in this folder: result_1.txt:65, result_2.txt:65, result_3.txt:64, …" in out


@pytest.mark.sample
def test_errors_come_before_warnings(round_copy):
    log = round_copy / BERT / "result_7.txt"
    log.write_text(log.read_text().replace('"value": 0.', '"value": NaN, "x": 0.', 1))  # LOG009, a warning
    (round_copy / "Dell/results/XE9680x8H100-SXM-80GB/gnn").rename(
        round_copy / "Dell/results/XE9680x8H100-SXM-80GB/GNN"
    )
    out = run("check", "Dell", cwd=round_copy, columns=200).stdout
    severities = re.findall(r"^\s+(?:\d+:\s+)?(error|warning) [A-Z]+\d+ ", out, re.M)
    assert "error" in severities and "warning" in severities, out
    assert severities == sorted(severities), out  # "error" < "warning"


@pytest.mark.sample
def test_statistics_count_findings_by_rule(round_copy):
    (round_copy / BERT).rename(round_copy / BERT.replace("/bert", "/BERT"))
    out = run("check", "Dell", "--statistics", cwd=round_copy, columns=100).stdout
    rows = re.findall(r"^\s*(\d+)\s+([A-Z]+\d+)\s+([a-z0-9-]+)\s+(error|warning|info)$", out, re.M)
    report = json.loads(run("check", "Dell", "--format", "json", cwd=round_copy).stdout)
    counted: dict[str, int] = {}
    for finding in report["findings"]:
        counted[finding["rule"]] = counted.get(finding["rule"], 0) + 1
    shown: dict[str, int] = {}
    for count, code, _, _ in rows:  # a rule reported at two severities has a row for each
        shown[code] = shown.get(code, 0) + int(count)
    assert shown == counted
    severities = [severity for _, _, _, severity in rows]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)  # errors first
    assert rows[0][:2] == ("10", "PKG011")  # then the most frequent
    assert lines_of(run("check", "Dell", "-q", "--statistics", cwd=round_copy, columns=100).stdout)[0].split() == [
        "count",
        "code",
        "name",
        "severity",
    ]


@pytest.mark.sample
def test_machine_formats_keep_every_finding(round_copy):
    break_line(round_copy / BERT / "result_3.txt", 64)
    report = json.loads(run("check", "Dell", "--format", "json", cwd=round_copy).stdout)
    schema = json.loads((Path(causes.__file__).parents[1] / "schemas/report-v1.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert sum(report["summary"][s] for s in ("error", "warning", "info")) == len(report["findings"])
    assert report["summary"]["info"] > 0 and len([f for f in report["findings"] if f["caused_by"]]) >= 3
    sarif = json.loads(run("check", "Dell", "--format", "sarif", cwd=round_copy).stdout)
    assert len(sarif["runs"][0]["results"]) == len(report["findings"])


# -- the causes, as a mechanism ---------------------------------------------------------------------


def _finding(rule: str, path: str | None, benchmark: str | None = "bert", line: int | None = None) -> Finding:
    return Finding(rule, "x", Severity.ERROR, f"{rule} at {path}", path, line, "S", "sys", benchmark)


class _Cause(Rule):
    code, name, summary, severity, scope = "TST001", "cause", "A cause.", Severity.ERROR, "run"


class _Effect(Rule):
    code, name, summary, severity, scope = "TST002", "effect", "An effect.", Severity.ERROR, "run"
    follows_from = frozenset({"TST001"})


class _Loop(Rule):
    code, name, summary, severity, scope = "TST003", "loop", "Follows from its effect.", Severity.ERROR, "run"
    follows_from = frozenset({"TST002"})


def test_a_finding_follows_only_from_a_declared_cause_at_its_place():
    cause = _finding("TST001", "r/s/bert/result_1.txt", line=3)
    found = [
        cause,
        _finding("TST002", "r/s/bert/result_1.txt"),  # the same file
        _finding("TST002", "r/s/bert"),  # the folder that holds the cause
        _finding("TST002", "r/s/bert/result_2.txt"),  # another file: not caused by it
        _finding("TST002", "r/s/bert/result_1.txt", benchmark="ssd"),  # another benchmark
        _finding("TST003", "r/s/bert/result_1.txt"),  # follows from an effect: linked to the root
    ]
    linked = causes.link(found, [_Cause, _Effect, _Loop])
    assert [f.caused_by for f in linked] == [None, cause.fingerprint, cause.fingerprint, None, None, cause.fingerprint]
    assert [dataclasses.replace(f, caused_by=None) for f in linked] == found  # nothing else changes or goes


def test_the_checked_folder_holds_every_file():
    cause = _finding("TST001", "result_1.txt", line=3)  # PATH is the benchmark folder itself
    linked = causes.link([_finding("TST002", "."), cause], [_Cause, _Effect])
    assert linked[0].caused_by == cause.fingerprint


def test_rules_that_follow_from_each_other_keep_one_cause():
    class Back(_Cause):
        follows_from = frozenset({"TST002"})

    one, other = _finding("TST001", "r/s/bert/result_1.txt"), _finding("TST002", "r/s/bert/result_1.txt")
    linked = causes.link([one, other], [Back, _Effect])
    assert [f.caused_by for f in linked] == [None, one.fingerprint]


# -- locations that open ------------------------------------------------------------------------------


@pytest.mark.sample
@pytest.mark.parametrize("where", ["round", "above the round", "absolute PATH"])
def test_locations_open_from_the_current_folder(round_copy, where):
    break_line(round_copy / BERT / "result_3.txt", 64)
    (round_copy / "Dell/results/XE9680x8H100-SXM-80GB/gnn").rename(
        round_copy / "Dell/results/XE9680x8H100-SXM-80GB/GNN"
    )
    cwd, path = {
        "round": (round_copy, "Dell"),
        "above the round": (round_copy.parent, "v4.1/Dell"),
        "absolute PATH": (round_copy.parent, str(round_copy / "Dell")),
    }[where]
    out = run("check", path, cwd=cwd, columns=300).stdout
    headers = [line for line in lines_of(out) if line and not line[0].isspace() and "/" in line]
    assert any(h.endswith("result_3.txt") for h in headers) and any(h.endswith("/GNN") for h in headers), out
    for header in headers:
        if header.startswith("mlperf-audit "):
            continue
        assert not Path(header).is_absolute() and (cwd / header).exists(), header
    assert f"{path if where != 'absolute PATH' else 'v4.1/Dell'}/results/" in out


@pytest.mark.sample
def test_a_log_file_is_named_as_given(round_copy):
    break_line(round_copy / BERT / "result_3.txt", 64)
    log = f"{BERT}/result_3.txt"
    out = run("check", log, "--ruleset", "training-4.1.0", cwd=round_copy, columns=300).stdout
    assert f" · {log}: 1 result file" in lines_of(out)[0]
    assert re.search(rf"^{re.escape(log)}\n  64: error +LOG005 ", out, re.M), out


@pytest.mark.sample
def test_a_path_outside_the_current_folder_is_shown_as_given(round_copy, tmp_path):
    break_line(round_copy / BERT / "result_3.txt", 64)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run("check", "../v4.1/Dell", cwd=elsewhere, columns=300).stdout
    assert f"../v4.1/{BERT}/result_3.txt" in out and (elsewhere / f"../v4.1/{BERT}/result_3.txt").is_file()


@pytest.mark.sample
def test_score_names_folders_from_the_current_folder(round_copy):
    out = run("score", "v4.1/Dell", cwd=round_copy.parent, columns=300).stdout
    named = re.findall(r"^(\S+): result_0 ", out, re.M)
    assert named and all((round_copy.parent / folder).is_dir() for folder in named), out


# -- the terminal's width ------------------------------------------------------------------------------


def _too_long(text: str, width: int) -> list[str]:
    """Lines wider than `width` but an unbreakable token (a path to open)."""
    return [line for line in lines_of(text) if len(line) > width and " " in line.strip()]


@pytest.mark.sample
@pytest.mark.parametrize("width", [60, 80])
@pytest.mark.parametrize(
    "argv",
    [
        ("check", "Dell"),
        ("check", "Dell", "-v", "--statistics"),
        ("check", "Dell", "--score"),
        ("score", "Dell"),
        ("audit", "Dell"),
        ("compare", "Dell", "Dell"),
        ("rules",),
    ],
    ids=lambda argv: " ".join(argv),
)
def test_output_fits_the_width(round_copy, width, argv):
    break_line(round_copy / BERT / "result_3.txt", 64)
    result = run(*argv, cwd=round_copy, columns=width)
    assert result.stdout.strip()
    assert _too_long(result.stdout, width) == []


@pytest.mark.sample
def test_a_pipe_gets_width_80_and_every_word(round_copy):
    break_line(round_copy / BERT / "result_3.txt", 64)
    text = run("check", "Dell", "-v", cwd=round_copy).stdout
    assert _too_long(text, 80) == []
    report = json.loads(run("check", "Dell", "--format", "json", cwd=round_copy).stdout)
    words = " ".join(text.split())
    for finding in report["findings"]:  # wrapped, never cut
        assert " ".join(finding["message"].split()) in words


# -- colour --------------------------------------------------------------------------------------------


@pytest.mark.sample
def test_colour_only_on_a_terminal_and_as_the_environment_says(round_copy):
    break_line(round_copy / BERT / "result_3.txt", 64)
    argv = ("check", "Dell", "--no-progress")
    assert ESCAPE not in run(*argv, cwd=round_copy).stdout  # a pipe
    assert ESCAPE in run(*argv, cwd=round_copy, FORCE_COLOR="1").stdout
    assert ESCAPE not in run(*argv, cwd=round_copy, FORCE_COLOR="1", NO_COLOR="1").stdout
    code, written = on_terminal(*argv, cwd=round_copy)
    assert code == 1 and "\x1b[33mwarning" in written and "\x1b[1;31m2 error(s)" in written  # by severity
    assert ESCAPE not in on_terminal(*argv, cwd=round_copy, NO_COLOR="1")[1]
    assert ESCAPE not in on_terminal(*argv, cwd=round_copy, TERM="dumb")[1]


def test_data_is_never_read_as_markup(tmp_path, fixtures):
    package = tmp_path / "pkg"
    shutil.copytree(fixtures / "broken" / "two-runs-without-run-stop", package)
    folder = next(package.glob("*/results/*/ssd"))
    folder.rename(folder.with_name("[red]ssd"))
    out = run("check", "pkg", cwd=tmp_path, FORCE_COLOR="1").stdout
    assert "results/fx_8xh100/[red]ssd" in out


# -- progress ------------------------------------------------------------------------------------------


_PROGRESS = re.compile(r"mlperf-audit: (checking|scoring)|\d+/\d+ result files")


@pytest.mark.sample
@pytest.mark.parametrize(
    "argv",
    [
        ("check", "Dell", "-j", "2"),
        ("check", "Dell", "-j", "1"),
        ("score", "Dell"),
        ("audit", "Dell"),
        ("compare", "Dell", "Dell"),
        ("report", "Dell", "-o", "../report.html"),
    ],
    ids=lambda argv: " ".join(argv),
)
def test_progress_is_shown_on_a_terminal_and_cleared(round_copy, argv):
    code, written = on_terminal(*argv, "--no-cache", cwd=round_copy)
    assert code in (0, 1), written
    assert _PROGRESS.search(written), written  # it was drawn
    screen = final_screen(written)
    assert not [line for line in screen if _PROGRESS.search(line)], "\n".join(screen)
    assert any(line.strip() for line in screen)  # the output itself is left
    code, quiet = on_terminal(*argv, "--no-cache", "--no-progress", cwd=round_copy)
    assert not _PROGRESS.search(quiet)


@pytest.mark.sample
def test_no_progress_in_a_pipe(round_copy):
    result = run("score", "Dell", cwd=round_copy)
    assert result.returncode == 0 and not _PROGRESS.search(result.stderr) and ESCAPE not in result.stderr


# -- whole rounds ------------------------------------------------------------------------------------


ROUNDS = published_rounds()


@pytest.mark.skipif("4.1" not in ROUNDS, reason="the v4.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_a_whole_round_fits_a_few_screens():
    result = run("check", ROUNDS["4.1"].name, "-j", "1", cwd=ROUNDS["4.1"].parent)
    assert len(lines_of(result.stdout)) <= 200, len(lines_of(result.stdout))  # 2,600 lines before
    dell = run("check", "Dell", "-j", "1", cwd=ROUNDS["4.1"])
    assert len(lines_of(dell.stdout)) <= 12, dell.stdout  # its one error; 373 lines before
    assert re.search(r"^Dell/results/\S+$", dell.stdout, re.M)


@pytest.mark.skipif("5.1" not in ROUNDS, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_eight_ranks_logging_the_same_keys_are_one_finding_per_rule():
    folder = "Dell/results/1xXE9680Lx8B200-SXM-180GB/llama2_70b_lora"
    out = run("check", folder, "-j", "1", cwd=ROUNDS["5.1"], columns=100).stdout
    report = json.loads(run("check", folder, "-j", "1", "--format", "json", cwd=ROUNDS["5.1"]).stdout)
    warned = [f for f in report["findings"] if f["severity"] == "warning"]
    rules = {f["rule"] for f in warned}
    assert len(warned) >= 100 and len(rules) <= 12
    assert len(re.findall(r" warning [A-Z]+\d+ ", out)) == len(rules), out
    assert len(lines_of(out)) <= 8 * len(rules), out
