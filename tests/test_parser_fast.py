"""The compiled fast path of the parser against the tolerant line-by-line path.

`parser._parse_data` decodes the records mllog writes with msgspec and jumps between `:::MLLOG `
tokens; anything unusual goes to `_Reader`, the line-by-line `json.loads` path that reads and reports
every problem. `_parse_stream` is that path alone, so for any bytes both must give the same events
(values, types, lines), the same issues in the same order, the same line count and the same launch.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import typed
from mlperf_audit.reading import parser
from mlperf_audit.reading.parser import LAUNCH_TOKEN, TOKEN

#: A fixed set of examples, so that CI is repeatable; `MLPERF_AUDIT_EXPLORE=N` hunts with N random ones.
EXPLORE = int(os.environ.get("MLPERF_AUDIT_EXPLORE", "0"))

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "data"


def both_paths(data: bytes):
    """(fast, tolerant): events, issues, line count and launch from each path."""
    results = []
    for read in (
        lambda events, sink, launches: parser._parse_data(data, "result_0.txt", events, sink, launches),
        lambda events, sink, launches: parser._parse_stream(io.BytesIO(data), "result_0.txt", events, sink, launches),
    ):
        events: list = []
        launches: list = []
        sink = parser._IssueSink("result_0.txt")
        lines = read(events, sink, launches)
        results.append(
            (
                [
                    (e.key, typed(e.value), repr(e.time_ms), e.event_type, e.namespace, typed(dict(e.metadata)), e.line)
                    for e in events
                ],
                sink.finish(),
                lines,
                launches[:1],
            )
        )
    return results


RECORD = '{"namespace": "", "time_ms": 1727670929104, "event_type": "POINT_IN_TIME", "key": "opt_name", "value": %s, "metadata": {"file": "train.py", "lineno": 257%s}}'


@pytest.mark.parametrize(
    "value, metadata",
    [
        ('"adamw"', ""),
        ("123456789012345678901234567890", ""),  # beyond 64 bits: both read the integer
        ("1e400", ""),  # overflows a float: msgspec refuses, json.loads reports infinity
        ("-1e400", ""),
        ("NaN", ""),
        ("Infinity", ""),
        ('"\\ud800"', ""),  # a lone surrogate: msgspec refuses, json.loads keeps it
        ('"\\udc00x"', ""),
        ('"a:b"', ""),  # a colon inside a string: the member count cannot tell, the tolerant path reads it
        ('{"a": 1, "a": 2}', ""),  # a repeated name inside the value
        ('[{"a": 1}, {"b": [1, {"c": 2, "c": 3}]}]', ""),
        ("1", ', "file": "again.py"'),  # a repeated name in the metadata
        ("1", ', "x": {"y": 1, "y": 2}'),
        ('"x"', ', "samples_count": 1.5e308'),
        ("true", ""),
        ("null", ', "nested": [[[[1]]]]'),
        ('"\\u00e9\\n\\t\\"\\\\"', ""),
    ],
)
def test_the_fast_path_reads_a_record_as_json_loads_does(value, metadata):
    line = (RECORD % (value, metadata)).encode()
    fast, tolerant = both_paths(b"noise\n:::MLLOG " + line + b"\n")
    assert fast == tolerant
    assert fast[0] or fast[1]  # an event or an issue: nothing was dropped


@pytest.mark.parametrize(
    "text",
    [
        # the record's own names repeated, written with the whitespace JSON allows before a colon
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}, "key" : "b"}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {"f" :1, "f"\t: 2}}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": {"v"\r:1, "v": 1}, "metadata": {}}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}, "extra": 1}',
        '{"namespace": "", "time_ms": 9007199254740993, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}}',
        '{"namespace": "", "time_ms": true, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}}',
        '{"namespace": "", "time_ms": "12", "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}}',
        '{"namespace": 3, "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}}',
        '{"namespace": "", "time_ms": 1, "event_type": "OTHER", "key": "a", "value": 1, "metadata": {}}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "", "value": 1, "metadata": {}}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "metadata": {}}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": []}',
        "[1, 2]",
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": '
        + "[" * 70
        + "]" * 70
        + ', "metadata": {}}',
        '{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "a", "value": 1, "metadata": {}',  # cut
    ],
)
def test_every_unusual_record_is_read_and_reported_as_before(text):
    for ending in (b"\n", b"\r\n", b""):
        fast, tolerant = both_paths(b"x\n:::MLLOG " + text.encode() + ending)
        assert fast == tolerant


def test_lines_several_records_launch_and_non_utf8_agree():
    good = (RECORD % ('"a"', "")).encode()
    data = b"\n".join(
        [
            b"",
            b"+ echo ':::DLPAL nvcr.io/x:1 123 8 node[1-8] cluster DGXH100_8x8'",
            b"[1,0]<stdout>:" + TOKEN + good,
            TOKEN + good + b" " + TOKEN + good,  # two records on one line
            b"\r",
            LAUNCH_TOKEN + b"second launch is ignored",
            TOKEN + good.replace(b"adamw", b"\xff\xfe"),  # not UTF-8
            TOKEN + good + b"\r",
            b"tail without newline " + TOKEN + good,
        ]
    )
    fast, tolerant = both_paths(data)
    assert fast == tolerant
    assert [event[-1] for event in fast[0]] == [3, 4, 7, 8, 9]
    assert fast[2] == 9 and fast[3]


def test_a_file_with_a_line_too_long_takes_the_line_by_line_path(monkeypatch):
    monkeypatch.setattr(parser, "MAX_LINE_BYTES", 64)
    good = (RECORD % ("1", "")).encode()
    fast, tolerant = both_paths(b"short\n" + b"x" * 100 + b"\n" + TOKEN + good + b"\n")
    assert fast == tolerant
    assert any(issue.problem == parser.Problem.LINE_TOO_LONG for issue in fast[1])


mllog_like = st.fixed_dictionaries(
    {
        "namespace": st.just(""),
        "time_ms": st.integers(-(2**60), 2**60) | st.floats(allow_nan=True, allow_infinity=True),
        "event_type": st.sampled_from(["INTERVAL_START", "INTERVAL_END", "POINT_IN_TIME", "X"]),
        "key": st.text(max_size=12),
        "value": st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
            max_leaves=8,
        ),
        "metadata": st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=6), max_size=3),
    }
)


def _written(record: dict, separators: tuple[str, str], repeat: str | None) -> str:
    text = json.dumps(record, separators=separators)
    if repeat is not None:  # a name written twice: json.dumps cannot, so splice one in
        text = text[:-1] + f'{separators[0]}"{repeat}"{separators[1]}0}}'
    return text


@settings(
    max_examples=EXPLORE or 400, derandomize=not EXPLORE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.lists(
        st.tuples(
            mllog_like,
            st.sampled_from([(", ", ": "), (",", ":"), (", ", " : "), (",", "\t:")]),
            st.none() | st.sampled_from(["key", "value", "metadata", "other"]),
            st.sampled_from(["", "noise ", "[1,0]<stdout>:"]),
            st.booleans(),
        ),
        max_size=12,
    ),
    st.sampled_from([b"\n", b"\r\n"]),
)
def test_both_paths_agree_on_generated_logs(items, newline):
    lines = []
    for record, separators, repeat, prefix, with_noise in items:
        if with_noise:
            lines.append(b"some framework output: {'a': 1}")
        lines.append(prefix.encode() + TOKEN + _written(record, separators, repeat).encode())
    fast, tolerant = both_paths(newline.join(lines))
    assert fast == tolerant


@settings(
    max_examples=EXPLORE or 300, derandomize=not EXPLORE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.binary(max_size=120) | st.builds(lambda b: TOKEN + b, st.binary(max_size=120)), max_size=15))
def test_both_paths_agree_on_arbitrary_bytes(lines):
    fast, tolerant = both_paths(b"\n".join(lines))
    assert fast == tolerant


def test_both_paths_agree_on_every_real_log():
    """Every result file of the shared samples (v4.1 and v5.0 with power logs)."""
    files = sorted(SAMPLES.glob("*/*/results/*/*/result_*.txt"))
    if not files:
        if os.environ.get("MLPERF_AUDIT_REQUIRE_SAMPLE"):
            pytest.fail(f"no result files under {SAMPLES}")
        pytest.skip(f"no result files under {SAMPLES}")
    for path in files:
        fast, tolerant = both_paths(path.read_bytes())
        assert fast == tolerant, path


def test_an_event_of_the_fast_path_is_a_log_event_in_every_respect():
    """The fast path builds events unfrozen and then makes them `LogEvent`s (`_LogEventBeingBuilt`):
    nothing tells them from events built by `LogEvent(...)`."""
    import dataclasses
    from types import MappingProxyType

    from mlperf_audit.model import LogEvent

    events: list = []
    line = b':::MLLOG {"namespace": "", "time_ms": 5, "event_type": "POINT_IN_TIME", "key": "seed", '
    line += b'"value": 7, "metadata": {"file": "t.py", "lineno": 3}}\n'
    parser._parse_data(b"noise\n" + line, "r.txt", events, parser._IssueSink("r.txt"), [])
    (event,) = events
    built = LogEvent("seed", 7, 5.0, "POINT_IN_TIME", "", MappingProxyType({"file": "t.py", "lineno": 3}), "r.txt", 2)
    assert type(event) is LogEvent and dataclasses.is_dataclass(event)
    assert event == built and hash(event.key) == hash(built.key) and repr(event) == repr(built)
    assert dataclasses.fields(event) == dataclasses.fields(built)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.key = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del event.value  # type: ignore[misc]
    assert dataclasses.replace(event, line=9).line == 9 and event.meta("lineno") == 3
    assert not hasattr(event, "__dict__")


def test_a_file_dense_with_tokens_is_read_a_line_at_a_time(tmp_path):
    """Cutting a file at every token makes an object of each: a hostile file of tokens, hundreds to
    a line, took seven times the time and three times the memory of the old scan (a red team's
    case). It takes the line-by-line path instead, with the same findings."""
    import tracemalloc

    from mlperf_audit.reading.parser import parse_log

    line = b"noise " + b":::MLLOG xy " * 2000 + b'"tail"\n'
    record = b':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "k", "value": 1, '
    record += b'"metadata": {"file": "f", "lineno": 1}}\n'
    data = record + line * 400 + record
    assert parser._dense_with_tokens(data) and not parser._dense_with_tokens(record * 1000 + b"x" * 64000)
    log = tmp_path / "result_0.txt"
    log.write_bytes(data)
    tracemalloc.start()
    try:
        run = parse_log(log, "result_0.txt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(data)  # the file and a line at a time (cut at every token: nearly five times the file)
    assert [(e.key, e.line) for e in run.events] == [("k", 1), ("k", 402)]
    streamed: list = []
    sink = parser._IssueSink("result_0.txt")
    assert parser._parse_stream(io.BytesIO(data), "result_0.txt", streamed, sink, []) == run.line_count == 402
    assert [str(i) for i in sink.finish()] == [str(i) for i in run.issues] and streamed == list(run.events)
