"""`mlperf-audit check PATH`: every selected rule on every target, in one report."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .. import waivers
from ..api import check
from ..config import FAIL_ON_CHOICES, KNOWN_RULESETS, load_config
from ..errors import TargetError
from ..formats import TEXT, TextDisplay, render_text
from ..plugins import PluginHost
from ..safety import output_path
from ..suggest import did_you_mean
from ..terminal import Screen
from . import UsageError, add_cache_options, add_progress_option, checked_target, noted, progress, split, write


def add_command(commands: Any) -> None:
    parser = commands.add_parser("check", help="check a results repository, submission, folder or log file")
    parser.add_argument(
        "path",
        metavar="PATH",
        help="results repository root, submitter folder, "
        "results/<system> or results/<system>/<benchmark> folder, or one result file",
    )
    parser.add_argument("--format", default="text", help="output format (default: text; see `mlperf-audit formats`)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output")
    parser.add_argument(
        "--report",
        action="append",
        default=[],
        metavar="FORMAT:FILE",
        help="also write the report in FORMAT to FILE (repeatable; - for standard output), e.g. sarif:audit.sarif",
    )
    parser.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="only these rule codes, prefixes or names (comma-separated; repeatable; ALL = every rule)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        metavar="CODES",
        help="skip these rule codes, prefixes or names (comma-separated; repeatable)",
    )
    parser.add_argument(
        "--fail-on", choices=FAIL_ON_CHOICES, help="lowest severity that makes the exit code 1 (default: error)"
    )
    parser.add_argument(
        "--ruleset",
        metavar="RULESET",
        help=f"rules of the round to apply: {', '.join(KNOWN_RULESETS)} (default: auto, the round the package fits)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="read settings from FILE (a .mlperf-audit.toml or a pyproject.toml with [tool.mlperf-audit])",
    )
    add_display_options(parser)
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="check benchmark folders in N processes (default: the number of cores); "
        "the report is the same whatever N is",
    )
    parser.add_argument(
        "--score",
        action="store_true",
        help="also score every benchmark folder (as `score` does), from the same parse: "
        "in the text, JSON and Markdown reports",
    )
    parser.add_argument("--waivers", metavar="FILE", help="accept the findings this TOML file waives (with reasons)")
    parser.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline")
    parser.add_argument(
        "--write-baseline", metavar="FILE", help="write the findings' fingerprints to FILE (- for standard output)"
    )
    parser.add_argument(
        "--partial", action="store_true", help="a submitter's what-if: runs still missing are pending, not failures"
    )
    parser.add_argument(
        "--trust-tree-config", action="store_true", help="obey a configuration file that lies inside PATH"
    )
    add_cache_options(parser)

    parser.set_defaults(handler=run)


def add_display_options(parser: argparse.ArgumentParser) -> None:
    """How the text report reads: infos, quiet, statistics (and no progress display)."""
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "-v",
        "--show-info",
        action="store_true",
        help="text: also show info findings (counted in the summary either way; implied by --fail-on info)",
    )
    shown.add_argument(
        "-q", "--quiet", action="store_true", help="text: print only the summary line (and --statistics)"
    )
    parser.add_argument(
        "--statistics", action="store_true", help="text: add a table of how many findings each rule made"
    )
    add_progress_option(parser)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    if not os.path.lexists(args.path):
        raise TargetError(f"{args.path}: no such file or folder")
    target, note = checked_target(args.path)
    for output in (args.output, args.write_baseline):
        if output:
            output_path(output, [target])  # refused before the check runs, not after
    config = load_config(
        target=target,
        config_file=args.config,
        trust_tree_config=args.trust_tree_config,
        select=split(args.select),
        ignore=split(args.ignore),
        fail_on=args.fail_on,
        ruleset=args.ruleset,
        partial=args.partial,
        waivers=args.waivers,
        baseline=args.baseline,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    config = noted(config, note)
    fmt = host.formats.get(args.format)
    if fmt is None:
        raise UsageError(
            f"unknown format {args.format!r}{did_you_mean(args.format, host.formats)}; "
            f"available: {', '.join(sorted(host.formats))}"
        )
    extra = []
    for spec in args.report:
        name, _, path = spec.partition(":")
        if not path or name not in host.formats:
            unknown = f": unknown format {name!r}{did_you_mean(name, host.formats)}" if path else ""
            raise UsageError(
                f"--report {spec!r}{unknown}: expected FORMAT:FILE with FORMAT one of {', '.join(sorted(host.formats))}"
            )
        output_path(path, [target])
        extra.append((host.formats[name], path))
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    with progress(args, "checking") as show:
        quotes = fmt.quotes or any(extra_format.quotes for extra_format, _ in extra)
        report = check(target, config, host, progress=show, jobs=args.jobs, score=args.score, quotes=quotes)
    display = TextDisplay(
        show_info=args.show_info,
        quiet=args.quiet,
        statistics=args.statistics,
        screen=Screen.of(sys.stdout if args.output is None else None),
    )
    write(render_text(report, display) if fmt is TEXT else fmt.render(report), args.output, [target])
    if args.write_baseline:
        write(waivers.baseline_document(report.findings), args.write_baseline, [target])
    for extra_format, path in extra:
        write(extra_format.render(report), path, [target], append=path == os.environ.get("GITHUB_STEP_SUMMARY"))
    return report.exit_code
