"""`mlperf-audit cache [info|prune|clear]`: the cache of parsed files: where, how big; trim; empty."""

from __future__ import annotations

import argparse

from ..engine.plugins import PluginHost
from ..reading.cache import CHECK_FOLDER, OLD_RCP_FOLDER, SUBFOLDER, ParseCache, default_directory
from ..safety import visible
from . import EXIT_OK, Command, UsageError, write


class Cache(Command):
    name = "cache"
    help = "show or clear the cache of parsed files"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "action",
            nargs="?",
            choices=("info", "prune", "clear"),
            default="info",
            help="info (default): where the cache is and what it holds; prune: remove what no "
            "check used for --days days; clear: empty it",
        )
        parser.add_argument("--days", type=float, default=30.0, metavar="N", help="for prune (default: 30)")
        parser.add_argument("--cache-dir", metavar="DIR", help="the cache directory (default: see `check --help`)")

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        # None of these follows a link or creates the folder (mlperf_audit.reading.cache).
        cache = ParseCache(args.cache_dir or default_directory())
        shown = visible(str(cache.directory))
        problem = cache.problem()
        if problem and args.action in ("clear", "prune"):
            # a folder that is a link, or that someone else owns or can write to, is not this tool's to empty
            raise UsageError(f"{shown}: nothing removed: {visible(problem)}")
        if args.action == "clear":
            cache.clear()
            write(f"cleared {shown}\n", None)
            return EXIT_OK
        if args.action == "prune":
            if args.days < 0:
                raise UsageError("--days must be 0 or more")
            count, freed = cache.prune(args.days)
            write(f"{shown}: removed {count} entries unused for {args.days:g} days ({freed / 2**20:.1f} MiB)\n", None)
            return EXIT_OK
        usage = cache.usage()

        def held(folder: str, what: str) -> str:
            return f"{usage[folder][0]} {what}, {usage[folder][1] / 2**20:.1f} MiB"

        total = sum(size for _, size in usage.values()) / 2**20
        summary = [held(SUBFOLDER, "parsed file(s)"), held(CHECK_FOLDER, "whole-check entries")]
        if usage[OLD_RCP_FOLDER][0]:
            summary.append(
                held(OLD_RCP_FOLDER, "RCP statistics file(s) of an earlier version (`cache clear` removes them)")
            )
        unusable = f"; checks do not use it: {visible(problem)}" if problem else ""
        lines = [
            f"{shown}: {'; '.join(summary)}; {total:.1f} MiB in all{unusable}",
            f"  {SUBFOLDER}/  parsed files: each result file's records (after an edit, only changed files are parsed)",
            f"  {CHECK_FOLDER}/  whole checks: each check's or score's outcome (for an unchanged tree) and marks of PATHs",
        ]
        write("\n".join(lines) + "\n", None)
        return EXIT_OK
