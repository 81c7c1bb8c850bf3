"""One entry point for every runner (the CLI, the GitHub Action, a library call)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..config import Config
from ..errors import TargetError
from ..model import Finding, Tree
from ..reading import evidence
from ..reading.discovery import discover
from ..recipes import Recipe
from ..reference import rulesets
from ..report import Report, TargetSummary, mlperf_logging_version
from ..safety import visible
from ..scores import BenchmarkScore, Comparison, with_validity
from . import causes
from .checkcache import CheckCache, check_keys, tree_state
from .checks import CheckOutcome, check_comparison, run_checks
from .context import new_context
from .folders import Collect
from .loading import load_benchmark
from .plugins import PluginHost
from .selection import select_rules


def resolve_ruleset(tree: Tree, config: Config) -> Config:
    """The configuration with `auto` replaced by the round `rulesets.choose` takes (said in a note),
    and what named it (`Config.ruleset_from`: a folder above the submissions, or nothing); a round
    named by the option or a configuration is kept, except that a folder above the submissions
    naming another round wins over the checked repository's own configuration (the folder is named
    by whoever keeps the package). Either way PKG020 says when the package does not fit the round
    in force."""
    if config.ruleset != rulesets.AUTO and config.ruleset_from != "tree configuration":
        return config
    inference = rulesets.choose(tree)
    if config.ruleset != rulesets.AUTO:  # named by the checked repository's own configuration
        if inference.folder is None or inference.ruleset == config.ruleset:
            return config
        note = (
            f"{config.ruleset_where} names {config.ruleset}, not obeyed: the folder '{visible(inference.folder)}' "
            f"above the submissions names {inference.ruleset}"
        )
        return dataclasses.replace(
            config,
            ruleset=inference.ruleset,
            ruleset_from="folder",
            ruleset_where=visible(inference.folder),
            notes=config.notes + (note,),
        )
    note = f"ruleset {inference.ruleset} inferred (--ruleset auto): {inference.reason}"
    return dataclasses.replace(
        config,
        ruleset=inference.ruleset,
        ruleset_inferred=True,
        ruleset_from="folder" if inference.folder is not None else "",
        ruleset_where=visible(inference.folder) if inference.folder is not None else "",
        ruleset_dates_fit=(
            (rulesets.dates_fit_another(inference.ruleset, rulesets.infer_tree(tree)) or "")
            if inference.folder is None
            else ""
        ),
        notes=config.notes + (note,),
    )


def _configured(tree: Tree, config: Config, host: PluginHost) -> Config:
    """The configuration in force for `tree` (its ruleset resolved), given to every plugin."""
    config = resolve_ruleset(tree, config)
    host.hook.mlperf_audit_configure.call_historic(kwargs={"config": config})
    return config


def score(
    path: str | Path,
    config: Config | None = None,
    host: PluginHost | None = None,
    jobs: int = 1,
    progress: Any = None,
) -> list[BenchmarkScore]:
    """The scores of every benchmark folder under PATH."""
    return scored(path, config, host, jobs, progress)[1]


def scored(
    path: str | Path,
    config: Config | None = None,
    host: PluginHost | None = None,
    jobs: int = 1,
    progress: Any = None,
) -> tuple[Config, list[BenchmarkScore]]:
    """The configuration in force (its ruleset resolved) and the scores of every benchmark folder under
    PATH, each marked valid or not (`BenchmarkScore.invalid`): the folders are checked as they are
    scored, from the same parse, for the errors that make a result invalid (a kept check of the same
    tree answers). `progress(done, total)` is called as result files are done."""
    config = config or Config()
    host = host or PluginHost()
    state = tree_state(Path(path), config) if config.cache_dir is not None else None  # before anything is read
    tree = discover(path)
    config = _configured(tree, config, host)
    outcome = _checked(path, state, tree, host, config, progress, jobs, True, None, None)
    findings = causes.link(outcome.findings, host.rules)
    return config, with_validity(outcome.scores, findings, config.round_guessed)


def check(
    path: str | Path,
    config: Config | None = None,
    host: PluginHost | None = None,
    progress: Any = None,
    submitters: Iterable[str] | None = None,
    jobs: int = 1,
    *,
    score: bool = False,
    quotes: bool = False,
) -> Report:
    """Checks PATH (only the named submitters of a results repository, if given) and returns the
    report, with every benchmark folder's score from the same parse if `score`. Raises TargetError,
    PluginError or SelectionError (each an exit code 2 on the command line); never raises for the
    package's content."""
    return review(
        path, config, host, progress, submitters, jobs, score=score, scores_in_report=score, quotes=quotes
    ).report


@dataclass(frozen=True)
class Review:
    """What one pass over PATH gives: the report, and the scores and collected data when asked for."""

    report: Report
    scores: tuple[BenchmarkScore, ...] = ()
    collected: dict[str, Any] = field(default_factory=dict)  # by benchmark folder path


def review(
    path: str | Path,
    config: Config | None = None,
    host: PluginHost | None = None,
    progress: Any = None,
    submitters: Iterable[str] | None = None,
    jobs: int = 1,
    *,
    score: bool = False,
    collect: Collect | None = None,
    scores_in_report: bool = False,
    quotes: bool = False,
) -> Review:
    """`check`, and with `score` the scores, and with `collect` what it returns for each benchmark
    folder: all from one discovery and one parse of each log (what `audit` and `report` need).
    With `scores_in_report` the report carries the scores too, so every format shows them (`check --score`);
    with `quotes`, the lines its findings at warning or above point at (`--format objection`)."""
    config = config or Config()
    host = host or PluginHost()
    submitters = list(submitters) if submitters is not None else None  # read twice (an iterator would not be)
    # taken before anything is read
    state = tree_state(Path(path), config) if config.cache_dir is not None else None
    tree = discover(path)
    config = _configured(tree, config, host)  # the round of the whole repository, even for some submitters
    if submitters is not None:
        wanted = {visible(name) for name in submitters}  # submission names are shown visibly (discovery)
        tree = dataclasses.replace(
            tree,
            submissions=tuple(s for s in tree.submissions if s.name in wanted),
            subset=True,
            others=tuple(s.name for s in tree.submissions if s.name not in wanted),
        )
    outcome = _checked(path, state, tree, host, config, progress, jobs, score, collect, submitters)
    notes = []
    if outcome.parallel_fallback:
        notes.append(outcome.parallel_fallback)
    if outcome.unreported:
        counted = ", ".join(f"{problem} ({count})" for problem, count in sorted(outcome.unreported.items()))
        notes.append(
            f"problems found while reading that no registered rule reports (is the plugin that reports "
            f"them disabled?): {counted}"
        )
    if notes:
        config = dataclasses.replace(config, notes=config.notes + tuple(notes))
    findings = tuple(causes.link(outcome.findings, host.rules))
    scores = tuple(with_validity(outcome.scores, findings, config.round_guessed))
    report = Report(
        target=TargetSummary.of(str(path), tree),
        config=config,
        plugins=tuple(host.plugins),
        findings=findings,
        evidence=evidence.quotes(tree, findings) if quotes else (),
        mlperf_logging=mlperf_logging_version(),
        rules=tuple(host.rules),
        checked=tuple(outcome.checked),
        processes=len(outcome.processes),
        scores=scores if scores_in_report else (),
    )
    return Review(report, scores if score else (), outcome.collected)


def _checked(
    path: str | Path,
    state: bytes | None,
    tree: Tree,
    host: PluginHost,
    config: Config,
    progress: Any,
    jobs: int,
    score: bool,
    collect: Collect | None,
    submitters: list[str] | None,
) -> CheckOutcome:
    """The outcome of checking `tree`: kept from the same check of the same tree, if the cache
    holds it (`mlperf_audit.engine.checkcache`), else checked (and kept)."""
    # A check that is kept scores every folder too, from the same parse: `score` then answers from it.
    keep_scores = collect is None and config.cache_dir is not None
    outcome = _kept_or_done(
        path,
        state,
        host,
        config,
        "check" if collect is None else _collect_kind(collect),
        lambda parsing: run_checks(
            tree, host, parsing, progress, jobs, score=score, collect=collect, keep_scores=keep_scores
        ),
        submitters=submitters,
    )
    if outcome.kept and progress is not None:
        progress(tree.result_file_count, tree.result_file_count)
    return outcome


def _collect_kind(collect: Collect) -> str:
    """The kind of a collecting pass's kept outcome: the collector by name (the code digest of the
    key covers its source). A collector keeps its outcome only if it says it returns plain values
    (`collect.plain = True`: lists, tuples, strings, numbers), which read back as lists."""
    if not getattr(collect, "plain", False):
        return "collect"
    return f"collect {collect.__module__}.{collect.__qualname__}"


def _kept_or_done(
    path: str | Path,
    state: bytes | None,
    host: PluginHost,
    config: Config,
    kind: str,
    work: Callable[[Config], CheckOutcome],
    *,
    submitters: list[str] | None = None,
) -> CheckOutcome:
    """`work`'s outcome, or the one kept from the same `kind` of work on the same tree. A first look at a PATH keeps no parsed
    files (`CheckCache.seen_before`); what a command collects (the report's curves) is kept with
    the outcome only from a collector of plain values (`_collect_kind`). `state` is the tree's `tree_state` taken before discovery read it: the
    outcome is kept only if the tree is still in that state once the work is done."""
    if config.cache_dir is None:
        return work(config)
    checks = CheckCache(config.cache_dir)
    kinds = [kind]
    keys = (
        None
        if kind == "collect" or state is None  # a collector of objects keeps nothing
        else check_keys(state, config, host.plugins, score=True, submitters=submitters, kinds=kinds)
    )
    for key in keys or ():
        kept = checks.load_outcome(key)
        if kept is not None:
            return kept
    parsing = config if checks.seen_before(Path(path), kind) else dataclasses.replace(config, cache_dir=None)
    outcome = work(parsing)
    if keys is not None and tree_state(Path(path), config) == state:
        checks.store_outcome(keys[0], outcome)
    return outcome


def compare_baseline(comparison: Comparison, tree_path: str | Path, config: Config, host: PluginHost) -> list[Finding]:
    """The findings of the rules of scope "comparison" (`audit --baseline`), under `config`."""
    return check_comparison(comparison, discover(tree_path), host, config)


def reproduce(folder: str | Path, config: Config | None = None, host: PluginHost | None = None) -> Recipe | None:
    """The recipe to rerun the result folder `folder` (`<submitter>/results/<system>/<benchmark>`),
    read from its submitter's package (the folder above `results/`). Raises TargetError when the
    folder is not a result folder of a submission."""
    config = config or Config()
    host = host or PluginHost()
    # lexically, never through links: a linked result folder is discovery's to refuse (PKG004)
    wanted = Path(os.path.abspath(folder))
    if wanted.parent.parent.name != "results":
        raise TargetError(f"{visible(str(folder))}: not a result folder (<submitter>/results/<system>/<benchmark>)")
    root = wanted.parent.parent.parent
    tree = discover(root)
    # discovery names a folder as every report shows it (`visible`), escapes and all
    shown = visible(wanted.relative_to(root).as_posix())
    found = next((f for f in tree.benchmark_folders if f.path == shown), None)
    if found is None:
        raise TargetError(f"{visible(str(folder))}: no result folder there ({visible(str(root))} was read)")
    config = _configured(tree, config, host)
    context = new_context(tree, host, config, select_rules(host.rules, config))
    recipe: Recipe | None = host.hook.mlperf_audit_reproduce(result=load_benchmark(found, config), context=context)
    return recipe
