"""The commands that read a PATH: `check`, `score`, `compare`, `audit` and `report`.

Each module adds its subcommand (`add_command`) and runs it (`run`); `mlperf_audit.cli` builds the
command line from them and from plugins' `mlperf_audit_add_commands`. What they share is here: the
options of a command that reads a PATH, the configuration of a round, the progress line, and
writing a result (never inside a checked PATH).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from ..config import KNOWN_RULESETS, Config, load_config
from ..discovery import submission_of_part
from ..errors import AuditError, TargetError
from ..safety import visible, write_text
from ..terminal import Screen

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(AuditError):
    """The command line asks for something impossible."""


def split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def add_reading_options(command: argparse.ArgumentParser, *, partial: bool = True, jobs: str | None = None) -> None:
    """The options of a command that reads a PATH as `check` does (for plugins' commands too):
    --ruleset, --partial (unless `partial` is False), --config, --trust-tree-config, the cache
    options and, when `jobs` says what runs in parallel, --jobs."""
    command.add_argument(
        "--ruleset",
        metavar="RULESET",
        help=f"rules of the round: {', '.join(KNOWN_RULESETS)} (default: auto, the round the package fits)",
    )
    if partial:
        command.add_argument("--partial", action="store_true", help="missing runs are pending, not failures")
    command.add_argument("--config", metavar="FILE", help="read settings from FILE")
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


def round_config(args: argparse.Namespace, target: Path, ruleset: str | None = None) -> Config:
    if not os.path.lexists(target):
        raise TargetError(f"{target}: no such file or folder")
    return load_config(
        target=target,
        config_file=args.config,
        trust_tree_config=args.trust_tree_config,
        ruleset=ruleset or args.ruleset,
        partial=args.partial,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )


def add_progress_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--no-progress", action="store_true", help="no progress display on a terminal's standard error"
    )


class Progress:
    """A progress bar with a time estimate on standard error while a command reads a PATH: shown
    only on a terminal (never in a pipe, a file or a CI log), cleared when the work is done.
    Called as `show(done, total)` (result files); refreshed by those calls only, so no thread
    runs beside the worker processes the check forks."""

    def __init__(self, what: str) -> None:
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


def write(text: str, output: str | None, checked: Sequence[Path] = (), append: bool = False) -> None:
    """Standard output, or the file `output`, which `safety.output_path` allows (never inside a checked PATH)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_text(output, text, checked, append=append)
