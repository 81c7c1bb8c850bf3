"""The lines findings point at, quoted from the package: the evidence an objection cites.

Read only for a format that asks for them (`Format.quotes`: `--format objection`), after the check,
from the files discovery found (a log, a file of a benchmark folder or of an implementation, an
archive member) or a system description inside the checked folder: never through a link that
leads out of it. A line is read up to the parser's limit and quoted up to `MAX_QUOTE` characters;
the `Report` shows it `visible`, and each format escapes it for its own syntax.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterable

from ..archives import DECODE_ERRORS
from ..model import Finding, Severity, Tree, open_binary
from .parser import MAX_LINE_BYTES

#: A quoted record longer than this is cut (with "…"): a log line can be a megabyte.
MAX_QUOTE = 500


@dataclass(frozen=True)
class Quote:
    """Line `line` of the file `path` (as findings name it), as written."""

    path: str
    line: int
    text: str


def _sources(tree: Tree) -> dict[str, Any]:
    """What to open for each file a finding may name: discovery's entries, by display path."""
    found: dict[str, Any] = {}
    for entry in tree.loose_logs:
        found.setdefault(entry.path, entry.fs_path)
    for submission in tree.submissions:
        for folder in submission.benchmarks:
            for entry in (*folder.result_files, *folder.other_files):
                found.setdefault(entry.path, entry.fs_path)
        for implementation in submission.implementations:
            for entry in implementation.files:
                found.setdefault(entry.path, entry.fs_path)
    return found


def _system_description(tree: Tree, path: str) -> Path | None:
    """A system description's file, if it is a regular file inside the checked folder."""
    if not any(system.path == path for submission in tree.submissions for system in submission.systems):
        return None
    root = Path(tree.root)
    if root.is_file():
        root = root.parent
    candidate = root / path
    try:
        inside = os.path.commonpath([os.path.realpath(candidate), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:  # another drive
        return None
    return candidate if inside and candidate.is_file() else None


def _lines(stream: BinaryIO, wanted: set[int]) -> dict[int, str]:
    """The `wanted` lines of `stream` (numbered from 1), each read up to MAX_LINE_BYTES."""
    found: dict[int, str] = {}
    last = max(wanted)
    number = 0
    while number < last:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        number += 1
        rest = raw
        while not rest.endswith(b"\n") and len(rest) == MAX_LINE_BYTES + 1:  # the rest of a long line: skipped
            rest = stream.readline(MAX_LINE_BYTES + 1)
        if number in wanted:
            text = raw[:MAX_LINE_BYTES].decode("utf-8", errors="replace").rstrip("\r\n")
            found[number] = text if len(text) <= MAX_QUOTE else text[:MAX_QUOTE] + "…"
    return found


def quotes(tree: Tree, findings: Iterable[Finding], lowest: Severity = Severity.WARNING) -> tuple[Quote, ...]:
    """The line of every finding at `lowest` or above that names a file and a line, and of the
    places it relates to; a file that cannot be read gives no quote."""
    wanted: dict[str, set[int]] = {}
    for finding in findings:
        if finding.severity.rank < lowest.rank or finding.waived_by:
            continue
        for path, line in ((finding.path, finding.line), *finding.related):
            if isinstance(path, str) and isinstance(line, int) and line > 0:
                wanted.setdefault(path, set()).add(line)
    if not wanted:
        return ()
    sources = _sources(tree)
    quoted: list[Quote] = []
    for path, lines in sorted(wanted.items()):
        source = sources.get(path) or _system_description(tree, path)
        if source is None:
            continue
        try:
            with open_binary(source) as stream:
                found = _lines(stream, lines)
        except (OSError, *DECODE_ERRORS):  # gone, unreadable, a damaged archive: no quote
            continue
        quoted += [Quote(path, number, text) for number, text in sorted(found.items())]
    return tuple(quoted)
