"""Whole checks kept in the cache: a tree checked again, unchanged, under the same rules, is not
checked again (the edit-check loop of a submitter who re-runs before and after looking elsewhere).

An entry is the outcome of one check (findings, scores, what was checked), filed under a SHA-256
of everything the outcome depends on, so that nothing stale can be read:

- the code: every file of the packages of the loaded plugins (the built-in rule packs included),
  of mlperf_audit and of mlperf-logging (whose rule files and references the rules read), with the
  Python and msgspec versions;
- the configuration in force (the ruleset resolved, select, ignore, partial, the notes) and the
  bytes of the waivers and baseline files it names; whether scores were asked for; the submitters;
- the tree: the real path of PATH and, for every file, folder and link under it (links are listed,
  never followed), its path, type, size, inode, and its modification and change times in
  nanoseconds; for a system or benchmark folder, under the whole submission around it, whose
  descriptions and code its check reads. Any write to a file changes its change time, which no user can set back, so an
  edited file is a new key even if its size and modification time were restored. (A fresh checkout
  has new change times: in CI this cache misses, and the parse cache, keyed by content, serves.)
  That state is taken before discovery reads anything and again once the check is done; an
  outcome is kept only when both agree, so a file rewritten while it was checked never files the
  verdict on its old bytes under the key of its new ones.

Entries share the parse cache's safety (`mlperf_audit.reading.cache`): plain msgpack decoded against a
fixed schema (the report's own dataclasses and plain values; nothing can name a type or run code),
read only as regular files through folders that are not links, bounded in size, written whole,
and any entry that does not fit is a miss. A check that crashed a rule, or that could not read a
file or folder (perhaps for a moment: a network mount, too many open files), is not kept.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Sequence

import msgspec

from ..config import Config
from ..model import Finding
from ..reading.cache import CHECK_FOLDER, ParseCache
from ..report import PluginInfo
from ..scores import BenchmarkScore
from .checks import CheckOutcome
from .crashes import INTERNAL_RULE

#: An entry larger than this is neither written nor read (the v4.1 round's is under 1 MiB).
ENTRY_LIMIT = 64 << 20


class _Stored(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    key: str
    findings: list[Finding]
    runs_checked: int
    checked: list[tuple[str, str]]
    processes: list[int]
    fallback: str | None
    scores: list[BenchmarkScore]
    unreported: dict[str, int]
    #: what a collecting pass gathered (the report's curves), as plain values; last, so that an
    #: entry written before it was kept still reads
    collected: dict[str, Any] = {}


class _Seen(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    """That a PATH was checked before (`CheckCache.seen_before`)."""

    key: str


def _no_extension(code: int, data: memoryview) -> Any:
    raise ValueError("a cache entry holds no msgpack extension types")


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_Stored, ext_hook=_no_extension)
_SEEN = msgspec.msgpack.Decoder(_Seen, ext_hook=_no_extension)


class CheckCache(ParseCache):
    """The outcomes of whole checks, in the cache folder's `check-v1`."""

    folder = CHECK_FOLDER

    def load_outcome(self, key: str) -> CheckOutcome | None:
        entry = self._read_entry(key, _DECODER, ENTRY_LIMIT)
        if not isinstance(entry, _Stored):
            self.misses += 1
            return None
        self.hits += 1
        return CheckOutcome(
            list(entry.findings),
            entry.runs_checked,
            [tuple(pair) for pair in entry.checked],  # type: ignore[misc]
            frozenset({os.getpid()}),  # no folder was checked by any process this time
            None,
            list(entry.scores),
            dict(entry.collected),
            dict(entry.unreported),
            kept=True,
        )

    def seen_before(self, target: Path, kind: str = "check") -> bool:
        """Whether PATH was checked before (and remembers that it now was).

        Parsed files are kept only from a PATH's second check on: the first look at a tree
        (a download, a fresh clone) would pay for writing entries that only pay back when the
        tree is checked again after an edit, and a cold check must not be slower than --no-cache.
        An unchanged tree checked again is answered whole by its outcome."""
        key = hashlib.sha256(f"seen {kind}\0".encode() + os.fsencode(os.path.realpath(target))).hexdigest()
        if isinstance(self._read_entry(key, _SEEN, 1024), _Seen):
            return True
        self._write_entry(key, _ENCODER.encode(_Seen(key)))
        return False

    def store_outcome(self, key: str, outcome: CheckOutcome) -> None:
        if outcome.unreadable or outcome.unscored or any(finding.rule == INTERNAL_RULE for finding in outcome.findings):
            return  # a crash, a failed read or a failed scorer is not a verdict to keep (a later
            # `score` would find no score where it fails)
        try:
            blob = _ENCODER.encode(
                _Stored(
                    key,
                    outcome.findings,
                    outcome.runs_checked,
                    outcome.checked,
                    sorted(outcome.processes),
                    outcome.parallel_fallback,
                    outcome.scores,
                    outcome.unreported,
                    outcome.collected,  # plain values: `api.review` keeps only a plain collector's
                )
            )
        except (OverflowError, RecursionError, TypeError, ValueError):  # a value msgpack cannot hold
            return
        if len(blob) <= ENTRY_LIMIT:
            self._write_entry(key, blob)


def tree_state(target: Path, config: Config) -> bytes | None:
    """A digest of the metadata of everything a check of `target` may read (`_add_tree` over
    `_read_scope`), or None when it cannot be told (nothing is then kept). Taken before discovery
    reads anything and again after the check: an outcome is kept only when both agree, so a file
    rewritten while it was being checked never files the old verdict under the new state's key."""
    digest = hashlib.sha256()

    def add(*parts: Any) -> None:
        for part in parts:
            digest.update(repr(part).encode("utf-8", "surrogateescape") + b"\0")

    try:
        real = Path(os.path.realpath(target))
        add(os.fspath(real), _stat(os.lstat(target)))
        skip = os.path.realpath(config.cache_dir) if config.cache_dir else None
        _add_tree(_read_scope(real), add, skip)  # PATH as named may be a link: its target is read
    except (OSError, ValueError, RecursionError):  # unreadable, too large, or nested past the walk's reach
        return None
    return digest.digest()


def check_keys(
    state: bytes,
    config: Config,
    plugins: Sequence[PluginInfo],
    *,
    score: bool,
    submitters: Sequence[str] | None,
    kinds: Sequence[str],
) -> list[str] | None:
    """The entry name of each kind of work ("check", or a collector's: `api._collect_kind`) on the tree
    whose `tree_state` is `state`; None when it cannot be told (nothing is then kept)."""
    if any(plugin.distribution == IN_PROCESS for plugin in plugins):
        return None  # a plugin object given by a library caller may hold any state: not keyed
    digest = hashlib.sha256()

    def add(*parts: Any) -> None:
        for part in parts:
            digest.update(repr(part).encode("utf-8", "surrogateescape") + b"\0")

    # an entry point is "package.module" or "package.module:attribute"
    tops = sorted({plugin.module.split(":", 1)[0].split(".", 1)[0] for plugin in plugins} | _ALWAYS)
    add(CHECK_FOLDER, sys.version, sys.path, _dependencies(), _code_digest(tuple(tops)))
    add(sorted((plugin.name, plugin.module, plugin.distribution, plugin.version) for plugin in plugins))
    # waivers expire by date: a kept outcome is the day's
    add(config.to_dict(), config.ruleset_inferred, score, submitters, datetime.date.today().isoformat())
    try:
        for named in (config.waivers, config.baseline):
            add(_small_file(named) if named else None)
    except (OSError, ValueError):  # unreadable or too large: the check reports it
        return None
    add(state)
    tree = digest.digest()
    return [hashlib.sha256(tree + repr(kind).encode()).hexdigest() for kind in kinds]


#: Always part of the code: the core, and mlperf-logging, whose rule files and references the rules read.
_ALWAYS = frozenset({"mlperf_audit", "mlperf_logging"})
IN_PROCESS = "(registered in-process)"


def _small_file(name: str) -> bytes:
    """A waivers or baseline file's bytes (a file too large, or no regular file, is not keyed: the
    check reports it)."""
    with open(name, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > SMALL_FILE_LIMIT:
            raise ValueError(f"{name}: not a small regular file")
        return stream.read(SMALL_FILE_LIMIT + 1)


SMALL_FILE_LIMIT = 16 << 20


def _stat(info: os.stat_result) -> tuple[int, ...]:
    return info.st_mode, info.st_size, info.st_ino, info.st_dev, info.st_mtime_ns, info.st_ctime_ns


def _read_scope(resolved: Path) -> Path:
    """The folder whose every file a check of `resolved` may read: a system or benchmark folder of
    a submission (`<submitter>/results/<system>[/<benchmark>]`, beside a real systems/ or
    benchmarks/ folder) is read with the descriptions and code of its submission around it. Told
    from the path alone, before discovery has looked at anything."""
    for depth in (1, 2):
        if len(resolved.parents) > depth + 1 and resolved.parents[depth - 1].name == "results":
            root = resolved.parents[depth]
            if any((root / name).is_dir() and not (root / name).is_symlink() for name in ("systems", "benchmarks")):
                return root
    return resolved


def _add_tree(target: Path, add: Any, skip: str | None) -> None:
    """Every file, folder and link under `target` (links listed, never walked), by its metadata; a
    link also by what it finally leads to, so a link that passes through another, outside PATH,
    changes the key when that one is pointed elsewhere. `skip`: the cache's own folder."""

    def entry(path: str, relative: str) -> bool:
        """Adds the entry; whether it is a real folder (not a link to one) to walk into."""
        info = os.lstat(path)
        add(relative, _stat(info))
        if stat.S_ISLNK(info.st_mode):
            final = os.path.realpath(path)
            try:
                leads_to: tuple[int, ...] | None = _stat(os.stat(path))
            except OSError:  # a broken link
                leads_to = None
            add(os.readlink(path), final, leads_to)
        return stat.S_ISDIR(info.st_mode)

    root = os.fspath(target)
    if not entry(root, "."):
        return
    # each folder with its path from the root: os.path.relpath splits both paths, every level of
    # them, and made a tree 1,100 folders deep cost a million calls
    pending = [(root, ".")]
    while pending:  # not os.walk, which recurses: a folder may nest as deep as anyone made it
        folder, relative = pending.pop()
        with os.scandir(folder) as listing:
            names = sorted(item.name for item in listing)
        for name in names:
            path = os.path.join(folder, name)
            if path == skip:  # the cache's own folder: its writes are not the tree's
                continue
            if entry(path, os.path.join(relative, name)):
                pending.append((path, name if relative == "." else os.path.join(relative, name)))


@functools.cache
def _dependencies() -> tuple[tuple[str, str], ...]:
    """The installed versions of what mlperf-audit depends on (their messages reach findings)."""
    versions = []
    for requirement in importlib.metadata.requires("mlperf-audit") or ():
        name = re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0]
        try:
            versions.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            versions.append((name, ""))
    return tuple(sorted(versions))


@functools.cache
def _code_digest(tops: tuple[str, ...]) -> str:
    """Every file of the named top-level packages (or modules): the rules, their data, and the
    official rule files they read; each by its metadata, as the tree is (`_stat`: any write
    changes the change time, which no user can set back), a fifth of the time of reading them."""
    digest = hashlib.sha256()
    for top in tops:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):  # __main__, or a name that is not a module
            spec = None
        if spec is None:
            digest.update(f"{top}: absent\0".encode())
            continue
        places = list(spec.submodule_search_locations or ([spec.origin] if spec.origin else []))
        try:
            version = importlib.metadata.version(top.replace("_", "-"))
        except importlib.metadata.PackageNotFoundError:
            version = ""
        digest.update(f"{top} {version}\0".encode())
        for place in places:
            digest.update(os.fsencode(os.path.realpath(place)) + b"\0")
            if os.path.isfile(place):
                digest.update(repr(_stat(os.stat(place))).encode())
                continue
            for folder, dirs, files in os.walk(place):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    digest.update(os.path.relpath(path, place).encode("utf-8", "surrogateescape") + b"\0")
                    try:
                        digest.update(repr(_stat(os.stat(path))).encode())
                    except OSError:
                        digest.update(b"unreadable\0")
    return digest.hexdigest()
