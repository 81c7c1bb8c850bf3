"""The commands of `mlperf-audit`, one module each, and what they share.

Each module holds one `Command`: its name, its help, its arguments (`add_arguments`) and what it
does (`run`); `mlperf_audit.cli` builds the command line from `BUILTIN` and from the commands
plugins return from `mlperf_audit_register_commands`. A command parses its arguments, calls the
domain (`api`, `claims`, `peers`, `comparison`) and hands a document to a format
(`mlperf_audit.formats`). What they share is here: the options of a command that reads a PATH
(`reading_options`, an argparse parent parser), the preamble of one (`prepare`: the PATH exists,
its outputs are allowed, the configuration of its round), the progress line, and writing a result
(never inside a checked PATH).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from ..command import Command as Command
from ..command import reading_options as reading_options
from ..config import Config, load_config
from ..engine.plugins import PluginHost
from ..errors import AuditError, TargetError
from ..formats import Format, as_files, formats_of, lookup
from ..reading.discovery import submission_of_part
from ..safety import output_path, visible, write_text
from ..terminal import Screen

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(AuditError):
    """The command line asks for something impossible."""


def split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def add_command(commands: Any, command: Command, formats: Mapping[str, Format]) -> argparse.ArgumentParser:
    """`command`'s parser among `commands` (argparse's subparsers), with `--format` among `formats`
    when it writes a document, its handler set to `command.run`."""
    options: dict[str, Any] = {"help": command.help, "parents": command.parents()}
    if command.description is not None:
        options["description"] = command.description
    if command.epilog is not None:
        options["epilog"] = command.epilog
        options["formatter_class"] = argparse.RawDescriptionHelpFormatter
    parser: argparse.ArgumentParser = commands.add_parser(command.name, **options)
    command.add_arguments(parser)
    if command.document is not None:
        parser.add_argument(
            "--format", default="text", choices=formats_of(formats, command.document), help=command.format_help
        )
    parser.set_defaults(handler=command.run)
    return parser


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


def output_format(host: PluginHost, kind: str, name: str) -> Format:
    """The format `name` of the registry for a document of `kind` (a usage error naming the closest
    one otherwise)."""
    return lookup(host.formats, kind, name)


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


def rendered(fmt: Format, kind: str, document: Any) -> str:
    """`document` in the format `fmt`, as one text (a format of several files: joined by a blank line)."""
    return "\n".join(as_files(fmt.render_document(kind, document)))
