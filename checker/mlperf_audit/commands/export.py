"""`mlperf-audit export PATH...`: every result of one or more trees (rounds, submissions) as one
tidy table, a row per result (per run with --runs), in CSV or JSON; or the official summarizer's
JSON summary of them. Each PATH is checked and scored as `check --score` does, in turn; only its
scores and its findings counted per folder and per file are kept before the next one is read."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from typing import Iterable

from ..engine.api import check
from ..engine.plugins import PluginHost
from ..formats.documents import EXPORT, ExportDocument, ExportedTree
from ..model import Finding
from ..report import Report
from ..safety import STANDARD_OUTPUT, no_workflow_commands, visible
from . import EXIT_ERROR, EXIT_OK, Command, Prepared, output_format, prepare, progress, reading_options, rendered
from . import write as write_output


def _counted(findings: Iterable[Finding]) -> dict[str, int]:
    counts = Counter("waived" if finding.waived_by else finding.severity.value for finding in findings)
    return dict(counts)


def exported(given: str, report: Report) -> ExportedTree:
    """What the table needs of one PATH's report: its ruleset, its scores, and its findings
    counted by severity per benchmark folder and per result file (waived ones apart)."""
    by_folder: dict[tuple[str | None, str | None, str], list[Finding]] = {}
    by_file: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.benchmark is not None:
            by_folder.setdefault((finding.submitter, finding.system, finding.benchmark), []).append(finding)
        if finding.path is not None:
            by_file.setdefault(finding.path, []).append(finding)
    runs = {run.file for score in report.scores for run in score.runs}
    return ExportedTree(
        path=given,
        ruleset=report.ruleset,
        scores=tuple(report.scores),
        folder_findings={folder: _counted(found) for folder, found in by_folder.items()},
        # only the result files' counts are kept: a round has far more findings about other files
        file_findings={path: _counted(found) for path, found in by_file.items() if path in runs},
        ruleset_named_by=report.config.ruleset_named_by(),
    )


class Export(Command):
    name = "export"
    help = "every result of one or more PATHs (whole rounds too) as one table: CSV or JSON"
    description = (
        "Every result of one or more PATHs (rounds, submissions, any PATH `check` accepts) as one tidy table, "
        "a row per result (per run with --runs): the round, the system, the score, the energy, the RCP factor and "
        "the findings counted by severity, with the official summarizer's columns. docs/export.md lists every "
        "column and its unit."
    )
    epilog = (
        "exit codes: 0 the table was written (whatever the findings); 2 a usage error, a PATH that does not\n"
        "exist, or a rule that crashed while checking a PATH (the table is still written: its counts hold CHK001)"
    )
    document = EXPORT
    default_format = "csv"
    format_help = (
        "csv (default): the table; json: the same rows as objects; summary-json: the official result "
        "summarizer's JSON summary (its strong-scaling table) of the same results"
    )

    def parents(self) -> list[argparse.ArgumentParser]:
        return [reading_options(jobs="check benchmark folders")]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="any PATH that `check` accepts; several in turn")
        parser.add_argument("--runs", action="store_true", help="a row per run (result file) instead of per result")
        parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (- for standard output)")

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        fmt = output_format(host, EXPORT, args.format)
        output = None if args.output in (None, STANDARD_OUTPUT) else args.output
        # every PATH found and the output allowed beside each of them before the first is read
        prepared: list[Prepared] = []
        for given in args.paths:
            others = [p.target for p in prepared]
            prepared.append(prepare(args, given, [output], also_checked=others))
        targets = [p.target for p in prepared]
        trees = []
        crashed = False
        for index, (given, each) in enumerate(zip(args.paths, prepared)):
            # the folder's own name: a bar is one line, and a whole path would push the count off it
            name = visible(os.path.basename(os.path.normpath(given)) or given)
            what = f"exporting {name}" + (f" ({index + 1}/{len(prepared)})" if len(prepared) > 1 else "")
            with progress(args, what) as show:
                report = check(each.target, each.config, host, progress=show, jobs=max(1, args.jobs), score=True)
            for note in report.config.notes:
                print(no_workflow_commands(f"note: {visible(note)}"), file=sys.stderr)
            if report.exit_code == EXIT_ERROR:
                crashed = True
                print(
                    no_workflow_commands(f"error: a rule crashed while checking {visible(given)} (CHK001)"),
                    file=sys.stderr,
                )
            trees.append(exported(given, report))
            del report  # the next PATH is read without this one's findings held
        text = rendered(fmt, EXPORT, ExportDocument(tuple(trees), runs=args.runs))
        write_output(text, output, targets)
        return EXIT_ERROR if crashed else EXIT_OK
