"""The engine: walks the discovered tree once, parses each benchmark folder's logs once, asks the
plugins to check every target, and reports a rule that crashed. The built-in `RuleRunner` plugin
runs the selected rules.

Order: for each submission, its system descriptions, then each benchmark folder (every run, then
the folder as a whole), then the submission; loose logs; the whole tree last. Parsed runs are
dropped once their folder is checked, so memory is bounded by the largest folder.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import json
import multiprocessing
import os
import signal
import time
import traceback
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from .cache import ParseCache
from .config import Config
from .errors import PluginError, SelectionError
from .hookspecs import hookimpl
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
    open_binary,
)
from .parser import collector_at_rest, parse_log
from .rule import ENGINE, SCOPES, EngineContext, Rule, Scope
from .scores import BenchmarkScore, Comparison
from .suggest import did_you_mean_rule


class Host(Protocol):
    """What the engine needs of the plugin host (`mlperf_audit.plugins.PluginHost`, which loads the
    plugins and registers the engine's own `RuleRunner`): the hook caller and the registered rules."""

    @property
    def hook(self) -> Any: ...

    @property
    def rules(self) -> list[type[Rule]]: ...

    def plugin_settings(self, config: Config) -> dict[str, Mapping[str, Any]]: ...


INTERNAL_RULE = "CHK001"
MAX_SCALING_JSON_BYTES = 1 << 16


def matches(rule: type[Rule], selector: str) -> bool:
    """Whether a selector of `--select`, `--ignore` or `mlperf-audit rules` names the rule: ALL, a
    code or a prefix of codes (`AUD`, `AUD00`, `AUD006`), or the rule's name."""
    return selector == "ALL" or rule.code.startswith(selector) or rule.name == selector


def check_selectors(rules: Sequence[type[Rule]], selectors: Sequence[str]) -> None:
    """Refuse a selector that names no rule, suggesting the closest codes or names."""
    for selector in selectors:
        if not any(matches(rule, selector) for rule in rules):
            hint = did_you_mean_rule(selector, [rule.code for rule in rules], [rule.name for rule in rules])
            raise SelectionError(
                f"unknown rule selector {selector!r}{hint}: not a code, prefix or name of any rule "
                "(`mlperf-audit rules` lists them)"
            )


def select_rules(rules: Sequence[type[Rule]], config: Config) -> list[type[Rule]]:
    """The rules in force: matched by `select`, not matched by `ignore`, applicable to the ruleset."""
    check_selectors(rules, config.select + config.ignore)
    return [
        rule
        for rule in rules
        if rule.applies_to(config.ruleset)
        and any(matches(rule, s) for s in config.select)
        and not any(matches(rule, s) for s in config.ignore)
    ]


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
            findings.append(_crash_finding(rule, target, error))
    return _merge_covered(findings, plan.covers) if plan.covers else findings


def new_context(tree: Tree, host: Host, config: Config, selected: Sequence[type[Rule]] = ()) -> EngineContext:
    """The context of one check (the `selected` rules instantiated by scope), or of scoring alone.
    Raises ConfigError when the configuration sets a plugin setting that no plugin declares."""
    context = EngineContext(
        config,
        tree,
        MappingProxyType({rule.code: rule for rule in host.rules}),
        frozenset(rule.code for rule in selected),
        host.plugin_settings(config),
        rules={scope: [] for scope in SCOPES},
    )
    for rule_class in selected:
        if rule_class.produced_by is None:
            context.rules[rule_class.scope].append(rule_class())
    return context


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


def _crash_finding(rule: Rule, target: Any, error: Exception) -> Finding:
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return Finding(
        rule=INTERNAL_RULE,
        name="rule-crashed",
        severity=Severity.ERROR,
        message=(
            f"rule {rule.code} ({rule.plugin}) crashed: {type(error).__name__}: {error} "
            f"[{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}]"
        ),
        path=getattr(target, "path", None),
        hint="This is a bug in the rule, not in the package: report it to the plugin's authors.",
    )


class RuleCrashed(Rule):
    """A rule raised an exception while checking a target.

    What it checks: nothing in the package. The engine reports this finding when a rule's code
    fails, so that one broken rule cannot hide the findings of the others.

    Why it matters: a rule that crashed said nothing about its target, so the check is
    incomplete; the run exits with code 2 (an internal or plugin error), whatever `--fail-on`
    says, and CI cannot mistake it for a pass.

    Example: `rule XYZ001 (my_plugin) crashed: KeyError: 'status' [my_rules.py:42]`.

    How to fix: report the message, which names the rule, its plugin and the failing line, to
    the plugin's authors. Until it is fixed, `--ignore CODE` switches the crashing rule off.
    """

    code = INTERNAL_RULE
    name = "rule-crashed"
    summary = "A rule raised an exception (an internal or plugin error)."
    severity = Severity.ERROR
    scope = "tree"
    produced_by = ENGINE


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


@functools.cache
def parse_cache(directory: str | None) -> ParseCache | None:
    """The cache of parsed files in `directory` (one per process, so hits are counted once)."""
    return ParseCache(directory) if directory else None


def load_benchmark(folder: BenchmarkFolder, config: Config | None = None) -> BenchmarkResult:
    """Parses every result file of a folder (or reads it from the cache that `config` names), and its scaling.json."""
    cache = parse_cache(config.cache_dir) if config is not None else None
    runs = tuple(
        parse_log(
            entry.fs_path,
            entry.path,
            submitter=folder.submitter,
            system=folder.system,
            benchmark=folder.benchmark,
            cache=cache,
        )
        for entry in folder.result_files
    )
    scaling: dict[str, Any] | None = None
    issues: list[Issue] = []
    for entry in folder.other_files:
        if entry.path.rsplit("/", 1)[-1] != "scaling.json":
            continue
        scaling, problem = _read_scaling(entry.fs_path)
        if problem:
            issues.append(
                Issue(
                    Problem.SCALING_JSON_INVALID,
                    problem,
                    entry.path,
                    hint='scaling.json must be {"scaling_factor": <number >= 1>}; delete it to let the checkers '
                    "recompute it.",
                )
            )
    return BenchmarkResult(folder, runs, scaling, tuple(issues))


def _read_scaling(path: Any) -> tuple[dict[str, Any] | None, str | None]:
    try:
        with open_binary(path) as stream:
            raw = stream.read(MAX_SCALING_JSON_BYTES + 1)
    except OSError as error:
        return None, f"cannot read scaling.json: {error.strerror or error}"
    if len(raw) > MAX_SCALING_JSON_BYTES:
        return None, "scaling.json is too large to be a scaling factor"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return None, f"scaling.json is not valid JSON: {getattr(error, 'msg', error)}"
    if not isinstance(data, dict):
        return None, "scaling.json is not a JSON object"
    return data, None  # its fields are checked against the schema by the rule that reports the problem


def _with_context(
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


def _locate(tree: Tree, path: str | None) -> tuple[str | None, str | None, str | None]:
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


def _flatten(results: Iterable[list[Finding] | None]) -> list[Finding]:
    return [finding for result in results if result for finding in result]


#: What a command keeps of each parsed benchmark folder besides findings and score (plain data:
#: it travels back from worker processes), e.g. the report's convergence curves.
Collect = Callable[[BenchmarkResult], Any]


def _score_folder(folder: BenchmarkFolder, host: Host, context: EngineContext) -> Any:
    return host.hook.mlperf_audit_score_benchmark(result=load_benchmark(folder, context.config), context=context)


def run_scores(
    tree: Tree, host: Host, config: Config, jobs: int = 1, progress: Progress | None = None
) -> list[BenchmarkScore]:
    """The score of every benchmark folder, in folder order (parsed once, nothing written), in `jobs` processes;
    `progress(done, total)` is called as result files are done."""
    context = new_context(tree, host, config)
    results = _each_folder(list(tree.benchmark_folders), host, context, jobs, _score_folder, progress)
    return [score for score in results.outputs if score is not None]


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


def _unreported(issues: Iterable[Issue], context: EngineContext, counts: dict[str, int]) -> None:
    for issue in issues:
        if context.reporter(issue.problem) is None:
            counts[str(issue.problem)] = counts.get(str(issue.problem), 0) + 1


#: What a moment's failure to read (a network mount, too many open files) can cause.
_TRANSIENT = frozenset({Problem.UNREADABLE, Problem.UNREADABLE_FOLDER})


def _unreadable(issues: Iterable[Issue]) -> bool:
    return any(issue.problem in _TRANSIENT for issue in issues)


def _folder_work(
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
        found = _flatten(host.hook.mlperf_audit_check_run(run=run, context=context))
        findings += _with_context(found, submitter, folder.system, folder.benchmark)
    found = _flatten(host.hook.mlperf_audit_check_benchmark(result=result, context=context))
    findings += _with_context(found, submitter, folder.system, folder.benchmark)
    added = _published_since(context, published_before)  # published in folder order by run_checks
    checked = [("benchmark", folder.path)] + [("run", run.path) for run in result.runs]
    unreported: dict[str, int] = {}
    _unreported((issue for run in result.runs for issue in run.issues), context, unreported)
    _unreported(result.issues, context, unreported)
    unreadable = _unreadable(issue for run in result.runs for issue in run.issues) or _unreadable(result.issues)
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


#: What a forked worker inherits: the host, the context, the folders, the work, the position of the
#: next folder nobody has claimed and the order of claims, largest first (set just before the pool
#: starts). Only an index goes to a worker
#: and only the work's plain results come back, so nothing a plugin or the model holds ever needs
#: to be picklable on the way in.
_WORKER: tuple[Any, EngineContext, list[BenchmarkFolder], Callable[..., Any], Any, list[int]] | None = None
#: Called with (result files done, of all) as folders are done (`_each_folder`).
Progress = Callable[[int, int], None]


def _claimed_folders(
    first: int | None, progress: Progress | None = None, others: int = 0
) -> tuple[int, list[tuple[int, Any]]]:
    """Does the `first`-largest folder, then claims the next unclaimed one until none is left: so the
    processes share the work however unequal the folders are (one bert folder of a round holds
    more records than a hundred others), the largest first, so that none is left to one process
    at the end."""
    assert _WORKER is not None
    host, context, folders, work, claimed, order = _WORKER
    done: list[tuple[int, Any]] = []
    position = first
    while True:
        if position is None:
            with claimed.get_lock():
                position = claimed.value
                claimed.value += 1
        if position >= len(order):
            return os.getpid(), done
        index = order[position]
        done.append((index, work(folders[index], host, context)))
        position = None
        if progress is not None:  # this process's view: every folder claimed but the `others` may work on
            _claims_done(progress, folders, order, claimed, others)


def _files(folder: BenchmarkFolder) -> int:
    return len(folder.result_files)


def _claims_done(
    progress: Progress, folders: list[BenchmarkFolder], order: list[int], claimed: Any, others: int
) -> None:
    """Reports as done the folders claimed before the last `others` (which other processes may still
    work on): an estimate, which the final count after the pool corrects."""
    with claimed.get_lock():
        claims = min(claimed.value, len(order))
    finished = order[: max(0, claims - others)]
    progress(sum(_files(folders[i]) for i in finished), sum(_files(folder) for folder in folders))


@dataclass
class FolderRun:
    """The outputs of the work on every folder, in folder order, and how they were computed."""

    outputs: list[Any]
    processes: frozenset[int]  # the process ids that did the work
    fallback: str | None = None  # why the work ran in one process although more were asked for


def parallel_fallback() -> str | None:
    """Why this platform checks in one process whatever --jobs says, or None."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return "this platform cannot fork worker processes; benchmark folders were checked in one process"
    return None


def _worker_signals() -> None:
    """In each forked worker: Ctrl-C (which a terminal sends to the whole process group) is the
    main process's to handle, which then stops the workers; SIGTERM ends a worker at once, whatever
    handler it inherited from the main process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


#: How long stopped workers get to end before they are killed.
STOP_GRACE_SECONDS = 2.0


def _stop_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Ends the pool's worker processes now, not after the work they claimed (the executor's own
    shutdown waits for it): SIGTERM, then SIGKILL for any still there after a grace period."""
    # A second Ctrl-C while the workers are stopped waits until they are: it must not leave one.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        _end_processes(pool)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _end_processes(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    # Python 3.14 has pool.terminate_workers(); up to 3.13 the processes are only reachable here.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
    pool.shutdown(wait=True, cancel_futures=True)


def _each_folder(
    folders: list[BenchmarkFolder],
    host: Host,
    context: EngineContext,
    jobs: int,
    work: Callable[[BenchmarkFolder, Any, EngineContext], Any],
    progress: Progress | None = None,
) -> FolderRun:
    """`work(folder, host, context)` for each folder, in folder order: here, or here and in `jobs - 1`
    forked processes (which inherit the host, context and folders, so plugins need not be picklable).
    This process works too: `jobs` processes on `jobs` cores, not one more idling beside them (and
    holding its share of memory). `progress(done, total)` counts result files, in this process."""
    global _WORKER
    fallback = parallel_fallback() if jobs > 1 else None
    if jobs <= 1 or len(folders) < 2 or fallback:
        results_here = []
        total, files_done = sum(_files(folder) for folder in folders), 0
        for folder in folders:
            results_here.append(work(folder, host, context))
            files_done += _files(folder)
            if progress is not None:
                progress(files_done, total)
        return FolderRun(results_here, frozenset({os.getpid()}), fallback)
    fork = multiprocessing.get_context("fork")
    workers = min(jobs, len(folders)) - 1
    # each worker starts with a folder of its own, so every process does some of the work
    order = sorted(range(len(folders)), key=lambda i: -sum(entry.size_bytes for entry in folders[i].result_files))
    _WORKER = (host, context, folders, work, fork.Value("q", workers + 1), order)
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=fork, initializer=_worker_signals)
    try:
        futures = [pool.submit(_claimed_folders, index + 1) for index in range(workers)]
        results = [_claimed_folders(0, progress, workers)] + [future.result() for future in futures]
    except BaseException:  # Ctrl-C, SIGTERM or a failure: no worker outlives this process's work
        _stop_workers(pool)
        raise
    else:
        pool.shutdown()
    finally:
        _WORKER = None
    outputs: list[Any] = [None] * len(folders)
    for _, done in results:
        for index, output in done:
            outputs[index] = output
    return FolderRun(outputs, frozenset(pid for pid, done in results if done))


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
    _unreported(tree.issues, context, unreported)
    for submission in tree.submissions:
        for system in submission.systems:
            _unreported(system.issues, context, unreported)
    findings: list[Finding] = []
    runs_checked = 0
    checked: list[tuple[str, str]] = []

    for submission in tree.submissions:
        submitter = submission.name or None
        for system in submission.systems:
            found = _flatten(hook.mlperf_audit_check_system(system=system, context=context))
            findings += _with_context(found, submitter, system.name, None)
    work = _folder_work(score, collect, keep_scores)
    in_folders = sum(_files(folder) for folder in tree.benchmark_folders)
    folder_progress = None if progress is None else lambda done, _: progress(done, tree.result_file_count)
    folder_run = _each_folder(list(tree.benchmark_folders), host, context, jobs, work, folder_progress)
    scores: list[BenchmarkScore] = []
    collected: dict[str, Any] = {}
    unreadable = _unreadable(tree.issues) or any(
        _unreadable(system.issues) for submission in tree.submissions for system in submission.systems
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
        found = _flatten(hook.mlperf_audit_check_submission(submission=submission, context=context))
        findings += _with_context(found, submission.name or None, None, None)
    for number, entry in enumerate(tree.loose_logs, start=1):
        run = parse_log(entry.fs_path, entry.path, cache=parse_cache(config.cache_dir))
        if progress is not None:
            progress(in_folders + number, tree.result_file_count)
        _unreported(run.issues, context, unreported)
        unreadable = unreadable or _unreadable(run.issues)
        runs_checked += 1
        checked.append(("run", run.path))
        findings += _flatten(hook.mlperf_audit_check_run(run=run, context=context))
    for finding in _flatten(hook.mlperf_audit_check_tree(tree=tree, context=context)):
        findings += _with_context([finding], *_locate(tree, finding.path))

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
    findings = _flatten(host.hook.mlperf_audit_check_comparison(comparison=comparison, context=context))
    known = {rule.code for rule in host.rules}
    unknown = sorted({f.rule for f in findings} - known)
    if unknown:
        raise PluginError(f"a plugin returned findings with unregistered rule code(s): {', '.join(unknown)}")
    findings.sort(key=Finding.sort_key)
    return findings
