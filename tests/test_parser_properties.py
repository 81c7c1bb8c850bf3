"""Property-based tests of the parser (it never raises, and it round-trips what mllog writes) and of
the rules (no rule crashes on a clean log mutated at random)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mlperf_audit.reading.parser import TOKEN, parse_log

#: The suite explores a fixed set of examples, so that CI is repeatable; to hunt for new crashes, run
#: `MLPERF_AUDIT_EXPLORE=2000 make test` (random examples, as many as asked).
EXPLORE = int(os.environ.get("MLPERF_AUDIT_EXPLORE", "0"))

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
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


@settings(
    max_examples=EXPLORE or 300, derandomize=not EXPLORE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.binary(max_size=200) | st.builds(lambda b: TOKEN + b, st.binary(max_size=200)), max_size=20))
@example([b"\r\x00"])  # CR alone ends the first line: the NUL is on line 2 (found by a random run on 3.12)
def test_arbitrary_bytes_never_raise(lines):
    data = b"\n".join(lines)
    run = parse_bytes(data)
    # a file without LF whose lines end with CR alone has those lines, as universal newlines read them
    ends = b"\r" if b"\n" not in data and b"\r" in data else b"\n"
    physical_lines = data.count(ends) + (1 if data and not data.endswith(ends) else 0)
    for issue in run.issues:
        assert issue.line is None or 1 <= issue.line <= physical_lines
    assert [e.line for e in run.events] == sorted({e.line for e in run.events})


@settings(max_examples=EXPLORE or 200, derandomize=not EXPLORE, deadline=None)
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


# ---------------------------------------------------------------------------------------------
# The rules on generated logs: a clean log mutated at random never makes a rule crash.
# ---------------------------------------------------------------------------------------------

CLEAN = Path(__file__).resolve().parent.parent / "fixtures" / "packages" / "clean" / "Fixture"
hostile_values = (
    json_values
    | st.integers(-(10**400), 10**400)
    | st.floats()  # NaN and infinities, written as the NaN/Infinity literals
    | st.sampled_from(["success", "aborted", "FID", "CLIP", "", "closed", "open", "ssd"])
)
META_NAMES = ["epoch_num", "samples_count", "step_num", "status", "metric", "epoch_count", "first_epoch_num"]
mutation = st.one_of(
    st.tuples(st.just("value"), st.integers(0, 10**6), hostile_values),
    st.tuples(st.just("meta"), st.integers(0, 10**6), st.tuples(st.sampled_from(META_NAMES), hostile_values)),
    st.tuples(st.just("drop"), st.integers(0, 10**6), st.none()),
    st.tuples(st.just("repeat"), st.integers(0, 10**6), st.none()),
    st.tuples(st.just("time"), st.integers(0, 10**6), st.integers(-(2**60), 2**60) | st.floats()),
)


def _mutated(records: list[dict], mutations: list[tuple]) -> str:
    records = [dict(record, metadata=dict(record["metadata"])) for record in records]
    for kind, where, payload in mutations:
        index = where % len(records)
        if kind == "value":
            records[index]["value"] = payload
        elif kind == "meta":
            records[index]["metadata"][payload[0]] = payload[1]
        elif kind == "drop" and len(records) > 1:
            del records[index]
        elif kind == "repeat":
            records.insert(index, records[index])
        elif kind == "time":
            records[index]["time_ms"] = payload
    return "".join(f":::MLLOG {json.dumps(record)}\n" for record in records)


def _records(path: Path) -> list[dict]:
    return [json.loads(line.split(":::MLLOG ", 1)[1]) for line in path.read_text().splitlines() if ":::MLLOG " in line]


@settings(
    max_examples=EXPLORE or 60, derandomize=not EXPLORE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.sampled_from(["ssd", "bert", "stable_diffusion", "llama2_70b_lora"]),
    st.lists(mutation, min_size=1, max_size=6),
    st.lists(mutation, max_size=3),
)
def test_rules_never_crash_on_mutated_logs(benchmark, first, second):
    from mlperf_audit.config import Config
    from mlperf_audit.engine.api import check, score
    from mlperf_audit.engine.plugins import PluginHost

    global _HOST
    _HOST = _HOST or PluginHost()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "Fixture"
        shutil.copytree(CLEAN / "systems", root / "systems")
        (source,) = (CLEAN / "results").glob(f"*/{benchmark}")  # gpt3 runs on its own system
        system = source.parent.name
        target = root / "results" / system / benchmark
        shutil.copytree(source, target)
        shutil.copytree(CLEAN / "benchmarks" / benchmark, root / "benchmarks" / benchmark)  # REP rules too
        clean = _records(source / "result_0.txt")
        (target / "result_0.txt").write_text(_mutated(clean, first))
        (target / "result_1.txt").write_text(_mutated(clean, second))
        report = check(root, Config(), _HOST)
        crashes = [f.message for f in report.findings if f.rule == "CHK001"]
        assert not crashes, crashes
        score(root, Config(), _HOST)  # raises on a crash


_HOST = None
