"""Running the selected rules of a scope on a target: the built-in `RuleRunner` plugin, groups checked in one
call, and findings another rule covers merged into it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from ..model import (
    BenchmarkResult,
    Finding,
    Run,
    Submission,
    SystemDescription,
    Tree,
)
from ..rule import EngineContext, Rule, Scope
from ..scores import Comparison
from .crashes import RuleCrashed, crash_finding
from .hookspecs import hookimpl


def run_rules(context: EngineContext, scope: Scope, target: Any) -> list[Finding]:
    """The findings of the selected rules of `scope` on `target`; a rule that raises becomes a CHK001."""
    plan = context.plans.get(scope)
    if plan is None:
        plan = context.plans[scope] = _Plan.of(context.rules.get(scope, ()))
    findings: list[Finding] = []
    for rule, group in plan.steps:
        try:
            findings.extend(
                rule.check(target, context) if group is None else type(rule).check_group(group, target, context)
            )
        except Exception as error:  # a rule's bug must not hide the other rules' findings
            findings.append(crash_finding(rule, target, error))
    return _merge_covered(findings, plan.covers) if plan.covers else findings


@dataclass(frozen=True)
class _Plan:
    """The order in which one scope's rules run: single rules, and groups checked in one call."""

    steps: tuple[tuple[Rule, tuple[Rule, ...] | None], ...]
    covers: dict[str, frozenset[str]]

    @classmethod
    def of(cls, rules: Sequence[Rule]) -> "_Plan":
        steps: list[tuple[Rule, list[Rule] | None]] = []
        groups: dict[str, list[Rule]] = {}
        for rule in rules:
            if rule.group is None:
                steps.append((rule, None))
            elif rule.group in groups:
                groups[rule.group].append(rule)
            else:  # the group runs where its first rule stands
                groups[rule.group] = [rule]
                steps.append((rule, groups[rule.group]))
        resolved = tuple((rule, None if group is None else tuple(group)) for rule, group in steps)
        return cls(resolved, {rule.code: rule.covers for rule in rules if rule.covers})


def _merge_covered(findings: list[Finding], covers: dict[str, frozenset[str]]) -> list[Finding]:
    """Drops findings that another finding at the same place covers, naming them in its message."""
    covering: dict[tuple[str | None, int | None], list[int]] = {}
    for index, finding in enumerate(findings):
        if finding.rule in covers:
            covering.setdefault((finding.path, finding.line), []).append(index)
    if not covering:
        return findings
    merged: dict[int, list[str]] = {}
    kept: list[Finding | None] = list(findings)
    for index, finding in enumerate(findings):
        for cover in covering.get((finding.path, finding.line), ()):
            # a covering finding never hides a more severe one
            if finding.rule in covers[findings[cover].rule] and findings[cover].severity.rank >= finding.severity.rank:
                merged.setdefault(cover, []).append(finding.rule)
                kept[index] = None
                break
    for index, codes in merged.items():
        finding = findings[index]
        kept[index] = dataclasses.replace(
            finding, message=f"{finding.message} (official check: {', '.join(sorted(set(codes)))})"
        )
    return [finding for finding in kept if finding is not None]


class RuleRunner:
    """The built-in plugin that implements the checking hooks by running the selected rules."""

    @hookimpl
    def mlperf_audit_register_rules(self) -> list[type[Rule]]:
        return [RuleCrashed]

    @hookimpl
    def mlperf_audit_check_run(self, run: Run, context: EngineContext) -> list[Finding]:
        return run_rules(context, "run", run)

    @hookimpl
    def mlperf_audit_check_benchmark(self, result: BenchmarkResult, context: EngineContext) -> list[Finding]:
        return run_rules(context, "benchmark", result)

    @hookimpl
    def mlperf_audit_check_system(self, system: SystemDescription, context: EngineContext) -> list[Finding]:
        return run_rules(context, "system", system)

    @hookimpl
    def mlperf_audit_check_submission(self, submission: Submission, context: EngineContext) -> list[Finding]:
        return run_rules(context, "submission", submission)

    @hookimpl
    def mlperf_audit_check_tree(self, tree: Tree, context: EngineContext) -> list[Finding]:
        return run_rules(context, "tree", tree)

    @hookimpl
    def mlperf_audit_check_comparison(self, comparison: Comparison, context: EngineContext) -> list[Finding]:
        return run_rules(context, "comparison", comparison)
