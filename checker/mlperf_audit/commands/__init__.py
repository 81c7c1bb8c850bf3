"""The commands that read a PATH: `check`, `score`, `compare`, `audit` and `report`.

Each module adds its subcommand (`add_command`) and runs it (`run`); `mlperf_audit.cli` builds the
command line from them and from plugins' `mlperf_audit_add_commands`. What they share is here: the
options of a command that reads a PATH, the configuration of a round, the progress line, and
writing a result (never inside a checked PATH).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from ..config import KNOWN_RULESETS, Config, load_config
from ..errors import AuditError, TargetError
from ..safety import write_text

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


def progress(args: argparse.Namespace) -> Any:
    """A progress line on standard error, only on a terminal: never mixed into reports or pipes."""
    if args.no_progress or sys.stderr is None or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rmlperf-audit: {done}/{total} result files checked{end}")
        sys.stderr.flush()

    return show


def write(text: str, output: str | None, checked: Sequence[Path] = (), append: bool = False) -> None:
    """Standard output, or the file `output`, which `safety.output_path` allows (never inside a checked PATH)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_text(output, text, checked, append=append)
