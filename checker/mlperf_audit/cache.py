"""A cache of parsed result files, outside the checked package, so each file is parsed once.

`check` then `score` (or the next `check` of a submitter's edit-check loop) read a file's events
from here instead of decoding its JSON again, as ruff and pytest keep their caches. It is safe by
construction rather than by care:

- an entry's key is a BLAKE2 digest of the file's bytes, its absolute path, the Python version and
  the source of the parser and model modules: a changed byte, another file or another parser is
  another entry, so nothing stale is ever read (the path is part of the key so that copies of one
  file are parsed as often as distinct files are, and benchmarks on replicated trees stay honest);
- entries hold only plain data, written with `marshal` (the fastest reader of plain data in the
  standard library), and the events are rebuilt with the display path of this check;
- the cache is best-effort: an entry that cannot be written, read or decoded is a miss, never a
  finding and never an error; the cache directory is never inside the checked PATH (see
  `mlperf_audit.config`).

Where: ``--cache-dir``, the ``cache-dir`` setting, ``$MLPERF_AUDIT_CACHE_DIR``, else
``$XDG_CACHE_HOME/mlperf-audit`` or ``~/.cache/mlperf-audit``; ``--no-cache`` turns it off,
``mlperf-audit cache prune --days N`` removes what no check used for N days (every read marks an
entry as used) and ``mlperf-audit cache clear`` empties it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .model import Issue, LogEvent

SUBFOLDER = "parse-v1"
#: Where `mlperf_audit_rules.rcp` keeps the RCP statistics.
RCP_FOLDER = "rcp-v1"
FOLDERS = (SUBFOLDER, RCP_FOLDER)


def default_directory() -> Path:
    explicit = os.environ.get("MLPERF_AUDIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "mlperf-audit"


def _code_fingerprint() -> bytes:
    """What the entries depend on besides the file: this parser, model and entry layout, this Python."""
    digest = hashlib.blake2b(sys.version.encode() + b"%d" % marshal.version, digest_size=16)
    here = Path(__file__).resolve().parent
    for name in ("parser.py", "model.py", "cache.py"):
        try:
            digest.update((here / name).read_bytes())
        except OSError:  # a zipped install: fall back on the version
            from . import __version__

            digest.update(__version__.encode())
    return digest.digest()


def write_entry(entry: Path, blob: bytes) -> None:
    """Writes a cache entry whole, then renames it into place, so that a reader in another
    process never sees half of one; a cache that cannot be written is left as it is."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(blob)
            os.replace(temporary, entry)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:  # read-only, full or gone: the next run computes it again
        return


def touch(entry: Path) -> None:
    """Marks an entry as used now (`prune` removes what was not used for a while)."""
    try:
        os.utime(entry)
    except OSError:
        pass


@dataclass(frozen=True)
class Parsed:
    """A file's parse without its display path: what an entry stores."""

    events: tuple[LogEvent, ...]
    issues: tuple[Issue, ...]
    line_count: int


class ParseCache:
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._fingerprint = _code_fingerprint()
        self.hits = 0
        self.misses = 0

    def key(self, absolute_path: str, data: bytes) -> str:
        digest = hashlib.blake2b(self._fingerprint, digest_size=20)
        digest.update(absolute_path.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / SUBFOLDER / key[:2] / key

    def load(self, key: str, display_path: str) -> Parsed | None:
        entry = self._entry(key)
        try:
            with open(entry, "rb") as stream:
                events, issues, line_count = marshal.loads(stream.read())
            rebuilt = Parsed(
                tuple([LogEvent(k, v, t, et, ns, MappingProxyType(md), display_path, ln)
                       for k, v, t, et, ns, md, ln in events]),
                tuple([Issue(code, message, display_path, line, hint) for code, message, line, hint in issues]),
                int(line_count),
            )
        except (OSError, EOFError, ValueError, TypeError):  # absent, cut short or not an entry: a miss
            self.misses += 1
            return None
        self.hits += 1
        touch(entry)
        return rebuilt

    def store(self, key: str, parsed: Parsed) -> None:
        try:
            blob = marshal.dumps((
                [(e.key, e.value, e.time_ms, e.event_type, e.namespace, dict(e.metadata), e.line) for e in parsed.events],
                [(i.code, i.message, i.line, i.hint) for i in parsed.issues],
                parsed.line_count,
            ))
        except (ValueError, TypeError):  # a value marshal cannot hold (nested too deeply): not cached
            return
        write_entry(self._entry(key), blob)

    def size(self) -> tuple[int, int]:
        """Parsed files held, and the bytes of everything held (RCP statistics included)."""
        count = total = 0
        for folder in FOLDERS:
            for path in (self.directory / folder).rglob("*"):
                if path.is_file():
                    count += folder == SUBFOLDER
                    total += path.stat().st_size
        return count, total

    def prune(self, days: float) -> tuple[int, int]:
        """Removes what no check used in the last `days` days; returns the files and bytes removed."""
        limit = time.time() - days * 86400
        count = freed = 0
        for folder in FOLDERS:
            for path in (self.directory / folder).rglob("*"):
                try:
                    info = path.stat()
                    if path.is_file() and info.st_mtime < limit:
                        path.unlink()
                        count, freed = count + 1, freed + info.st_size
                except OSError:
                    continue
        return count, freed

    def clear(self) -> None:
        for folder in FOLDERS:
            shutil.rmtree(self.directory / folder, ignore_errors=True)
