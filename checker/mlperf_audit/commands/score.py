"""`mlperf-audit score PATH`: time-to-train and the score of every benchmark folder, as the official
summarizer computes them (text, JSON, or its two CSV tables)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import scores
from ..api import scored
from ..formats import openable
from ..plugins import PluginHost
from ..safety import STANDARD_OUTPUT, no_workflow_commands, output_path, visible
from ..terminal import Screen
from . import EXIT_OK, UsageError, add_reading_options, checked_target, noted, progress, round_config, write


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "score",
        help="time-to-train and score of every benchmark folder under PATH",
        description="Time-to-train and score of every benchmark folder under PATH, as the official summarizer "
        "computes them.",
        epilog="columns of the text table:\n" + scores.legend_text("  "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", metavar="PATH", help="any PATH that `check` accepts")
    parser.add_argument(
        "--format",
        default="text",
        choices=("text", "json", "csv"),
        help="text (default), json, or csv: the official summarizer's two tables",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (csv: FILE and FILE_detailed.csv; - for standard output)"
    )
    add_reading_options(parser, jobs="score benchmark folders")

    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    target, note = checked_target(args.path)
    config = noted(round_config(args, target), note)
    if args.output == STANDARD_OUTPUT:  # both CSV tables go to standard output, as without -o
        args.output = None
    outputs = [args.output] if args.output else []
    if args.output and args.format == "csv":
        if not args.output.endswith(".csv"):
            raise UsageError("--format csv writes FILE.csv and FILE_detailed.csv: give a FILE ending in .csv")
        outputs.append(args.output[: -len(".csv")] + "_detailed.csv")
    for output in outputs:
        output_path(output, [target])  # both files of a CSV pair, before the scores are computed
    with progress(args, "scoring") as show:
        config, results = scored(target, config, host, jobs=max(1, args.jobs), progress=show)
    for note in config.notes:
        print(no_workflow_commands(f"note: {visible(note)}"), file=sys.stderr)
    if args.format == "json":
        write(
            scores.render_json(results, config.ruleset, {"target": str(args.path), "notes": list(config.notes)}),
            args.output,
            [target],
        )
    elif args.format == "csv":
        wide, detailed = scores.csv_tables(results, config.ruleset)
        if args.output:
            write(wide, outputs[0], [target])
            write(detailed, outputs[1], [target])
        else:
            write(wide + "\n" + detailed, None)
    else:
        screen = Screen.of(None if args.output else sys.stdout)
        text = scores.render_text(results, screen, lambda path: openable(str(args.path), path))
        write(text, args.output, [target])
    return EXIT_OK
