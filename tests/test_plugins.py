"""The plugin host and engine: entry points, loud failures, ad-hoc plugins, crash isolation."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterable

import pytest

from mlperf_audit import CheckContext, Finding, Rule, Run, Setting, Severity, hookimpl
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.engine.plugins import DISABLE_AUTOLOAD_ENV, PluginHost
from mlperf_audit.errors import AuditError, PluginError


class _Rule(Rule):
    """A test rule.

    How to fix: nothing; it is a test.
    """

    code = "TST001"
    name = "test-rule"
    summary = "A test rule."
    severity = Severity.WARNING
    scope = "run"

    def check(self, run: Run, context: object) -> Iterable[Finding]:
        yield self.finding("seen", path=run.path)


class RulesPlugin:
    def __init__(self, *rules: type[Rule]) -> None:
        self.rules = list(rules)

    @hookimpl
    def mlperf_audit_register_rules(self) -> list[type[Rule]]:
        return self.rules


@pytest.mark.third_party_plugins
def test_builtin_and_third_party_use_the_same_entry_point_group():
    group = importlib.metadata.entry_points(group="mlperf_audit")
    by_name = {ep.name: ep.dist.name for ep in group}
    assert by_name["log_structure"] == "mlperf-audit"
    assert by_name["example"] == "mlperf-audit-example"


@pytest.mark.third_party_plugins
def test_example_plugin_rule_runs(fixtures, host_with_plugins):
    host = host_with_plugins
    report = check(fixtures / "clean", Config(select=("EXA001",)), host)
    assert report.findings == ()  # lean fixture logs
    assert host.rule("EXA001").plugin == "example"
    assert any(p.name == "example" and not p.builtin for p in host.plugins)


def test_adhoc_plugin_rule_gets_context(fixtures):
    host = PluginHost(plugins=[("adhoc", RulesPlugin(_Rule))])
    report = check(fixtures / "broken" / "empty-log", Config(select=("TST",)), host)
    assert len(report.findings) == 5
    assert {(f.submitter, f.system, f.benchmark) for f in report.findings} == {("Fixture", "fx_8xh100", "ssd")}
    assert report.findings[0].hint == "Nothing; it is a test."


def test_crashing_rule_is_isolated_and_exits_2(fixtures):
    class Crashing(_Rule):
        """Crashes.

        How to fix: nothing.
        """

        code = "TST002"
        name = "crashing"

        def check(self, run: Run, context: object) -> Iterable[Finding]:
            raise ZeroDivisionError("boom")

    host = PluginHost(plugins=[("adhoc", RulesPlugin(_Rule, Crashing))])
    report = check(fixtures / "broken" / "empty-log", Config(select=("TST", "EVT")), host)
    crashes = [f for f in report.findings if f.rule == "CHK001"]
    assert len(crashes) == 5 and "TST002" in crashes[0].message and "ZeroDivisionError: boom" in crashes[0].message
    assert sum(1 for f in report.findings if f.rule == "TST001") == 5  # the other rules still ran
    assert report.exit_code == 2


class _Grouped(_Rule):
    """A test rule checked with the others of its group.

    How to fix: nothing; it is a test.
    """

    group = "test-group"
    calls: list[tuple[str, ...]] = []

    @classmethod
    def check_group(cls, rules, run, context):
        cls.calls.append(tuple(rule.code for rule in rules))
        return [rule.finding(f"{rule.code} in one call", path=run.path) for rule in rules]


def test_grouped_rules_are_checked_in_one_call_per_target_and_keep_selection(fixtures):
    doc = {"__doc__": _Grouped.__doc__}
    first = type("First", (_Grouped,), {"code": "TST011", "name": "first", **doc})
    second = type("Second", (_Grouped,), {"code": "TST012", "name": "second", **doc})
    third = type("Third", (_Grouped,), {"code": "TST013", "name": "third", **doc})
    host = PluginHost(plugins=[("adhoc", RulesPlugin(first, second, third))])
    _Grouped.calls.clear()
    report = check(fixtures / "broken" / "empty-log", Config(select=("TST",), ignore=("TST012",)), host)
    assert _Grouped.calls == [("TST011", "TST013")] * 5  # one call per run, the ignored rule left out
    assert sorted({f.rule for f in report.findings}) == ["TST011", "TST013"]


def test_crashing_group_is_isolated_and_named(fixtures):
    class Crashing(_Grouped):
        """Crashes as a group.

        How to fix: nothing.
        """

        code = "TST021"
        name = "crashing-group"

        @classmethod
        def check_group(cls, rules, run, context):
            raise KeyError("status")

    host = PluginHost(plugins=[("adhoc", RulesPlugin(_Rule, Crashing))])
    report = check(fixtures / "broken" / "empty-log", Config(select=("TST",)), host)
    crashes = [f for f in report.findings if f.rule == "CHK001"]
    assert len(crashes) == 5 and "TST021" in crashes[0].message and "KeyError" in crashes[0].message
    assert sum(1 for f in report.findings if f.rule == "TST001") == 5
    assert report.exit_code == 2


@pytest.mark.parametrize(
    "attribute, value, message",
    [
        ("code", "T1", "is not a prefix"),
        ("name", "Bad Name", "not kebab-case"),
        ("summary", "", "summary must be one non-empty line"),
        ("scope", "galaxy", "scope 'galaxy'"),
        ("__doc__", None, "has no docstring"),
    ],
)
def test_invalid_rule_is_a_plugin_error(attribute, value, message):
    broken = type("Broken", (_Rule,), {attribute: value})
    with pytest.raises(PluginError, match=message):
        PluginHost(plugins=[("adhoc", RulesPlugin(broken))])


def test_duplicate_code_is_a_plugin_error():
    clash = type("Clash", (_Rule,), {"code": "EVT001", "name": "clash", "__doc__": _Rule.__doc__})
    with pytest.raises(PluginError, match="EVT001 is registered twice"):
        PluginHost(plugins=[("adhoc", RulesPlugin(clash))])


def test_misspelled_hook_is_a_plugin_error():
    class Typo:
        @hookimpl
        def mlperf_audit_register_rulez(self) -> list[type[Rule]]:
            return []

    with pytest.raises(PluginError, match="mlperf_audit_register_rulez"):
        PluginHost(plugins=[("typo", Typo())])


def test_unregistered_code_from_a_check_hook_is_a_plugin_error(fixtures):
    class Rogue:
        @hookimpl
        def mlperf_audit_check_run(self, run: Run, context: object) -> list[Finding]:
            return [Finding("ZZZ999", "rogue", Severity.ERROR, "?")]

    with pytest.raises(PluginError, match="ZZZ999"):
        check(fixtures / "broken" / "empty-log", Config(), PluginHost(plugins=[("rogue", Rogue())]))


def test_modify_findings_hook(fixtures):
    class Downgrade:
        @hookimpl
        def mlperf_audit_modify_findings(self, findings: list[Finding], context: object) -> None:
            findings[:] = [dataclasses.replace(f, severity=Severity.INFO) for f in findings]

    host = PluginHost(plugins=[("downgrade", Downgrade())])
    report = check(fixtures / "broken" / "two-runs-without-run-stop", Config(), host)
    assert {f.severity for f in report.findings} == {Severity.INFO}
    assert report.exit_code == 0


def test_broken_entry_point_in_process(monkeypatch):
    broken = importlib.metadata.EntryPoint("ghost", "mlperf_audit_no_such_module", "mlperf_audit")
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group=None: list(real(group=group)) + [broken])
    with pytest.raises(PluginError, match="failed to load plugin 'ghost'.*ModuleNotFoundError"):
        PluginHost(autoload_third_party=True)


def _fake_distribution(site: Path, module_source: str) -> None:
    """Installs a distribution 'mlperf-audit-broken' into `site` by writing its files by hand."""
    info = site / "mlperf_audit_broken-1.2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlperf-audit-broken\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text("[mlperf_audit]\nbroken = mlperf_audit_broken\n")
    (site / "mlperf_audit_broken.py").write_text(textwrap.dedent(module_source))


def _run_cli(site: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(site), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", *argv], capture_output=True, text=True, env=environment, timeout=120
    )


def test_plugin_that_fails_to_import_exits_2(tmp_path, fixtures):
    _fake_distribution(tmp_path, "raise RuntimeError('incompatible with this mlperf-audit')\n")
    result = _run_cli(tmp_path, "check", str(fixtures / "clean"), env={DISABLE_AUTOLOAD_ENV: ""})  # as installed
    assert result.returncode == 2
    assert "failed to load plugin 'broken'" in result.stderr
    assert "mlperf-audit-broken 1.2.3" in result.stderr and "incompatible" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_third_party_autoload_can_be_disabled(tmp_path, fixtures):
    _fake_distribution(tmp_path, "raise RuntimeError('never imported')\n")
    result = _run_cli(tmp_path, "rules", "--json", env={DISABLE_AUTOLOAD_ENV: "1"})
    assert result.returncode == 0, result.stderr
    codes = {rule["code"] for rule in json.loads(result.stdout)}
    assert "EVT001" in codes and "EXA001" not in codes


def test_disable_plugin(cli):
    codes = {rule["code"][:3] for rule in json.loads(cli("--disable-plugin", "log_syntax", "rules", "--json").out)}
    assert "LOG" not in codes and "EVT" in codes
    result = cli("--disable-plugin", "engine", "rules")
    assert result.code == 2 and "essential" in result.err


@pytest.mark.filterwarnings("ignore:mlperf_audit_configure is deprecated:DeprecationWarning")
def test_every_check_hook_is_called_once_per_target(fixtures):
    calls: list[tuple[str, str]] = []

    class Recorder:
        @hookimpl
        def mlperf_audit_configure(self, config: Config) -> None:
            calls.append(("configure", config.fail_on))

        @hookimpl
        def mlperf_audit_check_run(self, run: Run, context: object) -> None:
            calls.append(("run", run.path))

        @hookimpl
        def mlperf_audit_check_benchmark(self, result: object, context: object) -> None:
            calls.append(("benchmark", f"{result.path}:{len(result.runs)}"))

        @hookimpl
        def mlperf_audit_check_system(self, system: object, context: object) -> None:
            calls.append(("system", system.name))

        @hookimpl
        def mlperf_audit_check_submission(self, submission: object, context: object) -> None:
            calls.append(("submission", submission.name))

        @hookimpl
        def mlperf_audit_check_tree(self, tree: object, context: object) -> None:
            calls.append(("tree", tree.kind.value))

    host = PluginHost(plugins=[("recorder", Recorder())])
    check(fixtures / "broken" / "empty-log", Config(fail_on="warning"), host)
    folder = "Fixture/results/fx_8xh100/ssd"
    assert calls == [
        ("configure", "warning"),
        ("system", "fx_8xh100"),
        *[("run", f"{folder}/result_{i}.txt") for i in range(5)],
        ("benchmark", f"{folder}:5"),
        ("submission", "Fixture"),
        ("tree", "results repository"),
    ]


def test_a_plugin_can_register_a_format(cli, fixtures):
    from mlperf_audit.formats import Format

    class Counts:
        @hookimpl
        def mlperf_audit_register_formats(self) -> list[Format]:
            return [Format("counts", "one line of counts", lambda report: json.dumps(report.summary) + "\n")]

    host = PluginHost(plugins=[("counts", Counts())])
    report = check(fixtures / "broken" / "missing-run-stop", Config(), host)
    assert (
        host.formats["counts"].render(report) == '{"error": 0, "warning": 1, "info": 2, "waived": 0}\n'
    )  # info: RCP007, REP001
    with pytest.raises(PluginError, match="format 'json' is registered twice"):

        class Clash:
            @hookimpl
            def mlperf_audit_register_formats(self) -> list[Format]:
                return [Format("json", "again", lambda report: "")]

        PluginHost(plugins=[("clash", Clash())])


def test_a_plugin_can_answer_mlperf_audit_score_benchmark_first(fixtures):
    from mlperf_audit.engine.api import score
    from mlperf_audit.scores import BenchmarkScore

    class FlatScore:
        @hookimpl(tryfirst=True)
        def mlperf_audit_score_benchmark(self, result: object, context: object) -> BenchmarkScore:
            return BenchmarkScore(None, None, result.benchmark, result.path, (), None, 42.0, 1.0, 1.0)

    (flat,) = score(fixtures / "broken" / "run-aborted", Config(), PluginHost(plugins=[("flat", FlatScore())]))
    assert flat.score_minutes == 42.0
    (builtin,) = score(fixtures / "broken" / "run-aborted", Config(), PluginHost())
    assert builtin.score_minutes != 42.0 and builtin.benchmark == "ssd"


def test_a_plugin_can_add_a_command(capsys):
    import argparse

    from mlperf_audit import Command, reading_options
    from mlperf_audit.cli import build_parser

    class Hello(Command):
        name = "hello"
        help = "say hello"

        def parents(self) -> list[argparse.ArgumentParser]:
            return [reading_options(partial=False)]

        def add_arguments(self, parser: argparse.ArgumentParser) -> None:
            parser.add_argument("name")

        def run(self, args: argparse.Namespace, host: object) -> int:
            print(f"hello {args.name} ({args.ruleset})")
            return 0

    class HelloPlugin:
        @hookimpl
        def mlperf_audit_register_commands(self) -> list[Command]:
            return [Hello()]

    host = PluginHost(plugins=[("hello", HelloPlugin())])
    args = build_parser(host).parse_args(["hello", "reviewer", "--ruleset", "training-4.1.0"])
    assert args.handler(args, host) == 0
    assert capsys.readouterr().out == "hello reviewer (training-4.1.0)\n"
    assert "audit" in build_parser(PluginHost()).format_help()  # the built-in audit command comes the same way


def test_a_plugin_command_checks_and_scores_its_path_as_check_and_score_do(capsys, fixtures, tmp_path):
    """`Command.checked` and `Command.scored` give a plugin's command the check and the scores of
    the PATH it was given, under the reading options it declared, equal to the built-in commands'."""
    import argparse

    from mlperf_audit import Command, reading_options
    from mlperf_audit.cli import build_parser
    from mlperf_audit.engine.api import score

    class Tally(Command):
        name = "tally"
        help = "errors and the fastest score"

        def parents(self) -> list[argparse.ArgumentParser]:
            return [reading_options(jobs="check benchmark folders")]

        def add_arguments(self, parser: argparse.ArgumentParser) -> None:
            parser.add_argument("path")

        def run(self, args: argparse.Namespace, host: PluginHost) -> int:
            report = self.checked(args, host)
            errors = sum(f.severity is Severity.ERROR for f in report.findings)
            minutes = sorted(s.score_minutes for s in self.scored(args, host) if s.score_minutes is not None)
            print(f"{errors} {minutes[0] if minutes else None}")
            return 1 if errors else 0

    class TallyPlugin:
        @hookimpl
        def mlperf_audit_register_commands(self) -> list[Command]:
            return [Tally()]

    host = PluginHost(plugins=[("tally", TallyPlugin())])
    demo = fixtures / "demo"
    argv = ["tally", str(demo), "--no-cache", "--ruleset", "training-4.1.0"]
    args = build_parser(host).parse_args(argv)
    code = args.handler(args, host)
    config = Config(ruleset="training-4.1.0")  # cache_dir None: no cache, as --no-cache
    errors = sum(f.severity is Severity.ERROR for f in check(demo, config, host).findings)
    fastest = min(s.score_minutes for s in score(demo, config, host) if s.score_minutes is not None)
    assert capsys.readouterr().out == f"{errors} {fastest}\n"
    assert code == (1 if errors else 0) and errors > 0
    missing = build_parser(host).parse_args(["tally", str(tmp_path / "nothing")])
    with pytest.raises(AuditError, match="no such file or folder"):
        missing.handler(missing, host)


def test_a_plugin_that_returns_no_command_is_named(capsys):
    from mlperf_audit.cli import main

    class Wrong:
        @hookimpl
        def mlperf_audit_register_commands(self) -> list[object]:
            return ["hello"]

    from mlperf_audit.cli import build_parser

    with pytest.raises(PluginError, match="'hello' is not a mlperf_audit.Command"):
        build_parser(PluginHost(plugins=[("wrong", Wrong())]))
    assert main(["--version"]) == 0  # without the plugin, nothing else is refused


def test_the_old_command_hook_still_works_and_is_deprecated(capsys):
    from mlperf_audit.cli import build_parser

    class Hello:
        @hookimpl
        def mlperf_audit_add_commands(self, commands: object) -> None:
            parser = commands.add_parser("hello", help="say hello")
            parser.add_argument("name")
            parser.set_defaults(handler=lambda args, host: print(f"hello {args.name}") or 0)

    with pytest.warns(DeprecationWarning, match="mlperf_audit_register_commands"):
        host = PluginHost(plugins=[("hello", Hello())])
    args = build_parser(host).parse_args(["hello", "reviewer"])
    assert args.handler(args, host) == 0
    assert capsys.readouterr().out == "hello reviewer\n"


def test_a_folder_is_checked_without_the_cyclic_collector_which_returns_after(fixtures):
    """While a benchmark folder is checked the collector rests (its objects are freed together by
    reference counting); it runs again after, as it did before, for whatever a rule left in a cycle."""
    import gc

    seen: list[bool] = []

    class Watching(_Rule):
        """A test rule that watches the collector.

        How to fix: nothing; it is a test.
        """

        def check(self, run: Run, context: object) -> Iterable[Finding]:
            seen.append(gc.isenabled())
            cycle: list = []
            cycle.append(cycle)  # garbage only the collector frees
            return ()

    host = PluginHost(plugins=[("adhoc", RulesPlugin(Watching))])
    assert gc.isenabled()
    check(fixtures / "clean", Config(select=("TST001",), cache_dir=None), host)
    assert seen and not any(seen) and gc.isenabled()
    gc.disable()
    try:
        check(fixtures / "clean", Config(select=("TST001",), cache_dir=None), host)
        assert not gc.isenabled()  # a caller's choice is left as it was
    finally:
        gc.enable()


# --- the typed plugin contract -----------------------------------------------------------------


def _scoped_rule(base: type, scope: str | None = None) -> type:
    attributes = {
        "__doc__": "A scoped test rule.\n\nHow to fix: nothing; it is a test.",
        "code": "TST201",
        "name": "scoped-rule",
        "summary": "A scoped test rule.",
        "severity": Severity.WARNING,
        "check": lambda self, target, context: [self.finding(type(target).__name__)],
    }
    if scope is not None:
        attributes["scope"] = scope
    return type("Scoped", (base,), attributes)


def test_a_scoped_base_sets_the_scope_and_checks_its_model_type(fixtures):
    from mlperf_audit import BenchmarkRule

    host = PluginHost(plugins=[("scoped", RulesPlugin(_scoped_rule(BenchmarkRule)))], autoload_third_party=False)
    report = check(fixtures / "clean", Config(select=("TST201",)), host)
    assert report.findings and {f.message for f in report.findings} == {"BenchmarkResult"}


def test_a_scoped_base_with_another_scope_is_a_plugin_error():
    from mlperf_audit import RunRule

    with pytest.raises(PluginError, match=r"derives from RunRule \(scope 'run'\) but sets scope 'tree'"):
        PluginHost(plugins=[("scoped", RulesPlugin(_scoped_rule(RunRule, "tree")))], autoload_third_party=False)


def test_every_builtin_rule_with_a_check_of_its_own_derives_from_the_base_of_its_scope(host):
    from mlperf_audit.rule import SCOPED_BASES, IssueRule

    bases = {base.scope: base for base in SCOPED_BASES}
    loose = [
        rule.code
        for rule in host.rules
        if rule.produced_by is None and not issubclass(rule, IssueRule) and not issubclass(rule, bases[rule.scope])
    ]
    assert loose == [], loose


def test_the_context_a_rule_receives_holds_no_engine_state(fixtures):
    import dataclasses as dc

    from mlperf_audit import CheckContext
    from mlperf_audit.rule import EngineContext

    public = {f.name for f in dc.fields(CheckContext) if not f.name.startswith("_")}
    assert public == {"config", "tree", "catalogue", "selected_codes"}
    for engine_state in ("rules", "plans", "channels"):
        assert not hasattr(CheckContext, engine_state) and engine_state not in public
        assert hasattr(EngineContext, engine_state) or engine_state in {f.name for f in dc.fields(EngineContext)}
    seen: list[object] = []

    class Spy(_Rule):
        """Keeps the context it receives.

        How to fix: nothing; it is a test.
        """

        def check(self, run: Run, context: object) -> Iterable[Finding]:
            seen.append(context)
            return ()

    check(fixtures / "clean", Config(select=("TST001",)), PluginHost(plugins=[("spy", RulesPlugin(Spy))]))
    with pytest.raises(TypeError):
        seen[0].catalogue["TST999"] = Spy  # type: ignore[attr-defined, index]


def test_public_api_exports_formats_reports_configuration_and_no_reading_machinery():
    import mlperf_audit

    assert {"Format", "Report", "Config", "Setting", "limits"} <= set(mlperf_audit.__all__)
    assert not {"read_at_most", "MAX_FILE_BYTES", "MAX_LINE_BYTES"} & set(mlperf_audit.__all__)
    assert mlperf_audit.limits.MAX_LINE_BYTES > 0 and callable(mlperf_audit.limits.read_at_most)


# --- plugin settings ---------------------------------------------------------------------------


class _ThresholdRule(_Rule):
    """Says the settings of its plugin in force.

    How to fix: nothing; it is a test.
    """

    code = "TST301"
    name = "threshold-rule"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        settings = context.settings_of(self.plugin)
        yield self.finding(f"threshold={settings['threshold']} label={settings['label']}", path=run.path)


class SettingsPlugin(RulesPlugin):
    def __init__(self, settings: list[object]) -> None:
        super().__init__(_ThresholdRule)
        self.settings = settings

    @hookimpl
    def mlperf_audit_plugin_settings(self) -> list[object]:
        return self.settings


_DECLARED = [Setting("threshold", float, 0.5, "A share."), Setting("label", str, "none", "A label.")]


def _settings_host(settings: list[object] = _DECLARED) -> PluginHost:
    return PluginHost(plugins=[("thresholds", SettingsPlugin(settings))], autoload_third_party=False)


def _configured(tmp_path: Path, toml: str, trust: bool = True) -> Config:
    from mlperf_audit.config import load_config

    (tmp_path / "pyproject.toml").write_text(toml)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    return load_config(target=elsewhere if trust else tmp_path, cwd=tmp_path, use_cache=False)


def test_a_rule_reads_its_plugin_settings_defaults_and_configured(fixtures, tmp_path):
    host = _settings_host()
    report = check(fixtures / "clean", Config(select=("TST301",)), host)
    assert {f.message for f in report.findings} == {"threshold=0.5 label=none"}
    config = _configured(
        tmp_path, '[tool.mlperf-audit]\nselect = ["TST301"]\n[tool.mlperf-audit.plugins.thresholds]\nthreshold = 1\n'
    )
    report = check(fixtures / "clean", config, host)
    assert {f.message for f in report.findings} == {"threshold=1 label=none"}  # an int where a float is declared


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "[tool.mlperf-audit.plugins.thresholds]\ntreshold = 0.2\n",
            r"unknown setting 'treshold' \(did you mean 'threshold'\?\)",
        ),
        ("[tool.mlperf-audit.plugins.thresholds]\nlabel = 3\n", "label must be a string, not 3"),
        ("[tool.mlperf-audit.plugins.thresholds]\nthreshold = true\n", "threshold must be a number, not True"),
        (
            "[tool.mlperf-audit.plugins.treshholds]\nlabel = 'x'\n",
            r"no loaded plugin 'treshholds'.*did you mean 'thresholds'",
        ),
    ],
)
def test_a_wrong_plugin_setting_is_a_configuration_error(fixtures, tmp_path, table, message):
    from mlperf_audit.errors import ConfigError

    config = _configured(tmp_path, "[tool.mlperf-audit]\n" + table)
    with pytest.raises(ConfigError, match=message):
        check(fixtures / "clean", dataclasses.replace(config, select=("TST301",)), _settings_host())


def test_tree_configuration_sets_no_plugin_setting(tmp_path, fixtures):
    config = _configured(tmp_path, "[tool.mlperf-audit.plugins.thresholds]\nthreshold = 0.9\n", trust=False)
    assert config.plugins == () and any("not obeyed: plugins" in note for note in config.notes)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (Setting("Threshold", float, 0.5, "x"), "not kebab-case"),
        (Setting("threshold", float, "high", "x"), "threshold must be a number"),
        (Setting("threshold", dict, {}, "x"), "is not one of bool"),
        ("threshold", "is not a mlperf_audit.Setting"),
    ],
)
def test_a_broken_setting_declaration_is_a_plugin_error(setting, message):
    with pytest.raises(PluginError, match=message):
        _settings_host([setting])


def test_the_deprecated_configure_hook_warns_and_still_works(fixtures):
    class Old:
        def __init__(self) -> None:
            self.configs: list[Config] = []

        @hookimpl
        def mlperf_audit_configure(self, config: Config) -> None:
            self.configs.append(config)

    old = Old()
    with pytest.warns(DeprecationWarning, match="mlperf_audit_configure is deprecated"):
        host = PluginHost(plugins=[("old", old)], autoload_third_party=False)
    check(fixtures / "clean", Config(fail_on="warning"), host)
    assert [config.fail_on for config in old.configs] == ["warning"]


# --- the test runner a plugin gets --------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parent.parent / "plugins" / "mlperf-audit-example"


def _pytest(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.mark.third_party_plugins
def test_the_example_plugin_runs_its_rule_cases_with_pytest_alone():
    result = _pytest(str(EXAMPLE), "-v")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "EXA001.yaml::mostly_shell_trace PASSED" in result.stdout
    assert "EXA001.yaml::noise_share_configured_higher PASSED" in result.stdout


@pytest.mark.third_party_plugins
def test_a_wrong_rule_case_fails_under_the_pytest_plugin(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nmlperf_audit_rule_cases = ["cases"]\n')
    (tmp_path / "cases").mkdir()
    cases = (EXAMPLE / "tests" / "EXA001.yaml").read_text().replace('"75% of', '"76% of')
    (tmp_path / "cases" / "EXA001.yaml").write_text(cases)
    (tmp_path / "cases" / "notes.yaml").write_text("not: a case file\n")  # not named after a rule: not collected
    result = _pytest(str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 2 passed" in result.stdout and 'lacks "76% of the file\'s 4 lines"' in result.stdout


def test_the_pytest_plugin_collects_nothing_where_it_is_not_asked(tmp_path):
    (tmp_path / "EXA001.yaml").write_text((EXAMPLE / "tests" / "EXA001.yaml").read_text())
    result = _pytest(str(tmp_path), cwd=tmp_path)
    assert result.returncode == 5, result.stdout + result.stderr  # no tests collected
