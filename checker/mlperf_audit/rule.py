"""The rule base class: a code, a name, a summary, a severity, a scope and a documented docstring.

A rule pack is a module with a `mlperf_audit_register_rules` hook implementation that returns
rule classes; the engine instantiates the selected ones and calls `check` on every target of the
rule's scope. Rules never do I/O: they read the model and yield findings.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Literal

from .model import Finding, Issue, Severity

if TYPE_CHECKING:
    from .engine import CheckContext

Scope = Literal["tree", "submission", "system", "benchmark", "run"]
SCOPES: tuple[Scope, ...] = ("tree", "submission", "system", "benchmark", "run")

CODE_PATTERN = re.compile(r"^[A-Z]{2,5}\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_HOW_TO_FIX = re.compile(r"^How to fix:\s*(.+?)(?:\n\s*\n|\Z)", re.MULTILINE | re.DOTALL)


class RuleDefinitionError(Exception):
    """A rule class is missing metadata or documentation (a plugin error: exit code 2)."""


class Rule:
    """Base class of every rule; subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    severity: ClassVar[Severity]
    scope: ClassVar[Scope]
    #: Rulesets the rule applies to (e.g. {"training-4.1.0"}); None means every ruleset.
    rulesets: ClassVar[frozenset[str] | None] = None
    #: Default fix hint, used when a finding gives none; defaults to the doc's "How to fix:" paragraph.
    hint: ClassVar[str | None] = None
    #: True when an error of this rule makes the run non-compliant (olympic scoring tolerates one such run).
    fails_run: ClassVar[bool] = False
    #: Codes of findings that a finding of this rule replaces when both point at the same place
    #: (for example a clearer rule that reports what an official compliance check also reports).
    covers: ClassVar[frozenset[str]] = frozenset()
    #: Set by the plugin host: the plugin that registered the rule.
    plugin: ClassVar[str] = ""

    def check(self, target: Any, context: "CheckContext") -> Iterable[Finding]:
        raise NotImplementedError

    def finding(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        return Finding(
            rule=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            path=path,
            line=line,
            hint=hint if hint is not None else self.fix_hint(),
        )

    @classmethod
    def fix_hint(cls) -> str | None:
        if cls.hint:
            return cls.hint
        match = _HOW_TO_FIX.search(cls.doc())
        if not match:
            return None
        text = " ".join(match.group(1).split())
        return text[:1].upper() + text[1:]

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def applies_to(cls, ruleset: str) -> bool:
        return cls.rulesets is None or ruleset in cls.rulesets

    @classmethod
    def describe(cls) -> dict[str, Any]:
        return {
            "code": cls.code,
            "name": cls.name,
            "summary": cls.summary,
            "severity": cls.severity.value,
            "scope": cls.scope,
            "plugin": cls.plugin,
            "rulesets": sorted(cls.rulesets) if cls.rulesets is not None else None,
            "doc": cls.doc(),
        }


class IssueRule(Rule):
    """Reports the issues of its own code that the parser or discovery attached to a target."""

    def check(self, target: Any, context: "CheckContext") -> Iterable[Finding]:
        issues: tuple[Issue, ...] = getattr(target, "issues", ())
        for issue in issues:
            if issue.code == self.code:
                yield self.finding(issue.message, path=issue.path, line=issue.line, hint=issue.hint)


def validate_rule_class(rule: Any) -> None:
    """Raises RuleDefinitionError unless `rule` is a complete, documented Rule subclass."""
    if not (inspect.isclass(rule) and issubclass(rule, Rule)):
        raise RuleDefinitionError(f"{rule!r} is not a subclass of mlperf_audit.Rule")
    label = rule.__qualname__
    for attribute in ("code", "name", "summary", "severity", "scope"):
        if not hasattr(rule, attribute):
            raise RuleDefinitionError(f"rule {label} has no {attribute!r}")
    if not CODE_PATTERN.match(rule.code):
        raise RuleDefinitionError(f"rule {label}: code {rule.code!r} is not a prefix of 2-5 capitals and 3 digits")
    if not NAME_PATTERN.match(rule.name):
        raise RuleDefinitionError(f"rule {label}: name {rule.name!r} is not kebab-case")
    if not isinstance(rule.summary, str) or not rule.summary.strip() or "\n" in rule.summary:
        raise RuleDefinitionError(f"rule {label}: summary must be one non-empty line")
    if not isinstance(rule.severity, Severity):
        raise RuleDefinitionError(f"rule {label}: severity must be a Severity")
    if rule.scope not in SCOPES:
        raise RuleDefinitionError(f"rule {label}: scope {rule.scope!r} is not one of {', '.join(SCOPES)}")
    if not rule.doc():
        raise RuleDefinitionError(f"rule {label} ({rule.code}) has no docstring: `explain` needs one")
    if not rule.fix_hint():
        raise RuleDefinitionError(f"rule {label} ({rule.code}) has no hint and no 'How to fix:' paragraph")
    if rule.check is Rule.check:
        raise RuleDefinitionError(f"rule {label} ({rule.code}) does not implement check()")
