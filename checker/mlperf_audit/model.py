"""The typed, immutable model: events, runs, benchmark results, systems, submissions, findings.

Data flows one way: the parser and discovery build these objects, rules read them and return
findings, reporters render findings. Nothing here does I/O.
"""

from __future__ import annotations

import enum
import hashlib
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Hashable, Mapping, TypeVar

from .safety import visible

if TYPE_CHECKING:
    from .archives import ArchiveMember


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls(text.lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r}: use error, warning or info") from None


_SEVERITY_RANK = {Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}
#: The largest count a system description may give (nodes, accelerators or host processors per
#: node): far beyond any system published (1,536 nodes, 64 accelerators per node), and small
#: enough that counts multiply and divide as floats without overflow.
MAX_COUNT_DIGITS = 6
MAX_COUNT = 10**MAX_COUNT_DIGITS - 1
#: The file that declares a system's or benchmark folder's `package_checker_params` (`CheckerParams`).
PARAMS_FILE = "package_checker_params"


class Problem(enum.StrEnum):
    """What the parser and discovery notice while reading, before any rule runs.

    Each is reported by the `IssueRule` that declares it (`problem = Problem.MALFORMED_JSON`);
    values are stable: they are stored in the parse cache and shown when no rule reports them.
    """

    # reading a result log (the parser)
    UNREADABLE = "log-unreadable"
    EMPTY = "log-empty"
    BINARY = "log-binary"
    NOT_UTF8 = "log-not-utf8"
    MALFORMED_JSON = "log-malformed-json"
    MISSING_FIELD = "log-missing-field"
    BAD_FIELD_TYPE = "log-bad-field-type"
    NONSTANDARD_FIELD = "log-nonstandard-field"
    NON_FINITE = "log-non-finite"
    LINE_TOO_LONG = "log-line-too-long"
    TOO_DEEP = "log-too-deep"
    DUPLICATE_KEY = "log-duplicate-key"
    TRUNCATED = "log-truncated"
    NO_RECORDS = "log-no-records"
    SEVERAL_RECORDS = "log-several-records"
    TOO_LARGE = "log-too-large"
    # walking the package (discovery) and reading its small files
    UNREADABLE_FOLDER = "unreadable-folder"
    SPECIAL_FILE = "special-file"
    BROKEN_LINK = "broken-link"
    LINKED_FOLDER = "linked-folder"
    LINK_OUTSIDE = "link-outside-path"
    NOT_A_SUBMISSION = "not-a-submission"
    SUBMISSION_AT_ROOT = "submission-at-root"
    BAD_NAME = "bad-name"
    FILE_TOO_BIG = "file-too-big"
    SYSTEM_JSON_INVALID = "system-json-invalid"
    SCALING_JSON_INVALID = "scaling-json-invalid"


@dataclass(frozen=True, slots=True)
class Launch:
    """The `:::DLPAL <container> <job> <nodes> <node list> <cluster> <DGXSYSTEM>` line that
    NVIDIA-derived `run.sub` scripts print before a run: the container it ran in, the node count,
    and DGXSYSTEM, the name of the launch configuration sourced (`config_<DGXSYSTEM>.sh`).
    Older scripts print the first four fields only; DGXSYSTEM is the last field (a cluster name may
    hold spaces). Values are the log's, shown `visible`."""

    container: str
    nodes: str | None = None
    platform: str | None = None  # DGXSYSTEM


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One `:::MLLOG {json}` record, with the physical line it came from."""

    key: str
    value: Any
    time_ms: float
    event_type: str | None
    namespace: str | None
    metadata: Mapping[str, Any]
    file: str
    line: int  # 1-based physical line in `file`

    def meta(self, name: str, default: Any = None) -> Any:
        return self.metadata.get(name, default)


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem found while reading input, before any rule ran (parse or discovery).

    An issue names its `Problem`, not a rule code: the rule pack that reports a kind of problem
    declares it (`IssueRule.problem`), so the core knows no pack's codes, and a problem that no
    registered rule reports is said in the report's notes rather than dropped without a word.
    """

    problem: "Problem"
    message: str
    path: str
    line: int | None = None
    hint: str | None = None


#: ASCII digits, few enough for `int` (a name holds anything: '²', or thousands of digits).
_RESULT_INDEX = re.compile(r"result_([0-9]{1,18})\.txt$")
#: The key of a run's events grouped by key, among what `Run.cached` keeps.
_BY_KEY = object()
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Run:
    """One result file: the events of one training run, in file order."""

    path: str  # relative to the checked PATH, '/' separators
    events: tuple[LogEvent, ...]
    issues: tuple[Issue, ...] = ()
    size_bytes: int = 0
    line_count: int = 0  # physical lines read
    submitter: str | None = None
    system: str | None = None
    benchmark: str | None = None
    launch: Launch | None = None  # what the launcher printed before the run, if it did
    #: What `cached` computed from the events (the run is immutable, so it never goes stale).
    _derived: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def index(self) -> int | None:
        match = _RESULT_INDEX.search(self.name)
        return int(match.group(1)) if match else None

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()` once per run and `key`: what several rules derive from the same events
        (a convergence point, a time-to-train) is computed once. The value must be immutable and
        must not refer to the run: the cycle would keep the run's events alive, after its folder
        is checked, until the cyclic garbage collector runs."""
        try:
            value: T = self._derived[key]
        except KeyError:
            value = self._derived[key] = compute()
        return value

    def _by_key(self) -> dict[str, tuple[LogEvent, ...]]:
        """The events grouped by key, each group in file order (rules ask for dozens of keys of each run)."""
        index: dict[str, tuple[LogEvent, ...]] | None = self._derived.get(_BY_KEY)
        if index is None:
            grouped: dict[str, list[LogEvent]] = {}
            for event in self.events:
                grouped.setdefault(event.key, []).append(event)
            index = self._derived[_BY_KEY] = {key: tuple(events) for key, events in grouped.items()}
        return index

    def all(self, key: str) -> tuple[LogEvent, ...]:
        return self._by_key().get(key, ())

    def first(self, key: str) -> LogEvent | None:
        events = self._by_key().get(key)
        return events[0] if events else None

    def value(self, key: str, default: Any = None) -> Any:
        event = self.first(key)
        return default if event is None else event.value

    def text(self, key: str) -> str | None:
        """The first logged value of `key` if it is a string (a benchmark's name, say), else None:
        logs can hold anything there, and a list or a dict must not reach a set or a file name."""
        value = self.value(key)
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file found by discovery; `fs_path` is where to read it, `path` how to show it."""

    path: str
    fs_path: Path | ArchiveMember = field(compare=False, repr=False)
    size_bytes: int = 0


@dataclass(frozen=True, slots=True)
class CheckerParams:
    """A `package_checker_params` file (submitter, system or benchmark level): one directive per line.

    `lines` holds (line number, directive) for every non-blank line, stripped, comments (`#`)
    removed; `official` holds the directives the official package checker honours, which compares
    each line read *with* its newline to the bare directive, so only an unterminated last line counts.
    """

    path: str
    level: str  # "submitter" (its lines are the verify script's flags), "system" or "benchmark"
    lines: tuple[tuple[int, str], ...]
    official: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class BenchmarkFolder:
    """The layout of one `results/<system>/<benchmark>/` folder, before its logs are read."""

    submitter: str | None
    system: str | None
    benchmark: str
    path: str
    result_files: tuple[FileEntry, ...]
    other_files: tuple[FileEntry, ...] = ()
    params: tuple[CheckerParams, ...] = ()  # submitter level first, then system, then benchmark level
    #: (power/<run>/, its file names) pairs; None: no power/. Plain tuples: a folder crosses process boundaries.
    power: tuple[tuple[str, tuple[str, ...]], ...] | None = None


@dataclass(frozen=True, slots=True)
class BenchmarkResult:
    """One benchmark folder with its parsed runs and its `scaling.json` (if any)."""

    folder: BenchmarkFolder
    runs: tuple[Run, ...]
    scaling: Mapping[str, Any] | None = None
    issues: tuple[Issue, ...] = ()
    #: What the core read once for the folder's rules and scorer (`power_logs`); dropped with the result.
    _derived: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def submitter(self) -> str | None:
        return self.folder.submitter

    @property
    def system(self) -> str | None:
        return self.folder.system

    @property
    def benchmark(self) -> str:
        return self.folder.benchmark

    @property
    def path(self) -> str:
        return self.folder.path


@dataclass(frozen=True, slots=True)
class SystemDescription:
    """`systems/<system>.json`; `data` is None when the file could not be read as an object."""

    name: str
    path: str
    submitter: str | None
    data: Mapping[str, Any] | None
    issues: tuple[Issue, ...] = ()
    field_lines: Mapping[str, int] = field(default_factory=dict)  # line of each top-level field, for findings

    def get(self, name: str) -> Any:
        return None if self.data is None else self.data.get(name)

    def count(self, name: str, signed: bool = False) -> int | None:
        """A count field (`number_of_nodes`, `accelerators_per_node`, `host_processors_per_node`)
        as a whole number from 0 to `MAX_COUNT` (from -`MAX_COUNT` if `signed`: the official
        summarizer's `int()` takes "-1", and its tables show what it computes), else None.

        Descriptions write counts as digit strings ("8") or JSON numbers (8, 1.0); anything else
        is None here and SYS002 there: booleans, '1²' and other digits `int` refuses or `isdigit`
        misreads, '1_000', numbers of hundreds of digits (a rate divided by one overflows a float,
        their product is past the int-to-str limit). Code that computes with a count reads it here,
        never with `int()` of the raw value."""
        value = self.get(name)
        lowest = -MAX_COUNT if signed else 0
        if isinstance(value, str):
            digits = value.strip()
            sign = -1 if signed and digits.startswith("-") else 1
            digits = digits[1:] if sign < 0 else digits
            if not (digits.isascii() and digits.isdigit()):
                return None
            significant = digits.lstrip("0")
            return sign * int(significant or "0") if len(significant) <= MAX_COUNT_DIGITS else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float) and not value.is_integer():  # NaN and the infinities included
            return None
        return int(value) if lowest <= value <= MAX_COUNT else None

    @property
    def division(self) -> str | None:
        value = self.get("division")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class Implementation:
    """One `benchmarks/<benchmark>/implementations/<name>/` folder: the code behind some results.

    `files` are the files found up to `IMPLEMENTATION_DEPTH` folders deep (names and sizes, not
    contents: implementations hold whole frameworks, and rules read only the few files they need).
    A `benchmarks/<benchmark>/` folder without `implementations/` but with code is one
    implementation named after the benchmark, `placed` False (the rules ask for the standard place)."""

    benchmark: str
    name: str
    path: str  # display path of the folder
    files: tuple[FileEntry, ...] = ()
    truncated: bool = False  # more files than discovery lists
    placed: bool = True  # under implementations/<name>/, as the submission rules ask

    def relative(self, entry: FileEntry) -> str:
        """A file's path inside the implementation folder."""
        return entry.path[len(self.path) + 1 :] if entry.path.startswith(self.path + "/") else entry.path


@dataclass(frozen=True, slots=True)
class Submission:
    """One submitter's folder: its system descriptions, its benchmark folders and their code."""

    name: str
    path: str
    systems: tuple[SystemDescription, ...]
    benchmarks: tuple[BenchmarkFolder, ...]
    system_dirs: tuple[str, ...] = ()  # names of the folders under results/
    #: `benchmarks/<benchmark>` folders, by name; None when the submission's benchmarks/ was not
    #: looked at (a PATH below the submitter folder), empty when the folder holds no benchmarks/.
    source_dirs: tuple[str, ...] | None = None
    implementations: tuple[Implementation, ...] = ()
    #: The systems by name, built at the first `system` call (rules ask once per benchmark folder).
    _by_name: dict[str, SystemDescription] = field(default_factory=dict, init=False, repr=False, compare=False)

    def path_of(self, relative: str) -> str:
        """The display path of `relative` (e.g. "benchmarks") inside this submitter folder."""
        return relative if self.path == "." else f"{self.path}/{relative}"

    def system(self, name: str) -> SystemDescription | None:
        """The (first) system description of that name."""
        if self.systems and not self._by_name:
            for system in self.systems:
                self._by_name.setdefault(system.name, system)
        return self._by_name.get(name)


class TargetKind(enum.Enum):
    REPOSITORY = "results repository"
    SUBMISSION = "submission"
    SYSTEM = "system folder"
    BENCHMARK = "benchmark folder"
    LOG_FILE = "log file"
    UNKNOWN = "folder"


@dataclass(frozen=True, slots=True)
class Tree:
    """Everything discovery found under the checked PATH."""

    root: Path = field(compare=False)
    kind: TargetKind
    submissions: tuple[Submission, ...]
    loose_logs: tuple[FileEntry, ...] = ()  # logs outside any benchmark folder (a single file PATH)
    issues: tuple[Issue, ...] = ()
    subset: bool = False  # only some submitters of the repository are checked (a pull request's)
    #: With `subset`, the names of the repository's other submitters: not checked, but a rule that
    #: compares names across submitters (PKG030) compares the checked ones with them.
    others: tuple[str, ...] = ()

    @property
    def benchmark_folders(self) -> tuple[BenchmarkFolder, ...]:
        return tuple(b for s in self.submissions for b in s.benchmarks)

    @property
    def result_file_count(self) -> int:
        return sum(len(b.result_files) for b in self.benchmark_folders) + len(self.loose_logs)


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a rule found, located as precisely as the input allows."""

    rule: str
    name: str
    severity: Severity
    message: str
    path: str | None = None
    line: int | None = None
    submitter: str | None = None
    system: str | None = None
    benchmark: str | None = None
    hint: str | None = None
    waived_by: str | None = None  # the reason of the waiver that accepted it, when waived
    #: Other places the finding is about, as (path, line): the log that a configuration disagrees with, say.
    related: tuple[tuple[str, int | None], ...] = ()
    #: The fingerprint of the finding this one follows from (`Rule.follows_from`): its cause, at
    #: the same file or in the folder this finding is about. Set after the check (`causes.link`).
    caused_by: str | None = None

    @property
    def location(self) -> str:
        """`path:line`, the path alone, or "-" for a finding about the whole PATH."""
        if self.path is None:
            return "-"
        return f"{self.path}:{self.line}" if self.line else self.path

    @property
    def fingerprint(self) -> str:
        """Stable across edits that move lines: the rule, the file and the message without line numbers;
        computed on the text as shown (`safety.visible`), so a finding and its escaped copy in the
        report have one fingerprint."""
        message = re.sub(r"\blines? [\d, .]+(and \d+ more)?", "line", visible(self.message))
        digest = hashlib.sha256(f"{self.rule}|{visible(self.path or '')}|{message}".encode()).hexdigest()
        return digest[:32]

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.submitter or "",
            self.system or "",
            self.benchmark or "",
            natural_key(self.path or ""),
            self.line or 0,
            self.rule,
            self.message,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "submitter": self.submitter,
            "system": self.system,
            "benchmark": self.benchmark,
            "hint": self.hint,
            "fingerprint": self.fingerprint,
            "waived_by": self.waived_by,
            "related": [{"path": path, "line": line} for path, line in self.related],
            "caused_by": self.caused_by,
        }


def open_binary(source: Any) -> Any:
    """Opens a file to read bytes: a path on disk, or an archive member (anything with `open()`)."""
    if not isinstance(source, (str, Path)) and hasattr(source, "open"):
        return source.open()
    return open(source, "rb")


def read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """A file's bytes, up to `limit` and one more (which tells a file over the limit). The read is
    sized by the file's own size where the stream tells it: asking for the limit makes every read
    allocate the limit (256 MiB for a log) before giving back what the file held."""
    try:
        size = os.fstat(stream.fileno()).st_size
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):  # an archive member, a pipe
        size = 0
    data = stream.read(min(size, limit) + 1)
    if size < len(data) <= limit:  # it grew while it was read, or told no size: the rest, up to the limit
        data += stream.read(limit + 1 - len(data))
    return data


_DIGIT_RUN = re.compile(r"([0-9]+)")


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort result_2 before result_10.

    Digit runs are ASCII only ('²' and other characters `str.isdigit` accepts are text, which
    `int` refuses) and are compared by length once leading zeros are dropped, then as text: the
    order of their values, with no `int` (a name of thousands of digits is past the int-to-str
    limit, and converting it costs time quadratic in its length). Runs sit at odd positions of the
    split and text at even ones, so two keys never compare text with a digit run."""
    parts: list[Any] = _DIGIT_RUN.split(text)
    for index in range(1, len(parts), 2):
        digits = parts[index].lstrip("0")
        parts[index] = (len(digits), digits)
    return tuple(parts)
