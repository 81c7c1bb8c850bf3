"""Submissions as .tar.gz, .tgz, .tar or .zip, read without extracting; hostile archives refused."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest


def pack(source: Path, archive: Path) -> Path:
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive, "w") as out:
            for path in sorted(source.rglob("*")):
                out.write(path, path.relative_to(source.parent).as_posix())
    else:
        with tarfile.open(archive, "w:gz" if archive.name.endswith(("gz", "tgz")) else "w") as out:
            out.add(source, arcname=source.name)
    return archive


def summary(cli, target) -> tuple[int, dict, set]:
    result = cli("check", str(target), "--format", "json")
    assert "Traceback" not in result.err
    report = json.loads(result.out)
    return result.code, report["summary"], {(f["rule"], f["path"], f["line"]) for f in report["findings"]}


@pytest.mark.parametrize("name", ["demo.tar.gz", "demo.tgz", "demo.tar", "demo.zip"])
def test_archive_gives_the_same_findings_as_the_folder(cli, fixtures, tmp_path, name):
    archive = pack(fixtures / "demo" / "Fixture", tmp_path / name)
    assert summary(cli, archive) == summary(cli, fixtures / "demo")


def test_archived_submission_at_the_top(cli, fixtures, tmp_path):
    archive = tmp_path / "Fixture.zip"
    source = fixtures / "broken" / "missing-run-stop" / "Fixture"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(source.rglob("*")):
            out.write(path, path.relative_to(source).as_posix())
    code, counts, findings = summary(cli, archive)
    assert code == 0 and ("EVT003", "results/fx_8xh100/ssd/result_2.txt", None) in findings


def tar_with(tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        out.addfile(member, io.BytesIO(data) if data else None)
    return archive


@pytest.mark.parametrize(
    "member, message",
    [
        (tarfile.TarInfo("../escape/results/x.txt"), "climbs out of the archive"),
        (tarfile.TarInfo("/etc/results/x.txt"), "absolute member name"),
    ],
)
def test_traversal_and_absolute_names_are_refused(cli, tmp_path, member, message):
    member.size = 1
    result = cli("check", str(tar_with(tmp_path, member, b"x")))
    assert result.code == 2 and message in result.err


def test_link_leaving_the_archive_is_refused(cli, tmp_path):
    link = tarfile.TarInfo("Sub/results/s/b/result_0.txt")
    link.type, link.linkname = tarfile.SYMTYPE, "../../../../../etc/passwd"
    result = cli("check", str(tar_with(tmp_path, link)))
    assert result.code == 2 and "leaves the archive" in result.err


def test_archive_past_the_limit_is_refused(cli, fixtures, tmp_path, monkeypatch):
    import mlperf_audit.archives as archives

    monkeypatch.setattr(archives, "MAX_TOTAL_BYTES", 10_000)
    result = cli("check", str(pack(fixtures / "demo" / "Fixture", tmp_path / "demo.zip")))
    assert result.code == 2 and "expands past" in result.err


def test_not_an_archive(cli, tmp_path):
    fake = tmp_path / "fake.tar.gz"
    fake.write_bytes(b"not gzip at all")
    result = cli("check", str(fake))
    assert result.code == 2 and "not a readable archive" in result.err


def test_oversized_member_is_a_finding_and_is_never_read(cli, fixtures, tmp_path, monkeypatch):
    import mlperf_audit.archives as archives
    import mlperf_audit.reading.parser as parser

    monkeypatch.setattr(parser, "MAX_FILE_BYTES", 1_000)
    reads: list[str] = []
    original = archives.Archive.open
    monkeypatch.setattr(archives.Archive, "open", lambda self, name: reads.append(name) or original(self, name))
    archive = pack(fixtures / "broken" / "missing-run-stop" / "Fixture", tmp_path / "big.zip")
    result = cli("check", str(archive), "--format", "json", "--jobs", "1")
    report = json.loads(result.out)
    too_large = [f for f in report["findings"] if f["rule"] == "LOG016"]
    assert too_large and all("result_" in f["path"] for f in too_large)
    assert not any(name.endswith(".txt") and "/results/" in f"/{name}" for name in reads)


def test_a_damaged_member_is_an_unreadable_file_not_an_internal_error(cli, fixtures, tmp_path):
    """A member whose bytes fail their CRC (or are encrypted, or use an unknown method) is reported as a
    file that cannot be read, by the round inference and by the parser alike."""
    archive = pack(fixtures / "broken" / "missing-run-stop" / "Fixture", tmp_path / "damaged.zip")
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zipped:
        info = next(i for i in zipped.infolist() if i.filename.endswith("result_0.txt"))
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 40 : start + 48] = b"XXXXXXXX"
    archive.write_bytes(bytes(data))
    result = cli("check", str(archive), "--format", "json", "--jobs", "1")
    assert result.code in (0, 1), result.err
    report = json.loads(result.out)
    assert any("result_0.txt" in (f["path"] or "") and "cannot read" in f["message"] for f in report["findings"])


@pytest.mark.parametrize("name", ["demo.tar.gz", "demo.zip"])
def test_forked_workers_read_the_archive_the_parent_opened(cli, fixtures, tmp_path, name):
    """Workers share the parent's descriptor (every read is positioned), so no read moves another's offset."""
    archive = pack(fixtures / "demo" / "Fixture", tmp_path / name)
    one = cli("check", str(archive), "--format", "json", "--jobs", "1", "--no-cache")
    two = cli("check", str(archive), "--format", "json", "--jobs", "2", "--no-cache")
    assert json.loads(one.out)["findings"] == json.loads(two.out)["findings"]


@pytest.mark.parametrize("name", ["demo.tar.gz", "demo.zip"])
def test_a_member_pickled_to_another_process_opens_the_archive_again(fixtures, tmp_path, name):
    import pickle

    from mlperf_audit.archives import Archive

    archive = Archive(pack(fixtures / "demo" / "Fixture", tmp_path / name))
    member = archive.member("Fixture/systems/fx_8xh100.json")
    copy = pickle.loads(pickle.dumps(member))
    with member.open() as original, copy.open() as reopened:
        assert reopened.read() == original.read() == (fixtures / "demo" / "Fixture/systems/fx_8xh100.json").read_bytes()


def test_a_compressed_tar_expanding_past_the_limit_is_refused(cli, fixtures, tmp_path, monkeypatch):
    """Zeros after the tar's end compress to almost nothing; they are not decompressed past the limit."""
    import gzip

    import mlperf_audit.archives as archives

    monkeypatch.setattr(archives, "MAX_TOTAL_BYTES", 1 << 20)
    monkeypatch.setattr(archives, "MAX_TAR_OVERHEAD", 1 << 20)
    tar = pack(fixtures / "demo" / "Fixture", tmp_path / "demo.tar").read_bytes()
    bomb = tmp_path / "bomb.tar.gz"
    bomb.write_bytes(gzip.compress(tar + bytes(16 << 20)))
    result = cli("check", str(bomb))
    assert result.code == 2 and "expands past" in result.err
