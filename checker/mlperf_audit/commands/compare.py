"""`mlperf-audit compare A B`: the scores of two PATHs per benchmark: the basis of every "X% faster"
claim. The comparison is `mlperf_audit.review.comparison`'s; the formats of kind `comparison` render it."""

from __future__ import annotations

import argparse
import sys

from ..engine import api
from ..engine.plugins import PluginHost
from ..formats.documents import COMPARISON, ComparisonDocument
from ..review.comparison import compare
from ..safety import visible
from ..terminal import Screen
from . import (
    EXIT_OK,
    Command,
    checked_target,
    must_exist,
    output_format,
    prepare,
    progress,
    reading_options,
    rendered,
    write,
)


class Compare(Command):
    name = "compare"
    help = "per benchmark: the scores of A and B, speedup, accelerator-minutes and work per accelerator-minute"
    document = COMPARISON

    def parents(self) -> list[argparse.ArgumentParser]:
        return [reading_options()]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("a", metavar="A", help="a PATH that `check` accepts (the baseline)")
        parser.add_argument("b", metavar="B", help="a PATH that `check` accepts (compared with A)")
        parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
        parser.add_argument("--ruleset-b", metavar="RULESET", help="the round of B, when it differs from A's")

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        fmt = output_format(host, COMPARISON, args.format)
        must_exist(args.b)
        side_b = checked_target(args.b)[0]
        a = prepare(args, args.a, [args.output], also_checked=[side_b])
        b = prepare(args, args.b, ruleset=args.ruleset_b)
        with progress(args, f"scoring {visible(args.a)}") as show:
            scores_a = api.score(a.target, a.config, host, progress=show)
        with progress(args, f"scoring {visible(args.b)}") as show:
            scores_b = api.score(b.target, b.config, host, progress=show)
        screen = Screen.of(None if args.output else sys.stdout)
        document = ComparisonDocument(compare(scores_a, scores_b), str(args.a), str(args.b), screen)
        write(rendered(fmt, COMPARISON, document), args.output, [a.target, b.target])
        return EXIT_OK
