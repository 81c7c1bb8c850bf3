"""Findings assembly: the submitter, system and benchmark added to what a hook returned, and the problems
reading noticed that no rule reports."""

from __future__ import annotations

import dataclasses
from typing import Iterable

from ..model import (
    Finding,
    Issue,
    Problem,
    Tree,
)
from ..rule import EngineContext


def with_context(
    findings: Iterable[Finding], submitter: str | None, system: str | None, benchmark: str | None
) -> list[Finding]:
    result = []
    for finding in findings:
        if (
            (finding.submitter is None and submitter)
            or (finding.system is None and system)
            or (finding.benchmark is None and benchmark)
        ):
            finding = dataclasses.replace(
                finding,
                submitter=finding.submitter or submitter or None,
                system=finding.system or system,
                benchmark=finding.benchmark or benchmark,
            )
        result.append(finding)
    return result


def locate(tree: Tree, path: str | None) -> tuple[str | None, str | None, str | None]:
    """The submitter, system and benchmark that a path inside the tree belongs to."""
    if path is None:
        return None, None, None
    for folder in tree.benchmark_folders:
        if path == folder.path or path.startswith(folder.path + "/"):
            return folder.submitter, folder.system, folder.benchmark
    for submission in tree.submissions:
        if submission.name and (submission.path == "." or path.startswith(submission.path + "/")):
            return submission.name, None, None
    return None, None, None


def flatten(results: Iterable[list[Finding] | None]) -> list[Finding]:
    return [finding for result in results if result for finding in result]


def count_unreported(issues: Iterable[Issue], context: EngineContext, counts: dict[str, int]) -> None:
    for issue in issues:
        if context.reporter(issue.problem) is None:
            counts[str(issue.problem)] = counts.get(str(issue.problem), 0) + 1


#: What a moment's failure to read (a network mount, too many open files) can cause.
_TRANSIENT = frozenset({Problem.UNREADABLE, Problem.UNREADABLE_FOLDER})


def any_unreadable(issues: Iterable[Issue]) -> bool:
    return any(issue.problem in _TRANSIENT for issue in issues)
