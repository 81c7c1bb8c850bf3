"""A cache of parsed result files, outside the checked package, so each file is parsed once.

`check` then `score` (or the next `check` of a submitter's edit-check loop) read a file's events
from here instead of decoding its JSON again, as ruff and pytest keep their caches. The cache is
input like any other (a shared ``$MLPERF_AUDIT_CACHE_DIR`` or a restored CI cache may hold anything),
so it is safe by construction rather than by care:

- an entry's key is a BLAKE2 digest of the file's bytes, its absolute path, the Python version and
  the source of the parser, model and cache modules, followed by the file's size: a changed byte,
  another file or another parser is another entry, so nothing stale is ever read (the path is part
  of the key so that copies of one file are parsed as often as distinct files are);
- an entry is plain data only, msgpack decoded by msgspec against a fixed schema: nothing in it can
  name a type, construct an object or run code (no pickle, no marshal), and anything that does not
  fit the schema is a miss. It holds its own key, so an entry copied or renamed under another key
  (a clean file's parse filed under a broken file's key) is a miss too;
- an entry is read only if it is a regular file reached without following a link, through folders
  that are not links either, and no larger than `entry_limit` (four times its source plus 1 MiB);
  a FIFO, a device, a link to /dev/zero or a huge file is a miss without being read. Entries are
  written whole (a 0600 temporary file renamed into place);
- the cache folder is used only if it is a real folder of the current user that nobody else can
  write to (`secure_directory`; a missing one is created 0700);
- the cache is best-effort: an entry that cannot be written, read or decoded is a miss, never a
  finding and never an error; the cache directory is never inside the checked PATH (see
  `mlperf_audit.config`).

Where: ``--cache-dir``, the ``cache-dir`` setting, ``$MLPERF_AUDIT_CACHE_DIR``, else
``$XDG_CACHE_HOME/mlperf-audit`` or ``~/.cache/mlperf-audit``; ``--no-cache`` turns it off,
``mlperf-audit cache prune --days N`` removes what no check used for N days (every read marks an
entry as used) and ``mlperf-audit cache clear`` empties it. Neither follows a link: they remove
regular files (`clear` also links, as links) inside the cache and nothing else.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator

import msgspec

from ..model import Issue, Launch, LogEvent, Problem

SUBFOLDER = "parse-v1"
#: Where whole checks are kept (`CheckCache`).
CHECK_FOLDER = "check-v1"
#: Where earlier versions pickled the RCP statistics (now shipped as data): never read, only removed.
OLD_RCP_FOLDER = "rcp-v1"
FOLDERS = (SUBFOLDER, CHECK_FOLDER, OLD_RCP_FOLDER)

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted as an entry must not wait for a writer.
_ENTRY = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def default_directory() -> Path:
    explicit = os.environ.get("MLPERF_AUDIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "mlperf-audit"


def directory_problem(path: Path) -> str | None:
    """Why the folder at `path` must not hold a cache (None: it may), without creating anything."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link (give the folder it points to instead)"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    user = os.geteuid()
    if info.st_uid != user:
        return f"it is owned by user id {info.st_uid}, not by you ({user})"
    if info.st_mode & 0o022:
        who = " and ".join(name for bit, name in ((0o020, "its group"), (0o002, "other users")) if info.st_mode & bit)
        return f"{who} can write to it (mode {stat.S_IMODE(info.st_mode):04o}; run `chmod go-w` on it)"
    return None


def secure_directory(path: Path) -> str | None:
    """Creates the cache folder `path` (and missing parents) with mode 0700 whatever the umask;
    returns None if it can hold a cache, else a one-line reason why not: a cache that someone else
    can write to could feed the checks forged parses."""
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if os.path.lexists(folder):
            break
        missing.append(folder)
    try:
        for folder in reversed(missing):
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                continue  # made by another process meanwhile: judged below like any existing folder
            handle = os.open(folder, _DIRECTORY)
            try:
                os.fchmod(handle, 0o700)  # the umask may have taken the owner's bits
            finally:
                os.close(handle)
    except OSError as error:
        return f"it cannot be created ({error.strerror or error})"
    return directory_problem(path)


#: The core's files whose code shapes an entry, from the package's folder: a change to any of them is a new cache.
FINGERPRINTED = ("reading/parser.py", "model.py", "reading/cache.py", "safety.py")


def _code_fingerprint() -> bytes:
    """What the entries depend on besides the file: this parser, model and entry layout, this Python."""
    digest = hashlib.blake2b(sys.version.encode() + msgspec.__version__.encode(), digest_size=16)
    core = Path(__file__).resolve().parents[1]
    for name in FINGERPRINTED:
        try:
            digest.update((core / name).read_bytes())
        except OSError:  # a zipped install: fall back on the version
            from .._version import __version__

            digest.update(__version__.encode())
    return digest.digest()


def entry_limit(source_size: int) -> int:
    """The largest entry for a source file of `source_size` bytes. An entry is about half of its
    source (msgpack of the events); a float written in 3 characters takes 9 bytes and an issue may
    quote a line in `repr` (up to 4 characters a byte), so 4x plus 1 MiB for the fixed texts holds
    any parse worth keeping. A larger entry is never written, and never read."""
    return 4 * source_size + (1 << 20)


@dataclass(frozen=True)
class Parsed:
    """A file's parse without its display path: what an entry stores."""

    events: tuple[LogEvent, ...]
    issues: tuple[Issue, ...]
    line_count: int
    launch: Launch | None = None


class _Entry(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    """The stored form of a `Parsed`: its key, then only strings, numbers and JSON values."""

    key: str
    line_count: int
    # key, value, time_ms, event_type, namespace, metadata, line
    events: list[tuple[str, Any, float, str | None, str | None, dict[str, Any], int]]
    issues: list[tuple[Problem, str, int | None, str | None]]  # problem, message, line, hint
    launch: tuple[str, str | None, str | None] | None = None  # container, nodes, platform


def _no_extension(code: int, data: memoryview) -> Any:
    raise ValueError("a cache entry holds no msgpack extension types")


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_Entry, ext_hook=_no_extension)


def _open_folder(parent: int | None, name: str | Path, create: bool) -> int:
    """The folder `name` (in `parent`, an open folder), opened without following a link."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:
        pass
    return os.open(name, _DIRECTORY, dir_fd=parent)


def _read_bounded(handle: int, limit: int) -> bytes | None:
    """The whole regular file `handle`, or None if it is not one or holds more than `limit` bytes."""
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        return None
    chunks: list[bytes] = []
    total = 0
    while True:  # a file that grows while it is read stops at the limit
        chunk = os.read(handle, min(limit + 1 - total, max(info.st_size + 1, 1 << 16)))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)


class ParseCache:
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._fingerprint = _code_fingerprint()
        self._usable: bool | None = None  # judged at the first read or write
        self.hits = 0
        self.misses = 0

    def key(self, absolute_path: str, data: bytes) -> str:
        """The entry name of `data` read from `absolute_path`; it ends in the size, which bounds the entry."""
        digest = hashlib.blake2b(self._fingerprint, digest_size=20)
        digest.update(absolute_path.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(data)
        return f"{digest.hexdigest()}-{len(data)}"

    def usable(self) -> bool:
        """Whether the folder may hold a cache (`secure_directory`, asked once); the caller of the
        tool reports the reason, this only refuses a folder that became unsafe since."""
        if self._usable is None:
            self._usable = secure_directory(self.directory) is None
        return self._usable

    folder = SUBFOLDER

    def _shard(self, key: str, create: bool) -> int:
        """The open folder that holds the entry `key`: every step opened without following a link."""
        handle = os.open(self.directory, _DIRECTORY)
        try:
            for name in (self.folder, key[:2]):
                inner = _open_folder(handle, name, create)
                os.close(handle)
                handle = inner
        except BaseException:
            os.close(handle)
            raise
        return handle

    def load(self, key: str, display_path: str) -> Parsed | None:
        entry = self._read(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        return Parsed(
            tuple(
                [
                    LogEvent(k, v, t, et, ns, MappingProxyType(md), display_path, ln)
                    for k, v, t, et, ns, md, ln in entry.events
                ]
            ),
            tuple([Issue(problem, message, display_path, line, hint) for problem, message, line, hint in entry.issues]),
            entry.line_count,
            Launch(*entry.launch) if entry.launch is not None else None,
        )

    def _read(self, key: str) -> _Entry | None:
        entry = self._read_entry(key, _DECODER, _limit(key))
        return entry if isinstance(entry, _Entry) else None

    def _read_entry(self, key: str, decoder: Any, limit: int) -> Any:
        """The entry `key`, decoded by `decoder` (a fixed schema whose first field is the key), or None."""
        if not self.usable():
            return None
        try:
            folder = self._shard(key, create=False)
        except OSError:
            return None
        try:
            handle = os.open(key, _ENTRY, dir_fd=folder)
        except OSError:  # absent, or a link (ELOOP)
            return None
        finally:
            os.close(folder)
        try:
            blob = _read_bounded(handle, limit)
            if blob is None:
                return None
            entry = decoder.decode(blob)
            if entry.key != key:  # filed under another name than its own
                return None
            try:
                os.utime(handle)  # marks it as used (`prune` removes what was not used for a while)
            except OSError:
                pass
            return entry
        except (OSError, ValueError, TypeError, RecursionError, OverflowError):  # cut short or not an entry
            return None
        finally:
            os.close(handle)

    def store(self, key: str, parsed: Parsed) -> None:
        try:
            blob = _ENCODER.encode(
                _Entry(
                    key,
                    parsed.line_count,
                    [
                        (e.key, e.value, e.time_ms, e.event_type, e.namespace, dict(e.metadata), e.line)
                        for e in parsed.events
                    ],
                    [(i.problem, i.message, i.line, i.hint) for i in parsed.issues],
                    (parsed.launch.container, parsed.launch.nodes, parsed.launch.platform) if parsed.launch else None,
                )
            )
        except (OverflowError, RecursionError, TypeError, ValueError):  # an int beyond 64 bits, nesting too deep
            return
        if len(blob) > _limit(key):
            return
        self._write_entry(key, blob)

    def _write_entry(self, key: str, blob: bytes) -> None:
        if not self.usable():
            return
        try:
            folder = self._shard(key, create=True)
        except OSError:  # read-only, full or gone: the next run computes it again
            return
        try:
            _write_whole(folder, key, blob)
        except OSError:
            return
        finally:
            os.close(folder)

    # `mlperf-audit cache`: none of these follows a link or creates the folder.

    def problem(self) -> str | None:
        """Why the folder cannot be used (None: it can, or it does not exist yet)."""
        return directory_problem(self.directory) if os.path.lexists(self.directory) else None

    def size(self) -> tuple[int, int]:
        """Parsed files held, and the bytes of every regular file held (old RCP statistics included)."""
        usage = self.usage()
        return usage[SUBFOLDER][0], sum(size for _, size in usage.values())

    def usage(self) -> dict[str, tuple[int, int]]:
        """Entries and bytes held in each of the cache's folders (`FOLDERS`): parsed files, kept
        checks, and the RCP statistics of earlier versions."""
        usage = dict.fromkeys(FOLDERS, (0, 0))
        for folder, _folder_fd, _name, info in self._files():
            count, total = usage[folder]
            usage[folder] = (count + 1, total + info.st_size)
        return usage

    def prune(self, days: float) -> tuple[int, int]:
        """Removes what no check used in the last `days` days; returns the files and bytes removed."""
        limit = time.time() - days * 86400
        count = freed = 0
        for _, folder_fd, name, info in self._files():
            if info.st_mtime < limit:
                try:
                    os.unlink(name, dir_fd=folder_fd)
                except OSError:
                    continue
                count, freed = count + 1, freed + info.st_size
        return count, freed

    def clear(self) -> None:
        """Removes the cache's folders; one that is a link (or a file) is removed itself, never its target."""
        try:
            root = os.open(self.directory, _DIRECTORY)
        except OSError:
            return
        try:
            for folder in FOLDERS:
                try:
                    info = os.stat(folder, dir_fd=root, follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode):
                        _remove_folder(root, folder)
                    else:
                        os.unlink(folder, dir_fd=root)
                except OSError:
                    continue
        finally:
            os.close(root)

    def _files(self) -> Iterator[tuple[str, int, str, os.stat_result]]:
        """(folder, open folder, name, lstat) of every regular file under the cache's folders; a
        link, to a file or to a folder, is neither followed nor listed, nor is a FIFO opened."""
        try:
            root = os.open(self.directory, _DIRECTORY)
        except OSError:
            return
        pending: list[int] = []
        try:
            for folder in FOLDERS:
                try:
                    pending.append(os.open(folder, _DIRECTORY, dir_fd=root))
                except OSError:
                    continue
                while pending:  # a loop, not recursion: the folders may nest as deep as anyone made them
                    handle = pending.pop()
                    try:
                        for name in os.listdir(handle):
                            try:
                                info = os.stat(name, dir_fd=handle, follow_symlinks=False)
                                if stat.S_ISDIR(info.st_mode):
                                    pending.append(os.open(name, _DIRECTORY, dir_fd=handle))
                            except OSError:  # gone, or swapped for a link since it was listed
                                continue
                            if stat.S_ISREG(info.st_mode):
                                yield folder, handle, name, info
                    except OSError:
                        continue
                    finally:
                        os.close(handle)
        finally:
            for handle in (root, *pending):
                os.close(handle)


def _remove_folder(parent: int, name: str) -> None:
    """Removes the folder `name` of the open folder `parent` and all it holds, by descriptors, never
    following a link (even one swapped in meanwhile), and leaving what cannot be removed, as
    `shutil.rmtree(name, dir_fd=parent, ignore_errors=True)` does; but in a loop holding one folder
    open: rmtree recurses before Python 3.13, and a folder may nest as deep as anyone made it."""

    def empty(handle: int) -> list[str]:
        """Removes the folder's other entries; returns its sub-folders."""
        folders = []
        try:
            with os.scandir(handle) as listing:
                for entry in listing:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            folders.append(entry.name)
                        else:
                            os.unlink(entry.name, dir_fd=handle)
                    except OSError:
                        continue
        except OSError:
            pass
        return folders

    try:
        handle = os.open(name, _DIRECTORY, dir_fd=parent)
    except OSError:
        return
    levels = [(name, empty(handle))]  # the folders entered, each with the sub-folders still to remove
    try:
        while True:
            folder, below = levels[-1]
            if below:
                inner = below.pop()
                try:
                    opened = os.open(inner, _DIRECTORY, dir_fd=handle)
                except OSError:  # gone, or swapped for a link: left
                    continue
                os.close(handle)
                handle = opened
                levels.append((inner, empty(handle)))
                continue
            levels.pop()
            if not levels:
                break
            above = os.open("..", _DIRECTORY, dir_fd=handle)
            os.close(handle)
            handle = above
            try:
                os.rmdir(folder, dir_fd=handle)
            except OSError:
                continue
    except OSError:
        pass
    finally:
        os.close(handle)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError:
        pass


def _limit(key: str) -> int:
    size = key.rpartition("-")[2]
    # ASCII digits only: `isdigit` accepts '²', which `int` refuses
    return entry_limit(int(size)) if size.isascii() and size.isdigit() and len(size) <= 18 else 0


def _write_whole(folder: int, name: str, blob: bytes) -> None:
    """Writes an entry whole into the open `folder`, then renames it into place, so that a reader
    in another process never sees half of one."""
    temporary = f".tmp-{secrets.token_hex(8)}"
    handle = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder
    )
    try:
        with open(handle, "wb", closefd=True) as stream:
            stream.write(blob)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise
