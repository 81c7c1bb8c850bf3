"""Hostile archives (issue 13): a .zip, .tar or .tar.gz crafted to crash the check, to make it take
minutes or gigabytes, or to reach outside itself. A damaged member is a finding on that file; an
archive that cannot be read at all is a clear exit-2 error; reading is linear in the archive and
bounded by what the reader asks for; a link that leaves the archive refuses it."""

from __future__ import annotations

import gzip
import io
import json
import struct
import sys
import tarfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from mlperf_audit import archives
from mlperf_audit.reading import discovery

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "broken" / "missing-run-stop" / "Fixture"
LOG = "Fixture/results/fx_8xh100/ssd/result_0.txt"
GIB_1_9 = int(1.9 * 2**30)


# ---------------------------------------------------------------------------------------------
# Crafting
# ---------------------------------------------------------------------------------------------


def fixture_zip(path: Path, method: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as out:
        for source in sorted(FIXTURE.rglob("*")):
            out.write(source, source.relative_to(FIXTURE.parent).as_posix())
    return path


def central_records(data: bytes) -> Iterator[tuple[int, str]]:
    """(offset, name) of each central directory record."""
    position = data.rfind(b"PK\x05\x06")
    start = struct.unpack_from("<I", data, position + 16)[0]
    while data[start : start + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, start + 28)
        yield start, data[start + 46 : start + 46 + name_length].decode()
        start += 46 + name_length + extra_length + comment_length


def patch_member(archive: Path, name: str, field: str, change: Callable[[int], int]) -> Path:
    """Rewrites one field of `name`'s local header and central directory record alike."""
    local_offset, central_offset, layout = {
        "flags": (6, 8, "<H"),
        "method": (8, 10, "<H"),
        "crc": (14, 16, "<I"),
        "compressed size": (18, 20, "<I"),
        "size": (22, 24, "<I"),
    }[field]
    data = bytearray(archive.read_bytes())
    central = next(offset for offset, stored in central_records(data) if stored == name)
    local = struct.unpack_from("<I", data, central + 42)[0]
    for offset in (local + local_offset, central + central_offset):
        struct.pack_into(layout, data, offset, change(struct.unpack_from(layout, data, offset)[0]))
    archive.write_bytes(bytes(data))
    return archive


def tar_member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.linkname = len(data), kind, link
    padding = -len(data) % tarfile.BLOCKSIZE
    return info.tobuf(tarfile.GNU_FORMAT) + data + b"\0" * padding


def tar_end() -> bytes:
    return b"\0" * (2 * tarfile.BLOCKSIZE)


def submission_tar(*members: bytes) -> bytes:
    return tar_member("Sub/systems/sys.json", b"{}") + b"".join(members) + tar_end()


def findings(cli: Any, archive: Path, command: str = "check") -> list[dict[str, Any]]:
    """The findings of `command` on the archive, which must neither crash nor be refused."""
    result = cli(command, str(archive), "--format", "json", "--jobs", "1", "--no-cache")
    assert result.code in (0, 1), result.err
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err
    report = json.loads(result.out)
    return report["findings"] if command == "check" else report


def unreadable(cli: Any, archive: Path, name: str = LOG) -> str:
    """The message of the finding that says the member `name` cannot be read (by check and score alike)."""
    messages = [f["message"] for f in findings(cli, archive) if f["path"] == name and "cannot read" in f["message"]]
    assert messages, f"no finding says {name} cannot be read"
    findings(cli, archive, "score")
    return messages[0]


def refused(cli: Any, archive: Path) -> str:
    result = cli("check", str(archive))
    assert result.code == 2 and result.err.startswith("mlperf-audit: error: "), result.err
    assert "internal error" not in result.err
    return result.err


def peak_bytes(call: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        return call(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def lines_run(call: Callable[[], Any], *modules: Any) -> int:
    """How many lines of `modules` ran during `call`: the work done, whatever the machine's speed."""
    watched = {module.__file__ for module in modules}
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    previous = sys.gettrace()  # a coverage tracer, say: put back afterwards
    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename in watched else None)
    try:
        call()
    finally:
        sys.settrace(previous)
    return count


# ---------------------------------------------------------------------------------------------
# Damaged zip members: a finding on that file, never an internal error
# ---------------------------------------------------------------------------------------------

METHODS = pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])


@METHODS
def test_an_encrypted_member_is_a_finding_on_that_file(cli, tmp_path, method):
    archive = patch_member(fixture_zip(tmp_path / "encrypted.zip", method), LOG, "flags", lambda flags: flags | 0x1)
    assert "encrypted" in unreadable(cli, archive)


@METHODS
def test_a_member_in_an_unknown_compression_method_is_a_finding_on_that_file(cli, tmp_path, method):
    archive = patch_member(fixture_zip(tmp_path / "method.zip", method), LOG, "method", lambda _: 99)
    assert "compression method 99" in unreadable(cli, archive)


@METHODS
def test_a_member_failing_its_crc_is_a_finding_on_that_file(cli, tmp_path, method):
    archive = patch_member(fixture_zip(tmp_path / "crc.zip", method), LOG, "crc", lambda crc: crc ^ 0xFFFF)
    assert "CRC" in unreadable(cli, archive)


@METHODS
def test_a_member_declaring_fewer_bytes_than_it_holds_is_a_finding_on_that_file(cli, tmp_path, method):
    archive = patch_member(fixture_zip(tmp_path / "fewer.zip", method), LOG, "size", lambda size: size // 2)
    if method == zipfile.ZIP_STORED:
        patch_member(archive, LOG, "compressed size", lambda size: size // 2)
    assert "CRC" in unreadable(cli, archive)


def test_a_member_declaring_more_bytes_than_it_holds_is_a_finding_on_that_file(cli, tmp_path):
    """Its bytes and CRC are intact; only the declared size, which every size limit trusts, lies."""
    archive = patch_member(fixture_zip(tmp_path / "more.zip", zipfile.ZIP_DEFLATED), LOG, "size", lambda size: size * 3)
    assert "bytes it declares" in unreadable(cli, archive)


def test_a_zip_of_an_unsupported_version_is_refused_clearly(cli, tmp_path):
    archive = fixture_zip(tmp_path / "version.zip")
    data = bytearray(archive.read_bytes())
    central = next(offset for offset, name in central_records(data) if name == LOG)
    struct.pack_into("<H", data, central + 6, 99)  # "needs version 9.9 to extract"
    archive.write_bytes(bytes(data))
    assert "not a readable archive" in refused(cli, archive)


def test_a_gzip_stream_that_breaks_after_the_first_header_is_refused_clearly(cli, tmp_path):
    """The tar's first header decompresses; the deflate block after it has an invalid type."""
    tar = tar_member("Sub/results/s/b/result_0.txt", bytes(64 << 10)) + tar_end()
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = compressor.compress(tar[: tarfile.BLOCKSIZE + (32 << 10)]) + compressor.flush(zlib.Z_FULL_FLUSH)
    archive = tmp_path / "broken.tar.gz"
    archive.write_bytes(b"\x1f\x8b\x08\x00\0\0\0\0\x00\xff" + body + b"\x06" + bytes(64))  # BTYPE 11: invalid
    assert "not a readable archive" in refused(cli, archive)


# ---------------------------------------------------------------------------------------------
# Archives that cost minutes: one pass, whatever the order of the members
# ---------------------------------------------------------------------------------------------


def test_a_tar_gz_stored_in_reverse_order_is_decompressed_once(cli, tmp_path, monkeypatch):
    """Read in sorted order, members stored in reverse order made every read rewind the gzip stream:
    100 members of 8 MB took 99 s instead of 6. Here: 20 members of 256 KiB."""
    members = [tar_member(f"Sub/results/s/b/result_{index:02d}.txt", bytes(256 << 10)) for index in reversed(range(20))]
    tar = submission_tar(*members)
    archive = tmp_path / "reverse.tar.gz"
    archive.write_bytes(gzip.compress(tar))
    decompressed = 0
    read = gzip._GzipReader.read  # every gzip read of the standard library goes through it

    def counted(self: Any, size: int = -1) -> bytes:
        nonlocal decompressed
        data = read(self, size)
        decompressed += len(data)
        return data

    monkeypatch.setattr(gzip._GzipReader, "read", counted)
    found = findings(cli, archive)
    assert sum(f["path"].endswith(".txt") and f["path"].startswith("Sub/results/") for f in found) >= 20
    assert decompressed <= len(tar) * 1.05, f"{decompressed / len(tar):.1f} passes over the tar"


def test_a_zip_of_many_folders_is_listed_in_linear_time(tmp_path):
    """24,000 folder entries (4.6 MB) took 117 s: each folder's listing scanned every member."""
    archive = tmp_path / "folders.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("Sub/systems/sys.json", "{}")
        for index in range(1000):
            out.writestr(zipfile.ZipInfo(f"Sub/results/system_{index:04d}/"), b"")
    work = lines_run(lambda: discovery.discover(archive), archives, discovery)
    assert work < 200 * 1000, f"{work / 1000:.0f} lines run per folder"


def test_an_archive_of_many_submitters_is_checked_in_linear_time(tmp_path):
    """Names and sizes are checked per submitter: each check scanned every member of the archive."""
    archive = tmp_path / "submitters.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for index in range(1000):
            out.writestr(zipfile.ZipInfo(f"S{index:04d}/results/"), b"")
    trees: list[Any] = []
    work = lines_run(lambda: trees.append(discovery.discover(archive)), archives, discovery)
    assert len(trees[0].submissions) == 1000
    assert work < 200 * 1000, f"{work / 1000:.0f} lines run per submitter"


# ---------------------------------------------------------------------------------------------
# Archives that cost gigabytes: a read materialises what was asked for, not what was declared
# ---------------------------------------------------------------------------------------------


def test_a_zip_system_description_declaring_1_9_gib_is_refused_after_reading_1_mib(tmp_path):
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("Sub/systems/sys.json", b" " * (8 << 20))  # 8 MiB really there, 8 KiB compressed
        out.writestr("Sub/results/s/b/result_0.txt", b"")
    patch_member(archive, "Sub/systems/sys.json", "size", lambda _: GIB_1_9)
    tree, peak = peak_bytes(lambda: discovery.discover(archive))
    (system,) = tree.submissions[0].systems
    assert "larger than 1 MiB" in system.issues[0].message
    assert peak < 4 << 20, f"{peak / 2**20:.0f} MiB held to refuse it"


def test_a_tar_system_description_of_1_9_gib_is_refused_after_reading_1_mib(tmp_path):
    """A plain tar whose member really is 1.9 GiB: a hole in a sparse file, nothing written."""
    archive = tmp_path / "big.tar"
    header = tarfile.TarInfo("Sub/systems/sys.json")
    header.size = GIB_1_9
    with open(archive, "wb") as out:
        out.write(header.tobuf(tarfile.GNU_FORMAT))
        out.seek(GIB_1_9 + -GIB_1_9 % tarfile.BLOCKSIZE, io.SEEK_CUR)
        out.write(tar_member("Sub/results/s/b/result_0.txt") + tar_end())
    tree, peak = peak_bytes(lambda: discovery.discover(archive))
    (system,) = tree.submissions[0].systems
    assert "larger than 1 MiB" in system.issues[0].message
    assert peak < 4 << 20, f"{peak / 2**20:.0f} MiB held to refuse it"


def test_a_sparse_member_map_is_skipped_not_collected(cli, tmp_path):
    """A GNU sparse member whose map runs on for 40,000 extension blocks (a million entries)."""
    header = bytearray(tarfile.TarInfo("Sub/results/s/b/result_0.txt").tobuf(tarfile.GNU_FORMAT))
    header[156:157] = tarfile.GNUTYPE_SPARSE
    header[482] = 1  # an extension block follows
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    extension = bytearray(b"%011o\0%011o\0" % (1, 1) * 21 + bytes(8))
    extension[504] = 1
    blocks = bytes(extension) * 39_999 + bytes(extension[:504]) + bytes(8)
    archive = tmp_path / "sparse.tar.gz"
    archive.write_bytes(gzip.compress(submission_tar(bytes(header) + blocks)))
    tree, peak = peak_bytes(lambda: discovery.discover(archive))
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB held for a member that is not read"
    assert "sparse" in unreadable(cli, archive, "Sub/results/s/b/result_0.txt")


def test_a_huge_tar_header_record_refuses_the_archive_unread(cli, tmp_path):
    """A pax header of 32 MiB (real ones take a few hundred bytes) is not read into memory."""
    record = b"comment=" + b"x" * (32 << 20) + b"\n"
    length = len(record) + len(str(len(record))) + 2
    pax = f"{length} ".encode() + record
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, len(pax)
    entry = header.tobuf(tarfile.USTAR_FORMAT) + pax + b"\0" * (-len(pax) % tarfile.BLOCKSIZE)
    archive = tmp_path / "pax.tar.gz"
    archive.write_bytes(gzip.compress(submission_tar(entry + tar_member("Sub/results/s/b/result_0.txt"))))
    assert "header record" in refused(cli, archive)


def test_a_chain_of_tar_headers_refuses_the_archive(cli, tmp_path):
    """Each GNU long-name header names the next header's member: tarfile reads them recursively."""
    long_name = tar_member("././@LongLink", b"Sub/results/s/b/result_0.txt\0", tarfile.GNUTYPE_LONGNAME)
    archive = tmp_path / "chain.tar.gz"
    archive.write_bytes(gzip.compress(submission_tar(long_name * 5000 + tar_member("x"))))
    assert "not a readable archive" in refused(cli, archive)


# ---------------------------------------------------------------------------------------------
# Links: a hard link names a member from the archive's top, a symbolic link from its own folder
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["../../etc/passwd", "Sub/../../etc/passwd"])
def test_a_hard_link_out_of_the_archive_is_refused(cli, tmp_path, target):
    """Resolved from its own folder (as a symbolic link is), this target stayed inside."""
    archive = tmp_path / "hardlink.tar"
    archive.write_bytes(submission_tar(tar_member("Sub/results/s/b/result_0.txt", kind=tarfile.LNKTYPE, link=target)))
    assert "leaves the archive" in refused(cli, archive)


def test_links_inside_the_archive_are_listed_not_followed(cli, tmp_path):
    archive = tmp_path / "links.tar"
    archive.write_bytes(
        submission_tar(
            tar_member("Sub/results/s/b/result_0.txt", kind=tarfile.SYMTYPE, link="../../../systems/sys.json"),
            tar_member("Sub/results/s/b/result_1.txt", kind=tarfile.LNKTYPE, link="Sub/systems/sys.json"),
        )
    )
    special = {f["path"] for f in findings(cli, archive) if f["rule"] == "PKG002"}
    assert special == {"Sub/results/s/b/result_0.txt", "Sub/results/s/b/result_1.txt"}


def test_member_names_are_shown_visibly_and_match_their_folder(cli, tmp_path):
    """An escape in a member's name is shown as an escape in every location, and the folder of a
    submitter with such a name is still found (display names never become member keys)."""
    archive = tmp_path / "escapes.tar"
    archive.write_bytes(
        submission_tar(
            tar_member("Sub/results/sys/ssd/result_\x1b[2J.txt", b":::MLLOG {broken\n"),
            tar_member("Sub/results/sys/ssd/odd\x1b]0;title\x07 name.txt", b"x\n"),
        )
    )
    reported = findings(cli, archive)
    paths = {f["path"] for f in reported if f["path"]}
    assert "Sub/results/sys/ssd/result_\\x1b[2J.txt" in paths
    assert any("\\x1b]0;title\\x07" in path for path in paths)
    assert not any("\x1b" in json.dumps(f, ensure_ascii=False) for f in reported)


# ---------------------------------------------------------------------------------------------
# What the check reads must be what extraction gives (second red-team pass)
# ---------------------------------------------------------------------------------------------


def test_two_members_of_one_name_once_cleaned_are_refused(cli, tmp_path):
    """A broken log, then a clean copy named with backslashes: the check read the clean one,
    `unzip` on Unix extracts the broken one to the real path."""
    archive = tmp_path / "backslashes.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("Sub/systems/sys.json", "{}")
        out.writestr("Sub/results/sys/ssd/result_0.txt", ":::MLLOG {broken\n")
        out.writestr("Sub\\results\\sys\\ssd\\result_0.txt", ":::MLLOG {}\n")
    assert "under the same name" in refused(cli, archive)
    repeated = tmp_path / "repeated.tar"
    repeated.write_bytes(
        submission_tar(
            tar_member("Sub/results/sys/ssd/result_0.txt", b"a\n"),
            tar_member("Sub/results/sys/./ssd/result_0.txt", b"b\n"),
        )
    )
    assert "under the same name" in refused(cli, repeated)


def test_a_member_hidden_after_a_damaged_header_is_refused(cli, tmp_path):
    """tarfile stops at the first header it cannot read; GNU tar skips it and extracts what follows."""
    archive = tmp_path / "hidden.tar"
    body = submission_tar(tar_member("Sub/results/sys/ssd/result_0.txt", b"clean\n"))[: -2 * tarfile.BLOCKSIZE]
    archive.write_bytes(
        body + b"\x7f" * tarfile.BLOCKSIZE + tar_member("Sub/results/sys/ssd/result_1.txt", b"x\n") + tar_end()
    )
    assert "data follows the end of the archive" in refused(cli, archive)


def test_a_member_that_is_both_a_file_and_a_folder_is_refused(cli, tmp_path):
    archive = tmp_path / "shadow.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("Sub/systems/sys.json", "{}")
        out.writestr("Sub/results", "not a folder")
        out.writestr("Sub/results/sys/ssd/result_0.txt", ":::MLLOG {}\n")
    assert "both a file and a folder" in refused(cli, archive)


@pytest.mark.parametrize("members, directory", [(300_000, 1 << 20), (10, 65 << 20)])
def test_a_zip_declaring_too_many_members_or_too_big_a_directory_is_refused_before_parsing(
    cli, tmp_path, monkeypatch, members, directory
):
    """A 66 MB zip of 1,000,000 directory entries took 11.6 s and 580 MB before its refusal."""
    archive = fixture_zip(tmp_path / "big.zip")
    data = bytearray(archive.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HHI", data, end + 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF)  # classic fields overflow: zip64 rules
    record = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, members, members, directory, 0)
    locator = b"PK\x06\x07" + struct.pack("<IQI", 0, end, 1)
    archive.write_bytes(bytes(data[:end]) + record + locator + bytes(data[end:]))
    parsed = []
    monkeypatch.setattr(zipfile.ZipFile, "_RealGetContents", lambda self: parsed.append(1))
    message = refused(cli, archive)
    assert ("300000 members" in message if members > 10 else "central directory" in message) and not parsed
