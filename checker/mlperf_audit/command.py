"""What a command plugin builds on, light enough for the public API to import: `Command`, the
type of every subcommand (built-in or a plugin's), with `checked` and `scored` to check or score
the PATH it was given; `reading_options`, the argparse parent parser of the options of a command
that reads a PATH as `check` does; and the preamble of such a command (`prepare`: the PATH
exists, its outputs are allowed, the configuration of its round) and its progress bar. The
engine, and rich's progress display, are imported when first used. The built-in commands, and
what they share beyond this, are in `mlperf_audit.commands`."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

from .config import KNOWN_RULESETS, Config, load_config
from .errors import TargetError
from .reading.discovery import submission_of_part
from .safety import output_path, visible
from .terminal import Screen

if TYPE_CHECKING:
    from .engine.plugins import PluginHost
    from .report import Report
    from .scores import BenchmarkScore


class Command:
    """A subcommand of `mlperf-audit`, built-in or a plugin's (returned from the hook
    `mlperf_audit_register_commands`): `name` and `help` as `mlperf-audit --help` lists it, an
    optional `description` and `epilog` for its own --help (the epilog keeps its line breaks),
    `parents` (argparse parent parsers: `reading_options(...)` for a command that reads a PATH as
    `check` does), its arguments, and `run`, which returns the exit code (`EXIT_OK`,
    `EXIT_FINDINGS`, `EXIT_ERROR`; an `AuditError` it raises is a usage error, exit 2)."""

    name: ClassVar[str]
    help: ClassVar[str]
    description: ClassVar[str | None] = None
    epilog: ClassVar[str | None] = None
    #: The kind of document it writes (`formats.documents`): the command gets `--format`, whose
    #: choices are the registered formats of that kind (plugins' included), `default_format` by default.
    document: ClassVar[str | None] = None
    format_help: ClassVar[str | None] = None
    #: The `--format` given none: a command whose document has no text rendering names another.
    default_format: ClassVar[str] = "text"

    def parents(self) -> list[argparse.ArgumentParser]:
        return []

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's own arguments to its parser."""

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        raise NotImplementedError(f"{type(self).__name__}.run")

    def checked(self, args: argparse.Namespace, host: PluginHost, *, score: bool = False) -> Report:
        """Check the PATH a command built on `reading_options()` was given (`args.path`), as `check`
        does: the reading options choose the ruleset, configuration and cache, a progress bar shows
        on a terminal, and the check's report is returned (with every folder's score if `score`).
        A missing PATH or a refused configuration raises an `AuditError` (exit 2)."""
        from .engine.api import check

        prepared = prepare(args, args.path)
        with progress(args, "checking") as show:
            return check(
                prepared.target,
                prepared.config,
                host,
                progress=show,
                jobs=max(1, getattr(args, "jobs", 1)),
                score=score,
            )

    def scored(self, args: argparse.Namespace, host: PluginHost) -> list[BenchmarkScore]:
        """The score of every benchmark folder under the PATH a command built on `reading_options()`
        was given (`args.path`), as `score` computes them (from a kept check of the same tree when
        there is one)."""
        from .engine.api import scored

        prepared = prepare(args, args.path)
        with progress(args, "scoring") as show:
            return scored(prepared.target, prepared.config, host, jobs=max(1, getattr(args, "jobs", 1)), progress=show)[
                1
            ]


def reading_options(*, partial: bool = True, jobs: str | None = None) -> argparse.ArgumentParser:
    """The options of a command that reads a PATH as `check` does, as an argparse parent parser
    (`parents=[reading_options()]`, for plugins' commands too): --ruleset, --partial (unless
    `partial` is False), --config, --trust-tree-config, the cache options, --no-progress and,
    when `jobs` says what runs in parallel, --jobs."""
    parent = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_reading_options(parent, partial=partial, jobs=jobs)
    return parent


def add_reading_options(command: argparse.ArgumentParser, *, partial: bool = True, jobs: str | None = None) -> None:
    """`reading_options`, added to the parser `command` itself."""
    command.add_argument(
        "--ruleset",
        metavar="RULESET",
        help=f"rules of the round: {', '.join(KNOWN_RULESETS)} (default: auto, the round the package fits)",
    )
    if partial:
        command.add_argument("--partial", action="store_true", help="missing runs are pending, not failures")
    command.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (a .mlperf-audit.toml or a pyproject.toml with [tool.mlperf-audit])",
    )
    command.add_argument(
        "--trust-tree-config", action="store_true", help="obey a configuration file that lies inside PATH"
    )
    add_cache_options(command)
    add_progress_option(command)
    if jobs:
        command.add_argument(
            "-j",
            "--jobs",
            type=int,
            default=os.cpu_count() or 1,
            metavar="N",
            help=f"{jobs} in N processes (default: the number of cores)",
        )


def add_cache_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="keep parsed files in DIR, never inside PATH (default: $MLPERF_AUDIT_CACHE_DIR, "
        "else $XDG_CACHE_HOME/mlperf-audit or ~/.cache/mlperf-audit)",
    )
    command.add_argument("--no-cache", action="store_true", help="parse every file, read and write no cache")


def add_progress_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--no-progress", action="store_true", help="no progress display on a terminal's standard error"
    )


def checked_target(given: str) -> tuple[Path, str | None]:
    """The folder to check for the PATH `given`, and a note when it is not `given` itself: a
    submission's `results/` or `systems/` folder is checked as the submission around it (its
    results need its system descriptions), which every later step (configuration, cache, where
    output may be written) then takes as the checked PATH."""
    target = Path(given)
    submission = submission_of_part(target)
    if submission is None:
        return target, None
    part = Path(os.path.abspath(target)).name
    return submission, (
        f"{visible(given)} is the {part}/ folder of the submission {visible(submission.name)}: "
        f"the whole submission was checked ({visible(str(submission))})"
    )


def noted(config: Config, note: str | None) -> Config:
    return dataclasses.replace(config, notes=config.notes + (note,)) if note else config


def must_exist(given: str) -> None:
    if not os.path.lexists(given):
        raise TargetError(f"{visible(given)}: no such file or folder")


@dataclasses.dataclass(frozen=True)
class Prepared:
    """What a command that reads a PATH starts from: the folder it checks and its configuration."""

    target: Path
    config: Config


def prepare(
    args: argparse.Namespace,
    given: str,
    outputs: Sequence[str | None] = (),
    *,
    also_checked: Sequence[Path] = (),
    ruleset: str | None = None,
    **settings: Any,
) -> Prepared:
    """The preamble of a command that reads the PATH `given`: it exists; the folder to check
    (`checked_target`); each of `outputs` allowed (outside it and `also_checked`), refused before
    the minutes a check takes, not after; and the configuration of its round from the reading
    options (`reading_options`) and `settings` (`load_config`'s), noting what was checked."""
    must_exist(given)
    target, note = checked_target(given)
    for output in outputs:
        if output:
            output_path(output, [target, *also_checked])
    config = load_config(
        target=target,
        config_file=getattr(args, "config", None),
        trust_tree_config=getattr(args, "trust_tree_config", False),
        ruleset=ruleset or args.ruleset,
        partial=getattr(args, "partial", None),
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        **settings,
    )
    return Prepared(target, noted(config, note))


class Progress:
    """A progress bar with a time estimate on standard error while a command reads a PATH: shown
    only on a terminal (never in a pipe, a file or a CI log), cleared when the work is done.
    Called as `show(done, total)` (result files); refreshed by those calls only, so no thread
    runs beside the worker processes the check forks."""

    def __init__(self, what: str) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        self.what = what
        self.bar = RichProgress(
            TextColumn("mlperf-audit: {task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("result files", markup=False),
            TimeRemainingColumn(),
            console=Screen.of(sys.stderr).console(sys.stderr),
            transient=True,
            auto_refresh=False,
        )
        self.task = self.bar.add_task(what, total=None)

    def __enter__(self) -> "Progress":
        self.bar.start()
        self.bar.refresh()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.bar.stop()

    def __call__(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)
        self.bar.refresh()


def progress(args: argparse.Namespace, what: str) -> Any:
    """A context that gives the `progress` callback of a command's work (None where nothing is
    shown: --no-progress, or standard error is not a terminal)."""
    if getattr(args, "no_progress", False) or sys.stderr is None or not Screen.of(sys.stderr).live:
        return contextlib.nullcontext(None)
    return Progress(what)
