"""`mlperf-audit check PATH`: every selected rule on every target, in one report."""

from __future__ import annotations

import argparse
import os
import sys

from .. import waivers
from ..config import FAIL_ON_CHOICES
from ..engine.api import check
from ..engine.plugins import PluginHost
from ..formats import TEXT, TextDisplay, formats_of, render_text
from ..formats.documents import CHECK
from ..safety import output_path
from ..suggest import did_you_mean
from ..terminal import Screen
from . import Command, UsageError, output_format, prepare, progress, reading_options, rendered, split, write


class Check(Command):
    name = "check"
    help = "check a results repository, submission, folder or log file"

    def parents(self) -> list[argparse.ArgumentParser]:
        return [
            reading_options(
                jobs="check benchmark folders",
            )
        ]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "path",
            metavar="PATH",
            help="results repository root, submitter folder, "
            "results/<system> or results/<system>/<benchmark> folder, or one result file",
        )
        # free-form, not argparse choices: `check --format` names any format of the registry, and an
        # unknown one is refused with the closest (`output_format`)
        parser.add_argument(
            "--format", default="text", help="output format (default: text; see `mlperf-audit formats`)"
        )
        parser.add_argument(
            "-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output"
        )
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
            "--fail-on",
            choices=FAIL_ON_CHOICES,
            help="lowest severity that makes the exit code 1 (default: error); with warning or info, "
            "--format objection files warnings too (errors only by default)",
        )
        add_display_options(parser)
        parser.add_argument(
            "--score",
            action="store_true",
            help="also score every benchmark folder (as `score` does), from the same parse: "
            "in the text, JSON and Markdown reports",
        )
        parser.add_argument(
            "--waivers", metavar="FILE", help="accept the findings this TOML file waives (with reasons)"
        )
        parser.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline")
        parser.add_argument(
            "--write-baseline", metavar="FILE", help="write the findings' fingerprints to FILE (- for standard output)"
        )

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        return run(args, host)


def add_display_options(parser: argparse.ArgumentParser) -> None:
    """How the text report reads: infos, quiet, statistics."""
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


def run(args: argparse.Namespace, host: PluginHost) -> int:
    prepared = prepare(
        args,
        args.path,
        [args.output, args.write_baseline],
        select=split(args.select),
        ignore=split(args.ignore),
        fail_on=args.fail_on,
        waivers=args.waivers,
        baseline=args.baseline,
    )
    target, config = prepared.target, prepared.config
    fmt = output_format(host, CHECK, args.format)
    reports = formats_of(host.formats, CHECK)
    extra = []
    for spec in args.report:
        name, _, path = spec.partition(":")
        if not path or name not in reports:
            unknown = f": unknown format {name!r}{did_you_mean(name, reports)}" if path else ""
            raise UsageError(
                f"--report {spec!r}{unknown}: expected FORMAT:FILE with FORMAT one of {', '.join(sorted(reports))}"
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
    write(render_text(report, display) if fmt is TEXT else rendered(fmt, CHECK, report), args.output, [target])
    if args.write_baseline:
        write(waivers.baseline_document(report.findings), args.write_baseline, [target])
    for extra_format, path in extra:
        write(
            rendered(extra_format, CHECK, report), path, [target], append=path == os.environ.get("GITHUB_STEP_SUMMARY")
        )
    return report.exit_code
