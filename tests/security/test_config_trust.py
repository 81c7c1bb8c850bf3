"""A hostile checkout: configuration that lives in the checked tree or its repository cannot relax,
redirect or switch off the checks (issue 13, attack 3b and the cache folder of attack 1)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

HOSTILE = """\
ignore = ["ALL"]
fail-on = "never"
partial = true
waivers = "waivers.toml"
baseline = "baseline.json"
cache-dir = ".cache-mlperf"
"""
WAIVE_ALL = '[[waiver]]\nrule = "ALL"\npath = "*"\nreason = "waive everything"\n'


@pytest.fixture
def checkout(tmp_path: Path, fixtures: Path) -> Path:
    """A results repository (a git work tree) whose root configuration tries to switch checks off."""
    root = tmp_path / "results-repo"
    shutil.copytree(fixtures / "demo", root / "submissions" / "demo")
    (root / ".mlperf-audit.toml").write_text(HOSTILE)
    (root / "waivers.toml").write_text(WAIVE_ALL)
    (root / "baseline.json").write_text('{"schema_version": 1, "fingerprints": {}}\n')
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def rules(result) -> set[str]:
    return {f["rule"] for f in json.loads(result.out)["findings"] if not f.get("waived_by")}


def test_root_configuration_cannot_relax_a_check_of_a_subfolder(cli, checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    result = cli("check", "submissions/demo", "--format", "json")
    assert result.code == 1  # fail-on never, ignore ALL and the waivers were dropped
    assert {"EVT003", "LOG005", "LOG009"} <= rules(result)
    config = json.loads(result.out)["config"]
    assert config["fail_on"] == "error" and config["ignore"] == [] and not config["partial"]
    assert config["waivers"] is None and config["baseline"] is None
    notes = " ".join(config["notes"])
    assert "inside the repository that holds the checked PATH" in notes
    for key in ("baseline", "fail-on", "ignore", "partial", "waivers"):
        assert key in notes
    assert "cache-dir is never obeyed" in notes
    assert not (checkout / ".cache-mlperf").exists()


def test_root_configuration_may_make_checks_stricter(cli, checkout, monkeypatch):
    (checkout / ".mlperf-audit.toml").write_text('fail-on = "info"\nignore = ["LOG"]\n')
    monkeypatch.chdir(checkout)
    result = cli("check", "submissions/demo", "--format", "json")
    config = json.loads(result.out)["config"]
    assert config["fail_on"] == "info" and config["ignore"] == []
    assert "not obeyed: ignore" in config["notes"][0]


def test_tree_select_can_add_rules_but_not_remove_them(cli, checkout, monkeypatch):
    (checkout / ".mlperf-audit.toml").write_text('select = ["LOG"]\n')
    monkeypatch.chdir(checkout)
    everything = rules(cli("check", "submissions/demo", "--format", "json"))
    assert {"EVT003", "LOG005"} <= everything  # select = ["LOG"] would have switched EVT off


def test_trusted_tree_configuration_is_obeyed_but_never_chooses_the_cache(cli, checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    result = cli("check", "submissions/demo", "--format", "json", "--trust-tree-config")
    assert result.code == 0 and rules(result) == set()
    assert "cache-dir is never obeyed" in " ".join(json.loads(result.out)["config"]["notes"])
    assert not (checkout / ".cache-mlperf").exists()


def test_configuration_outside_the_repository_is_obeyed(cli, checkout, tmp_path):
    own = tmp_path / "mine.toml"
    own.write_text('ignore = ["ALL"]\nfail-on = "never"\n')
    result = cli("check", str(checkout / "submissions" / "demo"), "--format", "json", "--config", str(own))
    assert result.code == 0 and rules(result) == set()
    assert not any("obeyed" in note for note in json.loads(result.out)["config"]["notes"])


def test_a_baseline_inside_path_is_refused(cli, checkout):
    target = checkout / "submissions" / "demo"
    (target / "baseline.json").write_text('{"schema_version": 1, "fingerprints": {}}\n')
    result = cli("check", str(target), "--baseline", str(target / "baseline.json"))
    assert result.code == 2 and "inside the checked PATH" in result.err


def test_a_package_cannot_point_the_cache_into_itself_through_the_environment(cli, checkout, monkeypatch):
    target = checkout / "submissions" / "demo"
    monkeypatch.setenv("MLPERF_AUDIT_CACHE_DIR", str(target / "cache"))
    result = cli("check", str(target), "--format", "json")
    assert "inside the checked PATH; no cache was used" in " ".join(json.loads(result.out)["config"]["notes"])
    assert not (target / "cache").exists()


def test_a_git_marker_planted_in_the_package_does_not_end_the_repository(cli, checkout, monkeypatch):
    """`.git` inside the checked folder cannot make the repository's root configuration look outside."""
    (checkout / "submissions" / "demo" / ".git").write_text("gitdir: /nowhere\n")
    monkeypatch.chdir(checkout)
    result = cli("check", "submissions/demo", "--format", "json")
    assert result.code == 1 and json.loads(result.out)["config"]["fail_on"] == "error"


def test_a_linked_configuration_counts_where_it_lies(cli, checkout, tmp_path, monkeypatch):
    """A configuration committed as a link to a file outside the repository is still the tree's."""
    outside = tmp_path / "outside.toml"
    outside.write_text('ignore = ["ALL"]\nfail-on = "never"\n')
    (checkout / ".mlperf-audit.toml").unlink()
    (checkout / ".mlperf-audit.toml").symlink_to(outside)
    monkeypatch.chdir(checkout)
    result = cli("check", "submissions/demo", "--format", "json")
    assert result.code == 1 and "not obeyed: fail-on, ignore" in " ".join(json.loads(result.out)["config"]["notes"])


@pytest.fixture
def archive_in_my_folder(tmp_path: Path, fixtures: Path) -> Path:
    """A reviewer's folder: an archive received, the reviewer's own configuration and waivers."""
    mine = tmp_path / "reviews"
    mine.mkdir()
    archive = shutil.make_archive(str(mine / "Acme"), "gztar", fixtures / "broken" / "truncated-log")
    (mine / ".mlperf-audit.toml").write_text('fail-on = "never"\n')
    (mine / "waivers.toml").write_text(WAIVE_ALL)
    return Path(archive)


def test_an_archive_path_keeps_the_users_configuration_beside_it(cli, archive_in_my_folder, monkeypatch):
    """Issue 25, attack 8: an archive's folder was taken for the checked tree, so the user's own
    configuration in the current folder was obeyed only where stricter."""
    monkeypatch.chdir(archive_in_my_folder.parent)
    result = cli("check", archive_in_my_folder.name, "--format", "json", "--no-cache")
    assert result.code == 0, result.out[-2000:] + result.err
    assert "not obeyed" not in result.out + result.err
    strict = cli("check", archive_in_my_folder.name, "--format", "json", "--no-cache", "--fail-on", "error")
    assert strict.code == 1  # the archive's findings are there; the user's fail-on decided


def test_an_archive_path_accepts_waivers_beside_it(cli, archive_in_my_folder, monkeypatch):
    monkeypatch.chdir(archive_in_my_folder.parent)
    result = cli("check", archive_in_my_folder.name, "--format", "json", "--no-cache", "--waivers", "waivers.toml")
    assert result.code == 0, result.err
    assert all(f.get("waived_by") for f in json.loads(result.out)["findings"] if f["severity"] == "error")


def test_the_archive_itself_is_still_no_waivers_file(cli, archive_in_my_folder):
    result = cli("check", str(archive_in_my_folder), "--no-cache", "--waivers", str(archive_in_my_folder))
    assert result.code == 2 and "inside the checked PATH" in result.err
