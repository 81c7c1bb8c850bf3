"""A hostile cache (issue 13, attacks 1 and 2): whoever can plant files in the cache folder (a shared
``$MLPERF_AUDIT_CACHE_DIR``, a restored CI cache, a folder made under ``umask 000``) can neither run
code, nor change a verdict with an entry copied or linked from another file, nor hang or exhaust the
check, nor make ``cache prune``/``clear`` delete anything outside the cache."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import shutil
import signal
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import keep_parses
from mlperf_audit import Problem
from mlperf_audit.reading import cache as cache_module
from mlperf_audit.reading.cache import ParseCache, Parsed
from mlperf_audit.reading.parser import parse_log

SSD = Path("Fixture/results/fx_8xh100/ssd")
LORA = "Fixture/results/fx_8xh100/llama2_70b_lora"


class Hung(BaseException):
    """Not an Exception: no `except Exception` on the way may swallow it."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fails a call that blocks (an open() of a FIFO waits for a writer forever)."""

    def expire(signum: int, frame: Any) -> None:
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def entry_of(cache_dir: Path, log: Path) -> Path:
    """Where the cache keeps the parse of `log` (the layout is part of the attack surface)."""
    key = ParseCache(cache_dir).key(os.path.abspath(log), log.read_bytes())
    return cache_dir / "parse-v1" / key[:2] / key


def findings(result) -> list[dict[str, Any]]:
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    return json.loads(result.out)["findings"]


@pytest.fixture
def broken(tmp_path: Path, fixtures: Path) -> Path:
    """A package whose ssd/result_3.txt is cut short (LOG013, EVT003 and SEED006 without a cache)."""
    root = tmp_path / "broken"
    shutil.copytree(fixtures / "broken" / "truncated-log", root)
    return root


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    return folder


def check(cli, package: Path, *options: str):
    return cli("check", str(package), "--format", "json", "-j", "1", *options)


# -- attack 1: code from the cache -------------------------------------------------------------


class _Marker:
    """Unpickling this creates the marker file: what os.system could do, made visible."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def _old_rcp_entries(cache_dir: Path) -> list[Path]:
    """The names under which versions before the fix read their pickled RCP statistics: predictable."""
    import numpy as np
    from mlperf_logging.rcp_checker import rcp_checker

    from mlperf_audit.reference import rulesets

    names = []
    for name in rulesets.SUPPORTED:
        version = name.split("-", 1)[1]
        for benchmark in rulesets.get(name).benchmarks:
            rcp_file = Path(rcp_checker.__file__).parent / f"{rulesets.USAGE}_{version}" / f"rcps_{benchmark}.json"
            if not rcp_file.is_file():
                continue
            digest = hashlib.blake2b(
                f"{version}\0{benchmark}\0{np.__version__}\0{sys.version}".encode(), digest_size=20
            )
            for source in (Path(rcp_checker.__file__), rcp_file):
                digest.update(source.read_bytes())
            names.append(cache_dir / "rcp-v1" / f"{digest.hexdigest()}.pickle")
    return names


def test_a_planted_pickle_in_the_old_rcp_folder_never_runs(cli, fixtures, cache_dir, tmp_path):
    marker = tmp_path / "pwned"
    planted = _old_rcp_entries(cache_dir)
    assert len(planted) > 80
    (cache_dir / "rcp-v1").mkdir()
    payload = pickle.dumps(_Marker(marker))
    for entry in planted:
        entry.write_bytes(payload)
    for package in (fixtures / "clean", fixtures / "broken" / "run-aborted"):
        for command in ("check", "score"):
            result = cli(command, str(package), "--format", "json", "--cache-dir", str(cache_dir))
            assert result.code in (0, 1), result.err
    assert not marker.exists()


def test_no_entry_is_read_with_pickle_or_marshal(monkeypatch, cli, fixtures, cache_dir):
    import marshal

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an object loader was called")

    for module, name in ((pickle, "loads"), (pickle, "load"), (marshal, "loads"), (marshal, "load")):
        monkeypatch.setattr(module, name, refuse)
    for _ in range(2):  # cold, then warm
        assert check(cli, fixtures / "clean", "--cache-dir", str(cache_dir)).code == 0


# -- attack 2: entries that lie, hang or flood ------------------------------------------------


def test_a_clean_parse_filed_under_a_broken_files_key_changes_no_verdict(cli, broken, fixtures, cache_dir, tmp_path):
    plain = findings(check(cli, broken, "--no-cache"))
    assert {"LOG013", "SEED006"} <= {f["rule"] for f in plain}
    clean_log = tmp_path / "clean" / "result_3.txt"
    clean_log.parent.mkdir()
    shutil.copy(fixtures / "clean" / SSD / "result_3.txt", clean_log)
    parse_log(clean_log, "x", cache=ParseCache(cache_dir))
    forged = entry_of(cache_dir, broken / SSD / "result_3.txt")
    forged.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(entry_of(cache_dir, clean_log), forged)  # the whole entry, valid, of the clean file
    keep_parses(cache_dir, broken)
    again = check(cli, broken, "--cache-dir", str(cache_dir))
    assert again.code == 1 and findings(again) == plain


def _damage(kind: str, entry: Path, donor: Path, tmp_path: Path) -> None:
    """Replaces a valid entry by what an attacker, or a crash, leaves there."""
    blob = entry.read_bytes()
    entry.unlink()
    if kind == "garbage":
        entry.write_bytes(b"\x93\xa3abc" + os.urandom(64))
    elif kind == "empty":
        entry.write_bytes(b"")
    elif kind == "truncated":
        entry.write_bytes(blob[: len(blob) // 2])
    elif kind == "link-to-another-entry":
        entry.symlink_to(donor)
    elif kind == "hard-link-to-another-entry":
        os.link(donor, entry)
    elif kind == "link-to-dev-zero":
        entry.symlink_to("/dev/zero")
    elif kind == "huge-sparse-file":
        with open(entry, "wb") as stream:
            stream.truncate(1 << 34)  # 16 GiB of nothing, allocated on no disk
    elif kind == "link-to-huge-file":
        huge = tmp_path / "huge"
        if not huge.exists():
            with open(huge, "wb") as stream:
                stream.truncate(1 << 34)
        entry.symlink_to(huge)
    elif kind == "fifo":
        os.mkfifo(entry)
    elif kind == "folder":
        entry.mkdir()
    else:
        raise AssertionError(kind)


DAMAGE = [
    "garbage",
    "empty",
    "truncated",
    "link-to-another-entry",
    "hard-link-to-another-entry",
    "link-to-dev-zero",
    "huge-sparse-file",
    "link-to-huge-file",
    "fifo",
    "folder",
]


@pytest.mark.parametrize("kind", DAMAGE)
def test_verdicts_with_a_damaged_linked_or_special_entry_equal_the_no_cache_verdicts(
    cli, broken, fixtures, cache_dir, tmp_path, kind
):
    plain = findings(check(cli, broken, "--no-cache"))
    keep_parses(cache_dir, broken)
    assert findings(check(cli, broken, "--cache-dir", str(cache_dir))) == plain  # fills the cache
    donor_log = tmp_path / "donor" / "result_3.txt"
    donor_log.parent.mkdir()
    shutil.copy(fixtures / "clean" / SSD / "result_3.txt", donor_log)
    parse_log(donor_log, "x", cache=ParseCache(cache_dir))
    donor = entry_of(cache_dir, donor_log)
    logs = sorted((broken / SSD).glob("result_*.txt"))
    for log in logs:
        _damage(kind, entry_of(cache_dir, log), donor, tmp_path)
    with deadline(60):
        keep_parses(cache_dir, broken)  # the check reads the damaged entries, not a kept outcome
        damaged = check(cli, broken, "--cache-dir", str(cache_dir))
        assert findings(damaged) == plain
        keep_parses(cache_dir, broken)
        assert findings(check(cli, broken, "--cache-dir", str(cache_dir))) == plain
    assert donor.is_file() and Path("/dev/zero").is_char_device()


@pytest.mark.parametrize("target", ["/dev/zero", "huge"])
def test_an_entry_linked_to_an_endless_or_huge_file_is_a_miss_without_reading_it(monkeypatch, tmp_path, target):
    log = tmp_path / "result_1.txt"
    log.write_text(
        ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "seed", '
        '"value": 1, "metadata": {}}\n'
    )
    cache = ParseCache(tmp_path / "cache")
    parse_log(log, "x", cache=cache)
    entry = entry_of(tmp_path / "cache", log)
    if target == "huge":
        target = str(tmp_path / "huge")
        with open(target, "wb") as stream:
            stream.truncate(1 << 34)
    entry.unlink()
    entry.symlink_to(target)
    read = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: read.append(n) or real_read(fd, min(n, 1 << 20)))
    with deadline(10):
        assert cache.load(entry.name, "x") is None
    assert read == [] and cache.hits == 0


def test_a_huge_regular_entry_is_a_miss_without_reading_it(monkeypatch, tmp_path):
    log = tmp_path / "result_1.txt"
    log.write_text("no records\n")
    cache = ParseCache(tmp_path / "cache")
    parse_log(log, "x", cache=cache)
    entry = entry_of(tmp_path / "cache", log)
    with open(entry, "r+b") as stream:
        stream.truncate(cache_module.entry_limit(log.stat().st_size) + 1)
    monkeypatch.setattr(os, "read", lambda fd, n: pytest.fail("the entry was read"))
    assert cache.load(entry.name, "x") is None


def test_a_fifo_entry_does_not_hang(tmp_path):
    log = tmp_path / "result_1.txt"
    log.write_text("no records\n")
    cache = ParseCache(tmp_path / "cache")
    parse_log(log, "x", cache=cache)
    entry = entry_of(tmp_path / "cache", log)
    entry.unlink()
    os.mkfifo(entry)
    with deadline(10):
        run = parse_log(log, "x", cache=cache)
    assert [i.problem for i in run.issues] == [Problem.NO_RECORDS] and cache.hits == 0


def test_an_entry_under_another_name_or_of_another_shape_is_a_miss(tmp_path):
    import msgspec

    first, second = tmp_path / "result_1.txt", tmp_path / "result_2.txt"
    first.write_text("no records\n")
    second.write_text("no records either\n")
    cache = ParseCache(tmp_path / "cache")
    for log in (first, second):
        parse_log(log, "x", cache=cache)
    entry = entry_of(tmp_path / "cache", first)
    renamed = entry_of(tmp_path / "cache", second)
    key = msgspec.msgpack.encode(renamed.name)
    hostile = [
        entry.read_bytes(),  # a valid entry renamed: its key is not the name's
        msgspec.msgpack.encode([renamed.name, 0, [], [], "extra"]),
        msgspec.msgpack.encode([renamed.name, "0", [], []]),
        msgspec.msgpack.encode(
            [renamed.name, 0, [["k", 1, 0.0, None, None, {"a": msgspec.msgpack.Ext(1, b"x")}, 1]], []]
        ),
        b"\x94" + key + b"\x00\x91\x97\xa1k" + b"\x91" * 100_000 + b"\x01",  # a value nested 100 000 deep
        b"\x94" + key + b"\x00\xdd\x7f\xff\xff\xff",  # 2**31 events announced
    ]
    for blob in hostile:
        renamed.write_bytes(blob)
        assert cache.load(renamed.name, "y") is None
    assert cache.hits == 0


# -- the cache folder ---------------------------------------------------------------------------


def test_a_folder_created_under_umask_000_is_private(tmp_path):
    previous = os.umask(0)
    try:
        assert cache_module.secure_directory(tmp_path / "a" / "b" / "cache") is None
        log = tmp_path / "result_1.txt"
        log.write_text("no records\n")
        parse_log(log, "x", cache=ParseCache(tmp_path / "a" / "b" / "cache"))
    finally:
        os.umask(previous)
    made = {tmp_path / "a", *(tmp_path / "a").rglob("*")}
    folders = [p for p in made if p.is_dir()]
    files = [p for p in made if p.is_file()]
    assert len(folders) == 5 and len(files) == 1  # a, b, cache, parse-v1, the shard; one entry
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o700}
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}


@pytest.mark.parametrize(
    "mode, reason",
    [
        (0o777, "its group and other users can write to it"),
        (0o722, "its group and other users can write to it"),
        (0o770, "its group can write to it"),
        (0o703, "other users can write to it"),
    ],
)
def test_a_folder_others_can_write_is_refused(tmp_path, mode, reason):
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(mode)
    assert reason in cache_module.secure_directory(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == mode  # judged, not changed behind the user's back


def test_a_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: folder.stat().st_uid + 1)
    assert "owned by user id" in cache_module.secure_directory(folder)


def test_a_link_or_a_file_is_refused(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("")
    assert "symbolic link" in cache_module.secure_directory(tmp_path / "link")
    assert "not a folder" in cache_module.secure_directory(tmp_path / "file")
    assert cache_module.secure_directory(tmp_path / "real") is None


def test_the_cache_itself_refuses_an_unsafe_folder(cli, broken, fixtures, cache_dir):
    """The second line of defence, whatever its caller checked: in a folder that someone else can
    write to, even an entry with the right key inside (anyone can compute keys) is not read."""
    plain = findings(check(cli, broken, "--no-cache"))
    broken_log = broken / SSD / "result_3.txt"
    clean = parse_log(fixtures / "clean" / SSD / "result_3.txt", "x")
    forged_key = entry_of(cache_dir, broken_log).name
    ParseCache(cache_dir).store(forged_key, Parsed(clean.events, clean.issues, clean.line_count))
    assert ParseCache(cache_dir).load(forged_key, "x") is not None  # a perfect forgery
    cache_dir.chmod(0o777)
    cache = ParseCache(cache_dir)
    run = parse_log(broken_log, "y", cache=cache)
    assert Problem.TRUNCATED in {i.problem for i in run.issues} and cache.hits == 0
    before = sorted(p.name for p in cache_dir.rglob("*"))
    assert findings(check(cli, broken, "--cache-dir", str(cache_dir))) == plain
    assert sorted(p.name for p in cache_dir.rglob("*")) == before  # nothing written either


# -- cache prune / clear / info -----------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Files outside the cache, old enough for any prune, that a link in the cache points to."""
    folder = tmp_path / "outside"
    (folder / "ab").mkdir(parents=True)
    for path in (folder / "precious.txt", folder / "ab" / "nested.txt", folder / "lone.txt"):
        path.write_text("keep me")
        os.utime(path, (0, 0))
    return folder


def _intact(outside: Path) -> bool:
    return all((outside / name).read_text() == "keep me" for name in ("precious.txt", "ab/nested.txt", "lone.txt"))


def test_prune_and_clear_never_follow_a_link_out_of_the_cache(cli, cache_dir, outside):
    (cache_dir / "parse-v1").symlink_to(outside)
    (cache_dir / "rcp-v1").symlink_to(outside / "ab")
    assert "0 parsed file(s), 0.0 MiB" in cli("cache", "--cache-dir", str(cache_dir)).out
    assert "removed 0 entries" in cli("cache", "prune", "--days", "0", "--cache-dir", str(cache_dir)).out
    assert _intact(outside)
    assert cli("cache", "clear", "--cache-dir", str(cache_dir)).code == 0
    assert _intact(outside)
    assert not os.path.lexists(cache_dir / "parse-v1") and not os.path.lexists(cache_dir / "rcp-v1")  # the links went


def test_prune_and_clear_never_follow_links_inside_the_cache(cli, cache_dir, outside):
    shard = cache_dir / "parse-v1" / "cd"
    shard.mkdir(parents=True)
    (cache_dir / "parse-v1" / "ab").symlink_to(outside / "ab")
    (shard / "entry-link").symlink_to(outside / "lone.txt")
    (shard / "old-entry").write_bytes(b"x" * 100)
    os.utime(shard / "old-entry", (0, 0))
    os.mkfifo(shard / "fifo")
    with deadline(30):
        assert "1 parsed file(s)" in cli("cache", "--cache-dir", str(cache_dir)).out
        assert "removed 1 entries" in cli("cache", "prune", "--days", "1", "--cache-dir", str(cache_dir)).out
        assert not (shard / "old-entry").exists() and _intact(outside)
        assert cli("cache", "clear", "--cache-dir", str(cache_dir)).code == 0
    assert _intact(outside) and not (cache_dir / "parse-v1").exists()


def test_a_cache_folder_that_is_a_link_is_not_emptied(cli, tmp_path, outside):
    (outside / "parse-v1").mkdir()
    (outside / "parse-v1" / "entry").write_text("keep me")
    os.utime(outside / "parse-v1" / "entry", (0, 0))
    link = tmp_path / "cache-link"
    link.symlink_to(outside)
    for action in ("prune", "clear"):
        result = cli("cache", action, "--cache-dir", str(link))
        assert result.code == 2 and "symbolic link" in result.err
    assert (outside / "parse-v1" / "entry").read_text() == "keep me" and _intact(outside)
    assert "symbolic link" in cli("cache", "--cache-dir", str(link)).out


def test_cache_info_with_a_fifo_for_a_folder_does_not_hang(cli, cache_dir):
    os.mkfifo(cache_dir / "parse-v1")
    with deadline(30):
        result = cli("cache", "--cache-dir", str(cache_dir))
        assert result.code == 0 and "0 parsed file(s)" in result.out
        assert cli("cache", "clear", "--cache-dir", str(cache_dir)).code == 0
    assert not os.path.lexists(cache_dir / "parse-v1")


# -- RCP rules on values that are not numbers ---------------------------------------------------


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "folder, key, value, rule",
    [
        ("broken/run-aborted", "global_batch_size", _nested(980), "RCP003"),
        ("broken/run-aborted", "submission_benchmark", _nested(980), "RCP002"),
        ("broken/run-aborted", "epoch_num", _nested(980), "RCP010"),
        ("broken/run-aborted", "epoch_num", {"a": 1}, "RCP010"),
        ("broken/run-aborted", "global_batch_size", "Infinity", "RCP003"),
        (f"clean/{LORA}", "samples_count", "Infinity", "RCP010"),
        (f"clean/{LORA}", "samples_count", [1, 2], "RCP010"),
        (f"clean/{LORA}", "samples_count", True, "RCP010"),
    ],
)
def test_rcp_rules_survive_values_that_are_not_numbers(cli, monkeypatch, fixtures, folder, key, value, rule):
    """A parse (from a log, or an entry written by anyone who can write the cache) may hold any JSON
    value, nested up to the interpreter's limit: RCP001-RCP003 report the runs, they do not crash,
    and a point that is not a number is unreadable (RCP010), not infinity or 1."""
    from mlperf_audit.engine import loading

    real_parse = loading.parse_log

    def hostile(*args: Any, **kwargs: Any) -> Any:
        run = real_parse(*args, **kwargs)
        events = []
        for event in run.events:
            if event.key == key:
                event = dataclasses.replace(event, value=value)
            elif key in event.metadata:
                event = dataclasses.replace(event, metadata={**event.metadata, key: value})
            events.append(event)
        return dataclasses.replace(run, events=tuple(events))

    monkeypatch.setattr(loading, "parse_log", hostile)
    result = check(cli, fixtures / folder, "--select", "RCP", "--no-cache")
    rules = {f["rule"] for f in findings(result)}
    assert "CHK001" not in rules and rule in rules, rules


def test_score_is_never_answered_by_a_forged_damaged_or_misplaced_check_entry(cli, tmp_path, fixtures):
    """`score` may be answered from a kept check: an entry replaced by another tree's, cut short or
    filled with garbage is a miss, and the scores are those of `--no-cache`."""
    cache = tmp_path / "cache"
    trees = {}
    for name in ("clean", "demo"):
        trees[name] = tmp_path / name
        shutil.copytree(fixtures / name, trees[name])
    plain = cli("score", str(trees["clean"]), "--format", "json", "--no-cache").out
    other = cli("score", str(trees["demo"]), "--format", "json", "--no-cache").out
    assert plain != other
    for name in trees:
        cli("check", str(trees[name]), "--format", "json", "--cache-dir", str(cache))
    entries = sorted((p for p in (cache / "check-v1").rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    donor = entries[-1].read_bytes()
    for damage in (donor, donor[: len(donor) // 2], b"\x93not msgpack", b""):
        for entry in entries:
            entry.write_bytes(damage)
        assert cli("score", str(trees["clean"]), "--format", "json", "--cache-dir", str(cache)).out == plain
        for entry in (p for p in (cache / "check-v1").rglob("*") if p.is_file()):
            entry.write_bytes(damage)  # scoring anew keeps a score entry: damage it too


# -- issue 25, attack 4: a file rewritten while it is being checked ----------------------------


@pytest.mark.parametrize("when", ["after discovery", "after the check"])
def test_a_description_rewritten_during_a_check_never_keeps_the_old_verdict(
    cli, fixtures, cache_dir, tmp_path, monkeypatch, when
):
    """The whole-check key was computed after discovery had read the system descriptions: a
    description rewritten in between was kept under the new state's key with the old verdict, and
    later checks answered "passed" where --no-cache fails (SYS002, a division removed)."""
    from mlperf_audit.engine import api

    package = tmp_path / "package"
    shutil.copytree(fixtures / "clean", package)
    description = package / "Fixture" / "systems" / "fx_8xh100.json"
    data = json.loads(description.read_text())
    del data["division"]
    rewritten = json.dumps(data, indent=1)
    real_discover, real_run_checks = api.discover, api.run_checks

    def discover_then_rewrite(path):
        tree = real_discover(path)
        if when == "after discovery":
            description.write_text(rewritten)
        return tree

    def check_then_rewrite(*args, **kwargs):
        outcome = real_run_checks(*args, **kwargs)
        if when == "after the check":
            description.write_text(rewritten)
        return outcome

    monkeypatch.setattr(api, "discover", discover_then_rewrite)
    monkeypatch.setattr(api, "run_checks", check_then_rewrite)
    first = check(cli, package, "--cache-dir", str(cache_dir))
    assert first.code == 0  # the check read the description before it was rewritten
    monkeypatch.undo()
    later = check(cli, package, "--cache-dir", str(cache_dir))
    fresh = check(cli, package, "--no-cache")
    assert fresh.code == 1 and any(f["rule"] == "SYS002" for f in findings(fresh))
    assert later.code == fresh.code and findings(later) == findings(fresh)
