"""The cache of parsed files: same results as without it, never stale, never inside the checked
package, and a broken cache is a miss, not an error; the RCP references shipped as data are the
official ones. (tests/security/test_cache.py attacks the cache.)"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import keep_parses, typed
from mlperf_audit.reading.cache import ParseCache
from mlperf_audit.reading.parser import parse_log
from mlperf_audit.reference import rulesets
from mlperf_audit_rules.support import convergence
from test_hostile import LINE


def canonical(run) -> tuple:
    """A run as comparable data (NaN != NaN, so values are compared by repr)."""
    return (
        run.path,
        run.size_bytes,
        run.line_count,
        [
            (
                e.key,
                repr(e.value),
                e.time_ms if not math.isnan(e.time_ms) else "nan",
                e.event_type,
                e.namespace,
                repr(dict(e.metadata)),
                e.file,
                e.line,
            )
            for e in run.events
        ],
        [(i.problem, i.message, i.path, i.line, i.hint) for i in run.issues],
    )


HOSTILE = {
    "truncated": LINE + LINE[:40],
    "empty": "",
    "binary": b"\x00\x01\x02" * 100,
    "invalid-utf8": LINE.replace("seed", "s\udce9ed").encode("utf-8", "surrogateescape"),
    "nan": LINE.replace('"value": 1', '"value": NaN'),
    "huge-number": LINE.replace('"value": 1', '"value": ' + "9" * 400),
    "duplicate-keys": LINE.replace('"metadata": {}', '"metadata": {"a": 1, "a": 2}'),
    "several-records": LINE.rstrip("\n") + LINE,
    "malformed": LINE + ":::MLLOG {not json}\n" + LINE,
    "nested": LINE.replace('"value": 1', '"value": ' + "[" * 900 + "]" * 900),
    "no-records": "just shell output\n",
}
#: Parses that msgpack cannot hold (an int beyond 64 bits) are not cached: the file is parsed each time.
NOT_CACHED = {"huge-number"}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_cached_parse_equals_a_fresh_one(tmp_path, name):
    content = HOSTILE[name]
    log = tmp_path / "result_1.txt"
    log.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogateescape"))
    cache = ParseCache(tmp_path / "cache")
    fresh = parse_log(log, "a/result_1.txt")
    first = parse_log(log, "a/result_1.txt", cache=cache)
    second = parse_log(log, "b/result_1.txt", benchmark="bert", cache=cache)
    assert canonical(first) == canonical(fresh)
    assert cache.hits == (name not in NOT_CACHED)  # the second read is served from the cache
    assert canonical(second)[1:] == canonical(parse_log(log, "b/result_1.txt"))[1:]
    assert second.path == "b/result_1.txt" and all(e.file == "b/result_1.txt" for e in second.events)
    assert all(i.path == "b/result_1.txt" for i in second.issues)
    assert second.benchmark == "bert"


def test_every_sample_file_round_trips(tmp_path, sample):
    cache = ParseCache(tmp_path / "cache")
    files = sorted(sample.glob("*/results/*/*/result_*.txt"))
    assert len(files) > 100
    for path in files:
        parse_log(path, path.name, cache=cache)
    assert (cache.hits, cache.misses) == (0, len(files))
    for path in files:
        assert canonical(parse_log(path, path.name, cache=cache)) == canonical(parse_log(path, path.name))
    assert cache.hits == len(files)


def test_a_changed_byte_or_another_file_is_another_entry(tmp_path):
    cache = ParseCache(tmp_path / "cache")
    log = tmp_path / "result_1.txt"
    log.write_text(LINE)
    parse_log(log, "x", cache=cache)
    log.write_text(LINE.replace('"value": 1', '"value": 2'))  # same size, new content
    assert parse_log(log, "x", cache=cache).events[0].value == 2
    copy = tmp_path / "result_2.txt"
    shutil.copy(log, copy)
    parse_log(copy, "y", cache=cache)
    assert cache.hits == 0 and cache.misses == 3


def test_the_code_fingerprint_reads_every_file_it_names():
    """Each file whose code shapes an entry is read, wherever the core keeps it: one missing would
    fall back on the version alone, and an edited model would serve entries of the old one."""
    from mlperf_audit.reading import cache

    core = Path(cache.__file__).resolve().parents[1]
    assert [name for name in cache.FINGERPRINTED if not (core / name).is_file()] == []


@pytest.mark.parametrize("damage", [b"", b"garbage", b"\xe3\x01\x00"])
def test_a_damaged_entry_is_a_miss(tmp_path, damage):
    cache = ParseCache(tmp_path / "cache")
    log = tmp_path / "result_1.txt"
    log.write_text(LINE * 3)
    expected = canonical(parse_log(log, "x"))
    parse_log(log, "x", cache=cache)
    (entry,) = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    entry.write_bytes(damage)
    assert canonical(parse_log(log, "x", cache=cache)) == expected
    assert cache.hits == 0
    assert canonical(parse_log(log, "x", cache=cache)) == expected  # rewritten whole
    assert cache.hits == 1


def test_a_cache_that_cannot_be_written_changes_nothing(tmp_path, monkeypatch):
    import os

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    cache = ParseCache(tmp_path / "cache")
    log = tmp_path / "result_1.txt"
    log.write_text(LINE)
    assert canonical(parse_log(log, "x", cache=cache)) == canonical(parse_log(log, "x"))
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))  # nor a temporary file left


def checksums(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_cache_inside_the_package_is_not_used(cli, tmp_path, fixtures):
    package = tmp_path / "pkg"
    shutil.copytree(fixtures / "clean", package)
    before = checksums(package)
    result = cli("check", str(package), "--format", "json", "--cache-dir", str(package / ".cache"))
    assert result.code == 0
    assert checksums(package) == before
    notes = json.loads(result.out)["config"]["notes"]
    assert any("inside the checked PATH; no cache was used" in note for note in notes)


def test_check_and_score_fill_and_reuse_the_cache(cli, tmp_path, fixtures):
    cache = tmp_path / "cache"
    plain = cli("score", str(fixtures / "clean"), "--format", "json", "--no-cache")
    assert not cache.exists()
    keep_parses(cache, fixtures / "clean")
    check = cli("check", str(fixtures / "clean"), "--format", "json", "--cache-dir", str(cache))
    entries = sorted(p for p in (cache / "parse-v1").rglob("*") if p.is_file())
    assert len(entries) == len(list((fixtures / "clean").rglob("result_*.txt")))
    inodes = [p.stat().st_ino for p in entries]
    warm = cli("score", str(fixtures / "clean"), "--format", "json", "--cache-dir", str(cache))
    assert warm.out == plain.out
    assert [p.stat().st_ino for p in entries] == inodes  # read, not rewritten (a write renames a new file)
    again = cli("check", str(fixtures / "clean"), "--format", "json", "--cache-dir", str(cache))
    assert again.out == check.out


def test_a_first_look_keeps_no_parse_and_an_unchanged_tree_is_not_checked_again(cli, tmp_path, fixtures, monkeypatch):
    """A cold check is never slower than --no-cache: the first check of a PATH writes only its
    outcome; the same check of the unchanged tree is answered from it, reading no log."""
    from mlperf_audit.engine import loading

    package = tmp_path / "package"
    shutil.copytree(fixtures / "clean", package)
    cache = tmp_path / "cache"
    plain = cli("check", str(package), "--format", "json", "--score", "--no-cache").out
    first = cli("check", str(package), "--format", "json", "--score", "--cache-dir", str(cache), "-j", "1").out
    assert first == plain
    assert not list((cache / "parse-v1").rglob("*-*")) and list((cache / "check-v1").rglob("*"))
    parsed: list[str] = []
    real = loading.parse_log
    monkeypatch.setattr(loading, "parse_log", lambda path, shown, **kw: parsed.append(shown) or real(path, shown, **kw))
    assert cli("check", str(package), "--format", "json", "--score", "--cache-dir", str(cache), "-j", "1").out == plain
    assert parsed == []
    # any edit is a new tree, even one that restores the size and the modification time
    log = next(package.rglob("result_0.txt"))
    before = log.stat()
    text = log.read_bytes()
    log.write_bytes(text.replace(b'"seed", "value": ', b'"seed", "value": 1', 1)[: len(text)])
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
    edited = cli("check", str(package), "--format", "json", "--score", "--cache-dir", str(cache), "-j", "1").out
    assert parsed and edited == cli("check", str(package), "--format", "json", "--score", "--no-cache").out
    # the second look at a PATH keeps its parsed files: the next edit reparses only what changed
    assert len(list((cache / "parse-v1").rglob("*-*"))) == len(list(package.rglob("result_*.txt")))
    parsed.clear()
    # a kept check holds the scores whether it showed them or not: without --score, the same check
    without_scores = cli("check", str(package), "--format", "json", "--cache-dir", str(cache), "-j", "1").out
    assert parsed == [] and "scores" not in json.loads(without_scores)
    assert without_scores == cli("check", str(package), "--format", "json", "--no-cache").out
    # another configuration or another rule pack is another check: every log read, from the parse cache
    cli("check", str(package), "--format", "json", "--ignore", "LOG", "--cache-dir", str(cache), "-j", "1")
    assert set(parsed) == {str(p.relative_to(package)) for p in package.rglob("result_*.txt")}
    monkeypatch.setattr("mlperf_audit.engine.checkcache._code_digest", lambda tops: "another version of the rules")
    parsed.clear()
    cli("check", str(package), "--format", "json", "--cache-dir", str(cache), "-j", "1")
    assert parsed


def test_score_after_a_check_of_the_same_tree_reads_no_log(cli, tmp_path, fixtures, monkeypatch):
    """`check` then `score` parse once: a kept check holds every folder's score, computed in the same
    pass; another configuration, or an edited tree, is scored anew."""
    from mlperf_audit.engine import loading

    package = tmp_path / "package"
    shutil.copytree(fixtures / "clean", package)
    cache = tmp_path / "cache"
    plain = cli("score", str(package), "--format", "json", "--no-cache").out
    parsed: list[str] = []
    real = loading.parse_log
    monkeypatch.setattr(loading, "parse_log", lambda path, shown, **kw: parsed.append(shown) or real(path, shown, **kw))
    cli("check", str(package), "--format", "json", "--cache-dir", str(cache), "-j", "1")
    logs = {str(p.relative_to(package)) for p in package.rglob("result_*.txt")}
    assert set(parsed) == logs
    parsed.clear()
    assert cli("score", str(package), "--format", "json", "--cache-dir", str(cache), "-j", "1").out == plain
    assert parsed == []
    named = ("--ruleset", "training-4.1.0")  # named rather than inferred: another configuration
    assert cli("score", str(package), "--format", "json", *named, "--cache-dir", str(cache), "-j", "1").out
    assert set(parsed) == logs
    parsed.clear()
    log = next(package.rglob("result_0.txt"))
    log.write_bytes(log.read_bytes() + b"\n")
    assert cli("score", str(package), "--format", "json", "--cache-dir", str(cache), "-j", "1").out == plain
    assert set(parsed) == logs


def test_a_damaged_or_forged_check_entry_is_a_miss(cli, tmp_path, fixtures):
    cache = tmp_path / "cache"
    target = str(fixtures / "broken" / "too-few-runs")
    plain = cli("check", target, "--format", "json", "--no-cache").out
    assert cli("check", target, "--format", "json", "--cache-dir", str(cache)).out == plain
    outcomes = [p for p in (cache / "check-v1").rglob("*") if p.is_file() and p.stat().st_size > 200]
    assert len(outcomes) == 1
    (entry,) = outcomes
    clean_entry = cache / "clean-entry"
    cli("check", str(fixtures / "clean"), "--format", "json", "--cache-dir", str(cache))
    (donor,) = [p for p in (cache / "check-v1").rglob("*") if p.is_file() and p.stat().st_size > 200 and p != entry]
    shutil.copy(donor, clean_entry)
    for damage in (b"", b"\x93garbage", clean_entry.read_bytes(), entry.read_bytes()[:-7]):
        entry.write_bytes(damage)  # empty, garbage, a clean check's outcome filed under this key, cut short
        assert cli("check", target, "--format", "json", "--cache-dir", str(cache)).out == plain


def test_cache_command(cli, tmp_path, fixtures):
    cache = tmp_path / "cache"
    keep_parses(cache, fixtures / "clean")
    cli("check", str(fixtures / "clean"), "--cache-dir", str(cache))
    info = cli("cache", "--cache-dir", str(cache))
    assert info.code == 0 and f"{cache}: " in info.out and " 0 parsed" not in info.out
    assert not (cache / "rcp-v1").exists()  # the RCP statistics are shipped, never cached
    (cache / "rcp-v1").mkdir()
    (cache / "rcp-v1" / "0123.pickle").write_bytes(b"old statistics")  # what earlier versions left
    assert cli("cache", "clear", "--cache-dir", str(cache)).code == 0
    assert " 0 parsed file(s), 0.0 MiB" in cli("cache", "info", "--cache-dir", str(cache)).out
    assert not (cache / "rcp-v1").exists()


def rcp_cases() -> list[tuple[str, str]]:
    cases = []
    for name in rulesets.SUPPORTED:
        version = name.split("-", 1)[1]
        ruleset = rulesets.get(name)
        cases += [
            (version, b)
            for b in sorted(ruleset.benchmarks)
            if ruleset.has_rcps(b) and convergence.official_run_count_known(b)
        ]
    return cases


def test_the_shipped_rcp_data_is_what_the_pinned_mlperf_logging_computes():
    """Regenerates every round's data (all 85 checkers: about 3 s) and compares it with the shipped
    files; after a pin moves, `python -m mlperf_audit_rules.rcp --write` makes them current."""
    folder = Path(convergence.__file__).parents[1] / convergence.DATA_FOLDER
    assert sorted(p.name for p in folder.glob("*.json")) == sorted(f"{name}.json" for name in rulesets.SUPPORTED)
    for name in rulesets.SUPPORTED:
        assert (folder / f"{name}.json").read_text() == convergence.reference_json(name.split("-", 1)[1]), name


@pytest.mark.parametrize("version, benchmark", rcp_cases())
def test_a_shipped_rcp_reference_is_the_official_one(version, benchmark):
    convergence.reference.cache_clear()
    convergence.interpolated.cache_clear()
    shipped = convergence.reference(version, benchmark)
    official = convergence.constructed(version, benchmark)
    assert typed(shipped.__dict__) == typed(official.__dict__)
    assert all(shipped.pruned_rcp_data[name] is shipped.rcp_data[name] for name in shipped.pruned_rcp_data)
    records = sorted(official.pruned_rcp_data.values(), key=lambda r: r["BS"])
    for low, high in zip(records, records[1:]):
        if high["BS"] - low["BS"] < 2:
            continue
        middle = (low["BS"] + high["BS"]) // 2
        _, expected = official._create_interp_rcp(middle, low, high)
        assert typed(convergence.interpolated(version, benchmark, middle)) == typed(expected)
        assert convergence.interpolated(version, benchmark, middle) is convergence.interpolated(
            version, benchmark, middle
        )


def test_the_t_test_stand_in_is_scipy_stats_bit_for_bit(monkeypatch):
    """The RCP interpolation's t-tests, computed from scipy.special instead of importing
    scipy.stats, give the same bits: on every call the official interpolation makes for every
    shipped round (each midpoint between two pruned RCPs) and on random statistics."""
    import random

    import numpy as np
    import scipy
    import scipy.stats

    real = scipy.stats
    stand_in = convergence._ScipyStatsOnDemand("scipy.stats")
    calls: list[tuple] = []

    class Recording:
        def ttest_ind_from_stats(self, *args, **kwargs):
            calls.append((args, kwargs))
            return real.ttest_ind_from_stats(*args, **kwargs)

    def midpoints(checker):
        records = sorted(checker.pruned_rcp_data.values(), key=lambda r: r["BS"])
        return [(low, high) for low, high in zip(records, records[1:]) if high["BS"] - low["BS"] >= 2]

    for version, benchmark in rcp_cases():
        checker = convergence.reference(version, benchmark)
        for low, high in midpoints(checker):
            middle = (low["BS"] + high["BS"]) // 2
            monkeypatch.setattr(scipy, "stats", Recording())
            _, by_scipy_stats = checker._create_interp_rcp(middle, low, high)
            monkeypatch.setattr(scipy, "stats", stand_in)
            _, by_stand_in = checker._create_interp_rcp(middle, low, high)
            assert typed(by_stand_in) == typed(by_scipy_stats), (version, benchmark, middle)
    assert len(calls) > 1000
    generator = random.Random(7)
    for _ in range(3000):
        std = np.float64(generator.choice([0.0, generator.uniform(0, 10)]))
        calls.append(
            (
                (np.float64(generator.uniform(0, 100)), std, generator.randint(1, 40))
                + (np.float64(generator.uniform(0, 100)), std, generator.randint(1, 40)),
                {"equal_var": True},
            )
        )
    with np.errstate(all="ignore"):
        for args, kwargs in calls:
            assert typed(list(stand_in.ttest_ind_from_stats(*args, **kwargs))) == typed(
                list(real.ttest_ind_from_stats(*args, **kwargs))
            ), args


def _batch_sizes_between_pruned_rcps(checker) -> list[int]:
    records = sorted(checker.pruned_rcp_data.values(), key=lambda r: r["BS"])
    sizes = []
    for low, high in zip(records, records[1:]):
        sizes += range(low["BS"] + 1, high["BS"], max(1, (high["BS"] - low["BS"]) // 7))
    return sizes


def test_the_interpolation_decides_every_step_as_scipy(monkeypatch):
    """The interpolation's search reads only on which side of alpha each t-test's p-value lies: the
    closed form decides the steps far from alpha and scipy the others (`convergence._p_value_side`), and
    every record is the official one's, computed with scipy.stats, on every round and benchmark."""
    import scipy.stats

    decided = {"closed form": 0, "scipy": 0}
    side = convergence._one_sided_p_value

    def counted(*args):
        value = side(*args)
        decided["closed form" if value is not None and abs(value - 0.05) > convergence._SIDE_MARGIN else "scipy"] += 1
        return value

    monkeypatch.setattr(convergence, "_one_sided_p_value", counted)
    for version, benchmark in rcp_cases():
        convergence.interpolated.cache_clear()
        official = convergence.reference(version, benchmark)
        for size in _batch_sizes_between_pruned_rcps(official):
            monkeypatch.setattr(convergence._rcp_checker_module(), "scipy", type("S", (), {"stats": scipy.stats}))
            low = official._find_top_min_rcp(size, "pruned_rcps")
            high = official._find_bottom_max_rcp(size, "pruned_rcps")
            _, expected = official._create_interp_rcp(size, low, high)
            monkeypatch.undo()
            monkeypatch.setattr(convergence, "_one_sided_p_value", counted)
            assert typed(convergence.interpolated(version, benchmark, size)) == typed(expected), (
                version,
                benchmark,
                size,
            )
    assert sum(decided.values()) == 46097 and decided["scipy"] > 0, decided


def test_the_closed_form_is_the_t_distribution_scipy_computes():
    import random

    import scipy.stats

    generator = random.Random(11)
    for _ in range(5000):
        n1, n2 = generator.randint(1, 60), generator.randint(1, 60)
        std = generator.uniform(0.001, 50)
        mean1, mean2 = generator.uniform(0, 100), generator.uniform(0, 100)
        if n1 + n2 < 3:
            continue
        t, p = scipy.stats.ttest_ind_from_stats(mean1, std, n1, mean2, std, n2, equal_var=True)
        assert convergence._one_sided_p_value(mean1, std, n1, mean2, std, n2) == pytest.approx(
            p / 2 if t < 0 else 1 - p / 2, abs=5e-15
        )
    # off the closed form's ground, scipy decides
    assert convergence._one_sided_p_value(1.0, 1.0, 1, 2.0, 1.0, 1) is None  # no degree of freedom
    assert convergence._one_sided_p_value(1.0, 1.0, 20.0, 2.0, 1.0, 8) is None  # a count that is not whole
    assert convergence._one_sided_p_value(1.0, 1.0, 900, 2.0, 1.0, 900) is None  # beyond the closed form's sums
    assert convergence._one_sided_p_value(1.0, 0.0, 20, 1.0, 0.0, 8) is None  # no variance
    assert convergence._one_sided_p_value(1.0, math.inf, 20, 2.0, 1.0, 8) is None
    assert convergence._one_sided_p_value(math.nan, 1.0, 20, 2.0, 1.0, 8) is None


def test_interpolating_the_rcps_of_a_round_needs_no_scipy():
    """Importing scipy.special cost every process that interpolated an RCP a third of a second:
    midway between the 4.1 round's RCPs the closed form decides every step (and so on every
    interpolation a check of the whole published v4.1 round makes)."""
    script = """
import sys
from mlperf_audit_rules.support import convergence
done = 0
for benchmark in ("bert", "dlrm_dcnv2", "gpt3", "llama2_70b_lora", "ssd", "stable_diffusion"):
    records = sorted(convergence.reference("4.1.0", benchmark).pruned_rcp_data.values(), key=lambda r: r["BS"])
    for low, high in zip(records, records[1:]):
        if high["BS"] - low["BS"] >= 2:
            convergence.interpolated("4.1.0", benchmark, (low["BS"] + high["BS"]) // 2)
            done += 1
print(done, "scipy.special" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["20", "False"]


def test_rcp_data_of_another_mlperf_logging_is_not_used(monkeypatch):
    convergence._shipped.cache_clear()
    convergence.reference.cache_clear()
    monkeypatch.setattr(convergence, "_mlperf_logging_version", lambda: "9.9.9")
    built = []
    monkeypatch.setattr(
        convergence, "constructed", lambda version, benchmark: built.append((version, benchmark)) or "fresh"
    )
    try:
        assert convergence.reference("4.1.0", "ssd") == "fresh" and built == [("4.1.0", "ssd")]
    finally:
        convergence._shipped.cache_clear()
        convergence.reference.cache_clear()


def test_scipy_is_not_imported_by_a_check_without_interpolation(tmp_path, fixtures):
    """scipy.stats costs a second at every start; the shipped references do not need it, cold
    cache or none."""
    program = (
        "import sys\n"
        "from mlperf_audit.cli import main\n"
        f"main(['score', {str(fixtures / 'clean')!r}, '--format', 'json', '-j', '1', *sys.argv[1:]])\n"
        "print('SCIPY', 'scipy.stats._stats_py' in sys.modules, file=sys.stderr)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", program, *options], capture_output=True, text=True)
        for options in (["--cache-dir", str(tmp_path)], ["--cache-dir", str(tmp_path)], ["--no-cache"])
    ]
    assert [r.returncode for r in runs] == [0, 0, 0], runs[0].stderr
    assert all("SCIPY False" in r.stderr for r in runs)
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout


def test_cache_dir_setting_and_no_cache(tmp_path, fixtures):
    from mlperf_audit.config import load_config

    elsewhere, wins = str(tmp_path / "somewhere" / "else"), str(tmp_path / "cli" / "wins")
    (tmp_path / ".mlperf-audit.toml").write_text(f'cache-dir = "{elsewhere}"\n')
    target = fixtures / "clean"
    assert load_config(target=target, cwd=tmp_path).cache_dir == elsewhere
    assert load_config(target=target, cwd=tmp_path, cache_dir=wins).cache_dir == wins
    assert load_config(target=target, cwd=tmp_path, use_cache=False).cache_dir is None
    (tmp_path / ".mlperf-audit.toml").write_text("cache-dir = 3\n")
    with pytest.raises(Exception, match="cache-dir must be a folder name"):
        load_config(target=target, cwd=tmp_path)


def test_prune_removes_what_no_check_used(cli, tmp_path, fixtures):
    import os
    import time

    cache = tmp_path / "cache"
    ssd = fixtures / "clean" / "Fixture" / "results" / "fx_8xh100" / "ssd"
    keep_parses(cache, fixtures / "clean")
    cli("check", str(fixtures / "clean"), "--cache-dir", str(cache))
    entries = [p for p in (cache / "parse-v1").rglob("*") if p.is_file()]
    keep_parses(cache, fixtures / "clean", ssd)  # (no whole check kept: only parsed files are aged)
    old = time.time() - 40 * 86400
    for path in entries:
        os.utime(path, (old, old))
    cli("score", str(fixtures / "broken" / "too-few-runs"), "--cache-dir", str(cache))  # new entries
    cli("score", str(ssd), "--cache-dir", str(cache))
    used = [p for p in entries if p.stat().st_mtime > old + 86400]
    assert used  # reading an entry marks it as used (the 5 ssd logs)
    result = cli("cache", "prune", "--days", "30", "--cache-dir", str(cache))
    assert result.code == 0 and f"removed {len(entries) - len(used)} entries unused for 30 days" in result.out
    assert all(p.exists() for p in used) and not any(p.exists() for p in entries if p not in used)
    assert cli("cache", "prune", "--days", "-1", "--cache-dir", str(cache)).code == 2
