"""What a command plugin builds on, light enough for the public API to import: `Command`, the
type of every subcommand (built-in or a plugin's), and `reading_options`, the argparse parent
parser of the options of a command that reads a PATH as `check` does. The commands themselves, and
what they share beyond this, are in `mlperf_audit.commands`."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, ClassVar

from .config import KNOWN_RULESETS

if TYPE_CHECKING:
    from .engine.plugins import PluginHost


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
    #: choices are the registered formats of that kind (plugins' included), "text" by default.
    document: ClassVar[str | None] = None
    format_help: ClassVar[str | None] = None

    def parents(self) -> list[argparse.ArgumentParser]:
        return []

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's own arguments to its parser."""

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        raise NotImplementedError(f"{type(self).__name__}.run")


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
