"""The boundaries of the rule API: every rule owns its findings, problems are declared by the rule
that reports them, phases share typed channels, a comparison scope, and one parse per command."""

from __future__ import annotations

import json
from typing import Any, Iterable

import pytest

from mlperf_audit import (
    ENGINE,
    BenchmarkResult,
    Channel,
    CheckContext,
    Comparison,
    Finding,
    IssueRule,
    Problem,
    Rule,
    Severity,
    Tree,
    hookimpl,
)
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check, review
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit.reading import parser as parser_module
from mlperf_audit.rule import RuleDefinitionError, validate_rule_class


class _Base(Rule):
    """A test rule.

    How to fix: nothing; it is a test.
    """

    name = "test-rule"
    summary = "A test rule."
    severity = Severity.INFO
    scope = "tree"


def test_a_rule_without_check_must_name_the_phase_that_produces_its_findings():
    class Silent(_Base):
        """Checks nothing and names no phase.

        How to fix: nothing.
        """

        code = "TST101"

    with pytest.raises(RuleDefinitionError, match="names no phase"):
        validate_rule_class(Silent)

    class Produced(_Base):
        """Made by a phase.

        How to fix: nothing.
        """

        code = "TST102"
        produced_by = "mlperf_audit_modify_findings"

    validate_rule_class(Produced)

    class Both(Produced):
        """Made by a phase, and checks.

        How to fix: nothing.
        """

        code = "TST103"

        def check(self, target: Any, context: CheckContext) -> Iterable[Finding]:
            return ()

    with pytest.raises(RuleDefinitionError, match="one of the two"):
        validate_rule_class(Both)


def test_an_issue_rule_must_declare_its_problem():
    class Orphan(IssueRule):
        """Reports nothing.

        How to fix: nothing.
        """

        code = "TST104"
        name = "orphan"
        summary = "Reports nothing."
        severity = Severity.ERROR
        scope = "run"

    with pytest.raises(RuleDefinitionError, match="without a Problem"):
        validate_rule_class(Orphan)


def test_every_built_in_rule_owns_its_findings(host):
    """No empty check(): a rule is checked by the engine, or says which phase makes its findings."""
    produced = {rule.code: rule.produced_by for rule in host.rules if rule.produced_by}
    assert produced == {"CHK001": ENGINE, "PKG019": "mlperf_audit_modify_findings"}
    for rule in host.rules:
        assert (rule.check is Rule.check) == (rule.produced_by is not None), rule.code
    described = {entry["code"]: entry["produced_by"] for entry in (rule.describe() for rule in host.rules)}
    assert described["PKG019"] == "mlperf_audit_modify_findings" and described["LOG005"] is None


def test_every_problem_is_reported_by_exactly_one_built_in_rule(host):
    reporters: dict[str, list[str]] = {}
    for rule in host.rules:
        if issubclass(rule, IssueRule):
            reporters.setdefault(str(rule.problem), []).append(rule.code)
    assert reporters.keys() == {str(problem) for problem in Problem}
    assert all(len(codes) == 1 for codes in reporters.values()), reporters
    assert reporters[Problem.MALFORMED_JSON] == ["LOG005"] and reporters[Problem.SCALING_JSON_INVALID] == ["PKG005"]


def test_a_problem_no_rule_reports_is_said_not_dropped(fixtures):
    package = fixtures / "broken" / "malformed-json"
    full = check(package, Config(), PluginHost())
    assert "LOG005" in {f.rule for f in full.findings}
    assert not [note for note in full.config.notes if "no registered rule" in note]
    without = check(package, Config(), PluginHost(disabled=["log_syntax"]))
    assert "LOG005" not in {f.rule for f in without.findings}
    (note,) = [note for note in without.config.notes if "no registered rule reports" in note]
    assert "log-malformed-json (1)" in note
    # ignoring the rule is a choice, not a disabled reporter: no note
    ignored = check(package, Config(ignore=("LOG005",)), PluginHost())
    assert not [note for note in ignored.config.notes if "no registered rule" in note]


FOLDERS: Channel[tuple[str, int]] = Channel("test.folders")


class _CountRuns(Rule):
    """Counts the runs of every folder, published while checking it and read at the tree.

    How to fix: nothing; it is a test.
    """

    code = "TST110"
    name = "count-runs"
    summary = "Counts the runs."
    severity = Severity.INFO
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        received = context.received(FOLDERS)
        yield self.finding(
            f"{len(received)} folders, {sum(count for _, count in received)} runs: "
            + ", ".join(path for path, _ in received)
        )


class _Publisher:
    @hookimpl
    def mlperf_audit_register_rules(self) -> list[type[Rule]]:
        return [_CountRuns]

    @hookimpl
    def mlperf_audit_check_benchmark(self, result: BenchmarkResult, context: CheckContext) -> None:
        context.publish(FOLDERS, (result.path, len(result.runs)))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_channel_carries_values_from_folders_to_the_tree_whatever_the_jobs(fixtures, jobs):
    host = PluginHost(plugins=[("publisher", _Publisher())])
    report = check(fixtures / "clean", Config(select=("TST110",)), host, jobs=jobs)
    (finding,) = report.findings
    single = check(fixtures / "clean", Config(select=("TST110",)), host, jobs=1).findings[0]
    logs = list((fixtures / "clean").rglob("result_*.txt"))
    folders = {log.parent for log in logs}
    assert finding.message == single.message
    assert finding.message.startswith(f"{len(folders)} folders, {len(logs)} runs: ")


class _SeesComparison:
    seen: list[Comparison] = []

    @hookimpl
    def mlperf_audit_check_comparison(self, comparison: Comparison, context: CheckContext) -> list[Finding]:
        self.seen.append(comparison)
        return []


def _audit_baseline(cli: Any, fixtures: Any, *extra: str) -> Any:
    """`audit` of the forged fixture against the clean one, in JSON."""
    forged, clean = fixtures / "forged" / "compressed-timestamps", fixtures / "clean"
    # a v4.1 package of one benchmark (llama2_70b_lora), which every round up to 6.1 allows: named
    named = ("--ruleset", "training-4.1.0")
    return cli("audit", str(forged), "--baseline", str(clean), "--format", "json", "--fail-on", "never", *named, *extra)


def test_audit_baseline_hands_both_trees_scores_to_the_comparison_hook(fixtures, cli, monkeypatch, tmp_path):
    plugin = _SeesComparison()
    monkeypatch.setattr(
        "mlperf_audit.cli.PluginHost", lambda disabled=(): PluginHost(disabled=disabled, plugins=[("sees", plugin)])
    )
    result = _audit_baseline(cli, fixtures)
    assert result.code == 0, result.err
    (comparison,) = plugin.seen
    assert comparison.scores and comparison.baseline and comparison.path == str(fixtures / "clean")
    assert {s.benchmark for s in comparison.scores} & {s.benchmark for s in comparison.baseline}
    document = json.loads(result.out)
    assert [f["rule"] for f in document["findings"]].count("AUD007") == 1
    # AUD007 is a rule like any other: `ignore` in the configuration switches it off
    configuration = tmp_path / ".mlperf-audit.toml"
    configuration.write_text('ignore = ["AUD007"]\n')
    ignored = _audit_baseline(cli, fixtures, "--config", str(configuration))
    assert "AUD007" not in [f["rule"] for f in json.loads(ignored.out)["findings"]]


@pytest.mark.parametrize("command", ["audit", "report"])
def test_audit_and_report_parse_each_log_once(command, fixtures, cli, monkeypatch, tmp_path):
    calls: list[str] = []
    real = parser_module.parse_log

    def counting(path: Any, shown: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(shown)
        return real(path, shown, *args, **kwargs)

    monkeypatch.setattr("mlperf_audit.engine.loading.parse_log", counting)
    package = fixtures / "clean"
    extra = ["-o", str(tmp_path / "report.html")] if command == "report" else ["--fail-on", "never"]
    result = cli(command, str(package), "--jobs", "1", "--no-cache", *extra)
    assert result.code in (0, 1), result.err
    logs = sorted(p.relative_to(package).as_posix() for p in package.rglob("result_*.txt"))
    assert sorted(calls) == logs  # every log parsed, none twice


def test_review_returns_the_same_findings_and_scores_as_check_and_score_apart(fixtures):
    from mlperf_audit.engine.api import score

    package = fixtures / "clean"
    together = review(package, Config(), PluginHost(), score=True)
    assert together.report.findings == check(package, Config(), PluginHost()).findings
    assert list(together.scores) == score(package, together.report.config, PluginHost())
