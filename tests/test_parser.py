"""The parser: physical line numbers, tolerance of real-log noise, and every hostile input."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path

import pytest

from mlperf_audit import Problem
from mlperf_audit.reading.parser import MAX_ISSUES_PER_CODE, parse_log

RECORD = {
    "namespace": "",
    "time_ms": 1727000000000,
    "event_type": "POINT_IN_TIME",
    "key": "seed",
    "value": 7,
    "metadata": {"file": "train.py", "lineno": 3},
}


def line(**changes: object) -> str:
    return ":::MLLOG " + json.dumps({**RECORD, **changes})


def parse_text(tmp_path: Path, text: str | bytes) -> object:
    path = tmp_path / "result_0.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return parse_log(path, "result_0.txt")


def codes(run) -> list[str]:
    return [issue.problem for issue in run.issues]


def test_physical_lines_with_prefixes_and_shell_output(tmp_path):
    text = (
        "\n".join(
            [
                "+ echo 'Beginning trial 1 of 5'",
                "Beginning trial 1 of 5",
                "[1,0]<stdout>:" + line(key="init_start", value=None),
                "",
                "some output " + line(key="run_start", value=None),
            ]
        )
        + "\n"
    )
    run = parse_text(tmp_path, text)
    assert codes(run) == []
    assert [(e.key, e.line) for e in run.events] == [("init_start", 3), ("run_start", 5)]
    assert run.line_count == 5
    assert run.events[0].file == "result_0.txt"
    assert run.events[0].metadata["lineno"] == 3


def test_event_fields(tmp_path):
    run = parse_text(
        tmp_path, line(event_type="INTERVAL_END", key="run_stop", value=None, metadata={"status": "success"}) + "\n"
    )
    (event,) = run.events
    assert event.key == "run_stop" and event.event_type == "INTERVAL_END" and event.namespace == ""
    assert event.time_ms == 1727000000000.0 and event.value is None
    assert event.meta("status") == "success"
    with pytest.raises(TypeError):
        event.metadata["status"] = "aborted"  # the model is immutable


def test_empty_file(tmp_path):
    run = parse_text(tmp_path, b"")
    assert codes(run) == [Problem.EMPTY] and run.events == ()


def test_binary_file(tmp_path):
    run = parse_text(tmp_path, b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4)
    assert codes(run) == [Problem.BINARY]
    assert "NUL byte" in run.issues[0].message


def test_invalid_utf8_is_read_as_latin1(tmp_path):
    raw = (
        line(key="submission_platform", value="caf").replace('"caf"', '"caf\udce9"').encode("utf-8", "surrogateescape")
        + b"\n"
    )
    run = parse_text(tmp_path, raw)
    assert codes(run) == [Problem.NOT_UTF8]
    assert run.events[0].value == "café"
    assert run.issues[0].line == 1


def test_truncated_last_line(tmp_path):
    text = line(key="run_start", value=None) + "\n" + line(key="run_stop", value=None)[:70]
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.TRUNCATED]
    assert run.issues[0].line == 2
    assert [e.key for e in run.events] == ["run_start"]


def test_malformed_line_in_the_middle(tmp_path):
    text = "\n".join([line(), line()[:-1], line()]) + "\n"
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.MALFORMED_JSON]
    assert run.issues[0].line == 2 and "column" in run.issues[0].message
    assert len(run.events) == 2


@pytest.mark.parametrize("missing", ["key", "value", "metadata", "time_ms"])
def test_missing_required_field(tmp_path, missing):
    record = {k: v for k, v in RECORD.items() if k != missing}
    run = parse_text(tmp_path, ":::MLLOG " + json.dumps(record) + "\n")
    assert codes(run) == [Problem.MISSING_FIELD]
    assert repr(missing) in run.issues[0].message and run.events == ()


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"time_ms": None}, Problem.BAD_FIELD_TYPE),
        ({"time_ms": "soon"}, Problem.BAD_FIELD_TYPE),
        ({"time_ms": True}, Problem.BAD_FIELD_TYPE),
        ({"metadata": []}, Problem.BAD_FIELD_TYPE),
        ({"key": 7}, Problem.BAD_FIELD_TYPE),
        ({"time_ms": "1727000000000"}, Problem.NONSTANDARD_FIELD),
        ({"event_type": "FOO"}, Problem.NONSTANDARD_FIELD),
    ],
)
def test_field_types(tmp_path, changes, expected):
    run = parse_text(tmp_path, line(**changes) + "\n")
    assert codes(run) == [expected]


def test_record_that_is_not_an_object(tmp_path):
    run = parse_text(tmp_path, ":::MLLOG [1, 2, 3]\n")
    assert codes(run) == [Problem.BAD_FIELD_TYPE]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers(tmp_path, literal):
    text = line().replace('"value": 7', f'"value": {literal}') + "\n"
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.NON_FINITE]
    assert literal.lstrip("-") in run.issues[0].message
    assert len(run.events) == 1  # the event is kept; rules see the non-finite value


def test_nan_time_is_unusable(tmp_path):
    run = parse_text(tmp_path, line().replace('"time_ms": 1727000000000', '"time_ms": NaN') + "\n")
    assert set(codes(run)) == {Problem.NON_FINITE, Problem.BAD_FIELD_TYPE} and run.events == ()


def test_huge_integer_is_a_finding(tmp_path):
    text = line().replace('"value": 7', '"value": ' + "9" * 5000) + "\n"
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.MALFORMED_JSON]


def test_20_mb_line(tmp_path):
    text = line() + "\n" + ':::MLLOG {"key": "' + "x" * (20 << 20) + '"}\n' + line() + "\n"
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.LINE_TOO_LONG]
    assert run.issues[0].line == 2
    assert [e.line for e in run.events] == [1, 3]


def test_deeply_nested_json(tmp_path):
    depth = 100_000
    text = ":::MLLOG " + "[" * depth + "]" * depth + "\n" + line() + "\n"
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.TOO_DEEP]
    assert run.issues[0].line == 1 and len(run.events) == 1


def test_duplicate_keys(tmp_path):
    text = line()[:-2] + ', "lineno": 9}}\n'
    run = parse_text(tmp_path, text)
    assert codes(run) == [Problem.DUPLICATE_KEY]
    assert "lineno" in run.issues[0].message
    assert run.events[0].metadata["lineno"] == 9


def test_several_records_on_one_line_keeps_the_last(tmp_path):
    run = parse_text(tmp_path, line(value=1) + line(value=2) + "\n")
    assert codes(run) == [Problem.SEVERAL_RECORDS]
    assert [e.value for e in run.events] == [2]


def test_no_records(tmp_path):
    run = parse_text(tmp_path, "starting\nfailed to start\n")
    assert codes(run) == [Problem.NO_RECORDS]


def test_unreadable_file_is_simulated(tmp_path, monkeypatch):
    path = tmp_path / "result_0.txt"
    path.write_text(line() + "\n")
    real_open = builtins.open

    def deny(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    run = parse_log(path, "result_0.txt")
    assert codes(run) == [Problem.UNREADABLE]
    assert "Permission denied" in run.issues[0].message


def test_file_too_large(tmp_path, monkeypatch):
    import mlperf_audit.reading.parser as parser

    monkeypatch.setattr(parser, "MAX_FILE_BYTES", 100)
    run = parse_text(tmp_path, (line() + "\n") * 3)
    assert codes(run) == [Problem.TOO_LARGE] and run.events == ()


def test_issue_floods_are_capped(tmp_path):
    run = parse_text(tmp_path, "\n".join([line()[:-1]] * 50) + "\n")
    assert len(run.issues) == MAX_ISSUES_PER_CODE + 1
    assert "40 more line(s)" in run.issues[-1].message and "the first at line 1" in run.issues[-1].message


def test_crlf_line_endings(tmp_path):
    run = parse_text(tmp_path, (line() + "\r\n") * 2)
    assert codes(run) == [] and [e.line for e in run.events] == [1, 2]


def test_run_helpers(tmp_path):
    text = "\n".join([line(key="seed", value=1), line(key="seed", value=2), line(key="run_start", value=None)]) + "\n"
    run = parse_text(tmp_path, text)
    assert run.index == 0 and run.name == "result_0.txt"
    assert [e.value for e in run.all("seed")] == [1, 2]
    assert run.first("seed").value == 1 and run.value("missing", "x") == "x"


@pytest.mark.parametrize("length", [0, 1, 99, 100, 101, 5000])
def test_read_at_most_gives_the_file_up_to_one_byte_past_the_limit(tmp_path, monkeypatch, length):
    import io

    from mlperf_audit.limits import read_at_most

    path = tmp_path / "log.txt"
    path.write_bytes(bytes(range(256)) * 20)
    path.write_bytes(path.read_bytes()[:length])
    expected = path.read_bytes()[:101]
    with open(path, "rb") as stream:
        assert read_at_most(stream, 100) == expected
    assert read_at_most(io.BytesIO(path.read_bytes()), 100) == expected  # no file size to go by
    real = os.fstat
    for told in (0, length // 2, length + 7):  # grew or shrank since its size was taken
        monkeypatch.setattr(os, "fstat", lambda fd, told=told: os.stat_result((*real(fd)[:6], told, *real(fd)[7:])))
        with open(path, "rb") as stream:
            assert read_at_most(stream, 100) == expected
        monkeypatch.undo()
