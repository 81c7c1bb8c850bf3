"""Configuration found as ruff finds its own: the nearest file walking up from the current folder,
a near-miss table named, and the trust rule unchanged for a file found above (issue 26, item 9)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RELAXING = 'ignore = ["LOG"]\nfail-on = "never"\n'


@pytest.fixture
def tree(tmp_path: Path, fixtures: Path) -> Path:
    """The demo package (it has LOG and EVT findings, errors among them), outside any repository."""
    root = tmp_path / "package"
    shutil.copytree(fixtures / "demo", root)
    return root


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The user's folder, with a subfolder two levels down to run from."""
    (tmp_path / "work" / "notes" / "today").mkdir(parents=True)
    return tmp_path / "work"


def rules(result) -> set[str]:
    return {f["rule"] for f in json.loads(result.out)["findings"] if not f.get("waived_by")}


def test_a_configuration_is_found_from_a_subfolder(cli, tree, work, monkeypatch):
    (work / ".mlperf-audit.toml").write_text(RELAXING)
    monkeypatch.chdir(work / "notes" / "today")
    result = cli("check", str(tree), "--format", "json")
    assert result.code == 0 and not any(code.startswith("LOG") for code in rules(result)) and "EVT003" in rules(result)
    config = json.loads(result.out)["config"]
    assert config["sources"] == [str(work / ".mlperf-audit.toml")]
    assert not any("obeyed" in note for note in config["notes"])
    text = cli("check", str(tree))
    unwrapped = " ".join(text.out.split())  # the line wraps at 80 columns in a pipe, between words
    assert f"config: select=ALL ignore=LOG fail-on=never (from {work / '.mlperf-audit.toml'})" in unwrapped


def test_a_path_longer_than_the_line_is_written_whole(cli, tree, tmp_path, monkeypatch):
    """A path is never cut at the edge of the screen (nor at a hyphen): it must open when copied."""
    deep = tmp_path / ("a-folder-named-at-length-" * 4) / "work"
    deep.mkdir(parents=True)
    (deep / ".mlperf-audit.toml").write_text(RELAXING)
    monkeypatch.chdir(deep)
    written = str(deep / ".mlperf-audit.toml")
    assert len(written) > 100
    for argv in (("check", str(tree)), ("check", str(tree), "-v")):
        lines = [line.strip() for line in cli(*argv).out.splitlines()]
        assert f"{written})" in lines, lines[:4]  # alone on its line, past the width


def test_a_pyproject_without_the_table_does_not_end_the_walk(cli, tree, work, monkeypatch):
    (work / "pyproject.toml").write_text(f'[project]\nname = "notes"\n\n[tool.mlperf-audit]\n{RELAXING}')
    (work / "notes" / "pyproject.toml").write_text('[project]\nname = "today"\n\n[tool.black]\nline-length = 100\n')
    monkeypatch.chdir(work / "notes" / "today")
    result = cli("check", str(tree), "--format", "json")
    assert result.code == 0 and json.loads(result.out)["config"]["sources"] == [str(work / "pyproject.toml")]


def test_the_nearest_file_wins_and_the_dot_file_before_pyproject(cli, tree, work, monkeypatch):
    (work / ".mlperf-audit.toml").write_text(RELAXING)
    (work / "notes" / "pyproject.toml").write_text('[tool.mlperf-audit]\nselect = ["LOG009"]\n')
    (work / "notes" / ".mlperf-audit.toml").write_text('select = ["LOG005"]\n')
    monkeypatch.chdir(work / "notes" / "today")
    result = cli("check", str(tree), "--format", "json")
    assert rules(result) == {"LOG005"}  # not merged with the relaxing file further up
    assert json.loads(result.out)["config"]["sources"] == [str(work / "notes" / ".mlperf-audit.toml")]


def test_a_relative_waivers_file_is_read_beside_the_configuration(cli, tree, work, monkeypatch):
    (work / ".mlperf-audit.toml").write_text('waivers = "waivers.toml"\n')
    (work / "waivers.toml").write_text('[[waiver]]\nrule = "ALL"\npath = "*"\nreason = "reviewed"\n')
    monkeypatch.chdir(work / "notes")
    result = cli("check", str(tree), "--format", "json")
    assert result.code == 0, result.err
    assert rules(result) == set()
    assert json.loads(result.out)["config"]["waivers"] == str(work / "waivers.toml")


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("pyproject.toml", "[tool.mlperf_audit]\n" + RELAXING, "[tool.mlperf_audit] is not read; the table is [tool.mlperf-audit]"),
        ("pyproject.toml", "[tool.mlperfaudit]\n" + RELAXING, "[tool.mlperfaudit] is not read; the table is [tool.mlperf-audit]"),
        ("pyproject.toml", "[tool.MLPerf-Audit]\n" + RELAXING, "the table is [tool.mlperf-audit]"),
        ("pyproject.toml", "[mlperf-audit]\n" + RELAXING, "[mlperf-audit] is not read; the table is [tool.mlperf-audit]"),
        ("pyproject.toml", '[tool.mlperf-audit]\nfail_on = "never"\n', "unknown setting(s) fail_on ('fail_on': did you mean 'fail-on'?)"),
        ("pyproject.toml", '[tool.mlperf-audit.rules]\nLOG005 = "off"\n', "unknown setting(s) rules; known: baseline"),
        (".mlperf-audit.toml", "[tool.mlperf-audit]\n" + RELAXING, "top-level keys (select = [...]), not a [tool.mlperf-audit] table"),
        (".mlperf-audit.toml", 'ignroe = ["LOG"]\n', "'ignroe': did you mean 'ignore'?"),
    ],
)  # fmt: skip
def test_a_near_miss_is_a_configuration_error_naming_the_right_one(
    cli, tree, work, monkeypatch, name, content, message
):
    """Ruff exits 2 on an unknown key in its table; a table name that is almost ours is named too,
    where ruff would silently read nothing (and the user would believe the checks configured)."""
    (work / name).write_text(content)
    monkeypatch.chdir(work / "notes" / "today")
    result = cli("check", str(tree))
    assert result.code == 2 and message in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1 and str(work / name) in result.err


@pytest.mark.parametrize("table", ["mlperf", "mlperf-audit-example"])
def test_another_tools_table_that_shares_a_prefix_is_passed_over(cli, tree, work, monkeypatch, table):
    """`[tool.mlperf]` or a plugin's own `[tool.mlperf-audit-example]` is another tool's table, not a
    misspelt `[tool.mlperf-audit]`: a pyproject.toml anywhere above the current folder holding one
    must not stop every check (a name that is a prefix or an extension of ours is no typo)."""
    (work / "pyproject.toml").write_text(f'[project]\nname = "x"\n[tool.{table}]\nsetting = 1\n')
    monkeypatch.chdir(work / "notes" / "today")
    result = cli("check", str(tree))
    assert result.code == 1 and "is not read" not in result.err, result.err


def test_a_configuration_found_above_inside_path_is_still_tree_configuration(cli, tree, monkeypatch):
    """Run from a folder inside the package, the package's own file, found above, is obeyed only
    where it makes the checks stricter; --trust-tree-config obeys it whole."""
    (tree / ".mlperf-audit.toml").write_text(RELAXING)
    system = next((tree / "Fixture" / "results").iterdir())
    monkeypatch.chdir(system)
    result = cli("check", str(tree), "--format", "json")
    assert result.code == 1 and any(code.startswith("LOG") for code in rules(result))
    config = json.loads(result.out)["config"]
    assert config["fail_on"] == "error" and config["ignore"] == []
    (note,) = [note for note in config["notes"] if "obeyed" in note]
    assert note.startswith(f"{os.path.relpath(tree / '.mlperf-audit.toml')} (found above the current directory)")
    assert "is inside the checked PATH" in note and "not obeyed: fail-on, ignore" in note
    trusted = cli("check", str(tree), "--format", "json", "--trust-tree-config")
    assert trusted.code == 0 and not any(code.startswith("LOG") for code in rules(trusted))


def test_a_configuration_found_above_in_the_repository_of_path_is_still_tree_configuration(cli, tree, monkeypatch):
    """A results repository whose root configuration relaxes the checks, checked from a folder below
    its root: the file found above lies in the repository that holds PATH."""
    repository = tree.parent / "results-repo"
    repository.mkdir()
    tree.rename(repository / "Acme")
    (repository / ".mlperf-audit.toml").write_text(RELAXING)
    subprocess.run(["git", "init", "-q"], cwd=repository, check=True)
    monkeypatch.chdir(repository / "Acme")
    result = cli("check", ".", "--format", "json")
    assert result.code == 1 and "inside the repository that holds the checked PATH" in result.out


def test_the_action_does_not_walk_up_from_its_temporary_folder(tmp_path):
    """The Action reads the base commit's configuration only: a file above its own temporary folder
    (/tmp on a runner) is never the base commit's."""
    from mlperf_audit.config import load_config

    (tmp_path / ".mlperf-audit.toml").write_text(RELAXING)
    (tmp_path / "runner-temp").mkdir()
    found = load_config(target=tmp_path / "package", cwd=tmp_path / "runner-temp", use_cache=False)
    assert found.sources == (str(tmp_path / ".mlperf-audit.toml"),)
    action = load_config(target=tmp_path / "package", cwd=tmp_path / "runner-temp", use_cache=False, discover=False)
    assert action.sources == () and action.fail_on == "error"


def test_process_configuration_from_a_subfolder(tree, work):
    """The installed command, run from a subfolder, finds the configuration two folders up."""
    (work / "pyproject.toml").write_text(f"[tool.mlperf-audit]\n{RELAXING}")
    environment = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "mlperf_audit", "check", str(tree), "--no-cache"]
    found = subprocess.run(command, cwd=work / "notes" / "today", capture_output=True, text=True, env=environment)
    assert found.returncode == 0, found.stderr
    assert f"(from {work / 'pyproject.toml'})" in " ".join(found.stdout.split())  # wrapped at 80, between words
    (work / "pyproject.toml").write_text(f"[tool.mlperf_audit]\n{RELAXING}")
    named = subprocess.run(command, cwd=work / "notes" / "today", capture_output=True, text=True, env=environment)
    assert named.returncode == 2 and "the table is [tool.mlperf-audit]" in named.stderr
    assert "Traceback" not in named.stderr
