"""`mlperf-audit score PATH`: time-to-train and the score of every benchmark folder, as the official
summarizer computes them (text, JSON, or its two CSV tables; or any format that renders scores)."""

from __future__ import annotations

import argparse
import sys

from ..engine.api import scored
from ..engine.plugins import PluginHost
from ..formats import as_files, openable
from ..formats.documents import SCORES, ScoresDocument
from ..formats.score_tables import legend_text
from ..safety import STANDARD_OUTPUT, no_workflow_commands, visible
from ..terminal import Screen
from . import EXIT_OK, Command, UsageError, output_format, prepare, progress, reading_options, write


class Score(Command):
    name = "score"
    help = "time-to-train and score of every benchmark folder under PATH"
    description = (
        "Time-to-train and score of every benchmark folder under PATH, as the official summarizer computes them."
    )
    epilog = "columns of the text table:\n" + legend_text("  ")
    document = SCORES
    format_help = "text (default), json, or csv: the official summarizer's two tables"

    def parents(self) -> list[argparse.ArgumentParser]:
        return [reading_options(jobs="score benchmark folders")]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path", metavar="PATH", help="any PATH that `check` accepts")
        parser.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help="write to FILE (csv: FILE and FILE_detailed.csv; - for standard output)",
        )

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        fmt = output_format(host, SCORES, args.format)
        if args.output == STANDARD_OUTPUT:  # every file of the format goes to standard output, as without -o
            args.output = None
        outputs = [args.output] if args.output else []
        if args.output and fmt.companions:
            if not args.output.endswith(fmt.extension):
                files = " and ".join(f"FILE{suffix}{fmt.extension}" for suffix in ("", *fmt.companions))
                raise UsageError(f"--format {fmt.name} writes {files}: give a FILE ending in {fmt.extension}")
            stem = args.output[: -len(fmt.extension)]
            outputs += [f"{stem}{suffix}{fmt.extension}" for suffix in fmt.companions]
        # every file of the format, before the scores are computed
        prepared = prepare(args, args.path, outputs)
        target = prepared.target
        with progress(args, "scoring") as show:
            config, results = scored(target, prepared.config, host, jobs=max(1, args.jobs), progress=show)
        said = f"ruleset {config.ruleset}, {config.ruleset_named_by()}"
        # where a folder named the round, the inference's own note says it a second time
        inferred = f"ruleset {config.ruleset} inferred"
        notes = (said, *(n for n in config.notes if not (config.ruleset_from and n.startswith(inferred))))
        if config.ruleset_dates_fit and not config.ruleset_from:  # PKG024's case: say it before the table
            fit = config.ruleset_dates_fit
            notes = (
                said,
                f"the logs were written in {fit}'s window, not {config.ruleset}'s: what the round's rules decide "
                f"(compliance, RCPs, validity) may not apply; score with --ruleset {fit} if the package is for it",
                *notes[1:],
            )
        for note in notes:
            print(no_workflow_commands(f"note: {visible(note)}"), file=sys.stderr)
        document = ScoresDocument(
            results,
            config.ruleset,
            str(args.path),
            notes,
            Screen.of(None if args.output else sys.stdout),
            lambda path: openable(str(args.path), path),
        )
        pages = as_files(fmt.render_document(SCORES, document))
        if args.output:
            for output, page in zip(outputs, pages):
                write(page, output, [target])
        else:
            write("\n".join(pages), None)
        return EXIT_OK
