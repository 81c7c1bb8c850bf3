"""`mlperf-audit report PATH -o report.html`: one self-contained HTML file for a reviewer.

The command checks and scores PATH, collecting each run's convergence curve in the same pass, and
hands the page to the `html` format (`mlperf_audit.formats.html`: its template, its plots, its
escaping and its Content Security Policy). Without -o the report is `report.html` in the current
folder, which is refused (exit 2, asking for -o) when that lies inside PATH, beside a checked log
included.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from typing import Any

from .. import reference
from ..engine import api
from ..engine.plugins import PluginHost
from ..formats.documents import HTML_REPORT, FolderPlotData, HtmlReportDocument
from ..model import BenchmarkResult
from ..safety import STANDARD_OUTPUT, OutputError, visible, write_text
from ..scores import BenchmarkScore
from . import Command, output_format, prepare, progress, reading_options, rendered


@dataclass
class Curve:
    name: str
    points: list[tuple[float, float]]


def _finite(value: Any) -> float | None:
    """The value as a plottable float; None for non-numbers, NaN, infinities and huge integers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def curves(result: BenchmarkResult) -> list[Curve]:
    """Each run's evaluations as a curve: quality (the reference's `curve_metric` where the records
    carry several) against progress in the benchmark's convergence unit, the one its RCPs use."""
    facts = reference.benchmarks.facts(result.benchmark)
    found = []
    for run in result.runs:
        points = []
        for event in run.all("eval_accuracy"):
            if facts.curve_metric is not None and event.meta("metric") != facts.curve_metric:
                continue
            x, y = _finite(event.meta(facts.convergence_key)), _finite(event.value)
            if x is not None and y is not None:
                points.append((x, y))
        if points:
            found.append(Curve(run.name[: -len(".txt")], sorted(points)))
    return found


def curve_points(result: BenchmarkResult) -> list[tuple[str, list[tuple[float, float]]]]:
    """`curves` as plain values, which the cache of whole checks can keep (`engine.api`): the
    report of an unchanged tree is answered from it, curves included."""
    return [(curve.name, curve.points) for curve in curves(result)]


curve_points.plain = True  # type: ignore[attr-defined]


def _as_curves(kept: Any) -> list[Curve]:
    """`curve_points`'s values, as computed or as read back from the cache (lists for tuples)."""
    return [Curve(name, [(x, y) for x, y in points]) for name, points in kept]


def unit_title(facts: reference.benchmarks.Benchmark) -> str:
    """The convergence axis's title: what the logged key counts where the work model names it
    (bert's `epoch_num` counts 512-token sequences), and the key itself."""
    if facts.work is None:
        return facts.convergence_key
    return f"{facts.work.unit}s ({facts.convergence_key})"


def folder_plots(scores: list[BenchmarkScore], found: dict[str, Any]) -> list[FolderPlotData]:
    """Each benchmark folder's plot data: the convergence curves (collected in the check's pass)
    against the unit and quality its benchmark logs, and its score (the runs' times, the highest
    utilisation of the accelerators' peak, the envelope)."""
    plots = []
    by_path = {s.path: s for s in scores}
    for path, kept in found.items():
        folder_curves = _as_curves(kept)
        result = by_path.get(path)
        benchmark = result.benchmark if result is not None else path.rsplit("/", 1)[-1]
        facts = reference.benchmarks.facts(benchmark)
        quality = facts.curve_metric or "eval_accuracy"
        plots.append(FolderPlotData(path, folder_curves, unit_title(facts), quality, result))
    return plots


DEFAULT_OUTPUT = "report.html"


class HtmlReport(Command):
    name = "report"
    help = "a self-contained HTML report with plots, for reviewers"

    def parents(self) -> list[argparse.ArgumentParser]:
        return [reading_options(partial=False, jobs="check and score benchmark folders")]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path", metavar="PATH", help="any PATH that `check` accepts")
        parser.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help=f"the HTML file, outside PATH (default: {DEFAULT_OUTPUT} in the current folder, "
            "refused when that is inside PATH or beside the checked log; - for standard output)",
        )

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        fmt = output_format(host, HTML_REPORT, "html")
        output = args.output or DEFAULT_OUTPUT
        try:
            prepared = prepare(args, args.path, [output])
        except OutputError as error:
            if args.output:
                raise
            raise OutputError(
                f"{error} (without -o the report is {DEFAULT_OUTPUT} in the current folder: give -o FILE)"
            ) from None
        target = prepared.target
        jobs = max(1, args.jobs)
        # one discovery and one parse of each log: the check, the scores and the curves
        with progress(args, "checking") as show:
            review = api.review(target, prepared.config, host, show, jobs=jobs, score=True, collect=curve_points)
        report, scores = review.report, list(review.scores)
        document = HtmlReportDocument(report, scores, folder_plots(scores, review.collected))
        write_text(output, rendered(fmt, HTML_REPORT, document), [target])
        summary = f"({len(report.findings)} findings, {len(scores)} scores)"
        if output == STANDARD_OUTPUT:  # the page is the standard output: the summary goes beside it
            print(f"mlperf-audit: wrote the report to standard output {summary}", file=sys.stderr)
        else:
            print(f"wrote {visible(str(output))} {summary}")
        return report.exit_code
