"""Check a submission shipped as `.tar.gz`, `.tgz`, `.tar` or `.zip`, read without extracting to disk.

An archive is refused (exit code 2) when a member's name is absolute or climbs out with `..`, when
a link points outside the archive (tar symlinks and hard links; links inside it are not followed),
or when it would expand past the limits below. Members are read lazily, one at a time, into
memory, and never written anywhere.
"""

from __future__ import annotations

import io
import os
import posixpath
import tarfile
import zlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .errors import TargetError

#: Largest total uncompressed size an archive may declare.
MAX_TOTAL_BYTES = 2 << 30
#: Most members an archive may hold.
MAX_MEMBERS = 200_000
SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(SUFFIXES)


@dataclass(frozen=True)
class ArchiveMember:
    """A regular file inside an archive: what `FileEntry.fs_path` holds for archived files."""

    archive: "Archive" = field(repr=False, compare=False)
    name: str
    size: int

    def open(self) -> BinaryIO:
        return io.BytesIO(self.archive.read(self.name, self.size))

    def __fspath__(self) -> str:  # for messages only: never opened through the file system
        return f"{self.archive.path}!{self.name}"


class Archive:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: dict[str, int] = {}  # member name -> size
        self.dirs: set[str] = {""}
        self.special: list[str] = []
        self._names: dict[str, str] = {}  # clean member name -> the name in the archive
        self._zip: zipfile.ZipFile | None = None
        self._tar: tarfile.TarFile | None = None
        self._pid = os.getpid()  # a forked worker shares the parent's file offset: it opens its own handle
        try:
            if path.name.lower().endswith(".zip"):
                self._zip = zipfile.ZipFile(path)
                entries = [(i.filename, i.file_size, "dir" if i.is_dir() else "file", None) for i in self._zip.infolist()]
            else:
                self._tar = tarfile.open(path, "r:*")
                entries = []
                for member in self._tar.getmembers():
                    kind = ("dir" if member.isdir() else "file" if member.isfile()
                            else "link" if member.issym() or member.islnk() else "special")
                    entries.append((member.name, member.size, kind, member.linkname or None))
        except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as error:
            raise TargetError(f"{path}: not a readable archive ({error})") from None
        if len(entries) > MAX_MEMBERS:
            raise TargetError(f"{path}: {len(entries)} members, more than the {MAX_MEMBERS} allowed")
        total = 0
        for name, size, kind, link in entries:
            clean = self._clean(name)
            if kind == "link":
                target = posixpath.normpath(posixpath.join(posixpath.dirname(clean), link or ""))
                if (link or "").startswith("/") or target.startswith("../") or target == "..":
                    raise TargetError(f"{path}: refusing {name!r}: a link to {link!r} leaves the archive")
                self.special.append(clean)
                continue
            if kind == "special":
                self.special.append(clean)
                continue
            parts = clean.split("/")
            for depth in range(1, len(parts)):
                self.dirs.add("/".join(parts[:depth]))
            if kind == "dir":
                self.dirs.add(clean)
                continue
            total += size
            if total > MAX_TOTAL_BYTES:
                raise TargetError(f"{path}: expands past {MAX_TOTAL_BYTES >> 30} GiB; refusing to read it")
            self.files[clean] = size
            self._names[clean] = name

    def _clean(self, name: str) -> str:
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
            raise TargetError(f"{self.path}: refusing the absolute member name {name!r}")
        clean = posixpath.normpath(name.replace("\\", "/")).strip("/")
        if clean == ".." or clean.startswith("../") or "/../" in f"/{clean}/":
            raise TargetError(f"{self.path}: refusing {name!r}: it climbs out of the archive")
        return "" if clean == "." else clean

    def __getstate__(self) -> dict[str, object]:
        """Sent to worker processes without its open handles; they reopen the file when they read."""
        state = dict(self.__dict__)
        state["_zip"] = state["_tar"] = None
        return state

    def _open(self) -> None:
        if self._pid != os.getpid():
            self._zip = self._tar = None  # the parent's handle: never read or close it from here
            self._pid = os.getpid()
        if self._zip is None and self._tar is None:
            if self.path.name.lower().endswith(".zip"):
                self._zip = zipfile.ZipFile(self.path)
            else:
                self._tar = tarfile.open(self.path, "r:*")

    def read(self, name: str, size: int) -> bytes:
        """The member's bytes (at most its declared size + 1); a damaged, encrypted or unsupported member
        raises OSError, which every reader reports as an unreadable file."""
        try:
            return self._read(name, size)
        except OSError:
            raise
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, RuntimeError, NotImplementedError, ValueError,
                zlib.error) as error:
            raise OSError(f"damaged archive member: {type(error).__name__}: {error}") from None

    def _read(self, name: str, size: int) -> bytes:
        self._open()
        if self._zip is not None:
            with self._zip.open(self._original(name)) as stream:  # at most the declared size (+1 to notice more)
                return stream.read(size + 1)[: size + 1]
        assert self._tar is not None
        extracted = self._tar.extractfile(self._tar.getmember(self._original(name)))
        return extracted.read(size + 1) if extracted is not None else b""

    def _original(self, name: str) -> str:
        return self._names[name]

    def children(self, folder: str) -> tuple[list[str], list[str]]:
        """(sub-folder names, file names) directly inside `folder` ("" for the top)."""
        prefix = f"{folder}/" if folder else ""
        dirs = sorted({d[len(prefix):].split("/")[0] for d in self.dirs if d.startswith(prefix) and d != folder and d})
        files = sorted(f[len(prefix):] for f in self.files if f.startswith(prefix) and "/" not in f[len(prefix):])
        return dirs, files

    def member(self, name: str) -> ArchiveMember:
        return ArchiveMember(self, name, self.files[name])
