"""Configuration files, their precedence, and the refusal to obey a package's own configuration."""

from __future__ import annotations

import json
import shutil

import pytest


@pytest.fixture
def tree(tmp_path, fixtures):
    root = tmp_path / "repo"
    shutil.copytree(fixtures / "demo", root)
    return root


def findings(result) -> set[str]:
    return {f["rule"] for f in json.loads(result.out)["findings"]}


def test_pyproject_table(cli, tree, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mlperf-audit]\nignore = ["LOG"]\nfail-on = "never"\n'
    )
    monkeypatch.chdir(work)
    result = cli("check", str(tree), "--format", "json")
    assert not any(code.startswith("LOG") for code in findings(result)) and "EVT003" in findings(result)
    assert result.code == 0
    config = json.loads(result.out)["config"]
    assert config["ignore"] == ["LOG"] and config["fail_on"] == "never"
    assert config["sources"] == [str(work / "pyproject.toml")]


def test_dot_file_wins_and_cli_beats_file(cli, tree, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text('[tool.mlperf-audit]\nignore = ["LOG"]\n')
    (work / ".mlperf-audit.toml").write_text('select = ["LOG"]\nignore = ["LOG009"]\n')
    monkeypatch.chdir(work)
    assert findings(cli("check", str(tree), "--format", "json")) == {"LOG005"}
    from_cli = findings(cli("check", str(tree), "--format", "json", "--ignore", "LOG005"))  # replaces the file's
    assert from_cli == {"LOG009"}


def test_explicit_config_file(cli, tree, tmp_path):
    config = tmp_path / "audit.toml"
    config.write_text('select = ["LOG009"]\n')
    result = cli("check", str(tree), "--format", "json", "--config", str(config))
    assert findings(result) == {"LOG009"} and result.code == 0


def test_config_inside_the_tree_is_not_obeyed(cli, tree, monkeypatch):
    (tree / ".mlperf-audit.toml").write_text('ignore = ["ALL"]\n')
    monkeypatch.chdir(tree)
    result = cli("check", ".", "--format", "json")
    assert {"EVT003", "LOG005", "LOG009"} <= findings(result) and result.code == 1
    assert "not obeyed" in json.loads(result.out)["config"]["notes"][0]
    text = cli("check", ".")
    assert "note: .mlperf-audit.toml in the current directory is inside the checked PATH" in text.out


def test_trusted_tree_config_is_obeyed(cli, tree, monkeypatch):
    (tree / ".mlperf-audit.toml").write_text('select = ["LOG"]\nignore = ["LOG"]\n')
    monkeypatch.chdir(tree)
    result = cli("check", ".", "--format", "json", "--trust-tree-config")
    assert findings(result) == set() and result.code == 0


def test_explicit_config_inside_the_tree_is_obeyed_only_where_stricter(cli, tree):
    (tree / "audit.toml").write_text('ignore = ["LOG"]\nfail-on = "warning"\n')
    result = cli("check", str(tree), "--config", str(tree / "audit.toml"), "--format", "json")
    assert {"LOG005", "LOG009"} <= findings(result) and result.code == 1
    config = json.loads(result.out)["config"]
    assert config["fail_on"] == "warning" and config["ignore"] == []
    assert "not obeyed: ignore" in config["notes"][0]


@pytest.mark.parametrize(
    "content, message",
    [
        ("selekt = ['LOG']\n", "unknown setting(s) selekt"),
        ("fail-on = 'sometimes'\n", "fail-on must be one of"),
        ("ruleset = 'training-9.9.9'\n", "unsupported ruleset"),
        ("select = 3\n", "must be a list"),
        ("select = [\n", "not valid TOML"),
    ],
)
def test_invalid_configuration_exits_2(cli, tree, tmp_path, content, message):
    config = tmp_path / "audit.toml"
    config.write_text(content)
    result = cli("check", str(tree), "--config", str(config))
    assert result.code == 2 and message in result.err


def test_report_states_configuration(cli, tree, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the configuration on one line
    out = cli("check", str(tree), "--select", "EVT,LOG", "--fail-on", "warning", "-v").out
    assert "config: select=EVT,LOG ignore=- fail-on=warning (from command line)" in out
    # by default, what the user typed is not repeated back; a configuration file obeyed is named
    assert "config:" not in cli("check", str(tree), "--select", "EVT,LOG").out
