"""LOG: problems met while reading a result file (the MLLOG syntax).

The parser attaches each problem to the run with one of these codes; every rule here reports the
problems of its own code, so `--select/--ignore`, `explain` and every output format treat them like
any other rule. Errors here are errors for the official checker too: a line it cannot parse fails
the whole file ("Log lines had parsing errors"), and a line without one of the required fields
crashes it.
"""

from __future__ import annotations

from mlperf_audit import IssueRule, Problem, Rule, Severity, hookimpl, limits


class UnreadableFile(IssueRule):
    """The result file cannot be opened or read.

    What it checks: that every `result_*.txt` can be opened and read to its end.

    Why it matters: a log nobody can read cannot be reviewed; the official checkers crash on it.

    Example: a file without read permission, or one that vanished while being read.

    How to fix: make the file readable (`chmod a+r`), or copy it again from the run's output.
    """

    code = "LOG001"
    problem = Problem.UNREADABLE
    name = "unreadable-file"
    summary = "A result file cannot be opened or read."
    severity = Severity.ERROR
    scope = "run"


class EmptyFile(IssueRule):
    """The result file is empty.

    What it checks: that a result file holds at least one byte.

    Why it matters: an empty file counts as a run, but holds no run; the official compliance
    checker fails it with "No log lines detected".

    Example: `result_3.txt` of size 0, left by a copy that failed.

    How to fix: copy the complete log of the run, or remove the file and add the missing run.
    """

    code = "LOG002"
    problem = Problem.EMPTY
    name = "empty-file"
    summary = "A result file is empty."
    severity = Severity.ERROR
    scope = "run"


class BinaryFile(IssueRule):
    """The result file holds NUL bytes in its first 8 KiB: it is binary, not a text log.

    What it checks: that a result file is text.

    Why it matters: compressed or binary output (a `.gz` renamed to `.txt`, a core dump) is not a
    log the rules can read; it is not parsed at all.

    Example: a gzip file named `result_0.txt`.

    How to fix: decompress it, or replace it with the plain-text output of the run.
    """

    code = "LOG003"
    problem = Problem.BINARY
    name = "binary-file"
    summary = "A result file is binary, not a text log."
    severity = Severity.ERROR
    scope = "run"


class NotUtf8(IssueRule):
    """An MLLOG record holds bytes that are not UTF-8.

    What it checks: that the text of every `:::MLLOG` record is valid UTF-8.

    Why it matters: JSON text is UTF-8. The official parser reads files as latin-1 and accepts any
    byte, so this is a warning; the record is read the same way, as latin-1.

    Example: `:::MLLOG {"key": "submission_platform", "value": "caf\\xe9", ...}` written in latin-1.

    How to fix: write the log as UTF-8 (set `PYTHONIOENCODING=utf-8` in the launcher).
    """

    code = "LOG004"
    problem = Problem.NOT_UTF8
    name = "not-utf8"
    summary = "An MLLOG record holds bytes that are not UTF-8 (read as latin-1)."
    severity = Severity.WARNING
    scope = "run"


class MalformedJson(IssueRule):
    """The text after `:::MLLOG ` is not one valid JSON object.

    What it checks: that each `:::MLLOG ` token is followed by exactly one JSON object and nothing
    else on the line.

    Why it matters: the official compliance checker fails the whole file when any record does not
    parse; the record's event is lost.

    Example: `:::MLLOG {"namespace": "", "time_ms": 1714470489811, "key": "run_start"` (cut), or
    two processes writing into one line.

    How to fix: log through `mlperf_logging.mllog` and make sure only one rank writes each line;
    do not edit logs by hand.
    """

    code = "LOG005"
    problem = Problem.MALFORMED_JSON
    name = "malformed-json"
    summary = "An MLLOG record is not valid JSON."
    severity = Severity.ERROR
    scope = "run"


class MissingField(IssueRule):
    """An MLLOG record lacks one of `key`, `value`, `metadata` or `time_ms`.

    What it checks: that every record has the four fields that the official parser requires.

    Why it matters: the official checker crashes with a `KeyError` on such a record; mlperf-audit
    skips the record and reports it here.

    Example: `:::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "seed", "value": 1}`
    (no `metadata`).

    How to fix: log through `mlperf_logging.mllog`, which always writes all six fields.
    """

    code = "LOG006"
    problem = Problem.MISSING_FIELD
    name = "missing-field"
    summary = "An MLLOG record lacks key, value, metadata or time_ms."
    severity = Severity.ERROR
    scope = "run"


class BadFieldType(IssueRule):
    """An MLLOG record's field has a type that cannot be used.

    What it checks: `key` is a non-empty string, `metadata` an object, `time_ms` a finite number
    (or a string that reads as one), and the record itself an object.

    Why it matters: a record like this cannot be placed in time or matched to a rule; the official
    checker either rejects it or crashes (`time_ms: null`).

    Example: `"time_ms": "soon"`, `"metadata": []`, `"key": 7`.

    How to fix: log through `mlperf_logging.mllog` and pass metadata as a dict.
    """

    code = "LOG007"
    problem = Problem.BAD_FIELD_TYPE
    name = "bad-field-type"
    summary = "An MLLOG record's key, metadata or time_ms has an unusable type."
    severity = Severity.ERROR
    scope = "run"


class NonstandardField(IssueRule):
    """An MLLOG record deviates from what mllog writes, in a way the official checker tolerates.

    What it checks: the record has `namespace` (a string) and `event_type` (one of
    `INTERVAL_START`, `INTERVAL_END`, `POINT_IN_TIME`), and `time_ms` is a JSON number.

    Why it matters: the official checker ignores `namespace` and `event_type` and reads
    `time_ms` with `float()`, so such a record passes there; but mllog never writes it, so it
    points at a hand-made or edited line.

    Example: `"event_type": "FOO"`, or `"time_ms": "1714470489811"`.

    How to fix: log through `mlperf_logging.mllog`; do not post-process log lines.
    """

    code = "LOG008"
    problem = Problem.NONSTANDARD_FIELD
    name = "nonstandard-field"
    summary = "An MLLOG record has an odd namespace, event_type or time_ms (tolerated officially)."
    severity = Severity.WARNING
    scope = "run"


class NonFiniteNumber(IssueRule):
    """An MLLOG record holds `NaN`, `Infinity` or `-Infinity`.

    What it checks: that a record's numbers are finite JSON numbers.

    Why it matters: these constants are not JSON; Python's `json` writes them for float NaN and
    infinities, which in a training log usually means a diverged loss or accuracy.

    Example: `:::MLLOG {..., "key": "eval_accuracy", "value": NaN, ...}`.

    How to fix: check the run: a NaN evaluation means it diverged and cannot be a result.
    """

    code = "LOG009"
    problem = Problem.NON_FINITE
    name = "non-finite-number"
    summary = "An MLLOG record holds NaN or Infinity."
    severity = Severity.WARNING
    scope = "run"


class LineTooLong(IssueRule):
    __doc__ = f"""A line of the result file is longer than {limits.MAX_LINE_BYTES >> 20} MiB; it is not parsed.

    What it checks: that no line exceeds {limits.MAX_LINE_BYTES >> 20} MiB (real MLLOG lines are under
    10 KiB).

    Why it matters: a line that long is a data dump or a corrupted file, not a log record, and
    reading it would cost memory for nothing.

    Example: a tensor printed without newlines into the log.

    How to fix: remove the dump from the log, or log to a separate file.
    """

    code = "LOG010"
    problem = Problem.LINE_TOO_LONG
    name = "line-too-long"
    summary = "A line is too long to be a log record; not parsed."
    severity = Severity.ERROR
    scope = "run"


class JsonTooDeep(IssueRule):
    """An MLLOG record nests JSON arrays or objects too deeply to read.

    What it checks: that a record nests arrays and objects at most 64 levels deep, the record
    itself being level 1 (`MAX_JSON_DEPTH` in `mlperf_audit/parser.py`).

    Why it matters: mllog writes three or four levels (the record, its metadata, a list value); a
    record nested deeper is hostile or corrupted input, and is skipped, so that no rule and no
    output format walks a value hundreds of levels deep.

    Example: `:::MLLOG [[[[[[...]]]]]]` nested 100,000 times, or a `value` of 65 nested lists.

    How to fix: remove the line; log with `mlperf_logging.mllog`, and log values flat.
    """

    code = "LOG011"
    problem = Problem.TOO_DEEP
    name = "json-too-deep"
    summary = "An MLLOG record nests JSON too deeply to read."
    severity = Severity.ERROR
    scope = "run"


class DuplicateJsonKey(IssueRule):
    """An MLLOG record's JSON object names the same field twice.

    What it checks: that no object in a record repeats a name.

    Why it matters: JSON readers keep the last value, so the line says two things at once; mllog
    never writes such a line, which points at hand editing (for example a `time_ms` or `status`
    appended to a record).

    Example: `{"time_ms": 1, ..., "metadata": {"status": "aborted", "status": "success"}}`.

    How to fix: regenerate the log; never edit log records.
    """

    code = "LOG012"
    problem = Problem.DUPLICATE_KEY
    name = "duplicate-json-key"
    summary = "An MLLOG record repeats a JSON name."
    severity = Severity.WARNING
    scope = "run"


class TruncatedFile(IssueRule):
    """The result file ends in the middle of an MLLOG record.

    What it checks: that the last line, when it has no newline, is a complete record.

    Why it matters: a cut file has lost its last records, often `run_stop` and the final
    evaluation, so the run's time-to-train cannot be trusted.

    Example: a file whose last line is `:::MLLOG {"namespace": "", "time_ms": 17144`.

    How to fix: copy the complete log of the run.
    """

    code = "LOG013"
    problem = Problem.TRUNCATED
    name = "truncated-file"
    summary = "A result file ends in the middle of a record."
    severity = Severity.ERROR
    scope = "run"


class NoRecords(IssueRule):
    """A result file holds no `:::MLLOG` record at all.

    What it checks: that a result file holds at least one MLLOG record. A file of `:::MLL` lines,
    the format of MLPerf Training 0.5 and 0.6, is named as an unsupported log format: the rounds
    mlperf-audit supports (1.0 on) log `:::MLLOG {json}`.

    Why it matters: without records there is no run; the official checker fails the file with
    "No log lines detected".

    Example: a file with only the launcher's shell output.

    How to fix: make sure the benchmark logs through `mlperf_logging.mllog` to the captured output.
    """

    code = "LOG014"
    problem = Problem.NO_RECORDS
    name = "no-mllog-records"
    summary = "A result file holds no MLLOG record."
    severity = Severity.ERROR
    scope = "run"


class SeveralRecordsOnLine(IssueRule):
    """One line holds several `:::MLLOG` tokens; only the last record is read.

    What it checks: that each line holds at most one MLLOG record.

    Why it matters: the official parser keeps only the text after the last token, so the earlier
    records on the line are silently lost (and so is the event they logged).

    Example: `:::MLLOG {...}:::MLLOG {...}` written by two ranks without a newline between them.

    How to fix: log from one rank, or make each rank flush whole lines.
    """

    code = "LOG015"
    problem = Problem.SEVERAL_RECORDS
    name = "several-records-on-line"
    summary = "A line holds several MLLOG records; only the last is read."
    severity = Severity.WARNING
    scope = "run"


class FileTooLarge(IssueRule):
    __doc__ = f"""A result file is larger than {limits.MAX_FILE_BYTES >> 20} MiB; it is not parsed.

    What it checks: the size of each result file before it is read.

    Why it matters: the largest real v4.1 logs are a few MB, and the official repository checker
    rejects any file over 50 MB; a file this large is not one run's log.

    Example: a log with a debug dump of every step of every rank.

    How to fix: keep only the run's log in the result file.
    """

    code = "LOG016"
    problem = Problem.TOO_LARGE
    name = "file-too-large"
    summary = "A result file is too large to be one run's log; not parsed."
    severity = Severity.ERROR
    scope = "run"


RULES: list[type[Rule]] = [
    UnreadableFile,
    EmptyFile,
    BinaryFile,
    NotUtf8,
    MalformedJson,
    MissingField,
    BadFieldType,
    NonstandardField,
    NonFiniteNumber,
    LineTooLong,
    JsonTooDeep,
    DuplicateJsonKey,
    TruncatedFile,
    NoRecords,
    SeveralRecordsOnLine,
    FileTooLarge,
]


for _rule in RULES:
    # the official compliance checker fails a file with any of these problems ("Log lines had parsing errors")
    _rule.fails_run = _rule.severity is Severity.ERROR


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
