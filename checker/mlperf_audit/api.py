"""One entry point for every runner (the CLI, the GitHub Action, a library call)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Iterable

from . import rulesets
from .config import Config
from .discovery import discover
from .engine import run_checks, run_scores
from .model import Tree
from .plugins import PluginHost
from .report import Report, TargetSummary, mlperf_logging_version
from .safety import visible


def resolve_ruleset(tree: Tree, config: Config) -> Config:
    """The configuration with `auto` replaced by the round the package fits (said in a note); a named
    ruleset is kept, and the rules that check it against the package say when it does not fit."""
    if config.ruleset != rulesets.AUTO:
        return config
    inference = rulesets.infer_tree(tree)
    note = f"ruleset {inference.ruleset} inferred (--ruleset auto): {inference.reason}"
    return dataclasses.replace(config, ruleset=inference.ruleset, ruleset_inferred=True, notes=config.notes + (note,))


def score(path: str | Path, config: Config | None = None, host: PluginHost | None = None, jobs: int = 1) -> list[Any]:
    """The scores (`mlperf_audit.scores.BenchmarkScore`) of every benchmark folder under PATH."""
    return scored(path, config, host, jobs)[1]


def scored(path: str | Path, config: Config | None = None, host: PluginHost | None = None,
           jobs: int = 1) -> tuple[Config, list[Any]]:
    """The configuration in force (its ruleset resolved) and the scores of every benchmark folder under PATH."""
    config = config or Config()
    host = host or PluginHost()
    tree = discover(path)
    config = resolve_ruleset(tree, config)
    host.hook.mlperf_audit_configure.call_historic(kwargs={"config": config})
    return config, run_scores(tree, host, config, jobs)


def check(path: str | Path, config: Config | None = None, host: PluginHost | None = None,
          progress: Any = None, submitters: Iterable[str] | None = None, jobs: int = 1) -> Report:
    """Checks PATH (only the named submitters of a results repository, if given) and returns the
    report. Raises TargetError, PluginError or SelectionError (each an exit code 2 on the command
    line); never raises for the package's content."""
    config = config or Config()
    host = host or PluginHost()
    tree = discover(path)
    config = resolve_ruleset(tree, config)  # from the whole repository, even when some submitters are checked
    if submitters is not None:
        wanted = {visible(name) for name in submitters}  # submission names are shown visibly (discovery)
        tree = dataclasses.replace(tree, submissions=tuple(s for s in tree.submissions if s.name in wanted), subset=True)
    host.hook.mlperf_audit_configure.call_historic(kwargs={"config": config})
    outcome = run_checks(tree, host, config, progress, jobs)
    if outcome.parallel_fallback:
        config = dataclasses.replace(config, notes=config.notes + (outcome.parallel_fallback,))
    return Report(
        target=TargetSummary.of(str(path), tree),
        config=config,
        plugins=tuple(host.plugins),
        findings=tuple(outcome.findings),
        mlperf_logging=mlperf_logging_version(),
        rules=tuple(host.rules),
        checked=tuple(outcome.checked),
        processes=len(outcome.processes),
    )
