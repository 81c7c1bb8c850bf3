"""The whole-check cache never answers with a stale outcome: the red team's cases (each once gave
a kept verdict that differed from `--no-cache`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine import api

SSD_LOG = Path("Fixture") / "results" / "fx_8xh100" / "ssd" / "result_0.txt"


def _check(cli, target: Path, cache: Path | None, *options: str) -> tuple[int, list]:
    where = ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
    result = cli("check", str(target), "--format", "json", "-j", "1", *where, *options)
    return result.code, [(f["rule"], f["path"], f["message"]) for f in json.loads(result.out)["findings"]]


def _agrees(cli, target: Path, cache: Path, *options: str) -> None:
    assert _check(cli, target, cache, *options) == _check(cli, target, None, *options)


@pytest.fixture
def package(tmp_path, fixtures) -> Path:
    shutil.copytree(fixtures / "clean", tmp_path / "real")
    return tmp_path / "real"


def test_a_path_that_is_a_link_is_read_where_it_leads(cli, tmp_path, package):
    link = tmp_path / "link"
    link.symlink_to(package)
    cache = tmp_path / "cache"
    _agrees(cli, link, cache)
    _agrees(cli, link, cache)
    (package / SSD_LOG).write_text("")  # through the link, nothing under the named PATH changed
    _agrees(cli, link, cache)
    log = tmp_path / "log.txt"
    log.symlink_to(package / SSD_LOG)
    _agrees(cli, log, cache, "--ruleset", "training-4.1.0")


def test_a_link_through_a_link_outside_path_is_followed_to_its_end(cli, tmp_path, package):
    spare = package / "Fixture" / "spare"
    spare.mkdir()
    shutil.copy(package / SSD_LOG, spare / "good.log")
    (spare / "bad.log").write_text("")
    hop = tmp_path / "outside" / "hop"
    hop.parent.mkdir()
    hop.symlink_to(spare / "good.log")
    (package / SSD_LOG).unlink()
    (package / SSD_LOG).symlink_to(hop)
    cache = tmp_path / "cache"
    _agrees(cli, package, cache)
    hop.unlink()
    hop.symlink_to(spare / "bad.log")  # only the link outside PATH changes
    _agrees(cli, package, cache)


def test_another_plugin_set_is_another_check(cli, tmp_path, package):
    cache = tmp_path / "cache"
    (package / SSD_LOG).write_text("")
    full = _check(cli, package, cache)
    less = cli(
        "--disable-plugin", "seeds", "check", str(package), "--format", "json", "-j", "1", "--cache-dir", str(cache)
    )
    assert not any(f["rule"].startswith("SEED") for f in json.loads(less.out)["findings"])
    assert _check(cli, package, cache) == full


def test_a_subset_of_submitters_given_as_an_iterator_is_keyed_by_its_names(tmp_path, fixtures, host):
    repository = tmp_path / "repository"
    shutil.copytree(fixtures / "clean" / "Fixture", repository / "Good")
    shutil.copytree(fixtures / "clean" / "Fixture", repository / "Bad")
    (repository / "Bad" / "results" / "fx_8xh100" / "ssd" / "result_0.txt").write_text("")
    config = Config(cache_dir=str(tmp_path / "cache"))
    good = api.check(repository, config, host, submitters=(name for name in ["Good"]))
    bad = api.check(repository, config, host, submitters=(name for name in ["Bad"]))
    assert good.exit_code == 0 and bad.exit_code == 1


def test_a_failed_read_is_not_kept(cli, tmp_path, package, monkeypatch):
    from mlperf_audit.reading import parser

    cache = tmp_path / "cache"
    real = parser.open_binary
    failing = {"once": True}

    def flaky(path):
        if failing["once"] and str(path).endswith(str(SSD_LOG)):
            failing["once"] = False
            raise OSError(5, "Input/output error")
        return real(path)

    monkeypatch.setattr(parser, "open_binary", flaky)
    first = _check(cli, package, cache)
    assert any("cannot read" in message for _, _, message in first[1])
    _agrees(cli, package, cache)  # the next check reads the file


def test_deep_folders_a_huge_waivers_file_and_a_cache_inside_the_submission(cli, tmp_path, package):
    chain = [package / ".deep"]
    for _ in range(1200):  # deeper than the interpreter's recursion limit (os.walk recurses)
        chain[-1].mkdir()
        chain.append(chain[-1] / "d")
    cache = tmp_path / "cache"
    try:
        _agrees(cli, package, cache)  # the key cannot be told: checked, not kept, no crash
    finally:
        for folder in reversed(chain[:-1]):  # removed without recursion (shutil.rmtree recurses)
            folder.rmdir()
    waivers = tmp_path / "waivers.toml"
    with open(waivers, "wb") as stream:
        stream.truncate(20 << 20)
    refused = cli("check", str(package), "--waivers", str(waivers), "--cache-dir", str(cache))
    assert refused.code == 2 and "16 MiB" in refused.err  # read by the loader only, which says why
    system = package / "Fixture" / "results" / "fx_8xh100"
    inside = package / "Fixture" / "cache"
    _agrees(cli, system, inside)
    entries = sorted(inside.rglob("*"))
    _agrees(cli, system, inside)  # the cache's own writes are not part of the tree it keys
    assert sorted(inside.rglob("*")) == entries


def test_a_scorer_that_fails_where_scores_are_only_kept_leaves_the_check_alone(tmp_path, fixtures):
    """A kept check scores every folder for a later `score`: a scorer that raises there changes no
    finding and no exit code (the outcome is just not kept), and nothing a scorer publishes reaches
    the check's rules. Asked for (`check --score`), a scorer's failure is the command's, as before."""
    from mlperf_audit import Channel, Rule, Severity, hookimpl
    from mlperf_audit.engine.checkcache import CheckCache
    from mlperf_audit.engine.checks import run_checks
    from mlperf_audit.engine.plugins import PluginHost
    from mlperf_audit.reading.discovery import discover

    scored: Channel[int] = Channel("test.scored")
    seen: list[list[int]] = []

    class ReadsWhatWasPublished(Rule):
        """Records what the tree phase receives from the scorers' channel.

        How to fix: nothing; it is a test.
        """

        code = "TST009"
        name = "reads-published"
        summary = "A test rule."
        severity = Severity.INFO
        scope = "tree"

        def check(self, tree, context):
            seen.append(context.received(scored))
            return ()

    class Scorer:
        fails = True

        @hookimpl
        def mlperf_audit_register_rules(self):
            return [ReadsWhatWasPublished]

        @hookimpl(tryfirst=True)
        def mlperf_audit_score_benchmark(self, result, context):
            context.publish(scored, 1)
            if self.fails:
                raise RuntimeError("scorer bug")

    scorer = Scorer()
    host = PluginHost(plugins=[("scorer", scorer)])
    target = fixtures / "clean"
    plain = api.check(target, Config(cache_dir=None), host)
    kept = api.check(target, Config(cache_dir=str(tmp_path / "cache")), host)
    assert kept.findings == plain.findings and kept.exit_code == plain.exit_code == 0
    assert seen == [[], []]
    config = api._configured(discover(target), Config(cache_dir=str(tmp_path / "cache")), host)
    outcome = run_checks(discover(target), host, config, keep_scores=True)
    assert outcome.unscored and [f.rule for f in outcome.findings] == [f.rule for f in plain.findings]
    CheckCache(tmp_path / "cache").store_outcome("0" * 64, outcome)
    assert not list((tmp_path / "cache").rglob("0" * 64))
    with pytest.raises(RuntimeError, match="scorer bug"):
        api.check(target, Config(cache_dir=None), host, score=True)
    scorer.fails = False  # a scorer that answers None: the built-in one scores, its publication stays its own
    seen.clear()
    api.check(target, Config(cache_dir=None), host, score=True)
    assert seen == [[]]


def test_the_code_is_keyed_by_every_write_to_its_files(tmp_path, monkeypatch):
    """The code's part of the key stats every file of the packages (as the tree's part does): any
    write, even one that restores the bytes, the size and the modification time, is a new key."""
    import importlib
    import os
    import time

    from mlperf_audit.engine.checkcache import _code_digest

    package = tmp_path / "site" / "keyed_rules_pack"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("CODE = 1\n")
    (package / "data.json").write_text("{}")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    digest = _code_digest.__wrapped__
    first = digest(("keyed_rules_pack",))
    assert digest(("keyed_rules_pack",)) == first
    before = (package / "data.json").stat()
    time.sleep(0.01)
    (package / "data.json").write_text("{}")  # the same bytes and size
    os.utime(package / "data.json", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert digest(("keyed_rules_pack",)) != first
    assert digest(("no_such_package_here",)) != first
