"""Reading the text of a submission's code: a small text file's content, its line endings made one kind,
and names compared without case or punctuation. Every reader of the code (shell, Dockerfile, tracer) starts here.
"""

from __future__ import annotations

import re

from mlperf_audit import (
    FileEntry,
    limits,
    open_binary,
)

#: Text files larger than this are not read (configurations and Dockerfiles are a few KiB).
MAX_SOURCE_BYTES = 1 << 20


def read_text(entry: FileEntry) -> str | None:
    """A small text file's content, or None if it cannot be read or is too large."""
    if entry.size_bytes > MAX_SOURCE_BYTES:
        return None
    try:
        with open_binary(entry.fs_path) as stream:
            data = limits.read_at_most(stream, MAX_SOURCE_BYTES)
    except OSError:
        return None
    if len(data) > MAX_SOURCE_BYTES or b"\x00" in data[:8192]:
        return None
    return unix_newlines(data.decode("utf-8", errors="replace"))


def unix_newlines(text: str) -> str:
    """`text` with every line ending made LF: CRLF (Windows) and CR alone (classic Mac OS) too, so
    that whatever reads it by lines or matches a line's end sees one kind."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def normalized(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def first_word(name: str) -> str:
    return normalized(re.split(r"[_\-.\s]", name.strip("_-. "), maxsplit=1)[0]) if name else ""
