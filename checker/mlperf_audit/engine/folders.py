"""Checking one benchmark folder: its runs, then the folder, what its rules published, and its score in the
same pass. What a folder gives back is plain data, so that a worker process can return it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..model import (
    BenchmarkFolder,
    BenchmarkResult,
    Finding,
)
from ..reading.parser import collector_at_rest
from ..rule import EngineContext
from ..scores import BenchmarkScore
from .context import Host
from .findings import any_unreadable, count_unreported, flatten, with_context
from .loading import load_benchmark

#: What a command keeps of each parsed benchmark folder besides findings and score (plain data:
#: it travels back from worker processes), e.g. the report's convergence curves.
Collect = Callable[[BenchmarkResult], Any]


@dataclass
class FolderOutcome:
    """What checking one benchmark folder gives back (all a worker process returns)."""

    findings: list[Finding]
    runs: int
    checked: list[tuple[str, str]]
    published: dict[str, list[Any]]
    score: BenchmarkScore | None = None
    unscored: bool = False  # a scorer failed where the scores were computed only to be kept
    collected: Any = None
    unreported: dict[str, int] = field(default_factory=dict)
    unreadable: bool = False


def folder_work(
    score: bool, collect: Collect | None, keep_scores: bool = False
) -> Callable[[BenchmarkFolder, Any, EngineContext], FolderOutcome]:
    def work(folder: BenchmarkFolder, host: Host, context: EngineContext) -> FolderOutcome:
        return _check_folder(folder, host, context, score, collect, keep_scores)

    return work


def _check_folder(
    folder: BenchmarkFolder,
    host: Host,
    context: EngineContext,
    score: bool = False,
    collect: Collect | None = None,
    keep_scores: bool = False,
) -> FolderOutcome:
    # A folder's runs and what the rules derive from them are hundreds of thousands of objects
    # freed together when the folder is done: the cyclic collector would rescan them again and
    # again meanwhile (a twelfth of a round's check) and find nothing. What a rule leaves in a
    # cycle waits until the folder is done.
    with collector_at_rest():
        return _checked_folder(folder, host, context, score, collect, keep_scores)


def _checked_folder(
    folder: BenchmarkFolder,
    host: Host,
    context: EngineContext,
    score: bool,
    collect: Collect | None,
    keep_scores: bool,
) -> FolderOutcome:
    published_before = _published_mark(context)
    result = load_benchmark(folder, context.config)
    submitter = folder.submitter or None
    findings: list[Finding] = []
    for run in result.runs:
        found = flatten(host.hook.mlperf_audit_check_run(run=run, context=context))
        findings += with_context(found, submitter, folder.system, folder.benchmark)
    found = flatten(host.hook.mlperf_audit_check_benchmark(result=result, context=context))
    findings += with_context(found, submitter, folder.system, folder.benchmark)
    added = _published_since(context, published_before)  # published in folder order by run_checks
    checked = [("benchmark", folder.path)] + [("run", run.path) for run in result.runs]
    unreported: dict[str, int] = {}
    count_unreported((issue for run in result.runs for issue in run.issues), context, unreported)
    count_unreported(result.issues, context, unreported)
    unreadable = any_unreadable(issue for run in result.runs for issue in run.issues) or any_unreadable(result.issues)
    outcome = FolderOutcome(findings, len(result.runs), checked, added, unreported=unreported, unreadable=unreadable)
    if score or keep_scores:  # in the same pass: the parsed runs and what the rules memoised are at hand
        before = _published_mark(context)
        try:
            outcome.score = host.hook.mlperf_audit_score_benchmark(result=result, context=context)
        except Exception:
            if score:
                raise
            outcome.unscored = True  # scored only to be kept: the check stands, and is not kept
        finally:  # the check's publications are the rules' alone, scored or not
            _published_since(context, before)
    if collect is not None:
        outcome.collected = collect(result)
    return outcome


def _published_mark(context: EngineContext) -> dict[str, int]:
    return {key: len(values) for key, values in context.channels.items()}


def _published_since(context: EngineContext, mark: dict[str, int]) -> dict[str, list[Any]]:
    """What was published since `mark` (`_published_mark`), taken out of the context."""
    taken = {
        key: values[mark.get(key, 0) :] for key, values in context.channels.items() if len(values) > mark.get(key, 0)
    }
    for key in taken:
        del context.channels[key][mark.get(key, 0) :]
    return taken
