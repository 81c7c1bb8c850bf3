"""Linear time and bounded memory in every dimension of the input a package controls (issue 25).

Each test is the attack at two sizes, 1x and 4x, and measures what the tool did, never seconds:
the operations it ran (Python lines, Python and C calls, counted with `sys.settrace` and
`sys.setprofile`), and where the work hides inside one C call, the characters that string methods
scanned. A 4x input may cost at most
`GROWTH_LIMIT` times the 1x input (4x, with a quarter for fixed costs and rounding); the quadratic
code these tests caught cost 8x to 16x. A deep input must give a finding or a clear refusal,
never a RecursionError.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tarfile
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from mlperf_audit import archives
from mlperf_audit.cli import main
from mlperf_audit.config import Config
from mlperf_audit.engine import checkcache
from mlperf_audit.errors import TargetError
from mlperf_audit.model import Problem
from mlperf_audit.reading import discovery
from mlperf_audit.review import peers as peer_statistics
from mlperf_audit.rule import CheckContext
from mlperf_audit.scores import BenchmarkScore, RunScore
from mlperf_audit_rules.support import tracing

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "clean" / "Fixture"
SYSTEM = "fx_8xh100"
#: 4x the input may cost this many times the 1x input.
GROWTH_LIMIT = 5.0


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------


def operations(action: Callable[[], Any]) -> int:
    """The Python lines run and the Python and C functions called by `action`, nested ones included."""
    count = 0

    def each_line(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return each_line

    def each_c_call(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "c_call":
            count += 1

    # this thread's only: a command measured here runs with --jobs 1
    sys.settrace(each_line)
    sys.setprofile(each_c_call)
    try:
        action()
    finally:
        sys.setprofile(None)
        sys.settrace(None)
    return count


def assert_linear(small: int, large: int, what: str) -> None:
    assert small > 0, f"{what}: nothing was measured"
    assert large <= GROWTH_LIMIT * small, f"{what}: 4x the input cost {large / small:.1f}x ({small} then {large})"


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def assert_checked(code: int, err: str, what: str) -> None:
    """A verdict (exit 0 or 1), never an internal error."""
    assert code in (0, 1), f"{what}: exit {code}: {err[-2000:]}"
    assert "internal error" not in err and "Traceback" not in err, f"{what}: {err[-2000:]}"


# ---------------------------------------------------------------------------------------------
# Packages
# ---------------------------------------------------------------------------------------------


def description() -> dict[str, Any]:
    return json.loads((FIXTURE / "systems" / f"{SYSTEM}.json").read_text())


def package(root: Path, results: int = 5) -> Path:
    """A submission `Acme` of one system and one benchmark folder with `results` logs (the
    fixture's first five, then copies of them); returns the benchmark folder."""
    (root / "Acme" / "systems").mkdir(parents=True)
    (root / "Acme" / "systems" / "sys1.json").write_text(json.dumps(description(), indent=4))
    folder = root / "Acme" / "results" / "sys1" / "ssd"
    folder.mkdir(parents=True)
    for index in range(results):
        shutil.copy(FIXTURE / "results" / SYSTEM / "ssd" / f"result_{index % 5}.txt", folder / f"result_{index}.txt")
    return folder


def archive_of(root: Path, target: Path, extra: dict[str, bytes]) -> Path:
    """`root`'s files and the `extra` members, as a .tar.gz or a .zip."""
    files = {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}
    files.update(extra)
    if target.name.endswith(".zip"):
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
            for name, data in files.items():
                out.writestr(name, data)
    else:
        with tarfile.open(target, "w:gz") as out:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                out.addfile(info, io.BytesIO(data))
    return target


# ---------------------------------------------------------------------------------------------
# The size of a system description
# ---------------------------------------------------------------------------------------------


class _ScannedText(str):
    """Text that tallies the characters its own search methods scan."""

    scanned = 0

    def _tally(self, start: int | None, end: int | None) -> None:
        begin, stop, _ = slice(start, end).indices(len(self))
        _ScannedText.scanned += max(0, stop - begin)

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._tally(start, end)
        return super().count(sub, start, end)

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._tally(start, end)
        return super().find(sub, start, end)

    def rfind(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._tally(start, end)
        return super().rfind(sub, start, end)

    def index(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._tally(start, end)
        return super().index(sub, start, end)

    def splitlines(self, keepends: bool = False) -> list[str]:  # type: ignore[override]
        self._tally(None, None)
        return super().splitlines(keepends)

    def split(self, sep: Any = None, maxsplit: int = -1) -> list[str]:  # type: ignore[override]
        self._tally(None, None)
        return super().split(sep, maxsplit)


class _ScannedBytes(bytes):
    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return _ScannedText(super().decode(encoding, errors))


class _ScannedStream:
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __enter__(self) -> "_ScannedStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.close()

    def read(self, size: int = -1) -> bytes:
        return _ScannedBytes(self._stream.read(size))


def test_a_system_description_of_many_fields_is_read_in_linear_time(tmp_path, monkeypatch):
    """The attack: a 1 MB description of one field a line took 22 s to discover (250 KB: 1.65 s):
    the line of each field was counted from the top of the text, once per field."""
    real_open = discovery.open_binary
    monkeypatch.setattr(discovery, "open_binary", lambda source: _ScannedStream(real_open(source)))

    def cost(fields: int) -> int:
        root = tmp_path / f"fields{fields}"
        package(root)
        data = description() | {f"extra_field_{index}": "x" * 16 for index in range(fields)}
        text = json.dumps(data, indent=4)
        (root / "Acme" / "systems" / "sys1.json").write_text(text)
        last = f'"extra_field_{fields - 1}"'
        line = next(number for number, row in enumerate(text.splitlines(), 1) if row.lstrip().startswith(last))
        _ScannedText.scanned = 0
        tree = {}
        made = operations(lambda: tree.setdefault("tree", discovery.discover(root)))
        (system,) = tree["tree"].submissions[0].systems
        assert system.field_lines[f"extra_field_{fields - 1}"] == line
        assert _ScannedText.scanned > 0, "the description was not read through the counting stream"
        return made + _ScannedText.scanned

    assert_linear(cost(1000), cost(4000), "fields of a system description")


# ---------------------------------------------------------------------------------------------
# Files in one folder, on disk and in archives
# ---------------------------------------------------------------------------------------------


def test_many_result_files_in_one_folder_are_listed_in_linear_time(tmp_path):
    """The attack: 20,000 small result files took 27 s to discover (5,000: 1.8 s): each file was
    looked for in the tuple of result files, comparing entries one by one."""

    def cost(results: int) -> int:
        root = tmp_path / f"results{results}"
        package(root, results)
        tree = {}
        made = operations(lambda: tree.setdefault("tree", discovery.discover(root)))
        (folder,) = tree["tree"].benchmark_folders
        assert len(folder.result_files) == results
        return made

    assert_linear(cost(500), cost(2000), "result files in one folder")


@pytest.mark.parametrize("suffix", [".tar.gz", ".zip"])
def test_an_archive_of_many_result_members_is_listed_in_linear_time(tmp_path, suffix):
    """The attack: a 240 KB .tar.gz of 20,000 members took 26 s to discover (5,000: 1.9 s); a zip
    of as many members, the same."""

    def cost(members: int) -> int:
        root = tmp_path / f"tree{members}"
        package(root)
        extra = {f"Acme/results/sys1/ssd/result_{index}.txt": b":::MLLOG {}\n" for index in range(5, members)}
        target = archive_of(root, tmp_path / f"pkg{members}{suffix}", extra)
        tree = {}
        made = operations(lambda: tree.setdefault("tree", discovery.discover(target)))
        (folder,) = tree["tree"].benchmark_folders
        assert len(folder.result_files) == members
        return made

    assert_linear(cost(500), cost(2000), f"members of a {suffix}")


def test_many_linked_folders_are_reported_in_linear_operations(tmp_path):
    """The attack: 4,000 links to folders in a benchmark folder cost 8x the calls of 1,000: each
    link's finding was looked for among every finding made before it."""

    def cost(links: int) -> int:
        root = tmp_path / f"links{links}"
        folder = package(root)
        (root / "elsewhere").mkdir()
        for index in range(links):
            (folder / f"link{index}").symlink_to(root / "elsewhere")
        tree = {}
        made = operations(lambda: tree.setdefault("tree", discovery.discover(root)))
        assert sum(issue.problem == Problem.LINKED_FOLDER for issue in tree["tree"].issues) == links
        return made

    assert_linear(cost(100), cost(400), "linked folders")


# ---------------------------------------------------------------------------------------------
# Submitters, systems and benchmark folders
# ---------------------------------------------------------------------------------------------


def test_rules_find_a_results_description_and_submission_in_linear_operations(tmp_path):
    """The attack: a repository of 400 submitters cost 5.4x one of 100 (and 400 systems 5.1x 100):
    rules ask for the description and the submission of every result, and each question searched
    every submission and every system."""

    def cost(submitters: int) -> int:
        root = tmp_path / f"repository{submitters}"
        for index in range(submitters):
            package(root / f"Submitter{index}", results=1)
            shutil.move(root / f"Submitter{index}" / "Acme", root / f"S{index}")
            (root / f"Submitter{index}").rmdir()
        context = CheckContext(Config(), discovery.discover(root))
        folders = context.tree.benchmark_folders
        assert len(folders) == submitters

        def ask() -> None:
            for folder in folders:
                description = context.system_description(folder.submitter, folder.system)
                assert description is not None and description.name == folder.system
                submission = tracing.submission_of(folder, context)
                assert submission is not None and submission.name == folder.submitter
                assert submission.system(folder.system or "") is description

        return operations(ask)

    assert_linear(cost(100), cost(400), "lookups over submitters")


def _scores(count: int) -> list[BenchmarkScore]:
    """`count` results of one benchmark: three accelerator models, some without a rate."""
    models = ("NVIDIA H100-SXM5-80GB", "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X")
    return [
        BenchmarkScore(
            f"S{index}",
            f"sys{index}",
            "ssd",
            f"S{index}/results/sys{index}/ssd",
            tuple(RunScore(f"result_{run}.txt", 10.0 + (index * 7 + run) % 13, "ok", 1000.0) for run in range(3)),
            5,
            10.0 + index % 11,
            1.0,
            1.0,
            system_info={
                "accelerator_model_name": models[index % 3],
                "accelerators_count": 0 if index % 10 == 9 else 8 + index % 5,
            },
        )
        for index in range(count)
    ]


def test_audit_compares_each_result_with_its_peers_in_linear_operations():
    """The attack: `audit` of 400 systems running one benchmark cost 4.9x 100: each result's peers
    were searched for in the whole group, the accelerator model matched again for every pair."""
    assert_linear(
        operations(lambda: peer_statistics.peer_rows(_scores(100), {})),
        operations(lambda: peer_statistics.peer_rows(_scores(400), {})),
        "results of one benchmark in audit's peers",
    )


def test_each_results_relation_to_its_peers_is_the_median_of_the_others():
    scores = _scores(47)
    rows = {(row["submitter"], row["system"]): row for row in peer_statistics.peer_rows(scores, {})}
    for score in scores:
        count = score.accelerators or 0
        peers = [
            p.work_rate
            for p in scores
            if p is not score
            and p.system_info["accelerator_model_name"] == score.system_info["accelerator_model_name"]
            and p.work_rate
            and count > 0
            and count / 1.5 <= (p.accelerators or 0) <= count * 1.5
        ]
        expected = score.work_rate / statistics.median(peers) if score.work_rate and peers else None
        assert rows[(score.submitter, score.system)]["relative_to_peers"] == expected


# ---------------------------------------------------------------------------------------------
# Depth: folders on disk, member names in archives
# ---------------------------------------------------------------------------------------------


_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)


@pytest.fixture
def nest() -> Iterator[Callable[[Path, int], Path]]:
    """Makes `depth` folders `d`, one in the other, under a folder, and removes them after the test,
    each step relative to an open folder (a path of a thousand levels costs the kernel a thousand
    lookups; os.makedirs, and shutil.rmtree in pytest's clean-up, recurse on 3.11)."""
    made: list[tuple[Path, int]] = []

    def nest(folder: Path, depth: int) -> Path:
        handle = os.open(folder, _FOLDER)
        for _ in range(depth):
            os.mkdir("d", dir_fd=handle)
            handle, above = os.open("d", _FOLDER, dir_fd=handle), handle
            os.close(above)
        os.close(os.open("notes.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=handle))
        os.close(handle)
        made.append((folder, depth))
        return Path(folder, *["d"] * depth)

    yield nest
    for folder, depth in made:
        if not os.path.lexists(folder / "d"):
            continue  # the test removed them
        handle = os.open(folder, _FOLDER)
        for _ in range(depth):
            handle, above = os.open("d", _FOLDER, dir_fd=handle), handle
            os.close(above)
        for name in os.listdir(handle):
            os.unlink(name, dir_fd=handle)
        for _ in range(depth):
            handle, below = os.open("..", _FOLDER, dir_fd=handle), handle
            os.close(below)
            os.rmdir("d", dir_fd=handle)
        os.close(handle)


def test_a_results_tree_1100_folders_deep_is_checked_not_crashed(tmp_path, nest):
    """The attack: a folder 1,100 levels deep in a submission made `check` an internal error
    (RecursionError: the names check walked the tree with os.walk, which recurses on Python 3.11)."""
    root = tmp_path / "pkg"
    folder = package(root)
    nest(folder, 1100)
    code_folder = root / "Acme" / "benchmarks" / "ssd" / "implementations" / "pytorch"
    code_folder.mkdir(parents=True)
    nest(code_folder, 1100)
    for argv in (["check"], ["score", "--no-cache"]):  # the kept check's key walks the tree too
        code, out, err = run_cli(*argv, str(root), "--jobs", "1")
        assert_checked(code, err, " ".join(argv))


def test_folder_depth_costs_linear_operations(tmp_path, nest):
    def cost(depth: int) -> int:
        root = tmp_path / f"depth{depth}"
        nest(package(root), depth)
        return operations(lambda: discovery.discover(root))

    assert_linear(cost(100), cost(400), "folder depth")


def test_the_kept_checks_key_walks_folder_depth_in_linear_operations(tmp_path, nest):
    """The attack: each folder's path from the root was recomputed by os.path.relpath, which splits
    both paths at every level: 4x the depth cost 12x the calls, a million at 1,100 levels."""

    def cost(depth: int) -> int:
        root = tmp_path / f"depth{depth}"
        nest(package(root), depth)
        seen: list[Any] = []
        made = operations(lambda: checkcache._add_tree(root, lambda *parts: seen.append(parts[0]), None))
        assert any(str(part).endswith("/d/notes.txt") and str(part).count("/d") == depth for part in seen)
        return made

    assert_linear(cost(100), cost(400), "folder depth in the kept check's key")


def test_cache_clear_removes_a_cache_folder_1100_folders_deep(tmp_path, nest):
    """The attack: a folder 1,100 levels deep in the cache made `cache clear` an internal error
    (shutil.rmtree recurses before Python 3.13); it is removed, and a link in it is not followed."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    (cache / "parse-v1").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep me")
    bottom = nest(cache / "parse-v1", 1100)
    os.symlink(outside, os.path.join(os.fspath(bottom), "link"))
    code, out, err = run_cli("cache", "clear", "--cache-dir", str(cache))
    assert code == 0 and "internal error" not in err, err
    assert not (cache / "parse-v1").exists() and (outside / "keep.txt").read_text() == "keep me"


def test_an_archive_member_name_thousands_of_folders_deep_is_refused_before_it_is_expanded(tmp_path):
    """The attack: a 3 KB .tar.gz holding one member 30,000 folders deep took 111 s and 1.8 GB: every
    folder above the member was built as a name of its own, each as long as the path to it. A
    name no file system could hold (over 4096 bytes) is refused before any folder is built."""
    root = tmp_path / "tree"
    package(root)
    deep = "Acme/results/sys1/ssd/" + "d/" * 8000 + "notes.txt"
    target = archive_of(root, tmp_path / "deep.tar.gz", {deep: b"x"})
    tracemalloc.start()
    try:
        with pytest.raises(TargetError, match="its name takes 16031 bytes"):
            discovery.discover(target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak / 2**20:.0f} MiB to refuse one deep member"
    code, out, err = run_cli("check", str(target))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_the_folders_an_archive_implies_are_bounded(tmp_path, monkeypatch):
    """Names under the length limit still imply a folder for every level of every one: members
    that each open a chain of their own are refused once their folders' names pass the bound,
    before they take the memory (shown with a bound of 1 MiB instead of 64)."""
    monkeypatch.setattr(archives, "MAX_FOLDER_NAME_BYTES", 1 << 20, raising=False)
    root = tmp_path / "tree"
    package(root)
    chains = {f"Acme/results/sys1/ssd/x{index}/" + "d/" * 1000 + "notes.txt": b"x" for index in range(20)}
    target = archive_of(root, tmp_path / "chains.tar.gz", chains)
    tracemalloc.start()
    try:
        with pytest.raises(TargetError, match="refusing to read it"):
            archives.Archive(target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB before the refusal"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[tool.mlperf-audit]\nselect = " + "[" * 3000 + "]" * 3000 + "\n"),
        (".mlperf-audit.toml", "select = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"),
    ],
)
def test_a_configuration_nested_thousands_deep_is_a_clear_error(tmp_path, monkeypatch, name, text):
    """The attack: a package's own pyproject.toml, read when the check runs from its folder, with an
    array nested 3,000 deep: tomllib recursed past the limit and the check was an internal error."""
    package(tmp_path)
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("check", ".")
    assert code == 2 and "nest too deeply" in err and name in err, err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err, err
