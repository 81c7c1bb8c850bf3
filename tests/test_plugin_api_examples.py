"""docs/plugin-api.md's examples run as the page says: its Python blocks as one plugin module (a rule
with a setting, a format, a command), its YAML rule cases, its TOML and its `>>>` sessions. Every
code block of the page is one of these, so an example cannot be added without being run."""

from __future__ import annotations

import doctest
import json
import re
import textwrap
import time
import tomllib
import types
from pathlib import Path

import pytest

from mlperf_audit import hookimpl, rulesets
from mlperf_audit.cli import build_parser
from mlperf_audit.engine.plugins import ENTRY_POINT_GROUP, PluginHost
from mlperf_audit.testing import assert_case, load_cases, render_events

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "plugin-api.md"
EXAMPLE_PLUGIN = REPO / "plugins" / "mlperf-audit-example" / "pyproject.toml"
#: The name the page's plugin is loaded under: its entry-point name, and the table of its settings.
PLUGIN = "evals"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def _blocks(language: str) -> list[str]:
    return [body for found, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")) if found == language]


def _toml_block(table: str) -> str:
    [block] = [block for block in _blocks("toml") if block.lstrip().startswith(f"[{table}]")]
    return block


def _toml_holding(table: str) -> dict:
    return tomllib.loads(_toml_block(table))


@pytest.fixture(scope="module")
def page_plugin() -> types.ModuleType:
    """The page's Python blocks, in order, as the one module the page describes."""
    module = types.ModuleType("mlperf_audit_evals")
    exec(compile("\n\n".join(_blocks("python")), str(PAGE), "exec"), module.__dict__)  # noqa: S102 - our own page
    return module


@pytest.fixture(scope="module")
def page_host(page_plugin: types.ModuleType) -> PluginHost:
    host = PluginHost(autoload_third_party=False, plugins=[(PLUGIN, page_plugin)])
    assert host.errors == []
    return host


def test_every_code_block_of_the_page_is_run_here():
    languages = [found for found, _ in BLOCK.findall(PAGE.read_text(encoding="utf-8"))]
    assert sorted(set(languages)) == ["pycon", "python", "toml", "yaml"], languages
    assert len(_blocks("python")) == 3 and len(_blocks("yaml")) == 1 and len(_blocks("pycon")) == 1
    tables = sorted(block.lstrip().split("]")[0] + "]" for block in _blocks("toml"))
    assert tables == [
        "[project.entry-points.mlperf_audit]",
        f"[tool.mlperf-audit.plugins.{PLUGIN}]",
        "[tool.pytest.ini_options]",
    ]


def test_the_rule_loads_typed_and_documented(page_plugin, page_host):
    [rule] = [rule for rule in page_host.rules if rule.code == "EVL001"]
    assert rule is page_plugin.FewEvaluations and rule.scope == "run" and rule.plugin == PLUGIN
    assert [setting.name for setting in page_host.settings[PLUGIN]] == ["min-evaluations"]


def test_the_entry_point_names_the_plugin_as_loaded():
    entry_points = _toml_holding("project.entry-points.mlperf_audit")["project"]["entry-points"]
    assert entry_points == {ENTRY_POINT_GROUP: {PLUGIN: "mlperf_audit_evals"}}


def test_the_rule_cases_pass(page_host, tmp_path):
    [block] = _blocks("yaml")
    case_file = tmp_path / "EVL001.yaml"
    case_file.write_text(block, encoding="utf-8")
    cases = load_cases(case_file)
    assert [case.name for case in cases] == ["evaluated_twice", "evaluated_once", "three_asked_for"]
    for case in cases:
        workdir = tmp_path / case.name
        workdir.mkdir()
        assert_case(case, workdir, page_host)


def test_the_configured_setting_is_in_force(page_host, tmp_path, capsys):
    """The page's TOML, as a user's pyproject.toml: a run with two evaluations now has too few."""
    config = tmp_path / "settings" / "pyproject.toml"
    config.parent.mkdir()
    config.write_text(_toml_block(f"tool.mlperf-audit.plugins.{PLUGIN}"), encoding="utf-8")
    log = tmp_path / "package" / "result_0.txt"
    log.parent.mkdir()
    log.write_text(render_events(["run_start", "eval_accuracy", "eval_accuracy", "run_stop"]))
    argv = ["check", str(log), "--config", str(config), "--select", "EVL001", "--format", "json", "--no-cache"]
    args = build_parser(page_host).parse_args(argv)
    assert args.handler(args, page_host) == 0  # a warning: below the default --fail-on error
    report = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["message"]) for f in report["findings"]] == [
        ("EVL001", "2 eval_accuracy record(s), fewer than 3")
    ]


def test_the_format_renders_the_scores_and_only_those(page_host, fixtures, capsys):
    parser = build_parser(page_host)
    shown = {}
    for name in ("minutes", "json"):
        args = parser.parse_args(["score", str(fixtures / "clean"), "--format", name, "--no-cache"])
        assert args.handler(args, page_host) == 0
        shown[name] = capsys.readouterr().out
    scored = json.loads(shown["json"])["results"]
    assert len(scored) >= 4
    assert shown["minutes"] == "".join(f"{s['benchmark']} {s['score_minutes']:.3f}\n" for s in scored)
    with pytest.raises(SystemExit):
        build_parser(page_host).parse_args(["compare", "a", "b", "--format", "minutes"])
    capsys.readouterr()


def test_the_command_prints_what_the_page_says(page_host, capsys):
    said = re.search(r"`mlperf-audit (required-runs \w+)` prints `([^`]+)`", PAGE.read_text(encoding="utf-8"))
    assert said, "the page no longer shows what its command prints"
    parser = build_parser(page_host)
    args = parser.parse_args(said.group(1).split())
    assert args.handler(args, page_host) == 0
    assert capsys.readouterr().out == said.group(2) + "\n"
    assert "bert" not in rulesets.get("training-5.1.0").benchmarks
    args = parser.parse_args(["required-runs", "bert"])
    assert args.handler(args, page_host) == 2
    assert capsys.readouterr().err == "bert is no benchmark of training-5.1.0\n"


def test_the_sessions_give_what_the_page_shows():
    [session] = _blocks("pycon")
    test = doctest.DocTestParser().get_doctest(session, {}, "plugin-api.md", str(PAGE), 0)
    assert len(test.examples) >= 6
    results = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert results.failed == 0, results


def test_the_pytest_runner_options_are_the_example_plugins():
    """`make test` runs the example plugin with exactly the ini option the page shows."""
    shown = _toml_holding("tool.pytest.ini_options")["tool"]["pytest"]["ini_options"]
    declared = tomllib.loads(EXAMPLE_PLUGIN.read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert shown == declared


def test_contributings_new_rule_passes_its_cases(tmp_path):
    """CONTRIBUTING.md's walk-through: its rule, pasted below ShellNoise in the example plugin's
    module with `import time`, passes the cases it shows."""
    example = pytest.importorskip("mlperf_audit_example", reason="make test installs the example plugin")
    contributing = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    blocks = {
        found: textwrap.dedent(body)
        for found, body in re.findall(r"^ *```(\w+)\n(.*?)^ *```\n", contributing, re.M | re.S)
    }
    namespace = {**vars(example), "time": time}
    exec(compile(blocks["python"], "CONTRIBUTING.md", "exec"), namespace)  # noqa: S102 - our own page
    rule = namespace["FutureTimestamp"]
    assert rule.scope == "run"

    class Walkthrough:
        @hookimpl
        def mlperf_audit_register_rules(self) -> list[type]:
            return [rule]

    host = PluginHost(autoload_third_party=False, plugins=[("walkthrough", Walkthrough())])
    assert host.errors == []
    case_file = tmp_path / f"{rule.code}.yaml"
    case_file.write_text(blocks["yaml"], encoding="utf-8")
    cases = load_cases(case_file)
    assert len(cases) == 2
    for case in cases:
        workdir = tmp_path / case.name
        workdir.mkdir()
        assert_case(case, workdir, host)
