"""The rule API: the `Rule` base class and the `CheckContext` every rule receives.

A rule pack is a module with a `mlperf_audit_register_rules` hook implementation that returns
rule classes; the engine instantiates the selected ones and calls `check` on every target of the
rule's scope. Rules read the parsed model and yield findings; they never write. A few read files
of the package that the model only lists (the REP rules read implementation files, through the
listed entries, never a path of their own making).

The context gives a rule the configuration in force, the tree being checked, the rules selected,
and two ways to share work: `memo` (computed once per target, shared by the rules of that target)
and `Channel` (small values one phase publishes for a later one: a rate per benchmark folder that
a tree rule compares across folders).
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Generic, Iterable, Literal, Mapping, Sequence

from typing_extensions import TypeVar

from .config import Config
from .model import (
    BenchmarkFolder,
    BenchmarkResult,
    Finding,
    Issue,
    Problem,
    Run,
    Severity,
    Submission,
    SystemDescription,
    Tree,
)
from .scores import Comparison

#: What a rule checks: "comparison" is a `Comparison` of two trees' scores (`audit --baseline`).
Scope = Literal["tree", "submission", "system", "benchmark", "run", "comparison"]
SCOPES: tuple[Scope, ...] = ("tree", "submission", "system", "benchmark", "run", "comparison")

CODE_PATTERN = re.compile(r"^[A-Z]{2,5}\d{3,4}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_HOW_TO_FIX = re.compile(r"^How to fix:\s*(.+?)(?:\n\s*\n|\Z)", re.MULTILINE | re.DOTALL)


T = TypeVar("T")
#: The type of what a rule checks: the model type of its scope (`RunRule` checks a `Run`). A bare `Rule`
#: (the engine's lists, a pack's RULES) is any rule: `Rule[Any]` by default (PEP 696), under strict mypy too.
TargetT = TypeVar("TargetT", default=Any)
#: `Rule.produced_by` of the findings the engine makes itself (a rule crashed).
ENGINE = "engine"


class Channel(Generic[T]):
    """A named, typed stream of values between phases: `context.publish(channel, value)` while
    checking one target, `context.received(channel)` in a later phase (the tree scope).

    Values must be plain data (numbers, strings, tuples, frozen dataclasses of those): with
    `--jobs`, benchmark folders are checked in worker processes, and what they publish travels
    back with their findings. The name must be unique among plugins: prefix it with yours.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Channel({self.name!r})"


@dataclass
class CheckContext:
    """What a rule (and every check hook) may use besides its target: the configuration in force,
    the tree, the registered and selected rules, the plugins' settings, lookups every pack needs, a
    memo per target, and channels between phases.

    The engine's own state (which rules run, in what order, what was published) lives on the
    engine's side (`EngineContext`), out of a rule's reach: a rule typed against this class cannot
    name it.
    """

    config: Config
    tree: Tree
    #: Every registered rule, by code, selected or not (read-only).
    catalogue: "Mapping[str, type[Rule]]" = field(default_factory=dict)
    #: The codes of every selected rule, those a phase produces included.
    selected_codes: frozenset[str] = frozenset()
    #: The resolved settings of each plugin that declares some (`settings_of`).
    _settings: "Mapping[str, Mapping[str, Any]]" = field(default_factory=dict, repr=False)
    #: What has been published, by channel name (the engine moves it between processes).
    _published: dict[str, list[Any]] = field(default_factory=dict, repr=False)
    _memo_target: Any = field(default=None, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    _reporters: "dict[str, type[Rule]] | None" = field(default=None, repr=False)
    #: The tree's lookups (`_lookups`), with the tree they were built from.
    _lookup_tree: Tree | None = field(default=None, repr=False)
    _lookups: "tuple[dict[tuple[str | None, str], SystemDescription], dict[str, Submission]] | None" = field(
        default=None, repr=False
    )

    def settings_of(self, plugin: str) -> Mapping[str, Any]:
        """The settings in force of `plugin` (a rule passes its own: `context.settings_of(self.plugin)`):
        each declared setting, as configured in `[tool.mlperf-audit.plugins.<plugin>]` or its default."""
        try:
            return self._settings[plugin]
        except KeyError:
            raise LookupError(f"plugin {plugin!r} declares no settings (hook mlperf_audit_plugin_settings)") from None

    @property
    def ruleset(self) -> str:
        return self.config.ruleset

    @property
    def version(self) -> str:
        """The round of the ruleset in force, e.g. "4.1.0" for "training-4.1.0"."""
        return self.config.ruleset.split("-", 1)[1]

    def is_selected(self, code: str) -> bool:
        """Whether the rule `code` is in force (selected and applicable to the ruleset)."""
        return code in self.selected_codes

    def severity_of(self, code: str) -> Severity | None:
        rule = self.catalogue.get(code)
        return rule.severity if rule is not None else None

    def reporter(self, problem: Problem | str) -> "type[Rule] | None":
        """The registered rule that reports issues of `problem` (an `IssueRule`), or None."""
        if self._reporters is None:
            self._reporters = {
                str(rule.problem): rule for rule in self.catalogue.values() if issubclass(rule, IssueRule)
            }
        return self._reporters.get(str(problem))

    def error_codes(self, issues: Iterable[Issue]) -> list[str]:
        """The codes of the registered rules that report any of `issues` as an error, sorted: what
        makes a log unreadable to the official tools (whether or not the rule is selected)."""
        codes = set()
        for issue in issues:
            rule = self.reporter(issue.problem)
            if rule is not None and rule.severity is Severity.ERROR:
                codes.add(rule.code)
        return sorted(codes)

    def system_description(self, submitter: str | None, system: str | None) -> SystemDescription | None:
        """The description of `system` in the (first) submission named `submitter`."""
        return None if system is None else self._tree_lookups()[0].get((submitter, system))

    def submission_of(self, folder: BenchmarkFolder) -> Submission | None:
        """The (first) submission that holds a benchmark folder at `folder`'s path."""
        return self._tree_lookups()[1].get(folder.path)

    def _tree_lookups(self) -> "tuple[dict[tuple[str | None, str], SystemDescription], dict[str, Submission]]":
        """Dictionaries built once per tree: rules ask for every result, and a search of the whole tree
        for each made a repository of 400 submitters cost 5.4x one of 100."""
        if self._lookups is None or self._lookup_tree is not self.tree:
            systems: dict[tuple[str | None, str], SystemDescription] = {}
            submissions: dict[str, Submission] = {}
            named: set[str | None] = set()
            for submission in self.tree.submissions:
                for folder in submission.benchmarks:
                    submissions.setdefault(folder.path, submission)
                if (submission.name or None) in named:
                    continue  # the first submission of a name answers for it, as a search would
                named.add(submission.name or None)
                for description in submission.systems:
                    systems.setdefault((submission.name or None, description.name), description)
            self._lookup_tree, self._lookups = self.tree, (systems, submissions)
        return self._lookups

    def division_of(self, result: BenchmarkResult) -> str | None:
        """The division from the system description, else from the logs (as a best guess)."""
        description = self.system_description(result.submitter, result.system)
        if description is not None and description.division in ("closed", "open"):
            return description.division
        for run in result.runs:
            value = run.value("submission_division")
            if value in ("closed", "open"):
                return str(value)
        return None

    def memo(self, target: Any, name: str, compute: Callable[[], T]) -> T:
        """Computes `name` once per target and shares it between rules; only the latest target is kept."""
        if self._memo_target is not target:
            self._memo_target, self._memo = target, {}
        if name not in self._memo:
            self._memo[name] = compute()
        value: T = self._memo[name]
        return value

    def publish(self, channel: Channel[T], value: T) -> None:
        """Keeps `value` for rules of a later phase (see `Channel`)."""
        self._published.setdefault(channel.name, []).append(value)

    def received(self, channel: Channel[T]) -> list[T]:
        """Everything published on `channel` so far, in folder order."""
        return list(self._published.get(channel.name, ()))


@dataclass
class EngineContext(CheckContext):
    """The context as the engine holds it: what a rule may use, and the engine's own state. Not part of
    the public API (`mlperf_audit.__all__` leaves it out): a rule or hook receives it typed as a
    `CheckContext`, and core plugins that filter findings read no more than that either."""

    #: The selected rules that check targets (`produced_by` rules are not instantiated), by scope.
    rules: "dict[Scope, list[Rule]]" = field(default_factory=dict)
    #: The per-scope execution plans, made on first use.
    plans: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def channels(self) -> dict[str, list[Any]]:
        """What has been published, by channel name: the engine moves it between processes."""
        return self._published


class RuleDefinitionError(Exception):
    """A rule class is missing metadata or documentation (a plugin error: exit code 2)."""


class Rule(Generic[TargetT]):
    """Base class of every rule; subclasses set the class attributes and implement `check`.

    Derive from the base of the rule's scope (`RunRule`, `BenchmarkRule`, `SystemRule`,
    `SubmissionRule`, `TreeRule`, `ComparisonRule`): it sets `scope` and types `check`'s target. A
    direct subclass of `Rule` that sets `scope` itself works too (its target is untyped).
    """

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
    #: Codes of findings that a finding of this rule follows from when both are about the same file,
    #: or one lies in the folder the other is about (a broken log line, say, that makes a record
    #: missing; a misnamed folder that every log in it then contradicts). Both are reported; the text report shows this one folded under its cause
    #: and the JSON report links them (`caused_by`).
    follows_from: ClassVar[frozenset[str]] = frozenset()
    #: Set by the plugin host: the plugin that registered the rule.
    plugin: ClassVar[str] = ""
    #: Rules generated by the hundred from one source (the official compliance rules) share a
    #: group: the engine calls `check_group` once per target for the group's selected rules, where
    #: a call of `check` per rule would cost more than the checking itself.
    group: ClassVar[str | None] = None
    #: Where the rule's findings are made when not by `check` (which it then leaves out): a
    #: phase that needs every other finding first, named for `explain` and `rules --json`:
    #: "engine" (a rule crashed) or a hook such as "mlperf_audit_modify_findings".
    produced_by: ClassVar[str | None] = None

    def check(self, target: TargetT, context: "CheckContext") -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def check_group(cls, rules: Sequence["Rule"], target: Any, context: "CheckContext") -> Iterable[Finding]:
        """The findings of every rule in `rules` (the selected rules of one group, in order)."""
        return [finding for rule in rules for finding in rule.check(target, context)]

    def finding(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        severity: Severity | None = None,
        related: Sequence[tuple[str, int | None]] = (),
    ) -> Finding:
        return Finding(
            rule=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            path=path,
            line=line,
            hint=hint if hint is not None else self.fix_hint(),
            related=tuple(related),
        )

    @classmethod
    def fix_hint(cls) -> str | None:
        return cls.hint or _hint_of(cls.__doc__ or "")

    @classmethod
    def doc(cls) -> str:
        return _cleaned(cls.__doc__ or "")

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
            "produced_by": cls.produced_by,
            "follows_from": sorted(cls.follows_from),
            "doc": cls.doc(),
        }


@functools.cache
def _cleaned(docstring: str) -> str:
    return inspect.cleandoc(docstring)


@functools.cache
def _hint_of(docstring: str) -> str | None:
    """The 'How to fix:' paragraph of a docstring (every finding without a hint of its own quotes it)."""
    match = _HOW_TO_FIX.search(_cleaned(docstring))
    if not match:
        return None
    text = " ".join(match.group(1).split())
    return text[:1].upper() + text[1:]


class RunRule(Rule[Run]):
    """A rule that checks one result file (one training run): `check(run, context)`."""

    scope: ClassVar[Scope] = "run"


class BenchmarkRule(Rule[BenchmarkResult]):
    """A rule that checks one benchmark folder with all its parsed runs: `check(result, context)`."""

    scope: ClassVar[Scope] = "benchmark"


class SystemRule(Rule[SystemDescription]):
    """A rule that checks one system description: `check(system, context)`."""

    scope: ClassVar[Scope] = "system"


class SubmissionRule(Rule[Submission]):
    """A rule that checks one submitter's folder (not its logs): `check(submission, context)`."""

    scope: ClassVar[Scope] = "submission"


class TreeRule(Rule[Tree]):
    """A rule that checks the whole PATH at once, after every other target: `check(tree, context)`."""

    scope: ClassVar[Scope] = "tree"


class ComparisonRule(Rule[Comparison]):
    """A rule that checks PATH's scores against a baseline's (`audit --baseline`): `check(comparison, context)`."""

    scope: ClassVar[Scope] = "comparison"


#: The base of each scope, whose `check` takes the scope's model type.
SCOPED_BASES: tuple[type[Rule[Any]], ...] = (
    RunRule,
    BenchmarkRule,
    SystemRule,
    SubmissionRule,
    TreeRule,
    ComparisonRule,
)


class IssueRule(Rule[Any]):
    """Reports the issues of its `problem` that the parser or discovery attached to a target."""

    #: The kind of problem this rule reports; one rule per problem.
    problem: ClassVar[Problem]

    def check(self, target: Any, context: "CheckContext") -> Iterable[Finding]:
        issues: tuple[Issue, ...] = getattr(target, "issues", ())
        for issue in issues:
            if issue.problem == self.problem:
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
        raise RuleDefinitionError(f"rule {label}: code {rule.code!r} is not a prefix of 2-5 capitals and 3 or 4 digits")
    if not NAME_PATTERN.match(rule.name):
        raise RuleDefinitionError(f"rule {label}: name {rule.name!r} is not kebab-case")
    if not isinstance(rule.summary, str) or not rule.summary.strip() or "\n" in rule.summary:
        raise RuleDefinitionError(f"rule {label}: summary must be one non-empty line")
    if not isinstance(rule.severity, Severity):
        raise RuleDefinitionError(f"rule {label}: severity must be a Severity")
    if rule.scope not in SCOPES:
        raise RuleDefinitionError(f"rule {label}: scope {rule.scope!r} is not one of {', '.join(SCOPES)}")
    for base in SCOPED_BASES:
        if issubclass(rule, base) and rule.scope != base.scope:
            raise RuleDefinitionError(
                f"rule {label} ({rule.code}) derives from {base.__name__} (scope {base.scope!r}) "
                f"but sets scope {rule.scope!r}: derive from the base of its scope"
            )
    if not rule.doc():
        raise RuleDefinitionError(f"rule {label} ({rule.code}) has no docstring: `explain` needs one")
    if not rule.fix_hint():
        raise RuleDefinitionError(f"rule {label} ({rule.code}) has no hint and no 'How to fix:' paragraph")
    follows_from: object = getattr(rule, "follows_from", frozenset())
    if not isinstance(follows_from, frozenset) or not all(
        isinstance(code, str) and CODE_PATTERN.match(code) for code in follows_from
    ):
        raise RuleDefinitionError(f"rule {label} ({rule.code}): follows_from must be a frozenset of rule codes")
    if rule.produced_by is not None:
        if rule.check is not Rule.check:
            raise RuleDefinitionError(
                f"rule {label} ({rule.code}) is produced by {rule.produced_by!r} and implements check(): one of the two"
            )
    elif rule.check is Rule.check:
        raise RuleDefinitionError(
            f"rule {label} ({rule.code}) does not implement check() "
            "and names no phase that produces its findings (produced_by)"
        )
    if issubclass(rule, IssueRule) and not isinstance(getattr(rule, "problem", None), Problem):
        raise RuleDefinitionError(f"rule {label} ({rule.code}) is an IssueRule without a Problem to report")
