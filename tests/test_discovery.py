"""Discovery: every kind of PATH, hostile file-system entries, and never writing into PATH."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mlperf_audit.errors import TargetError
from mlperf_audit.model import TargetKind
from mlperf_audit.reading.discovery import discover


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(root)): (path.lstat().st_size, path.lstat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
    }


@pytest.fixture
def package(tmp_path, fixtures) -> Path:
    """A writable copy of a clean one-benchmark submission."""
    root = tmp_path / "repo"
    shutil.copytree(fixtures / "broken" / "empty-log", root)
    (root / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_0.txt").write_text(
        (fixtures / "clean" / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_0.txt").read_text()
    )
    return root


@pytest.mark.parametrize(
    "relative, kind, submitter, systems",
    [
        ("clean", TargetKind.REPOSITORY, "Fixture", ["fx_64xh100", "fx_8xh100"]),
        ("clean/Fixture", TargetKind.SUBMISSION, "Fixture", ["fx_64xh100", "fx_8xh100"]),
        ("clean/Fixture/results/fx_8xh100", TargetKind.SYSTEM, "Fixture", ["fx_8xh100"]),
        ("clean/Fixture/results/fx_8xh100/bert", TargetKind.BENCHMARK, "Fixture", ["fx_8xh100"]),
    ],
)
def test_kinds(fixtures, relative, kind, submitter, systems):
    tree = discover(fixtures / relative)
    assert tree.kind is kind
    assert {s.name for s in tree.submissions} == {submitter}
    assert sorted({b.system for b in tree.benchmark_folders}) == systems
    descriptions = [d for s in tree.submissions for d in s.systems]
    assert sorted(d.name for d in descriptions) == systems  # read from ../systems/ for inner folders
    assert all(d.division == "closed" for d in descriptions)


def test_log_file_kind(fixtures):
    tree = discover(fixtures / "clean" / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_3.txt")
    assert tree.kind is TargetKind.LOG_FILE
    assert [entry.path for entry in tree.loose_logs] == ["result_3.txt"]


def test_result_files_in_natural_order(fixtures):
    (folder,) = [b for b in discover(fixtures / "clean").benchmark_folders if b.benchmark == "bert"]
    assert [f.path.rsplit("/", 1)[-1] for f in folder.result_files] == [f"result_{i}.txt" for i in range(10)]
    assert folder.path == "Fixture/results/fx_8xh100/bert"


def test_loose_benchmark_folder(tmp_path, fixtures):
    for index in range(2):
        shutil.copy(fixtures / "clean" / "Fixture" / "results" / "fx_8xh100" / "ssd" / f"result_{index}.txt", tmp_path)
    tree = discover(tmp_path)
    assert tree.kind is TargetKind.BENCHMARK
    assert [b.system for b in tree.benchmark_folders] == [None]


@pytest.mark.parametrize("path", ["missing", "."])
def test_unusable_targets(tmp_path, path):
    with pytest.raises(TargetError):
        discover(tmp_path / path)


def test_symlink_loop_and_broken_link(cli, package):
    folder = package / "Fixture" / "results" / "fx_8xh100" / "ssd"
    os.symlink("loop_a", folder / "loop_b")
    os.symlink("loop_b", folder / "loop_a")
    os.symlink("/nonexistent/result.txt", folder / "result_9.txt")
    os.symlink(".", folder / "again")  # a folder link that points at itself
    report = json.loads(cli("check", str(package), "--format", "json").out)
    found = {(f["rule"], f["path"].rsplit("/", 1)[-1]) for f in report["findings"]}
    assert {("PKG003", "loop_a"), ("PKG003", "loop_b"), ("PKG003", "result_9.txt"), ("PKG004", "again")} <= found
    link = next(f for f in report["findings"] if f["path"].endswith("result_9.txt"))
    assert (link["submitter"], link["system"], link["benchmark"]) == ("Fixture", "fx_8xh100", "ssd")


def test_fifo_is_reported_not_opened(cli, package):
    folder = package / "Fixture" / "results" / "fx_8xh100" / "ssd"
    os.mkfifo(folder / "result_5.txt")
    result = cli("check", str(package), "--format", "json")  # would hang if the FIFO were opened
    findings = json.loads(result.out)["findings"]
    assert [(f["rule"], f["path"]) for f in findings if f["rule"] == "PKG002"] == [
        ("PKG002", "Fixture/results/fx_8xh100/ssd/result_5.txt")
    ]
    assert result.code == 1


def test_unreadable_folder_is_a_finding(cli, package, monkeypatch):
    denied = package / "Fixture" / "results" / "fx_8xh100" / "ssd"
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(path) == denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = cli("check", str(package), "--format", "json")
    findings = json.loads(result.out)["findings"]
    (unreadable,) = [f for f in findings if f["rule"] == "PKG001"]
    assert unreadable["path"] == "Fixture/results/fx_8xh100/ssd" and "Permission denied" in unreadable["message"]
    assert result.code == 1


def test_unreadable_path_exits_2(cli, package, monkeypatch):
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(path) == package:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = cli("check", str(package))
    assert result.code == 2 and "Permission denied" in result.err


def test_unreadable_file_path_exits_2(cli, package, monkeypatch):
    log = package / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_1.txt"
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != log)
    result = cli("check", str(log))
    assert result.code == 2 and "permission denied" in result.err


def test_never_writes_into_path(cli, fixtures):
    before = snapshot(fixtures)
    for target in ["clean", "demo", "broken", "clean/Fixture/results/fx_8xh100/ssd"]:
        cli("check", str(fixtures / target), "--format", "json")
    assert snapshot(fixtures) == before


def test_file_over_the_repository_limit(cli, package, monkeypatch):
    import mlperf_audit.reading.discovery as discovery

    monkeypatch.setattr(discovery, "MAX_REPO_FILE_BYTES", 1_000)
    findings = json.loads(cli("check", str(package), "--format", "json", "--select", "PKG016").out)["findings"]
    assert {f["path"].rsplit("/", 1)[-1] for f in findings} == {f"result_{i}.txt" for i in range(5)} | {
        "fx_8xh100.json"
    }
    assert "the official repository checker allows 50 MB" in findings[0]["message"]
