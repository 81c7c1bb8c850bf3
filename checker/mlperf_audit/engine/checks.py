"""A whole check, with the scores when asked: walks the discovered tree once, parses each benchmark folder's logs once,
asks the plugins to check every target, and reports a rule that crashed.

Order: for each submission, its system descriptions, then each benchmark folder (every run, then
the folder as a whole), then the submission; loose logs; the whole tree last. Parsed runs are
dropped once their folder is checked, so memory is bounded by the largest folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config import Config
from ..errors import PluginError
from ..model import (
    Finding,
    Tree,
)
from ..reading.parser import parse_log
from ..scores import BenchmarkScore, Comparison
from .context import Host, new_context
from .crashes import INTERNAL_RULE
from .findings import any_unreadable, count_unreported, flatten, locate, with_context
from .folders import Collect, folder_work
from .loading import parse_cache
from .selection import select_rules
from .workers import each_folder, files_of


@dataclass
class CheckOutcome:
    findings: list[Finding]
    runs_checked: int
    checked: list[tuple[str, str]] = field(default_factory=list)  # (kind, path): every run and folder
    processes: frozenset[int] = frozenset()  # the processes that checked benchmark folders
    parallel_fallback: str | None = None  # why one process did the work although more were asked for
    scores: list[BenchmarkScore] = field(default_factory=list)  # in folder order, when asked for
    collected: dict[str, Any] = field(default_factory=dict)  # by benchmark folder path, when asked for
    #: Problems the parser or discovery noticed that no registered rule reports (a plugin disabled), by kind.
    unreported: dict[str, int] = field(default_factory=dict)
    unreadable: bool = False  # a file or folder could not be read: perhaps for a moment (not a verdict to keep)
    kept: bool = False  # read from the cache of whole checks, not checked now
    unscored: bool = False  # a scorer failed where the scores were computed only to be kept (not kept)


def run_checks(
    tree: Tree,
    host: Host,
    config: Config,
    progress: Any = None,
    jobs: int = 1,
    *,
    score: bool = False,
    collect: Collect | None = None,
    keep_scores: bool = False,
) -> CheckOutcome:
    """Checks everything under the tree and returns the sorted findings; with `score`, also the score
    of every benchmark folder, and with `collect`, what it returns for each, from the same parse.
    `keep_scores` scores too, for the outcome to be kept: a scorer that fails then leaves the
    check as it is and the outcome `unscored`.

    Benchmark folders are checked in `jobs` processes; the findings are the same whatever `jobs` is.
    `progress(done, total)` is called after each benchmark folder (result files done of all)."""
    context = new_context(tree, host, config, select_rules(host.rules, config))
    hook = host.hook
    unreported: dict[str, int] = {}
    count_unreported(tree.issues, context, unreported)
    for submission in tree.submissions:
        for system in submission.systems:
            count_unreported(system.issues, context, unreported)
    findings: list[Finding] = []
    runs_checked = 0
    checked: list[tuple[str, str]] = []

    for submission in tree.submissions:
        submitter = submission.name or None
        for system in submission.systems:
            found = flatten(hook.mlperf_audit_check_system(system=system, context=context))
            findings += with_context(found, submitter, system.name, None)
    work = folder_work(score, collect, keep_scores)
    in_folders = sum(files_of(folder) for folder in tree.benchmark_folders)
    folder_progress = None if progress is None else lambda done, _: progress(done, tree.result_file_count)
    folder_run = each_folder(list(tree.benchmark_folders), host, context, jobs, work, folder_progress)
    scores: list[BenchmarkScore] = []
    collected: dict[str, Any] = {}
    unreadable = any_unreadable(tree.issues) or any(
        any_unreadable(system.issues) for submission in tree.submissions for system in submission.systems
    )
    unscored = False
    for folder, outcome in zip(tree.benchmark_folders, folder_run.outputs):
        unreadable = unreadable or outcome.unreadable
        unscored = unscored or outcome.unscored
        findings += outcome.findings
        runs_checked += outcome.runs
        checked += outcome.checked
        if outcome.score is not None:
            scores.append(outcome.score)
        if collect is not None:
            collected[folder.path] = outcome.collected
        for problem, count in outcome.unreported.items():
            unreported[problem] = unreported.get(problem, 0) + count
        for key, values in outcome.published.items():
            context.channels.setdefault(key, []).extend(values)
    if progress is not None:
        progress(in_folders, tree.result_file_count)
    for submission in tree.submissions:
        found = flatten(hook.mlperf_audit_check_submission(submission=submission, context=context))
        findings += with_context(found, submission.name or None, None, None)
    for number, entry in enumerate(tree.loose_logs, start=1):
        run = parse_log(entry.fs_path, entry.path, cache=parse_cache(config.cache_dir))
        if progress is not None:
            progress(in_folders + number, tree.result_file_count)
        count_unreported(run.issues, context, unreported)
        unreadable = unreadable or any_unreadable(run.issues)
        runs_checked += 1
        checked.append(("run", run.path))
        findings += flatten(hook.mlperf_audit_check_run(run=run, context=context))
    for finding in flatten(hook.mlperf_audit_check_tree(tree=tree, context=context)):
        findings += with_context([finding], *locate(tree, finding.path))

    known = {rule.code for rule in host.rules} | {INTERNAL_RULE}
    unknown = sorted({f.rule for f in findings} - known)
    if unknown:
        raise PluginError(f"a plugin returned findings with unregistered rule code(s): {', '.join(unknown)}")
    findings = list(dict.fromkeys(findings))  # the same finding twice (a shared file seen per folder) is noise
    hook.mlperf_audit_modify_findings(findings=findings, context=context)
    findings.sort(key=Finding.sort_key)
    return CheckOutcome(
        findings,
        runs_checked,
        checked,
        folder_run.processes,
        folder_run.fallback,
        scores,
        collected,
        unreported,
        unreadable,
        unscored=unscored,
    )


def check_comparison(comparison: Comparison, tree: Tree, host: Host, config: Config) -> list[Finding]:
    """The findings of the selected rules of scope "comparison" on two trees' scores, sorted."""
    context = new_context(tree, host, config, select_rules(host.rules, config))
    findings = flatten(host.hook.mlperf_audit_check_comparison(comparison=comparison, context=context))
    known = {rule.code for rule in host.rules}
    unknown = sorted({f.rule for f in findings} - known)
    if unknown:
        raise PluginError(f"a plugin returned findings with unregistered rule code(s): {', '.join(unknown)}")
    findings.sort(key=Finding.sort_key)
    return findings
