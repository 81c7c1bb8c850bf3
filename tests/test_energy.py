"""Energy of power submissions: per run and per result, equal to the official summarizer's.

The recorded tables in `data/official-summarizer-v5.0-power-sample/` are the official
summarizer's (mlperf-logging 4.1.68) on a fresh, writable copy of
`../shared/data/mlperf-training-v5.0-power-sample`, run in the copy's folder:

    python -m mlperf_logging.package_checker Lenovo training 5.0.0
    python -m mlperf_logging.result_summarizer Lenovo training 5.0.0 --csv out.csv

(`out.csv` and `out_detailed.csv` renamed `Lenovo.csv` and `Lenovo_detailed.csv`; the summarizer
alone writes the same bytes). The summarizer's energy is `_compute_total_power`: per run, the sum
over `power/<run>/node_*.txt` of conversion_eff x (readings in W integrated over ms) x
time-to-train ms / measurement window ms / 1000, plus over `sw_*.txt` of conversion_eff x
interconnect_power_est W x time-to-train ms / 1000, in joules; per result, the olympic mean of the
runs the time score keeps, times the scaling factor.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import official_columns, official_output
from mlperf_audit import listing_order
from mlperf_audit.config import Config
from mlperf_audit.engine.api import score
from mlperf_audit.reading.parser import parse_log
from mlperf_audit_rules.support.work import time_to_train_ms

OFFICIAL = Path(__file__).parent / "data" / "official-summarizer-v5.0-power-sample"
SYSTEM = "SR780aV3-8xB200_SXM_180GB"
POWER_BENCHMARKS = ("bert", "llama2_70b_lora")
RULESET = Config(ruleset="training-5.0.0")


def official_row() -> dict[str, str]:
    (row,) = csv.DictReader(official_output(OFFICIAL, "Lenovo_detailed.csv").open())
    return row


@pytest.mark.sample
def test_csv_tables_are_the_official_ones_byte_for_byte(power_sample, cli, tmp_path):
    out = tmp_path / "scores.csv"
    result = cli("score", str(power_sample / "Lenovo"), "--format", "csv", "-o", str(out))
    assert result.code == 0
    assert "ruleset training-5.0.0, named by the folder" in result.err
    # the summarizer's columns byte for byte, and the one column added last (no invalid result)
    assert official_columns(out.read_text()).encode() == official_output(OFFICIAL, "Lenovo.csv").read_bytes()
    assert (
        official_columns((tmp_path / "scores_detailed.csv").read_text()).encode()
        == official_output(OFFICIAL, "Lenovo_detailed.csv").read_bytes()
    )


@pytest.mark.sample
def test_energy_is_in_the_json_scores(power_sample, cli):
    document = json.loads(cli("score", str(power_sample / "Lenovo"), "--format", "json").out)
    assert document["ruleset"] == "training-5.0.0"
    row = official_row()
    results = {r["benchmark"]: r for r in document["results"]}
    assert set(results) == set(POWER_BENCHMARKS)
    for benchmark, result in results.items():
        assert result["energy_joules"] == float(row[f"{benchmark}:Energy"])
        assert len(result["runs"]) == 10
        assert all(run["energy_joules"] > 0 for run in result["runs"])
        # the existing fields are all still there
        assert {"score_minutes", "scaling_factor", "rcp_status", "gbs", "samples_to_converge"} <= set(result)
    # by hand: bert's mean power is about 9.1 kW (0.94 x node readings), over 3.57 minutes ~ 1.95 MJ
    assert results["bert"]["energy_joules"] == pytest.approx(1_949_216, abs=1)


@pytest.mark.sample
@pytest.mark.parametrize("benchmark", POWER_BENCHMARKS)
def test_every_run_energy_equals_the_official_function(power_sample, host, benchmark):
    from mlperf_logging.result_summarizer.result_summarizer import _compute_total_power

    folder = power_sample / "Lenovo" / "results" / SYSTEM / benchmark
    (result,) = score(folder, RULESET, host)
    for run in result.runs:
        path = folder / run.file.rsplit("/", 1)[-1]
        ttt_ms = time_to_train_ms(parse_log(path, path.name))
        assert run.energy_joules == _compute_total_power(str(folder), str(path), ttt_ms, "5.0.0"), run.file


@pytest.mark.sample
def test_energy_score_is_the_olympic_mean_of_the_kept_runs(power_sample, host):
    (result,) = score(power_sample / "Lenovo" / "results" / SYSTEM / "llama2_70b_lora", RULESET, host)
    kept = sorted((r.minutes, r.energy_joules) for r in result.runs)[1:-1]
    assert result.energy_joules == pytest.approx(sum(e for _, e in kept) / 8 * result.scaling_factor, rel=1e-12)
    assert result.scaling_factor > 1  # the energy is scaled like the time


@pytest.mark.sample
def test_an_archive_scores_the_same_energy(power_sample, host, tmp_path):
    archive = tmp_path / "lenovo.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(power_sample / "Lenovo", arcname="Lenovo")
    packed = {r.benchmark: r for r in score(archive, RULESET, host)}
    plain = {r.benchmark: r for r in score(power_sample / "Lenovo", RULESET, host)}
    for benchmark in POWER_BENCHMARKS:
        assert packed[benchmark].energy_joules == plain[benchmark].energy_joules
        assert [r.energy_joules for r in packed[benchmark].runs] == [r.energy_joules for r in plain[benchmark].runs]


@pytest.mark.sample
def test_a_missing_power_run_leaves_no_energy_score(power_sample, host, tmp_path):
    tree = tmp_path / "Lenovo"
    shutil.copytree(power_sample / "Lenovo", tree)
    shutil.rmtree(tree / "results" / SYSTEM / "bert" / "power" / "result_2")
    bert = {r.benchmark: r for r in score(tree, RULESET, host)}["bert"]
    assert bert.energy_joules is None and bert.score_minutes is not None
    assert "no energy score: no energy for result_2.txt (no power/result_2/ folder)" in bert.note
    assert sum(r.energy_joules is None for r in bert.runs) == 1


@pytest.mark.sample
def test_unusable_power_logs_are_named_not_fatal(power_sample, host, tmp_path):
    tree = tmp_path / "Lenovo"
    shutil.copytree(power_sample / "Lenovo", tree)
    power = tree / "results" / SYSTEM / "bert" / "power"
    (power / "result_4" / "node_0.txt").write_text(
        _mllog(1, "power_measurement_start", None, "INTERVAL_START")
        + _mllog(2, "power_reading", "9 kW")
        + _mllog(3, "power_reading", 10**400)
    )
    (power / "result_5" / "node_0.txt").write_text(_mllog(1, "power_reading", 100.0))
    bert = {r.benchmark: r for r in score(tree, RULESET, host)}["bert"]
    assert bert.energy_joules is None and bert.score_minutes is not None
    assert "result_4.txt (power_reading at line 2 of power/result_4/node_0.txt is not a number" in bert.note
    assert "result_5.txt (no power_measurement_start record in power/result_5/node_0.txt)" in bert.note


def test_no_power_folder_means_no_energy(cli, fixtures):
    document = json.loads(cli("score", str(fixtures / "clean"), "--format", "json").out)
    for result in document["results"]:
        assert "energy_joules" in result and result["energy_joules"] is None
        assert all(run["energy_joules"] is None for run in result["runs"])


def test_listing_order_follows_the_file_system(tmp_path):
    for name in ("node_1.txt", "node_0.txt", "sw_0.txt"):
        (tmp_path / name).write_text("")
    names = ["node_0.txt", "node_1.txt", "sw_0.txt", "absent.txt"]
    assert listing_order(tmp_path, names) == [n for n in os.listdir(tmp_path) if n in names] + ["absent.txt"]
    assert listing_order(None, names) == names


def _mllog(time_ms: object, key: str, value: object, event_type: str = "POINT_IN_TIME", metadata: object = None) -> str:
    record = {
        "namespace": "",
        "time_ms": time_ms,
        "event_type": event_type,
        "key": key,
        "value": value,
        "metadata": {"file": "power_measurement.py", "lineno": 1} if metadata is None else metadata,
    }
    return f":::MLLOG {json.dumps(record)}\n"


def _vary_power(bert: Path) -> None:
    """More nodes and switches than the sample has, and the summarizer's edge cases: a node without
    power_measurement_stop, a reading logged before the start, a switch without an estimate, and
    lines the official reader takes or skips where the result-log parser would not (metadata that
    is not an object, a string time_ms, text before the token, CRLF, broken JSON)."""
    for run in sorted((bert / "power").iterdir()):
        lines = (run / "node_0.txt").read_text().splitlines(keepends=True)
        records = [json.loads(line.split(":::MLLOG ", 1)[1]) for line in lines]
        start = records[0]["time_ms"]
        halved = [
            _mllog(
                r["time_ms"],
                r["key"],
                r["value"] * 0.5 + 1.3 if r["key"] == "power_reading" else r["value"],
                r["event_type"],
                metadata="",
            )
            for r in records
            if r["key"] != "conversion_eff"
        ]
        halved[5] = "[1,0]<stdout>: " + halved[5]
        halved[7] = _mllog(str(start + 7500), "power_reading", 5000.0)
        halved[9] = _mllog("soon", "power_reading", 1e9) + ":::MLLOG {broken\n"
        (run / "node_1.txt").write_bytes(
            (_mllog(start - 5000, "power_reading", 99999.0) + "".join(halved) + _mllog(start, "conversion_eff", 0.9))
            .replace("\n", "\r\n")
            .encode()
        )
        (run / "node_2.txt").write_text("".join(line for line in lines if "power_measurement_stop" not in line))
        (run / "sw_0.txt").write_text(
            _mllog(start, "conversion_eff", 0.97)
            + _mllog(start, "interconnect_power_est", 250.5)
            + _mllog(start + 1, "interconnect_power_est", 1e6)
        )
        (run / "sw_1.txt").write_text(_mllog(start, "power_reading", 300.0))


@pytest.mark.sample
def test_edge_energies_match_the_official_summarizer_live(power_sample, cli, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(power_sample / "Lenovo", tree / "Lenovo")
    shutil.rmtree(tree / "Lenovo" / "results" / SYSTEM / "llama2_70b_lora")  # one benchmark is enough
    bert = tree / "Lenovo" / "results" / SYSTEM / "bert"
    _vary_power(bert)
    # a run the official summarizer drops (no run_stop): it has no energy and fills the slowest slot
    log = bert / "result_3.txt"
    log.write_text("".join(line for line in log.read_text().splitlines(keepends=True) if '"run_stop"' not in line))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mlperf_logging.result_summarizer",
            "Lenovo",
            "training",
            "5.0.0",
            "--csv",
            str(tmp_path / "official.csv"),
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    out = tmp_path / "ours.csv"
    assert cli("score", str(tree / "Lenovo"), "--format", "csv", "-o", str(out)).code == 0
    ours_detailed = official_columns((tmp_path / "ours_detailed.csv").read_text())
    assert ours_detailed.encode() == (tmp_path / "official_detailed.csv").read_bytes()
    assert official_columns(out.read_text()).encode() == (tmp_path / "official.csv").read_bytes()
    (result,) = score(tree / "Lenovo", RULESET)
    assert result.energy_joules is not None and "result_3.txt counted as the slowest" in result.note
    # run by run, to the last bit: five files added in the order the folder lists them, as the official glob
    from mlperf_logging.result_summarizer.result_summarizer import _compute_total_power

    for run in result.runs:
        path = bert / run.file.rsplit("/", 1)[-1]
        ttt_ms = time_to_train_ms(parse_log(path, path.name))
        if ttt_ms is None:
            assert run.energy_joules is None  # result_3: no run_stop
            continue
        assert run.energy_joules == _compute_total_power(str(bert), str(path), ttt_ms, "5.0.0"), run.file


def _as_the_official_reader_reads(path: Path) -> list[tuple]:
    """The reading `read_power_log` replaces: universal newlines over latin-1, `json.loads` per record."""
    import io

    records = []
    with open(path, "rb") as stream:
        for number, line in enumerate(io.TextIOWrapper(io.BytesIO(stream.read()), encoding="latin-1"), 1):
            at = line.rfind(":::MLLOG ")
            if at < 0:
                continue
            try:
                record = json.loads(line[at + 9 :].strip())
                time_ms = float(record["time_ms"])
            except ValueError:
                continue
            records.append((number, time_ms, record["key"], record["value"]))
    return records


def test_power_logs_are_read_as_the_official_reader_reads_them(tmp_path):
    """The compiled decoder reads a power log's records; whatever it refuses (NaN, huge numbers,
    lone surrogates) json.loads reads, and every kind of line break counts as the official one does."""
    from mlperf_audit import read_power_log

    def record(value: str, key: str = "power_reading", time_ms: str = "1000") -> bytes:
        return f':::MLLOG {{"key": "{key}", "value": {value}, "time_ms": {time_ms}, "metadata": {{}}}}'.encode()

    lines = [
        record("12.5"),
        record("NaN"),
        record("1e400"),
        record('"\\ud800"'),
        record("123456789012345678901234567890"),
        b"noise :::MLLOG not json",
        record("3", time_ms='"7.5"'),
        record("4", time_ms='"soon"'),  # float() refuses: skipped
        b'prefix :::MLLOG {"key": "a", "key": "power_reading", "value": 1, "time_ms": 2, "metadata": {}}',
        "caf\u00e9 :::MLLOG ".encode("latin-1") + record("5")[9:],
        record("6") + b"\x85" + record("7"),  # NEL is no line break for the official reader
    ]
    log = tmp_path / "node_0.txt"
    for newline in (b"\n", b"\r\n", b"\r"):
        log.write_bytes(newline.join(lines) + newline + record("8") + b"\r\r\n" + record("9"))
        read = [(r.line, r.time_ms, r.key, r.value) for r in read_power_log(log, "node_0.txt")]
        expected = _as_the_official_reader_reads(log)
        assert repr(read) == repr(expected) and len(read) == 11


def test_a_power_record_nested_as_deep_as_json_loads_reaches_is_its_to_read(tmp_path, monkeypatch):
    """How deep `json.loads` can nest depends on the interpreter's stack, and msgspec goes a few
    levels further: a record nesting deeper than 64 levels is json.loads's to read (or refuse:
    EnergyError), exactly as the official reader does; msgspec never sees it."""
    from mlperf_audit import PowerLogError, read_power_log
    from mlperf_audit.reading import power_log

    decoded: list[str] = []
    compiled = power_log._decode_json
    monkeypatch.setattr(power_log, "_decode_json", lambda text: decoded.append(text) or compiled(text))
    log = tmp_path / "node_0.txt"
    for depth in (3, 62, 63, 64, 65, 400, 5000):
        value = "[" * depth + "]" * depth
        log.write_text(f':::MLLOG {{"key": "power_reading", "value": {value}, "time_ms": 5, "metadata": {{}}}}\n')
        try:
            expected = repr(_as_the_official_reader_reads(log))
        except RecursionError:
            expected = "too deep"
        try:
            read = repr([(r.line, r.time_ms, r.key, r.value) for r in read_power_log(log, "node_0.txt")])
        except PowerLogError as error:
            assert "too deeply" in str(error)
            read = "too deep"
        assert read == expected, depth
    assert max(text.count("[") + text.count("{") for text in decoded) == 64  # the record's own braces count
