"""Property-based tests of the parser: it never raises, and it round-trips what mllog writes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlperf_audit.parser import TOKEN, parse_log

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=10)
records = st.fixed_dictionaries(
    {
        "namespace": st.just(""),
        "time_ms": st.integers(0, 2**45),
        "event_type": st.sampled_from(["INTERVAL_START", "INTERVAL_END", "POINT_IN_TIME"]),
        "key": st.text(st.characters(categories=["L", "N"], include_characters="_"), min_size=1, max_size=30),
        "value": json_values,
        "metadata": st.dictionaries(st.text(max_size=10), json_values, max_size=4),
    }
).filter(lambda record: ":::MLLOG" not in json.dumps(record))  # a token inside a string: LOG015's case, as officially
noise = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\n\r\x00"), max_size=40).filter(
    lambda text: ":::MLLOG " not in text
)


def parse_bytes(data: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "result_0.txt"
        path.write_bytes(data)
        return parse_log(path, "result_0.txt")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=200) | st.builds(lambda b: TOKEN + b, st.binary(max_size=200)), max_size=20))
def test_arbitrary_bytes_never_raise(lines):
    data = b"\n".join(lines)
    run = parse_bytes(data)
    physical_lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    for issue in run.issues:
        assert issue.line is None or 1 <= issue.line <= physical_lines
    assert [e.line for e in run.events] == sorted({e.line for e in run.events})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(noise, records), min_size=1, max_size=15), st.booleans())
def test_valid_records_round_trip_with_physical_lines(items, with_noise_lines):
    lines, expected = [], []
    for prefix, record in items:
        if with_noise_lines:
            lines.append(prefix)
        lines.append(prefix + ":::MLLOG " + json.dumps(record))
        expected.append((len(lines), record))
    run = parse_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    assert run.issues == ()
    assert [(e.line, e.key, e.value, dict(e.metadata), e.time_ms, e.event_type) for e in run.events] == [
        (line, r["key"], r["value"], r["metadata"], float(r["time_ms"]), r["event_type"]) for line, r in expected
    ]
