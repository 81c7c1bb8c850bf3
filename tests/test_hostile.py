"""The hostile corpus: each entry gives a finding or a clear usage error, with the documented exit
code, never a traceback or a hang. (Parser-level entries: tests/test_parser.py, one test each.)"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

LINE = ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "seed", "value": 1, "metadata": {}}\n'


@pytest.fixture
def package(tmp_path, fixtures) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(fixtures / "broken" / "run-aborted", root)
    return root


def run(cli, *argv):
    result = cli(*argv)
    assert "Traceback" not in result.out + result.err
    return result


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("truncated", LINE + LINE[:40], "truncated"),
        ("empty", "", "empty"),
        ("binary", b"\x00\x01\x02" * 100, "binary"),
        ("invalid-utf8", LINE.replace("seed", "s\udce9ed").encode("utf-8", "surrogateescape"), "not UTF-8"),
        ("nan", LINE.replace('"value": 1', '"value": NaN'), "NaN"),
        ("infinity", LINE.replace('"value": 1', '"value": -Infinity'), "Infinity"),
        ("huge-number", LINE.replace('"value": 1', '"value": ' + "9" * 5000), "not valid JSON"),
        ("huge-time", LINE.replace('"time_ms": 1', '"time_ms": ' + "9" * 400), "not a finite number"),
        ("duplicate-keys", LINE.replace('"metadata": {}', '"metadata": {"a": 1, "a": 2}'), "repeats the name"),
        ("deep-json", ":::MLLOG " + "[" * 100_000 + "]" * 100_000 + "\n", "too deeply"),
        ("20mb-line", ":::MLLOG " + "x" * (20 << 20) + "\n", "longer than"),
    ],
)
def test_hostile_log(cli, tmp_path, name, content, message):
    log = tmp_path / f"result_{name}.txt"  # named as a result file: checked as a log, however broken
    log.write_bytes(content) if isinstance(content, bytes) else log.write_text(content, encoding="utf-8")
    result = run(cli, "check", str(log), "--format", "json")
    assert result.code in (0, 1)
    assert any(message in f["message"] for f in json.loads(result.out)["findings"]), name


def test_huge_integers_in_a_package(cli, package, tmp_path):
    """400-digit integers parse as JSON but overflow a float: every command reports, none crashes."""
    huge = "9" * 400
    for log in package.rglob("result_*.txt"):
        text = log.read_text()
        for name in ("epoch_num", "samples_count"):
            text = text.replace(f'"{name}": ', f'"{name}": {huge}, "_was_{name}": ')
        text = text.replace(
            '"key": "global_batch_size", "value": ', f'"key": "global_batch_size", "value": {huge}, "_was": '
        )
        log.write_text(text)
    for command in (["check"], ["score"], ["audit"], ["report", "-o", str(tmp_path / "r.html")]):
        result = run(cli, *command, str(package))
        assert result.code in (0, 1), (command, result.err)
        assert "internal error" not in result.err, (command, result.err)


@pytest.mark.parametrize(
    "key, value",
    [
        ("eval_accuracy", "[]"),  # FOR004 fingerprinted values with hash()
        ("submission_benchmark", "[]"),  # RCP, FOR001-003 put it in sets
        ("submission_benchmark", '"' + "x" * 400 + '"'),  # the compliance rule file name: too long to open
        ("submission_benchmark", '"../../../etc/passwd"'),  # ... or a path out of the rules folder
        ("submission_org", "[]"),  # SYS004
        ("global_batch_size", "[]"),  # the RCP lookup compares it
        ("opt_base_learning_rate", "9" * 400),  # HYP002 compares it as a float
    ],
)
def test_odd_values_found_by_the_property_test(cli, package, key, value):
    """Regressions found by tests/test_parser_properties.py: each crashed a rule (CHK001)."""
    for log in package.rglob("result_*.txt"):
        lines = []
        for line in log.read_text().splitlines(keepends=True):
            if f'"key": "{key}"' in line:
                head, _, tail = line.partition('"value": ')
                rest = tail[tail.index(', "metadata"') :]
                line = f'{head}"value": {value}{rest}'
            lines.append(line)
        log.write_text("".join(lines))
    for command in ("check", "score", "audit"):
        result = run(cli, command, str(package), "--format", "json")
        assert result.code in (0, 1), (command, result.err)
        if command == "check":
            assert not [f for f in json.loads(result.out)["findings"] if f["rule"] == "CHK001"]


@pytest.mark.parametrize(
    "content, code", [("{not json", "SYS001"), ("[1, 2]", "SYS001"), ('"a string"', "SYS001"), ("{}", "SYS002")]
)
def test_hostile_system_description(cli, package, content, code):
    (package / "Fixture" / "systems" / "fx_8xh100.json").write_text(content)
    result = run(cli, "check", str(package), "--format", "json")
    assert result.code == 1 and code in {f["rule"] for f in json.loads(result.out)["findings"]}


def test_symlink_loop_fifo_and_unreadable(cli, package, monkeypatch):
    folder = package / "Fixture" / "results" / "fx_8xh100" / "ssd"
    os.symlink("loop", folder / "loop")
    os.mkfifo(folder / "result_7.txt")
    real_open = open

    def deny(file, *args, **kwargs):
        if str(file).endswith("result_3.txt"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    result = run(cli, "check", str(package), "--format", "json")
    rules = {f["rule"] for f in json.loads(result.out)["findings"]}
    assert result.code == 1 and {"PKG003", "PKG002", "LOG001"} <= rules


def test_result_folder_with_10000_files(cli, package):
    folder = package / "Fixture" / "results" / "fx_8xh100" / "ssd"
    for index in range(5, 10_005):
        (folder / f"result_{index}.txt").write_text(LINE)
    result = run(cli, "check", str(package), "--format", "json", "--select", "PKG012,LOG,EVT")
    findings = json.loads(result.out)["findings"]
    assert result.code == 1
    assert any(f["rule"] == "PKG012" and "10005 result_*.txt" in f["message"] for f in findings)


@pytest.mark.parametrize("path", ["missing", "fifo"])
def test_unusable_paths_exit_2(cli, tmp_path, path):
    if path == "fifo":
        os.mkfifo(tmp_path / "fifo")
    result = run(cli, "check", str(tmp_path / path))
    assert result.code == 2 and "mlperf-audit: error:" in result.err


def checksums(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() + str(p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_read_only_check_score_audit_report(cli, package, tmp_path):
    before = checksums(package)
    assert run(cli, "check", str(package), "--format", "sarif", "--report", f"junit:{tmp_path / 'j.xml'}").code in (
        0,
        1,
    )
    assert run(cli, "score", str(package), "--format", "csv", "-o", str(tmp_path / "s.csv")).code == 0
    assert run(cli, "audit", str(package), "--format", "json").code in (0, 1)
    assert run(cli, "report", str(package), "-o", str(tmp_path / "r.html")).code in (0, 1)
    assert run(cli, "compare", str(package), str(package)).code == 0
    assert checksums(package) == before
