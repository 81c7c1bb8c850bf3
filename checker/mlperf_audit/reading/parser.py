"""The one MLLOG parser: streams a result file once and never raises on bad input.

Every problem becomes an `Issue` naming its `Problem` (the log-syntax pack declares the rule that
reports each) and the 1-based physical line, so a finding points at the line a submitter sees in an editor (the
official parser counts only MLLOG lines, 0-based).

Compatibility with the official 4.1 reader (`mlp_parser/ruleset_410.py`): a record is the text
after the *last* `:::MLLOG ` token of a line, lines without the token are ignored, `time_ms` may be
any value `float()` accepts, and `key`, `value`, `metadata` and `time_ms` are required.
"""

from __future__ import annotations

import gc
import io
import json
import math
import os
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, Literal, Mapping, cast

import msgspec

from ..model import Issue, Launch, LogEvent, Problem, Run, open_binary, read_at_most
from ..safety import visible
from .cache import ParseCache, Parsed

if TYPE_CHECKING:
    from ..archives import ArchiveMember

TOKEN = b":::MLLOG "
#: NVIDIA-derived launchers print `:::DLPAL <container> <job> <nodes> <node list> <cluster> <DGXSYSTEM>`.
LAUNCH_TOKEN = b":::DLPAL "

#: A line longer than this is not parsed (real MLLOG lines are under 10 KiB).
MAX_LINE_BYTES = 1 << 20
#: A file larger than this is not parsed (the official repo checker allows 50 MB per file).
MAX_FILE_BYTES = 256 << 20
LEGACY_TOKEN = b":::MLL "
#: After this many issues of one problem in one file, the rest are counted in one summary issue.
MAX_ISSUES_PER_CODE = 10

#: Integers up to this size convert to a float exactly (larger ones may overflow it).
MAX_EXACT_INT = 2**53
#: A record nesting arrays and objects deeper than this is not parsed (the record itself is level 1;
#: mllog writes 3 or 4 levels). Rules walk values recursively: a bound far below the interpreter's
#: recursion limit keeps every one of them, and every output format, safe from hostile nesting.
MAX_JSON_DEPTH = 64
EVENT_TYPES = frozenset({"INTERVAL_START", "INTERVAL_END", "POINT_IN_TIME"})
REQUIRED_FIELDS = ("key", "value", "metadata", "time_ms")


class _IssueSink:
    """Collects issues for one file, capping floods of the same problem."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[Issue] = []
        self._counts: dict[Problem, int] = {}
        self._first_line: dict[Problem, int | None] = {}

    def add(self, problem: Problem, message: str, line: int | None = None, hint: str | None = None) -> None:
        count = self._counts.get(problem, 0) + 1
        self._counts[problem] = count
        if count == 1:
            self._first_line[problem] = line
        if count <= MAX_ISSUES_PER_CODE:
            self.issues.append(Issue(problem, message, self.path, line, hint))

    def finish(self) -> tuple[Issue, ...]:
        for problem, count in self._counts.items():
            if count > MAX_ISSUES_PER_CODE:
                hidden = count - MAX_ISSUES_PER_CODE
                self.issues.append(
                    Issue(
                        problem,
                        f"{hidden} more line(s) with the same problem are not listed "
                        f"({count} in all, the first at line {self._first_line[problem]})",
                        self.path,
                        None,
                    )
                )
        return tuple(self.issues)


class _RecordFlags:
    """Side observations of one `json.loads` call (NaN constants, duplicate keys)."""

    __slots__ = ("non_finite", "duplicate_keys")

    def __init__(self) -> None:
        self.non_finite: list[str] = []
        self.duplicate_keys: list[str] = []


class _Record(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A record as mllog writes it: the fast path's schema. Every field is required and no other is
    allowed, so anything unusual fails to decode and takes the tolerant path."""

    key: str
    value: Any
    time_ms: int | float
    event_type: Literal["INTERVAL_START", "INTERVAL_END", "POINT_IN_TIME"]
    namespace: str
    #: Flat, as mllog writes it; the rare metadata holding an array or object takes the tolerant path.
    metadata: dict[str, str | int | float | bool | None]


#: msgspec's compiled decoder agrees with `json.loads` on every value it accepts (big integers
#: included, `tests/test_parser_fast.py`) and refuses, rather than reads differently, what the
#: tolerant path reports: NaN and Infinity, numbers that overflow a float, lone surrogates,
#: invalid UTF-8. It keeps the last of duplicate names silently, which `_members` detects.
_decode_record = msgspec.json.Decoder(_Record).decode
#: A member name's closing quote and its colon, with any whitespace JSON allows between them.
_RECORD_FIELDS = len(_Record.__struct_fields__)


def _members(value: Any) -> int:
    """How many object members `value` holds, at every depth.

    Without recursion: msgspec decodes values nested far deeper than the parser's bound (whose
    check comes later), and a recursive count of one nested 990 deep exhausted the stack on
    Python 3.12 and 3.13 instead of the line being reported as too deep."""
    count = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if type(item) is dict:
            count += len(item)
            children: Any = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        pending.extend(child for child in children if type(child) is dict or type(child) is list)
    return count


def _fast_events(payloads: list[bytes | None], lines: list[int], path: str) -> list[LogEvent | None]:
    """The events of the records (one payload per record line; None: not for the fast path) that
    mllog could have written, decoded at C speed; None for anything else, which the tolerant path
    then reads and reports exactly as before."""
    records: list[_Record | None] = []
    for payload in payloads:
        try:
            records.append(None if payload is None else _decode_record(payload))
        except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
            records.append(None)
    # Every member name is followed by one colon outside a string, so a record's colons are at least
    # the names written, which are at least the names decoded: equal counts leave no room for a
    # repeated name, which msgspec would keep silently (the last one). Over the whole file first,
    # as each record's count is at least its own: equal sums mean equal counts.
    decoded = [record for record in records if record is not None]
    # a decoded record had a payload: with every record decoded, every payload is bytes
    written = payloads if len(decoded) == len(payloads) else [p for p, r in zip(payloads, records) if r is not None]
    colons = b"".join(cast("list[bytes]", written)).count(b":")
    everywhere = colons == _RECORD_FIELDS * len(decoded) + sum([len(record.metadata) for record in decoded]) + sum(
        [_members(record.value) for record in decoded if type(record.value) in _NESTED]
    )
    events: list[LogEvent | None] = []
    for payload, record, lineno in zip(payloads, records, lines):
        if (
            record is None
            or not record.key
            or (type(record.time_ms) is int and not -MAX_EXACT_INT <= record.time_ms <= MAX_EXACT_INT)
            or (type(record.value) in _NESTED and not _shallow(payload))  # type: ignore[arg-type]
            or (not everywhere and payload.count(b":") != _decoded_members(record))  # type: ignore[union-attr]
        ):
            events.append(None)
            continue
        event = _LogEventBeingBuilt(
            record.key,
            record.value,
            float(record.time_ms),
            record.event_type,
            record.namespace,
            MappingProxyType(record.metadata),
            path,
            lineno,
        )
        event.__class__ = LogEvent  # type: ignore[assignment]
        events.append(event)  # type: ignore[arg-type]
    return events


class _LogEventBeingBuilt:
    """A `LogEvent` before it is frozen: the same slots, set by plain assignment.

    A frozen dataclass's `__init__` sets each field through `object.__setattr__`, which made
    building the events a third of the fast path; this sets them at the cost of a tuple, and
    assigning `__class__` (which CPython allows between classes of the same slots) makes the
    instance the `LogEvent` it would have been: same type, fields, equality and immutability."""

    __slots__ = LogEvent.__slots__

    def __init__(
        self,
        key: str,
        value: Any,
        time_ms: float,
        event_type: str | None,
        namespace: str | None,
        metadata: Mapping[str, Any],
        file: str,
        line: int,
    ) -> None:
        self.key = key
        self.value = value
        self.time_ms = time_ms
        self.event_type = event_type
        self.namespace = namespace
        self.metadata = metadata
        self.file = file
        self.line = line


_NESTED = (dict, list)


def _decoded_members(record: _Record | None) -> int:
    if record is None:
        return 0
    value = record.value
    return _RECORD_FIELDS + len(record.metadata) + (_members(value) if type(value) in _NESTED else 0)


def _shallow(payload: bytes) -> bool:
    """Whether a record cannot nest deeper than MAX_JSON_DEPTH (else the tolerant path measures it)."""
    return payload.count(b"[") + payload.count(b"{") <= MAX_JSON_DEPTH


def _make_decoder(flags: _RecordFlags) -> Callable[[str], Any]:
    def on_constant(name: str) -> float:
        flags.non_finite.append(name)
        return float(name.replace("Infinity", "inf"))

    def on_float(text: str) -> float:
        value = float(text)
        if math.isinf(value):
            flags.non_finite.append(text)
        return value

    def on_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            seen: set[str] = set()
            for name, _ in pairs:
                if name in seen:
                    flags.duplicate_keys.append(name)
                seen.add(name)
        return result

    return json.JSONDecoder(parse_constant=on_constant, parse_float=on_float, object_pairs_hook=on_object).decode


def parse_log(
    fs_path: Path | str | ArchiveMember,
    display_path: str,
    *,
    submitter: str | None = None,
    system: str | None = None,
    benchmark: str | None = None,
    cache: ParseCache | None = None,
) -> Run:
    """Reads one result file into a `Run`. Never raises for anything the file contains.

    With a `cache`, a file parsed before (same bytes, same place) is not decoded again."""
    # Parsing allocates hundreds of thousands of objects and no reference cycles, so the cyclic
    # collector would only rescan everything alive (a third of the parse time on a round); plain
    # reference counting still frees what is dropped.
    with collector_at_rest():
        return _parse_log(fs_path, display_path, submitter, system, benchmark, cache)


@contextmanager
def collector_at_rest() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, then as it was."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _parse_log(
    fs_path: Path | str | ArchiveMember,
    display_path: str,
    submitter: str | None,
    system: str | None,
    benchmark: str | None,
    cache: ParseCache | None,
) -> Run:
    context = {"submitter": submitter, "system": system, "benchmark": benchmark}
    size = 0
    # An archive member declares its size: a too-large one is refused before it is read into memory.
    declared = getattr(fs_path, "size", None)
    if declared is not None and declared > MAX_FILE_BYTES:
        return _too_large(display_path, declared, context)
    try:
        with open_binary(fs_path) as stream:
            size = declared if declared is not None else os.fstat(stream.fileno()).st_size
            if size > MAX_FILE_BYTES:
                return _too_large(display_path, size, context)
            if cache is None or not isinstance(fs_path, (str, Path)):
                return _parse_open(stream, display_path, size, context)
            data = read_at_most(stream, MAX_FILE_BYTES)
    except OSError as error:
        return _unreadable(_IssueSink(display_path), error, [], display_path, size, 0, context)
    key = cache.key(os.path.abspath(fs_path), data)
    cached = cache.load(key, display_path)
    if cached is not None:
        return Run(display_path, cached.events, cached.issues, size, cached.line_count, **context, launch=cached.launch)
    run = _parse_bytes(data, display_path, size, context)
    cache.store(key, Parsed(run.events, run.issues, run.line_count, run.launch))
    return run


def _parse_open(stream: BinaryIO, display_path: str, size: int, context: dict[str, Any]) -> Run:
    try:
        data = read_at_most(stream, MAX_FILE_BYTES)
    except OSError as error:
        return _unreadable(_IssueSink(display_path), error, [], display_path, size, 0, context)
    return _parse_bytes(data, display_path, size, context)


def _parse_bytes(data: bytes, display_path: str, size: int, context: dict[str, Any]) -> Run:
    sink = _IssueSink(display_path)
    events: list[LogEvent] = []
    if not data:
        sink.add(Problem.EMPTY, "file is empty", hint="Copy the complete log of the run into this file.")
        return Run(display_path, (), sink.finish(), size, 0, **context)
    if b"\n" not in data and b"\r" in data:
        # lines ended by CR alone (classic Mac OS), which the official parser's universal newlines
        # read as lines; one that mixes them with LF keeps LF as its line end (a progress bar's
        # CRs inside a line of 50 of the 3,026 v4.1 and v5.0 logs), as editors show it
        data = data.replace(b"\r", b"\n")
    head = data[:8192]
    nul = head.find(b"\x00")
    if nul >= 0:
        sink.add(
            Problem.BINARY,
            f"file holds a NUL byte at offset {nul}: binary, not a text log; not read",
            line=head.count(b"\n", 0, nul) + 1,
            hint="Replace it with the plain-text log; compressed or binary files are not accepted.",
        )
        return Run(display_path, (), sink.finish(), size, 0, **context)
    launches: list[Launch] = []
    line_count = _parse_data(data, display_path, events, sink, launches)
    # rounds 0.5 and 0.6 logged `:::MLL <time> <key>: <json>`, which no supported round reads
    legacy = LEGACY_TOKEN in head and b":::MLLOG" not in head
    context = {**context, "launch": launches[0]} if launches else context
    return _finish(sink, events, display_path, size, line_count, context, legacy)


def _launch(raw: bytes, at: int) -> Launch | None:
    """The fields of a `:::DLPAL` line (also inside a shell trace `+ echo ':::DLPAL ...'`)."""
    text = raw[at + len(LAUNCH_TOKEN) :].decode("utf-8", errors="replace").strip().strip("'\"")
    fields = [field.strip("'\"") for field in text.split()]
    if not fields:
        return None
    shown = [visible(field[:256]) for field in fields]
    # the cluster name before DGXSYSTEM may hold spaces ('HPE Cray XD670'): DGXSYSTEM is the last field
    return Launch(shown[0], shown[2] if len(shown) > 2 else None, shown[-1] if len(shown) > 5 else None)


def _unreadable(
    sink: _IssueSink,
    error: OSError,
    events: list[LogEvent],
    display_path: str,
    size: int,
    line_count: int,
    context: dict[str, Any],
) -> Run:
    sink.add(
        Problem.UNREADABLE,
        f"cannot read the file: {error.strerror or error}",
        hint="Check the file's permissions and that it is a regular file.",
    )
    return _finish(sink, events, display_path, size, line_count, context)


def _finish(
    sink: _IssueSink,
    events: list[LogEvent],
    display_path: str,
    size: int,
    line_count: int,
    context: dict[str, Any],
    legacy: bool = False,
) -> Run:
    if not events and not any(issue.problem != Problem.NOT_UTF8 for issue in sink.issues):
        if legacy:
            sink.add(
                Problem.NO_RECORDS,
                f"unsupported log format: ':::MLL' lines of MLPerf Training 0.5/0.6, no ':::MLLOG' record in "
                f"{line_count} line(s)",
                hint="mlperf-audit reads the ':::MLLOG {json}' logs of rounds 1.0 and later; check 0.x results with "
                "the mlperf-logging release of their round.",
            )
        else:
            sink.add(
                Problem.NO_RECORDS,
                f"no ':::MLLOG' record in {line_count} line(s)",
                hint="The file must be the output of a run logged with mlperf_logging.mllog.",
            )
    return Run(display_path, tuple(events), sink.finish(), size, line_count, **context)


def _too_large(display_path: str, size: int, context: dict[str, Any]) -> Run:
    sink = _IssueSink(display_path)
    sink.add(
        Problem.TOO_LARGE,
        f"file is {size / 2**20:.0f} MiB, over the {MAX_FILE_BYTES >> 20} MiB limit; not read",
        hint="A result file holds one training run's log; split or trim what is not MLLOG output.",
    )
    return Run(display_path, (), sink.finish(), size, 0, **context)


def _parse_data(data: bytes, path: str, events: list[LogEvent], sink: _IssueSink, launches: list[Launch]) -> int:
    """Reads the records of a whole file; returns its physical line count.

    Most lines of a result log are not records (a framework's output), so the scan jumps from one
    `:::MLLOG ` token to the next at C speed instead of visiting every line; a file that holds a
    line too long to parse, that grew past the limit while it was read, or that is dense with
    tokens, takes the line-by-line path, which reports the same."""
    if len(data) > MAX_FILE_BYTES or _may_hold_a_long_line(data) or _dense_with_tokens(data):
        return _parse_stream(io.BytesIO(data), path, events, sink, launches)
    _find_launch(data, launches)
    # Cut at every token (one C call): each piece after the first starts with a record and runs to
    # the next token, so a line's number and payload cost a find, a count and a slice, instead of a
    # search back and forth from every token.
    pieces = data.split(TOKEN)
    lineno = 1 + pieces[0].count(b"\n")  # of the line the next token is on
    at = len(pieces[0])  # the next token's offset
    lines: list[int] = []  # of each record line
    firsts: list[int] = []  # the offset of its first token
    payloads: list[bytes | None] = []  # after its last token; None: several records on the line
    line_open = False  # the previous piece did not end its line
    for piece in islice(pieces, 1, None):
        end = piece.find(b"\n")
        if line_open:  # several records on one line: the tolerant path reports it
            payloads[-1] = None
        else:
            lines.append(lineno)
            firsts.append(at)
            payloads.append((piece if end < 0 else piece[:end]).rstrip(b"\r"))
        line_open = end < 0
        if not line_open:
            lineno += piece.count(b"\n", end)
        at += len(piece) + len(TOKEN)
    del pieces
    reader = _Reader(path, events, sink)
    for event, first, number in zip(_fast_events(payloads, lines, path), firsts, lines):
        if event is not None:
            events.append(event)
        else:
            line_start = data.rfind(b"\n", 0, first) + 1
            end = data.find(b"\n", first)
            end = len(data) if end < 0 else end
            reader.record(data[line_start : end + 1], data.rfind(TOKEN, first, end) - line_start, number)
    return lineno - 1 + (bool(data) and not data.endswith(b"\n"))


#: mllog's shortest record is 85 bytes: a file with a token every 64 bytes or less is no log.
_MIN_RECORD_BYTES = 64


def _dense_with_tokens(data: bytes) -> bool:
    """Whether `data` holds more tokens than records could fill: cutting it at every token would
    make an object of each (a hostile file of tokens, several to a line, took gigabytes); the
    line-by-line path keeps one line at a time."""
    return data.count(TOKEN) * _MIN_RECORD_BYTES > len(data)


def _may_hold_a_long_line(data: bytes) -> bool:
    """Whether a line of `data` may be longer than MAX_LINE_BYTES: a window of that size without a
    newline (one window per step, so a 100 MiB file takes about a hundred searches)."""
    start = 0
    while len(data) - start >= MAX_LINE_BYTES:
        newline = data.rfind(b"\n", start, start + MAX_LINE_BYTES)
        if newline < 0:
            return True
        start = newline + 1
    return False


def _find_launch(data: bytes, launches: list[Launch]) -> None:
    """The first `:::DLPAL` line that is not also an MLLOG record."""
    at = data.find(LAUNCH_TOKEN)
    while at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        raw = data[line_start : end + 1]
        if TOKEN not in raw and (launch := _launch(raw, at - line_start)) is not None:
            launches.append(launch)
            return
        at = data.find(LAUNCH_TOKEN, end)


class _Reader:
    """The tolerant path: reads one record line as `json.loads` does and reports every problem."""

    def __init__(self, path: str, events: list[LogEvent], sink: _IssueSink) -> None:
        self.path = path
        self.events = events
        self.sink = sink
        self.flags = _RecordFlags()
        self.decode = _make_decoder(self.flags)

    def record(self, raw: bytes, start: int, lineno: int) -> None:
        """The record after the `:::MLLOG ` token at `start` of the physical line `raw`."""
        sink, flags = self.sink, self.flags
        if raw.find(TOKEN) != start:
            sink.add(
                Problem.SEVERAL_RECORDS,
                f"{raw.count(TOKEN)} ':::MLLOG' records on one line; only the last is read, "
                "as the official parser does",
                lineno,
                hint="Output of several processes was interleaved; log from one rank, or flush each line.",
            )
        payload = raw[start + len(TOKEN) :].rstrip(b"\r\n")
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as error:
            sink.add(
                Problem.NOT_UTF8,
                f"bytes that are not UTF-8 at column {start + len(TOKEN) + error.start + 1}; read as latin-1 "
                "(as the official parser does)",
                lineno,
                hint="Write logs as UTF-8.",
            )
            text = payload.decode("latin-1")
        flags.non_finite.clear()
        flags.duplicate_keys.clear()
        try:
            record = self.decode(text)
        except RecursionError:
            # the depth bound below, met by the decoder first: which one a record meets depends on
            # the Python (3.13's decoder goes deeper than 3.11's), the finding must not
            _too_deep(sink, lineno)
            return
        except ValueError as error:
            message = getattr(error, "msg", str(error))
            position = getattr(error, "pos", None)
            where = f" at column {start + len(TOKEN) + position + 1}" if position is not None else ""
            if not raw.endswith(b"\n") and _looks_cut(text):  # only the last line can lack one
                sink.add(
                    Problem.TRUNCATED,
                    f"the last line ends in the middle of a record ({message}{where}): the file is truncated",
                    lineno,
                    hint="Copy the complete log; the run's final records are missing.",
                )
            else:
                sink.add(
                    Problem.MALFORMED_JSON,
                    f"':::MLLOG' record is not valid JSON: {message}{where}",
                    lineno,
                    hint="Each ':::MLLOG' line must carry exactly one JSON object, as mllog writes it.",
                )
            return
        # a line with few brackets cannot nest deeply: only the rare others are measured
        if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(record) > MAX_JSON_DEPTH:
            _too_deep(sink, lineno)
            return
        event = _to_event(record, flags, self.path, lineno, sink)
        if event is not None:
            self.events.append(event)


def _parse_stream(stream: BinaryIO, path: str, events: list[LogEvent], sink: _IssueSink, launches: list[Launch]) -> int:
    """The line-by-line path, for a file with a line too long to parse or one that grows while read."""
    reader = _Reader(path, events, sink)
    lineno = 0
    consumed = 0
    for raw in stream:
        lineno += 1
        consumed += len(raw)
        if consumed > MAX_FILE_BYTES:
            sink.add(
                Problem.TOO_LARGE,
                f"file grew past the {MAX_FILE_BYTES >> 20} MiB limit while read; the rest is not read",
                lineno,
            )
            break
        if len(raw) > MAX_LINE_BYTES:
            sink.add(
                Problem.LINE_TOO_LONG,
                f"line is longer than {MAX_LINE_BYTES >> 20} MiB; not parsed",
                lineno,
                hint="A log line this long is not MLLOG output; remove it or the data dumped into it.",
            )
            continue
        start = raw.rfind(TOKEN)
        if start < 0:
            if not launches and (at := raw.find(LAUNCH_TOKEN)) >= 0 and (launch := _launch(raw, at)) is not None:
                launches.append(launch)
            continue
        reader.record(raw, start, lineno)
    return lineno


_DEEP_HINT = "No MLLOG record nests more than a few levels; remove the line, or log the value flat."


def _too_deep(sink: _IssueSink, lineno: int) -> None:
    sink.add(
        Problem.TOO_DEEP,
        f"record nests JSON too deeply (over {MAX_JSON_DEPTH} levels); not parsed",
        lineno,
        hint=_DEEP_HINT,
    )


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply `value` nests arrays and objects (a scalar: 0), without recursing; stops counting
    once past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _looks_cut(text: str) -> bool:
    return not text.rstrip().endswith("}")


def _to_event(record: Any, flags: _RecordFlags, path: str, lineno: int, sink: _IssueSink) -> LogEvent | None:
    # The record as mllog writes it, nearly every line of every log: no check below would report it.
    if type(record) is dict and not flags.duplicate_keys and not flags.non_finite:
        key = record.get("key")
        metadata = record.get("metadata")
        time_ms = record.get("time_ms")
        event_type = record.get("event_type")
        namespace = record.get("namespace")
        if (
            type(key) is str
            and key
            and type(metadata) is dict
            and event_type in EVENT_TYPES
            and type(namespace) is str
            and "value" in record
            and (
                (type(time_ms) is int and -MAX_EXACT_INT <= time_ms <= MAX_EXACT_INT)
                or (type(time_ms) is float and math.isfinite(time_ms))
            )
        ):
            return LogEvent(
                key, record["value"], float(time_ms), event_type, namespace, MappingProxyType(metadata), path, lineno
            )
    return _checked_event(record, flags, path, lineno, sink)


def _checked_event(record: Any, flags: _RecordFlags, path: str, lineno: int, sink: _IssueSink) -> LogEvent | None:
    if flags.duplicate_keys:
        names = ", ".join(sorted(set(flags.duplicate_keys)))
        sink.add(
            Problem.DUPLICATE_KEY,
            f"JSON object repeats the name(s) {names}; the last value is used",
            lineno,
            hint="mllog never writes a name twice: this line was edited or assembled by hand.",
        )
    if flags.non_finite:
        names = ", ".join(sorted(set(flags.non_finite)))
        key = record.get("key") if isinstance(record, dict) else None
        subject = f"record of {key!r}" if isinstance(key, str) else "record"
        overflow = not any(name in ("NaN", "Infinity", "-Infinity") for name in flags.non_finite)
        reason = "which overflows to infinity" if overflow else "which is not a JSON number"
        sink.add(
            Problem.NON_FINITE,
            f"{subject} holds {names}, {reason}",
            lineno,
            hint="A NaN or infinite value usually means the run diverged; check the value logged here.",
        )
    if not isinstance(record, dict):
        sink.add(Problem.BAD_FIELD_TYPE, f"record is a JSON {type(record).__name__}, not an object", lineno)
        return None
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        sink.add(
            Problem.MISSING_FIELD,
            f"record has no {', '.join(repr(m) for m in missing)} field",
            lineno,
            hint="Every record needs key, value, metadata and time_ms; log it with mllog, not by hand.",
        )
        return None
    key, metadata, raw_time = record["key"], record["metadata"], record["time_ms"]
    if not isinstance(key, str) or not key:
        sink.add(Problem.BAD_FIELD_TYPE, f"'key' must be a non-empty string, not {key!r}", lineno)
        return None
    if not isinstance(metadata, dict):
        sink.add(Problem.BAD_FIELD_TYPE, f"'metadata' of {key!r} must be an object, not {_json_type(metadata)}", lineno)
        return None
    time_ms = _time_ms(raw_time, key, lineno, sink)
    if time_ms is None:
        return None
    namespace = record.get("namespace")
    event_type = record.get("event_type")
    if "namespace" not in record or "event_type" not in record:
        absent = [name for name in ("namespace", "event_type") if name not in record]
        sink.add(Problem.NONSTANDARD_FIELD, f"record of {key!r} has no {' or '.join(absent)} field", lineno)
    elif event_type not in EVENT_TYPES:
        sink.add(
            Problem.NONSTANDARD_FIELD,
            f"event_type {event_type!r} of {key!r} is not one of {', '.join(sorted(EVENT_TYPES))}",
            lineno,
        )
    elif not isinstance(namespace, str):
        sink.add(
            Problem.NONSTANDARD_FIELD, f"namespace of {key!r} must be a string, not {_json_type(namespace)}", lineno
        )
    return LogEvent(
        key=key,
        value=record["value"],
        time_ms=time_ms,
        event_type=event_type if isinstance(event_type, str) else None,
        namespace=namespace if isinstance(namespace, str) else None,
        metadata=MappingProxyType(metadata),
        file=path,
        line=lineno,
    )


def _time_ms(raw: Any, key: str, lineno: int, sink: _IssueSink) -> float | None:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        try:
            value = float(raw)
        except OverflowError:  # an integer of hundreds of digits
            value = math.inf
        if math.isfinite(value):
            return value
        shown = repr(raw) if len(repr(raw)) < 40 else f"a number of {len(repr(raw))} digits"
        sink.add(Problem.BAD_FIELD_TYPE, f"time_ms of {key!r} is {shown}, not a finite number", lineno)
        return None
    if isinstance(raw, str):
        try:
            value = float(raw)
        except ValueError:
            pass
        else:
            if math.isfinite(value):
                sink.add(
                    Problem.NONSTANDARD_FIELD,
                    f"time_ms of {key!r} is the string {raw!r}, not a number",
                    lineno,
                )
                return value
    sink.add(
        Problem.BAD_FIELD_TYPE,
        f"time_ms of {key!r} must be a number of milliseconds, not {_json_type(raw)} {raw!r}"[:200],
        lineno,
        hint="mllog writes time_ms as an integer of milliseconds since the epoch.",
    )
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
