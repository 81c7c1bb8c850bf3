"""The report: findings plus everything a reader needs to trust them (versions, target, config)."""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import os
import posixpath
from dataclasses import dataclass
from typing import Any

from ._version import __version__
from .config import Config
from .model import Finding, Severity, Tree
from .reading.evidence import Quote
from .rule import ENGINE, Rule
from .safety import visible, visible_data
from .scores import BenchmarkScore

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PluginInfo:
    name: str
    module: str
    distribution: str
    version: str
    builtin: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "builtin": self.builtin,
        }


def mlperf_logging_version() -> str:
    try:
        return importlib.metadata.version("mlperf-logging")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


@dataclass(frozen=True)
class TargetSummary:
    path: str
    kind: str
    submissions: int
    systems: int
    benchmark_folders: int
    result_files: int

    @classmethod
    def of(cls, path: str, tree: Tree) -> "TargetSummary":
        return cls(
            path=path,
            kind=tree.kind.value,
            submissions=sum(1 for s in tree.submissions if s.name),
            systems=len({(s.name, d) for s in tree.submissions for d in s.system_dirs}),
            benchmark_folders=len(tree.benchmark_folders),
            result_files=tree.result_file_count,
        )

    def describe(self) -> str:
        parts = []
        if self.submissions:
            parts.append(f"{self.submissions} submitter{'s' if self.submissions != 1 else ''}")
        if self.systems:
            parts.append(f"{self.systems} system{'s' if self.systems != 1 else ''}")
        if self.benchmark_folders:
            parts.append(f"{self.benchmark_folders} benchmark folder{'s' if self.benchmark_folders != 1 else ''}")
        parts.append(f"{self.result_files} result file{'s' if self.result_files != 1 else ''}")
        return f"{self.kind}: {', '.join(parts)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "submissions": self.submissions,
            "systems": self.systems,
            "benchmark_folders": self.benchmark_folders,
            "result_files": self.result_files,
        }


_FINDING_TEXT = ("rule", "name", "message", "path", "submitter", "system", "benchmark", "hint", "waived_by")


def shown(finding: Finding) -> Finding:
    """`finding` with every text `visible` (the same object when nothing needed escaping). Its
    text quotes the package (file names, log keys and values), and data never adds a line."""
    changes: dict[str, Any] = {}
    for name in _FINDING_TEXT:
        value = getattr(finding, name)
        if isinstance(value, str) and (escaped := visible(value)) != value:
            changes[name] = escaped
    related = tuple((visible(path) if isinstance(path, str) else path, line) for path, line in finding.related)
    if related != finding.related:
        changes["related"] = related
    return dataclasses.replace(finding, **changes) if changes else finding


@dataclass(frozen=True)
class Report:
    target: TargetSummary
    config: Config
    plugins: tuple[PluginInfo, ...]
    findings: tuple[Finding, ...]
    tool_version: str = __version__
    mlperf_logging: str = ""
    rules: tuple[type[Rule], ...] = ()  # the registered rule classes, for formats that describe rules
    checked: tuple[tuple[str, str], ...] = ()  # (kind, path) of every run and benchmark folder checked
    processes: int = 1  # how many processes checked benchmark folders
    scores: tuple[BenchmarkScore, ...] = ()  # every benchmark folder's score, in folder order (`check --score`)
    #: The lines the findings point at, quoted (only for a format that asks: `Format.quotes`).
    evidence: tuple[Quote, ...] = ()

    def __post_init__(self) -> None:
        # Done once here, so that every format, a plugin's included, receives findings that cannot
        # move the cursor or start a line; each format still escapes its own syntax.
        # (A finding's fingerprint is of what it shows: a baseline written from a report matches
        # the engine's findings unless their text needed escaping, which then shows them again.)
        object.__setattr__(self, "findings", tuple(shown(f) for f in self.findings))
        object.__setattr__(self, "target", dataclasses.replace(self.target, path=visible(self.target.path)))
        object.__setattr__(self, "checked", tuple((kind, visible(path)) for kind, path in self.checked))
        object.__setattr__(
            self, "evidence", tuple(Quote(visible(q.path), q.line, visible(q.text)) for q in self.evidence)
        )
        object.__setattr__(
            self, "config", dataclasses.replace(self.config, notes=tuple(visible(note) for note in self.config.notes))
        )

    def quote(self, path: str | None, line: int | None) -> str | None:
        """The line `line` of `path` as the package holds it (shown `visible`), if it was quoted."""
        return self._quotes.get((path, line)) if path is not None and line is not None else None

    @functools.cached_property
    def _quotes(self) -> dict[tuple[str, int], str]:
        return {(quote.path, quote.line): quote.text for quote in self.evidence}

    def rule(self, code: str) -> type[Rule] | None:
        return self._rules_by_code.get(code)

    @functools.cached_property
    def _rules_by_code(self) -> dict[str, type[Rule]]:
        return {rule.code: rule for rule in reversed(self.rules)}  # the first of a code, as before

    @functools.cached_property
    def engine_codes(self) -> frozenset[str]:
        """Codes of the findings the engine makes itself: a rule crashed (exit code 2)."""
        return frozenset(r.code for r in self.rules if r.produced_by == ENGINE)

    def repository_path(self, path: str | None) -> str | None:
        """A finding's path relative to the current directory (where a CI job runs), '/' separators;
        relative to the checked PATH when PATH lies outside the current directory."""
        if path is None:
            return None
        base = self.target.path.replace(os.sep, "/")
        if self.target.kind == "log file":
            base = posixpath.dirname(base) or "."
        joined = posixpath.normpath(posixpath.join(base, path))
        if posixpath.isabs(joined):
            relative = os.path.relpath(joined, os.getcwd()).replace(os.sep, "/")
            return path if relative.startswith("..") else relative
        return joined

    @property
    def ruleset(self) -> str:
        return self.config.ruleset

    @property
    def summary(self) -> dict[str, int]:
        counts = {severity.value: 0 for severity in Severity}
        for finding in self.findings:
            if not finding.waived_by:
                counts[finding.severity.value] += 1
        counts["waived"] = sum(1 for f in self.findings if f.waived_by)
        return counts

    @property
    def exit_code(self) -> int:
        if any(f.rule in self.engine_codes for f in self.findings):  # a rule crashed: the check is incomplete
            return 2
        return 1 if any(self.config.fails(f.severity) and not f.waived_by for f in self.findings) else 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON report, every string `visible` (configuration and plugin names included)."""
        return visible_data(
            {
                "schema_version": SCHEMA_VERSION,
                "tool": {"name": "mlperf-audit", "version": self.tool_version},
                "mlperf_logging": {"version": self.mlperf_logging},
                "ruleset": self.ruleset,
                "target": self.target.to_dict(),
                "config": self.config.to_dict(),
                "plugins": [plugin.to_dict() for plugin in self.plugins],
                "findings": [finding.to_dict() for finding in self.findings],
                "summary": self.summary,
                "exit_code": self.exit_code,
                **({"scores": [score.to_dict() for score in self.scores]} if self.scores else {}),
            }
        )
