"""The power logs of a benchmark folder (`power/<run>/node_*`, `sw_*`), read once per folder.

A power log is read as the official parser (`mlp_parser`) reads it, not with the stricter
result-log parser: the energy score must be the official one to the last bit, and the power audit
must judge the readings that energy is computed from. `power_logs(result)` reads every file of
`result.folder.power` once and keeps what it read on the result while its folder is checked: the
scorer and the power rules share it.
"""

from __future__ import annotations

import bisect
import fnmatch
import json
import os
import posixpath
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ..archives import ArchiveMember
from ..model import BenchmarkResult, open_binary, read_at_most
from ..safety import visible
from .parser import MAX_FILE_BYTES

POWER_TOKEN = ":::MLLOG "
#: `json.loads` at C speed: the same values wherever it accepts a text; it refuses, rather than
#: reads differently, NaN and Infinity, numbers that overflow a float and lone surrogates.
_decode_json = msgspec.json.Decoder().decode
#: Records nesting deeper than this may go deeper than `json.loads` reaches: they are its to read.
_SHALLOW = 64
#: Where `power_logs` keeps what it read on the result (a key no rule uses).
_CACHE_KEY = ("mlperf_audit.power_logs",)


class PowerLogError(ValueError):
    """Why a power log cannot be read as the official parser reads it (where it stops with an exception)."""


@dataclass(frozen=True, slots=True)
class PowerRecord:
    """One record of a power log, as the official reader (`mlp_parser`) keeps it."""

    line: int  # 1-based physical line
    time_ms: float
    key: Any
    value: Any


#: Intervals between readings longer than this are kept as gaps (`PowerSampling.gaps`): three
#: times the longest interval the rules allow, above the 2 s steps of logs stamped in whole seconds.
GAP_KEPT_MS = 3000.0
#: At most this many gaps are kept per log (the longest first would need them all: the earliest are kept).
MAX_GAPS_KEPT = 10_000


@dataclass(frozen=True, slots=True)
class PowerSampling:
    """When a log's `power_reading` records were taken: what the power audit judges.

    Intervals are between consecutive readings in time order (the order the energy is integrated
    in); `backwards` counts readings stamped before the reading above them in the file."""

    readings: int
    first_ms: float | None = None
    last_ms: float | None = None
    median_interval_ms: float | None = None
    intervals: int = 0
    over_one_second: int = 0  # intervals longer than 1000 ms
    #: (start, end) of every interval longer than GAP_KEPT_MS, in time order (the first MAX_GAPS_KEPT)
    gaps: tuple[tuple[float, float], ...] = ()
    backwards: int = 0
    #: the first reading stamped before the one above it: (its line, how far back in ms)
    first_backwards: tuple[int, float] | None = None
    measurement_start_ms: float | None = None  # the first power_measurement_start
    measurement_stop_ms: float | None = None  # the first power_measurement_stop
    measurement_stop_line: int | None = None
    #: the first and last readings inside the measurement window (the energy integrates those):
    #: from power_measurement_start (or the first reading) to power_measurement_stop (or the last)
    window_readings: tuple[float, float] | None = None
    #: the first and last (in time) of the readings that lie after the first power_measurement_start
    #: (the first line without one) and before the first power_measurement_stop in the file: what
    #: the summarizers before mlcommons/logging c401ff0 (v4.0 and older), which read the records in
    #: file order, integrate over the measurement window
    file_order_readings: tuple[float, float] | None = None
    #: the first and last readings stamped at or after power_measurement_start (or all of them
    #: without one): what the meter covered, whatever the stop record says
    readings_after_start: tuple[float, float] | None = None


def sampling_of(records: tuple[PowerRecord, ...]) -> PowerSampling:
    """The sampling of a log's readings (a record keyed `power_reading`, whatever its value)."""
    times: list[float] = []
    backwards = 0
    first_backwards: tuple[int, float] | None = None
    start = stop = None
    stop_line = None
    # readings before the first stop in the file, and whether each follows the first start
    in_file_order: list[tuple[float, bool]] = []
    for record in records:
        if record.key == "power_reading":
            if times and record.time_ms < times[-1]:
                backwards += 1
                if first_backwards is None:
                    first_backwards = (record.line, times[-1] - record.time_ms)
            times.append(record.time_ms)
            if stop is None:
                in_file_order.append((record.time_ms, start is not None))
        elif record.key == "power_measurement_start" and start is None:
            start = record.time_ms
        elif record.key == "power_measurement_stop" and stop is None:
            stop, stop_line = record.time_ms, record.line
    if not times:
        return PowerSampling(0, measurement_start_ms=start, measurement_stop_ms=stop, measurement_stop_line=stop_line)
    times.sort()
    low = start if start is not None else times[0]
    high = stop if stop is not None else times[-1]
    inside = times[bisect.bisect_left(times, low) : bisect.bisect_right(times, high)]
    after = times[bisect.bisect_left(times, low) :]
    # without a start record the file-order summarizer integrates from the first line on
    integrated = [time for time, started in in_file_order if started or start is None]
    steps = sorted(b - a for a, b in zip(times, times[1:]))
    gaps = tuple((a, b) for a, b in zip(times, times[1:]) if b - a > GAP_KEPT_MS)[:MAX_GAPS_KEPT]
    return PowerSampling(
        readings=len(times),
        first_ms=times[0],
        last_ms=times[-1],
        median_interval_ms=statistics.median(steps) if steps else None,
        intervals=len(steps),
        over_one_second=len(steps) - bisect.bisect_right(steps, 1000.0),
        gaps=gaps,
        backwards=backwards,
        first_backwards=first_backwards,
        measurement_start_ms=start,
        measurement_stop_ms=stop,
        measurement_stop_line=stop_line,
        window_readings=(inside[0], inside[-1]) if inside else None,
        file_order_readings=(min(integrated), max(integrated)) if integrated else None,
        readings_after_start=(after[0], after[-1]) if after else None,
    )


@dataclass(frozen=True, slots=True)
class PowerLog:
    """One file of `power/<run>/`: its records in file order, or why it could not be read."""

    run: str  # the power folder of the run: `result_0` for result_0.txt
    name: str  # the file's name as discovery shows it: `node_0.txt`
    path: str  # display path, relative to the checked PATH
    records: tuple[PowerRecord, ...] = ()
    error: str | None = None  # set when the official parser would stop on the file; records are then empty
    sampling: PowerSampling = PowerSampling(0)  # when its readings were taken

    @property
    def shown(self) -> str:
        """How messages name the file: `power/result_0/node_0.txt`."""
        return f"power/{self.run}/{self.name}"


def read_power_log(source: Any, shown: str) -> list[PowerRecord]:
    """The records of a `node_*` or `sw_*` power log, in file order, read as the official parser
    reads them (not as result logs are: it is more lenient, and the energy must be its energy):
    latin-1 text, the JSON after the last `:::MLLOG ` of a line, `time_ms` anything `float()` takes;
    a line that is not JSON, or whose `time_ms` `float()` refuses, is skipped. A record the official
    parser stops at (not an object, a field missing, a `time_ms` of the wrong type) raises PowerLogError."""
    try:
        with open_binary(source) as stream:
            data = read_at_most(stream, MAX_FILE_BYTES)
    except OSError as error:
        raise PowerLogError(f"cannot read {shown}: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise PowerLogError(f"{shown} is larger than {MAX_FILE_BYTES >> 20} MiB; not read")
    records: list[PowerRecord] = []
    text = data.decode("latin-1")
    if "\r" in text:  # universal newlines, as the official `open(..., encoding='latin-1')`
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for number, line in enumerate(text.split("\n"), 1):
        at = line.rfind(POWER_TOKEN)
        if at < 0:
            continue
        payload = line[at + len(POWER_TOKEN) :].strip()
        try:
            try:
                if payload.count("[") + payload.count("{") > _SHALLOW:
                    raise msgspec.DecodeError  # how deep json.loads can go depends on the stack: it decides
                record = _decode_json(payload)
            except msgspec.DecodeError:  # what json.loads reads differently, or not at all
                record = json.loads(payload)
        except ValueError:
            continue
        except RecursionError:
            raise PowerLogError(f"line {number} of {shown} nests JSON too deeply to read") from None
        try:
            time_ms = float(record["time_ms"])
        except ValueError:
            continue
        except (KeyError, TypeError, IndexError, OverflowError):
            raise PowerLogError(f"line {number} of {shown} has no usable time_ms") from None
        if not all(name in record for name in ("key", "value", "metadata")):
            raise PowerLogError(f"line {number} of {shown} lacks key, value or metadata") from None
        records.append(PowerRecord(number, time_ms, record["key"], record["value"]))
    return records


def on_disk(folder: Path | None) -> dict[str, str]:
    """The names `folder` holds on disk, in listing order, by the name discovery shows for each: a
    name with bytes that are not UTF-8 is shown with escapes, and only the real one opens the file."""
    if folder is None:
        return {}
    try:
        return {visible(name): name for name in os.listdir(folder)}
    except OSError:
        return {}


def listing_order(folder: Path | None, names: Any) -> list[str]:
    """`names` (as discovery shows them) in the order the file system lists `folder` (what `glob`
    returns, so what the official summarizer iterates and adds in); names it does not list, or all
    of them when `folder` is not on disk (an archive), follow in their given order."""
    names = list(names)
    position = {shown: index for index, shown in enumerate(on_disk(folder))}
    return sorted(names, key=lambda name: position.get(name, len(position)))


def benchmark_dir(result: BenchmarkResult) -> Path | None:
    """The benchmark folder on disk (found next to its result files); None in an archive or without runs."""
    if not result.folder.result_files or isinstance(result.folder.result_files[0].fs_path, ArchiveMember):
        return None
    return Path(result.folder.result_files[0].fs_path).parent


def sibling(result: BenchmarkResult, *parts: str) -> Any:
    """Where to read `<benchmark folder>/<parts>`: a path on disk, or an archive member (None if
    absent or when the folder has no result file to find it by)."""
    folder = benchmark_dir(result)
    if folder is not None:
        return folder.joinpath(*parts)
    if not result.folder.result_files:
        return None
    anchor = result.folder.result_files[0].fs_path
    assert isinstance(anchor, ArchiveMember)  # no folder on disk: the result files are archive members
    name = posixpath.join(posixpath.dirname(anchor.name), *parts)
    return anchor.archive.member(name) if name in anchor.archive.files else None


def power_logs(result: BenchmarkResult) -> tuple[PowerLog, ...]:
    """Every `node_*` and `sw_*` file of `power/<run>/` (what the summarizer reads and the power
    rules judge: plots such as `nodes_1_to_8.png` are neither), read once per folder; runs in the order discovery lists them, files of a run in the order the file system
    lists them (the order the official summarizer adds energies in). Empty without `power/`."""
    cached: tuple[PowerLog, ...] | None = result._derived.get(_CACHE_KEY)
    if cached is None:
        cached = result._derived[_CACHE_KEY] = _read_all(result)
    return cached


def _read_all(result: BenchmarkResult) -> tuple[PowerLog, ...]:
    logs: list[PowerLog] = []
    base = benchmark_dir(result)
    power_dir = base / "power" if base is not None else None
    folders = on_disk(power_dir)
    for run, files in result.folder.power or ():
        run_dir = power_dir / folders.get(run, run) if power_dir is not None else None
        real = on_disk(run_dir)
        for name in listing_order(run_dir, fnmatch.filter(files, "node_*") + fnmatch.filter(files, "sw_*")):
            path = f"{result.path}/power/{run}/{name}"
            shown = f"power/{run}/{name}"
            source = run_dir / real.get(name, name) if run_dir is not None else sibling(result, "power", run, name)
            if source is None:
                logs.append(PowerLog(run, name, path, error=f"cannot read {shown}"))
                continue
            try:
                records = tuple(read_power_log(source, shown))
            except PowerLogError as error:
                logs.append(PowerLog(run, name, path, error=str(error)))
            else:
                logs.append(PowerLog(run, name, path, records, sampling=sampling_of(records)))
    return tuple(logs)
