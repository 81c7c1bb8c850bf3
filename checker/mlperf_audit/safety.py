"""What checked data may put into output, and where output may go.

Everything a package holds is hostile: a file name or a log value may carry a newline followed by
a GitHub workflow command, terminal escapes, bidirectional-text controls, invisible characters, or
bytes that are not UTF-8. Every format shows such characters visibly (`visible`), no line of
plain-text output can start a workflow command (`no_workflow_commands`), and no text cell of a
CSV file starts a spreadsheet formula (`spreadsheet_text`). Every command that writes a file asks
`output_path` first, so nothing is ever written into a checked PATH, through a link or not.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import stat
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, overload

from .archives import SUFFIXES as ARCHIVE_SUFFIXES
from .errors import AuditError


def _default_ignorable() -> list[tuple[int, int]]:
    """The Default_Ignorable_Code_Point property as ranges of code points, from the Unicode data
    shipped in `data/default_ignorable.txt` (Python's `unicodedata` has no such property):
    characters a renderer shows as nothing, such as the combining grapheme joiner U+034F,
    variation selectors, Khmer inherent vowels, musical beam controls and tags."""
    table = resources.files("mlperf_audit").joinpath("data/default_ignorable.txt").read_text(encoding="utf-8")
    ranges = []
    for line in table.splitlines():
        field = line.partition("#")[0].partition(";")[0].strip()
        if field:
            first, _, last = field.partition("..")
            ranges.append((int(first, 16), int(last or first, 16)))
    return ranges


def _character_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The body of a regular expression's character class for `ranges`, adjacent and overlapping
    ones merged: the matcher tries a class's ranges one by one, so fewer is faster (unmerged, the
    property's 27 lines made every search 2.2 times slower)."""
    merged: list[list[int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return "".join(f"\\U{first:08x}" + (f"-\\U{last:08x}" if last > first else "") for first, last in merged)


#: Characters never written as they are, besides C0 controls: DEL and C1 controls, line and
#: paragraph separators, interlinear annotations, the non-characters U+FFFE/U+FFFF (which XML 1.0
#: forbids), lone surrogates (undecodable bytes of a file name), and every default-ignorable code
#: point (the soft hyphen, zero-width, invisible and bidirectional formatting characters, the
#: Arabic letter mark, blank-looking Hangul fillers, variation selectors, the tag characters that
#: can smuggle invisible ASCII, and the rest of the property).
_HIDDEN_BEYOND_C0 = _character_class(
    [(0x7F, 0x9F), (0x2028, 0x2029), (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF), (0xD800, 0xDFFF), *_default_ignorable()]
)
#: The GitHub runner also obeys the older command syntax `##[command]` *anywhere* in a line of a
#: job's output (its legacy parser searches each line for it), so the first `#` of every `##[`
#: is written as `\x23` too.
_LEGACY_COMMAND = "#(?=#\\[)"
_HIDDEN = re.compile(f"[\x00-\x1f{_HIDDEN_BEYOND_C0}]|{_LEGACY_COMMAND}")
_NEWLINE_OR_TAB_KEPT = re.compile(f"[\x00-\x08\x0b-\x1f{_HIDDEN_BEYOND_C0}]|{_LEGACY_COMMAND}")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape: show the byte
        return f"\\x{code - 0xDC00:02x}"
    if code > 0xFFFF:  # `\u` takes exactly four digits: a fifth would be read as a separate character
        return f"\\U{code:08x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control, invisible or undecodable character written as a `\\xNN`,
    `\\uNNNN` or `\\UNNNNNNNN` escape, so that it can neither move the cursor, start a line,
    reorder what is shown, fail to encode as UTF-8 (or as XML 1.0) nor hold a legacy workflow
    command (`##[`). `keep_newlines` keeps line feeds and tabs (for text the tool itself composed
    over several lines)."""
    pattern = _NEWLINE_OR_TAB_KEPT if keep_newlines else _HIDDEN
    return pattern.sub(_escape, text)


@overload
def visible_data(data: dict[str, Any], *, keep_newlines: bool = False) -> dict[str, Any]: ...
@overload
def visible_data(data: Any, *, keep_newlines: bool = False) -> Any: ...
def visible_data(data: Any, *, keep_newlines: bool = False) -> Any:
    """A JSON-like document (dicts, lists, tuples, strings, numbers) with every string, keys
    included, made `visible`; a float that JSON cannot write (NaN, an infinity) becomes None and
    any other object its visible `str`, so that the document always encodes as strict JSON."""
    pattern = _NEWLINE_OR_TAB_KEPT if keep_newlines else _HIDDEN
    search, sub = pattern.search, pattern.sub

    def shown(value: Any) -> Any:  # exact types first: a report holds tens of thousands of values
        kind = type(value)
        if kind is str:
            return sub(_escape, value) if search(value) else value
        if kind is dict:
            return {(shown(key) if isinstance(key, str) else key): shown(item) for key, item in value.items()}
        if kind is list or kind is tuple:
            return [shown(item) for item in value]
        if kind is int or kind is bool or value is None:
            return value
        if isinstance(value, str):
            return sub(_escape, value)
        if isinstance(value, dict):
            return {(shown(key) if isinstance(key, str) else key): shown(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [shown(item) for item in value]
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, (bool, int)):
            return value
        return sub(_escape, str(value))

    return shown(data)


def json_document(data: Any, *, keep_newlines: bool = False) -> str:
    """`data` as indented, strict JSON (no NaN) that is valid UTF-8, every string `visible`."""
    return (
        json.dumps(visible_data(data, keep_newlines=keep_newlines), indent=2, ensure_ascii=False, allow_nan=False)
        + "\n"
    )


def html_text(text: str) -> str:
    """`text` for HTML or XML text and quoted attribute values: `visible`, then `&`, `<`, `>` and
    both quotes as character references, so that data can open no tag and leave no attribute."""
    return html.escape(visible(text), quote=True)


#: What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`,
#: tab and carriage return, and their full-width forms, which some spreadsheets read the same way.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def spreadsheet_text(text: str) -> str:
    """A text cell of a CSV file: `visible`, and with a single quote in front when it would start
    a formula (`=HYPERLINK(...)` in a system name), as OWASP recommends, so that a spreadsheet
    shows it as text. Numbers the tool writes as numbers are not text cells and keep their sign."""
    shown = visible(text)
    return "'" + shown if shown.startswith(_FORMULA_START) else shown


#: What ends a line for a reader that splits lines the way Python's `str.splitlines` does (a
#: superset of what a CI runner splits on).
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_COMMAND_START = re.compile(rf"(?:^|(?<=[{_LINE_BREAKS}]))([^\S{_LINE_BREAKS}]*)(:(?=:)|#(?=#\[))")


def no_workflow_commands(text: str) -> str:
    """Plain-text output with no line that a CI runner reads as a workflow command: the runner
    trims leading blanks (Unicode spaces included) and obeys a line that then starts with `::` (or
    the older `##[`), so such a line's first character is written as an escape (`\\x3a`, `\\x23`)."""
    return _COMMAND_START.sub(lambda m: m.group(1) + f"\\x{ord(m.group(2)):02x}", text)


class OutputError(AuditError):
    """An output file that must not or cannot be written: exit code 2."""


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


#: The output name that means standard output, as for most tools (`-o -`).
STANDARD_OUTPUT = "-"


#: Names of this process's own open descriptors: written where the descriptor points (appended
#: to, when it is a file: `-o /dev/stdout >> log` keeps the log), never replaced.
_DESCRIPTORS = re.compile(r"/dev/(?:stdout|stderr|fd/\d+)|/proc/(?:self|thread-self)/fd/\d+")


def _names_descriptor(output: str | os.PathLike[str]) -> bool:
    return _DESCRIPTORS.fullmatch(os.path.normpath(os.path.abspath(output))) is not None


def is_stream(output: str | os.PathLike[str]) -> bool:
    """`output` names standard output (`-`), one of this process's descriptors (`/dev/stdout`,
    `/dev/stderr`, `/dev/fd/N`), or something that is written to and never replaced: a character
    device (`/dev/null`, a terminal) or a pipe (a named FIFO), reached through links or not."""
    if os.fspath(output) == STANDARD_OUTPUT:
        return True
    try:
        if _names_descriptor(output):
            return True
    except ValueError:
        return False
    try:
        mode = os.stat(output).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def output_path(output: str | os.PathLike[str], checked: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Where a command may write `output`, resolved through every link; raises `OutputError` when
    that is inside a checked PATH (a checked log's own folder included; beside a checked archive
    is allowed, the archive itself is not), is a folder, or lies in a folder that does not exist.
    `-` is standard output; a character device or a pipe (`/dev/stdout`) is written to as it is,
    unless it lies inside a checked PATH.

    Every file a command writes goes through here, a second file derived from the first (a CSV
    pair) included, and the returned path is the one to open."""
    if os.fspath(output) == STANDARD_OUTPUT:
        return Path(STANDARD_OUTPUT)
    shown = visible(os.fspath(output))
    try:
        resolved = Path(os.path.realpath(output))
    except (OSError, ValueError) as error:
        raise OutputError(f"{shown}: not a usable output file ({error})") from None
    for target in checked:
        root = Path(os.path.realpath(target))
        if root.is_dir():
            inside = _within(resolved, root)
        elif root.name.lower().endswith(ARCHIVE_SUFFIXES):
            inside = resolved == root
        else:  # a single log: its folder is the package around it
            inside = _within(resolved, root.parent)
        if inside:
            raise OutputError(
                f"{shown}: will not write inside the checked PATH {visible(os.fspath(target))}; "
                "choose a file outside it"
            )
    if is_stream(output):
        return resolved
    if resolved.is_dir():
        raise OutputError(f"{shown}: is a folder; give a file name")
    if not resolved.parent.is_dir():
        raise OutputError(f"{shown}: the folder {visible(str(resolved.parent))} does not exist")
    return resolved


def write_text(
    output: str | os.PathLike[str], text: str, checked: Iterable[str | os.PathLike[str]] = (), *, append: bool = False
) -> Path:
    """Writes `text` (UTF-8; anything unencodable shown as an escape) to a file `output_path`
    allows; an OS error is an `OutputError` naming the file.

    A new file is written beside the target and renamed over it, so that a target hard-linked to
    a file of a checked tree is replaced, never written through; appending (a CI job summary)
    refuses a file with more than one link for the same reason."""
    path = output_path(output, checked)
    shown = visible(os.fspath(output))
    if os.fspath(output) == STANDARD_OUTPUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return path
    try:
        if is_stream(output):
            # A descriptor, a device or a pipe is opened as named, never created, replaced or
            # truncated; O_NONBLOCK only so that a FIFO nobody reads is an error rather than a
            # hang, then writes block as usual.
            flags = os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            handle = os.open(output, flags)
            os.set_blocking(handle, True)
            with os.fdopen(handle, "a", encoding="utf-8", errors="backslashreplace") as stream:
                if not _names_descriptor(output) and not _special(stream.fileno()):
                    raise OutputError(f"{shown}: was replaced by a file while it was opened")
                stream.write(text)
            return path
        if append:
            handle = os.open(
                path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666
            )
            with os.fdopen(handle, "a", encoding="utf-8", errors="backslashreplace") as stream:
                if os.fstat(stream.fileno()).st_nlink > 1:
                    raise OutputError(f"{shown}: has more than one hard link; will not append to it")
                stream.write(text)
            return path
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
                stream.write(text)
            os.chmod(temporary, 0o666 & ~_umask())
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        raise OutputError(f"cannot write {shown}: {error.strerror or error}") from None
    return path


def _special(descriptor: int) -> bool:
    mode = os.fstat(descriptor).st_mode
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
