"""One cause, one finding: links each finding to the finding it follows from.

A rule declares what its findings follow from (`Rule.follows_from`: rule codes). After the check,
a finding of such a rule is linked (`Finding.caused_by`, the cause's fingerprint) to the first
finding of one of those codes in the same submitter, system and benchmark that is about the same
file, or about a file in the folder the finding is about, or about the folder that holds the
finding's file; else to the first finding of one of those codes about the whole checked PATH (no
submitter, system, benchmark or path: the round the check took, say), which holds every finding.
Links lead to the root cause: a missing record that follows from a broken line,
and a folder verdict that follows from the missing record, both point at the broken line. Nothing
is dropped: every finding is still counted and reported; the text format folds the linked ones
under their cause.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from ..model import Finding
from ..rule import Rule


def _place(finding: Finding) -> tuple[str | None, str | None, str | None]:
    return (finding.submitter, finding.system, finding.benchmark)


def _together(one: str, other: str) -> bool:
    """Whether two findings' paths are the same file or folder, or one lies in the other ("." is
    the checked folder itself, which holds every other path)."""
    return (
        one == other
        or "." in (one, other)
        or other.startswith(one.rstrip("/") + "/")
        or one.startswith(other.rstrip("/") + "/")
    )


def _whole(finding: Finding) -> bool:
    """Whether a finding is about the whole checked PATH rather than a part of it."""
    return finding.path in (None, ".") and _place(finding) == (None, None, None)


def link(findings: Sequence[Finding], rules: Iterable[type[Rule]]) -> list[Finding]:
    """`findings`, in the same order, with `caused_by` set on each that follows from another."""
    follows: dict[str, frozenset[str]] = {}
    for rule in rules:
        if rule.follows_from and rule.code not in follows:  # the first rule of a code, as the report's
            follows[rule.code] = rule.follows_from
    if not follows:
        return list(findings)
    wanted = frozenset().union(*follows.values())
    candidates: dict[tuple[str | None, str | None, str | None], list[int]] = {}
    whole: list[int] = []
    for index, finding in enumerate(findings):
        if finding.rule in wanted and _whole(finding):
            whole.append(index)
        elif finding.rule in wanted and finding.path is not None:
            candidates.setdefault(_place(finding), []).append(index)
    direct: dict[int, int] = {}
    for index, finding in enumerate(findings):
        codes = follows.get(finding.rule)
        if not codes:
            continue
        if finding.path is not None:
            for other in candidates.get(_place(finding), ()):
                cause = findings[other]
                if other != index and cause.rule in codes and _together(finding.path, cause.path or ""):
                    direct[index] = other
                    break
        if index not in direct:
            cause_of_all = next((other for other in whole if other != index and findings[other].rule in codes), None)
            if cause_of_all is not None:
                direct[index] = cause_of_all
    if not direct:
        return list(findings)
    linked = list(findings)
    for index in direct:
        walked = [index]
        while walked[-1] in direct and direct[walked[-1]] not in walked:
            walked.append(direct[walked[-1]])
        root = walked[-1]
        if root in direct:  # two rules that follow from each other: the first of the loop is the cause
            root = min(walked[walked.index(direct[root]) :])
        if root != index:
            linked[index] = dataclasses.replace(findings[index], caused_by=findings[root].fingerprint)
    return linked
