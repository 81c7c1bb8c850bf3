"""Check a submission shipped as `.tar.gz`, `.tgz`, `.tar` or `.zip`, read without extracting it.

Everything an archive holds is hostile. What is guaranteed:

- Refused (`TargetError`, exit code 2): an archive that cannot be opened or indexed; a member name
  that is absolute or climbs out with `..`; a tar link that leaves the archive (a symbolic link's
  target is relative to its own folder, a hard link's to the archive's top); more than
  `MAX_MEMBERS` members, or regular files declaring more than `MAX_TOTAL_BYTES` in all (a
  compressed tar may not decompress to more than that plus `MAX_TAR_OVERHEAD`); a zip whose end
  record declares more members or a larger central directory than allowed (before parsing it);
  and anything an extracting tool could read otherwise: two members with one name once cleaned,
  a member that is both a file and a folder, data after a tar's end.
- Linear: the archive is indexed once, in stored order. A compressed tar is decompressed once,
  into an anonymous file of the temporary folder (deleted when closed; it takes the tar's size on
  disk), and each member is then read at its own offset; a plain tar and a zip are read in place.
  Folder listings come from an index built with it.
- Bounded: opening a member reads nothing but a zip member's local header; reading it never
  produces more than the caller asked for, nor more than the member declares. No tar header
  record (pax, GNU long name) over `MAX_HEADER_RECORD` is read, and the maps of sparse members
  are skipped, never collected.
- A member that cannot be read as it declares (encrypted, an unknown compression method, a failed
  CRC, fewer bytes than its declared size, a sparse tar member) raises `OSError` when it is opened
  or read, which every reader reports as a finding on that file.
- Fork-safe: every read is a positioned read of one descriptor, so a forked worker that reads
  members never moves a file offset that its parent or a sibling relies on.
- Links are never followed, and nothing is extracted or written but the temporary file.
"""

from __future__ import annotations

import bisect
import bz2
import gzip
import io
import lzma
import os
import posixpath
import stat
import struct
import tarfile
import tempfile
import threading
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO, Callable

from .errors import TargetError

#: Largest total uncompressed size the regular files of an archive may declare.
MAX_TOTAL_BYTES = 2 << 30
#: Most members an archive may hold.
MAX_MEMBERS = 200_000
#: What a decompressed tar may hold besides its files' data: headers, padding, the end blocks.
MAX_TAR_OVERHEAD = 256 << 20
#: Largest tar header record read at once (a pax header, a GNU long name): real ones take a few
#: hundred bytes, and tarfile holds one per nested header while it reads them.
MAX_HEADER_RECORD = 64 << 10
#: Largest zip central directory read (about 46 bytes and a name per member: real ones of
#: MAX_MEMBERS members take under 30 MiB), checked from the end record before it is parsed.
MAX_CENTRAL_DIRECTORY = 64 << 20
#: Longest member name: no path longer than this can be opened, so no tool extracts such a member.
MAX_NAME_BYTES = 4096
#: Most bytes the names of an archive's folders take in all, those its members imply included: each
#: member implies every folder above it, so names of thousands of levels would imply gigabytes.
MAX_FOLDER_NAME_BYTES = 64 << 20
SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")

_CHUNK = 1 << 20
_COMPRESSED_TAR: tuple[tuple[bytes, Callable[[Any], io.BufferedIOBase]], ...] = (
    (b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (b"BZh", lambda raw: bz2.BZ2File(raw)),
    (b"\xfd7zXZ\x00", lambda raw: lzma.LZMAFile(raw)),
)
#: What the standard library raises on bytes it cannot decode (besides OSError).
DECODE_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    EOFError,
    RuntimeError,
    NotImplementedError,
    ValueError,
    IndexError,
    OverflowError,
    struct.error,
    zlib.error,
    lzma.LZMAError,
)
_ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
_SEEK_LOCK = threading.Lock()


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(SUFFIXES)


def _pread(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    with _SEEK_LOCK:  # no pread (Windows): no fork either, so one lock in this process suffices
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)


class _Window(io.RawIOBase):
    """Bytes [start, start + length) of a descriptor, with a position of its own: reads are positioned
    reads, so any number of windows share the descriptor, across forks too. A window shorter than it
    says (the file ended early) is an `OSError`; `max_read` refuses any larger single read."""

    def __init__(self, fd: int, start: int = 0, length: int | None = None, max_read: int | None = None) -> None:
        super().__init__()
        self._fd, self._start, self._pos, self._max_read = fd, start, 0, max_read
        self._length = os.fstat(fd).st_size - start if length is None else length

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length}[whence]
        if base + offset < 0:
            raise OSError("seek before the start of an archive member")
        self._pos = base + offset
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        wanted = self._length - self._pos if size is None or size < 0 else size
        if self._max_read is not None and wanted > self._max_read:
            raise OSError(f"a tar header record of {wanted} bytes; at most {self._max_read} are read")
        wanted = max(0, min(wanted, self._length - self._pos))
        data = _pread(self._fd, wanted, self._start + self._pos) if wanted else b""
        if len(data) < wanted:
            raise OSError(f"the archive ends {wanted - len(data)} bytes into what it declares")
        self._pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        return self.read(-1)


class _ZipMemberStream(io.RawIOBase):
    """A zip member's bytes, which end where the member declares: a decoding error, and fewer bytes than
    declared, are an `OSError`."""

    def __init__(self, stream: IO[bytes], declared: int) -> None:  # a zipfile.ZipExtFile
        super().__init__()
        self._stream, self._declared = stream, declared

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return int(self._stream.tell())

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        try:
            return int(self._stream.seek(offset, whence))
        except DECODE_ERRORS as error:
            raise _damaged(error) from None

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._stream.read(len(buffer))
        except DECODE_ERRORS as error:
            raise _damaged(error) from None
        if not data and len(buffer) and self._stream.tell() < self._declared:
            raise OSError(f"archive member ends after {self._stream.tell()} of the {self._declared} bytes it declares")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._stream.close()
        super().close()


def _damaged(error: BaseException) -> OSError:
    return OSError(f"damaged archive member: {type(error).__name__}: {error}")


class _TarInfo(tarfile.TarInfo):
    """A sparse member is never read, so its map (unbounded in a hostile archive) is skipped, not
    collected; the member stays listed with no data, and reading it is an `OSError`."""

    def _proc_sparse(self, archive: tarfile.TarFile) -> tarfile.TarInfo:
        _, extended, real_size = self._sparse_structs  # type: ignore[attr-defined]
        del self._sparse_structs  # type: ignore[attr-defined]
        assert archive.fileobj is not None
        while extended:
            block = archive.fileobj.read(tarfile.BLOCKSIZE)
            if len(block) < tarfile.BLOCKSIZE:
                raise tarfile.ReadError("the archive ends inside a sparse member's map")
            extended = bool(block[504])
        # typeshed declares `sparse` as bytes | None; tarfile keeps a list of (offset, size) pairs there
        self.sparse = []  # type: ignore[assignment]
        self.offset_data = archive.fileobj.tell()
        archive.offset = self.offset_data + self._block(self.size)  # type: ignore[attr-defined]
        self.size = real_size
        return self

    def _proc_gnusparse_10(self, next: tarfile.TarInfo, pax_headers: dict[str, str], archive: tarfile.TarFile) -> None:
        # (a list, as above) its map opens its data, and the next header's offset does not depend on it
        next.sparse = []  # type: ignore[assignment]


@dataclass(frozen=True)
class ArchiveMember:
    """A regular file inside an archive: what `FileEntry.fs_path` holds for archived files."""

    archive: "Archive" = field(repr=False, compare=False)
    name: str
    size: int

    def open(self) -> BinaryIO:
        """A lazy stream of the member (see `Archive.open`)."""
        return self.archive.open(self.name)

    def __fspath__(self) -> str:  # for messages only: never opened through the file system
        return f"{self.archive.path}!{self.name}"


@dataclass(frozen=True)
class _Entry:
    name: str  # as stored
    size: int  # as declared
    kind: str  # "file", "dir", "symlink", "hardlink" or "special"
    link: str = ""
    data: zipfile.ZipInfo | int | None = None  # the zip entry, or where a tar member's data starts (None: unreadable)


class Archive:
    """An archive's members, indexed once: `files` (clean name -> declared size), `dirs` (every folder,
    "" for the top) and `special` (links, devices, FIFOs: listed, never read)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: dict[str, int] = {}
        self.dirs: set[str] = {""}
        self.special: list[str] = []
        self._data: dict[str, zipfile.ZipInfo | int | None] = {}
        self._file: BinaryIO | None = None
        self._zip: zipfile.ZipFile | None = None
        try:
            entries = self._zip_entries() if self._is_zip else self._tar_entries()
        except TargetError:
            self.close()
            raise
        except (OSError, RecursionError, *DECODE_ERRORS) as error:
            self.close()
            raise TargetError(f"{path}: not a readable archive ({error})") from None
        total = 0
        self._folder_name_bytes = 0
        origin: dict[str, str] = {}
        for entry in entries:
            clean = self._clean(entry.name)
            # two members that are one file once cleaned (a repeated name, `a\\b` and `a/b`, `a/./b`)
            # would be read as the last of them and extracted as either: refused, not guessed
            if entry.kind != "dir" and clean in origin:
                raise self._refuse(
                    f"refusing {entry.name!r}: the archive holds {origin[clean]!r} under the same "
                    "name, and extracting tools disagree about which one is kept"
                )
            origin.setdefault(clean, entry.name)
            if entry.kind in ("symlink", "hardlink"):
                self._check_link(entry, clean)
            if entry.kind != "file" and entry.kind != "dir":
                self.special.append(clean)
                continue
            self._add_folders_above(clean)
            if entry.kind == "dir" or not clean:
                self._add_folder(clean)
                continue
            if entry.data is not None:  # unreadable members are never read, so they cost nothing
                total += entry.size
            if total > MAX_TOTAL_BYTES:
                self.close()
                raise TargetError(f"{path}: expands past {_amount(MAX_TOTAL_BYTES)}; refusing to read it")
            self.files[clean] = entry.size
            self._data[clean] = entry.data
        shadowed = sorted(self.dirs.intersection(self.files))
        if shadowed:
            raise self._refuse(f"refusing {shadowed[0]!r}: it is both a file and a folder in the archive")
        self._listing = self._index()
        self._sorted: tuple[list[str], list[str]] | None = None

    def _add_folders_above(self, clean: str) -> None:
        """Every folder above the member `clean`, from its own up to the first one already known (whose
        own are known too): each folder's name is built once, not once per member below it."""
        end = clean.rfind("/")
        while end > 0 and clean[:end] not in self.dirs:
            self._add_folder(clean[:end])
            end = clean.rfind("/", 0, end)

    def _add_folder(self, clean: str) -> None:
        if clean in self.dirs:
            return
        self._folder_name_bytes += len(clean)
        if self._folder_name_bytes > MAX_FOLDER_NAME_BYTES or len(self.dirs) >= MAX_MEMBERS:
            raise self._refuse(
                f"its folders take more than {MAX_MEMBERS} entries or {_amount(MAX_FOLDER_NAME_BYTES)} of names "
                "(members nested thousands of folders deep?); refusing to read it"
            )
        self.dirs.add(clean)

    @property
    def _is_zip(self) -> bool:
        return self.path.name.lower().endswith(".zip")

    def _zip_entries(self) -> list[_Entry]:
        self._file = _open_regular(self.path)
        members, directory = _zip_directory(self._file.fileno())
        if members > MAX_MEMBERS:
            raise TargetError(f"{self.path}: {members} members, more than the {MAX_MEMBERS} allowed")
        if directory > MAX_CENTRAL_DIRECTORY:
            raise TargetError(
                f"{self.path}: a central directory of {_amount(directory)}, more than the "
                f"{_amount(MAX_CENTRAL_DIRECTORY)} allowed"
            )
        self._zip = zipfile.ZipFile(_Window(self._file.fileno()))
        infos = self._zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise TargetError(f"{self.path}: {len(infos)} members, more than the {MAX_MEMBERS} allowed")
        return [_Entry(info.filename, info.file_size, _zip_kind(info), "", info) for info in infos]

    def _tar_entries(self) -> list[_Entry]:
        self._file = _tar_data(self.path)
        fd = self._file.fileno()
        headers = _Window(fd, max_read=MAX_HEADER_RECORD)
        tar = tarfile.TarFile(fileobj=headers, tarinfo=_TarInfo)
        entries: list[_Entry] = []
        while (member := tar.next()) is not None:  # tarfile stops at the first header it cannot read
            if member.size < 0:
                raise TargetError(f"{self.path}: refusing {member.name!r}: it declares a negative size")
            if len(entries) == MAX_MEMBERS:
                raise TargetError(f"{self.path}: more than the {MAX_MEMBERS} members allowed")
            # indexed here: tarfile need not keep every header as well (`members` is not in typeshed)
            tar.members.clear()  # type: ignore[attr-defined]
            kind = (
                "dir"
                if member.isdir()
                else "file"
                if member.isfile()
                else "symlink"
                if member.issym()
                else "hardlink"
                if member.islnk()
                else "special"
            )
            data = None if member.issparse() else member.offset_data
            entries.append(_Entry(member.name, member.size, kind, member.linkname, data))
        if not _only_zeros(fd, tar.offset):
            raise TargetError(
                f"{self.path}: data follows the end of the archive (a damaged header?); tools that "
                "skip damaged headers would extract members this check never sees"
            )
        return entries

    def _clean(self, name: str) -> str:
        size = len(name.encode("utf-8", "surrogatepass"))
        if size > MAX_NAME_BYTES:
            raise self._refuse(
                f"refusing the member {name[:64]!r}...: its name takes {size} bytes, and no path longer than "
                f"{MAX_NAME_BYTES} bytes can be extracted"
            )
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
            raise self._refuse(f"refusing the absolute member name {name!r}")
        clean = posixpath.normpath(name.replace("\\", "/")).strip("/")
        if clean == ".." or clean.startswith("../") or "/../" in f"/{clean}/":
            raise self._refuse(f"refusing {name!r}: it climbs out of the archive")
        return "" if clean == "." else clean

    def _check_link(self, entry: _Entry, clean: str) -> None:
        """A hard link names a member from the archive's top; a symbolic link, a path from its own folder."""
        link = entry.link.replace("\\", "/")
        base = "" if entry.kind == "hardlink" else posixpath.dirname(clean)
        target = posixpath.normpath(posixpath.join(base, link))
        if link.startswith("/") or (len(link) > 1 and link[1] == ":") or target == ".." or target.startswith("../"):
            raise self._refuse(f"refusing {entry.name!r}: a link to {entry.link!r} leaves the archive")

    def _refuse(self, message: str) -> TargetError:
        self.close()
        return TargetError(f"{self.path}: {message}")

    def _index(self) -> dict[str, tuple[list[str], list[str]]]:
        listing: dict[str, tuple[list[str], list[str]]] = {}
        for folder in self.dirs:
            if folder:
                parent, _, name = folder.rpartition("/")
                listing.setdefault(parent, ([], []))[0].append(name)
        for path in self.files:
            parent, _, name = path.rpartition("/")
            listing.setdefault(parent, ([], []))[1].append(name)
        for dirs, files in listing.values():
            dirs.sort()
            files.sort()
        return listing

    def below(self, folder: str) -> tuple[list[str], list[str]]:
        """(every folder and file, every special member) under `folder` ("" for the top), full names sorted:
        the names under a folder are one run of the sorted names, found by bisection."""
        if self._sorted is None:
            self._sorted = sorted((set(self.files) | self.dirs) - {""}), sorted(self.special)
        return _run(self._sorted[0], folder), _run(self._sorted[1], folder)

    def children(self, folder: str) -> tuple[list[str], list[str]]:
        """(sub-folder names, file names) directly inside `folder` ("" for the top)."""
        dirs, files = self._listing.get(folder, ([], []))
        return list(dirs), list(files)

    def member(self, name: str) -> ArchiveMember:
        return ArchiveMember(self, name, self.files[name])

    def open(self, name: str) -> BinaryIO:
        """A lazy, seekable stream of the member `name`: opening reads nothing but a zip member's local
        header, and reads return what they ask for, up to the declared size. A member that cannot be
        read raises `OSError`, from here or from a read."""
        data = self._data[name]
        if data is None:
            raise OSError("a sparse tar member; it is not read")
        self._reopen()
        if isinstance(data, int):
            assert self._file is not None
            return io.BufferedReader(_Window(self._file.fileno(), data, self.files[name]))
        assert self._zip is not None
        if data.flag_bits & 0x1:
            raise OSError("archive member is encrypted; it is not read")
        if data.compress_type not in _ZIP_METHODS:
            raise OSError(f"archive member uses compression method {data.compress_type}, which is not supported")
        try:
            stream = self._zip.open(data)
        except DECODE_ERRORS as error:
            raise _damaged(error) from None
        return io.BufferedReader(_ZipMemberStream(stream, data.file_size))

    def _reopen(self) -> None:
        """After unpickling (a process that did not fork from this one), the archive is opened again."""
        if self._file is not None:
            return
        try:
            if self._is_zip:
                self._file = _open_regular(self.path)
                self._zip = zipfile.ZipFile(_Window(self._file.fileno()))
            else:
                self._file = _tar_data(self.path)
        except (TargetError, *DECODE_ERRORS) as error:
            raise OSError(f"cannot open the archive again: {error}") from None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file = self._zip = None

    def __getstate__(self) -> dict[str, object]:
        """Pickled without its descriptor; a forked worker never pickles it and shares the descriptor."""
        state = dict(self.__dict__)
        state["_file"] = state["_zip"] = None
        return state


def _run(names: list[str], folder: str) -> list[str]:
    if not folder:
        return list(names)
    # "0" follows "/": every name under folder/ sorts between the two
    return names[bisect.bisect_left(names, f"{folder}/") : bisect.bisect_left(names, f"{folder}0")]


def _zip_directory(fd: int) -> tuple[int, int]:
    """The member count and central directory size a zip's end record declares (its zip64 record's
    where the classic one overflows), read before the directory itself is parsed; (0, 0) where no
    end record is found (zipfile then says what is wrong)."""
    size = os.fstat(fd).st_size
    tail_start = max(0, size - (22 + 0xFFFF))
    tail = _pread(fd, size - tail_start, tail_start)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        return 0, 0
    members, directory = struct.unpack_from("<HI", tail, at + 10)
    locator = at - 20
    if (members == 0xFFFF or directory == 0xFFFFFFFF) and locator >= 0 and tail[locator : locator + 4] == b"PK\x06\x07":
        (record_at,) = struct.unpack_from("<Q", tail, locator + 8)
        record = _pread(fd, 56, record_at)
        if len(record) == 56 and record.startswith(b"PK\x06\x06"):
            members, directory = struct.unpack_from("<QQ", record, 32)
    return members, directory


def _only_zeros(fd: int, offset: int) -> bool:
    """Whether everything from `offset` to the end of the file is zero bytes (a tar's end blocks and padding)."""
    while chunk := _pread(fd, _CHUNK, offset):
        if chunk.count(0) != len(chunk):
            return False
        offset += len(chunk)
    return True


def _zip_kind(info: zipfile.ZipInfo) -> str:
    if info.is_dir():
        return "dir"
    # Unix file types, only from Unix (many writers leave the type bits out): a zip's symbolic link
    # holds its target as data, and is listed as a link, never read nor followed, as in a tar
    kind = stat.S_IFMT(info.external_attr >> 16) if info.create_system == 3 else 0
    return "file" if kind in (0, stat.S_IFREG, stat.S_IFDIR) else "special"


def _open_regular(path: Path) -> BinaryIO:
    """The file at `path`, opened without blocking on a FIFO swapped in, and only if it is a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def _tar_data(path: Path) -> BinaryIO:
    """The tar itself, or, when compressed, its bytes decompressed once into an anonymous temporary file."""
    source = _open_regular(path)
    magic = _pread(source.fileno(), 6, 0)
    opener = next((opener for prefix, opener in _COMPRESSED_TAR if magic.startswith(prefix)), None)
    if opener is None:
        return source
    limit = MAX_TOTAL_BYTES + MAX_TAR_OVERHEAD
    target: BinaryIO = tempfile.TemporaryFile()
    try:
        with source, opener(_Window(source.fileno())) as stream:
            written = 0
            while chunk := stream.read(_CHUNK):
                written += len(chunk)
                if written > limit:
                    raise TargetError(f"{path}: expands past {_amount(limit)}; refusing to read it")
                target.write(chunk)
        target.flush()
    except BaseException:
        target.close()
        raise
    return target


def _amount(size: int) -> str:
    return f"{size / 2**30:g} GiB" if size >= 1 << 30 else f"{size:,} bytes"
