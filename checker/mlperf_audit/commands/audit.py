"""`mlperf-audit audit PATH [--baseline PATH] [--claims FILE]`: a reviewer's view of claims, and of
speedups over a baseline that the hardware cannot support.

The command checks and scores PATH in one pass (every rule, the plausibility and forensic ones
included), then:

- without a claims file, a peer table per benchmark: each result's score, accelerators, work per
  accelerator per minute and its ratio to the median of its peers, utilisation where the work
  model applies, and the codes of the findings on that result (what stands out);
- with `--baseline PATH`, the best result of each benchmark in PATH against the baseline's: the
  two per-accelerator measures `compare` shows under the same names (`mlperf_audit.scores`), the
  accelerator-minutes ratio and the work per accelerator-minute ratio, the latter against what the
  hardware supports (the rules of scope "comparison", AUD007 among them, judge the same
  `Comparison`);
- with `--claims FILE`, a verdict per claim: supported, overstated, understated or not checkable,
  with the recomputed numbers, whether the gain fits what the hardware supports, and caveats.

The claims file's format and the verdicts: `mlperf_audit.review.claims` and docs/claims.md; the peer and
baseline tables: `mlperf_audit.review.peers`.

Names, description fields and claims are shown `visible`, and no line of the text can start a CI
workflow command. `-o FILE` must lie outside PATH and outside the baseline PATH.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ..config import load_config
from ..engine import api
from ..engine.plugins import PluginHost
from ..formats.documents import AUDIT, AuditDocument
from ..review.claims import claims_exit_code, judge_claim, load_claims
from ..review.peers import baseline_rows, peer_rows
from ..scores import Comparison
from ..terminal import Screen
from . import (
    Command,
    UsageError,
    checked_target,
    must_exist,
    output_format,
    prepare,
    progress,
    reading_options,
    rendered,
    write,
)

EXIT_CODES = """\
exit codes:
  0  no finding at or above --fail-on, and every claim supported or understated
  1  a finding at or above --fail-on, or a claim overstated or not checkable
  2  a usage or configuration error: PATH missing, a claims file that is not valid
     (unknown key, wrong type, unknown benchmark: one line naming the claim and the field)

The claims file format: docs/claims.md."""


class Audit(Command):
    name = "audit"
    help = "plausibility, forensics, peers and claims: a reviewer's view"
    description = (
        "Checks and scores PATH with every rule, then shows each result against its peers, "
        "the best results against a --baseline PATH, and a verdict on each claim of a --claims file."
    )
    epilog = EXIT_CODES
    document = AUDIT

    def parents(self) -> list[argparse.ArgumentParser]:
        return [reading_options(partial=False, jobs="check and score benchmark folders")]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("path", metavar="PATH", help="any PATH that `check` accepts")
        parser.add_argument("--baseline", metavar="PATH", help="compare each benchmark's best result with this PATH's")
        parser.add_argument("--baseline-ruleset", metavar="RULESET", help="the round of the baseline, if not --ruleset")
        parser.add_argument(
            "--claims",
            metavar="FILE",
            help="a YAML file of claims to verify (docs/claims.md); exit 1 if one is overstated or not checkable",
        )
        parser.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help="write to FILE instead of standard output (never inside PATH or the baseline PATH)",
        )
        parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"))

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        fmt = output_format(host, AUDIT, args.format)
        baseline_target = None
        if args.baseline:
            must_exist(args.baseline)
            baseline_target = checked_target(args.baseline)[0]
        also = [baseline_target] if baseline_target else []
        prepared = prepare(args, args.path, [args.output], also_checked=also, fail_on=args.fail_on)
        target = prepared.target
        claimed = load_claims(args.claims) if args.claims else []  # a claims file that is not one: before the check
        jobs = max(1, args.jobs)
        with progress(args, "checking") as show:  # one parse for the check and the scores
            review = api.review(target, prepared.config, host, show, jobs=jobs, score=True)
        report, scores = review.report, list(review.scores)
        config = report.config  # the ruleset resolved for the package, as the check used it
        if claimed and config.ruleset_dates_fit and not config.ruleset_from:
            # a verdict on a claim may be filed as an objection: never one recomputed under a round guessed
            raise UsageError(
                f"the claims are not judged: nothing names the round, {config.ruleset} was taken (the newest "
                f"allowing every benchmark), but the logs were written in {config.ruleset_dates_fit}'s window; "
                f"name the round: --ruleset {config.ruleset_dates_fit} (or ruleset = "
                f'"{config.ruleset_dates_fit}" in .mlperf-audit.toml), or --ruleset {config.ruleset} if the '
                "results are that round's"
            )
        codes: dict[tuple[Any, Any, Any], set[str]] = {}
        for finding in report.findings:
            if finding.severity.value != "info" and finding.rule[:3] in ("AUD", "FOR", "RCP", "PKG", "HYP"):
                codes.setdefault((finding.submitter, finding.system, finding.benchmark), set()).add(finding.rule)
        peers = peer_rows(scores, codes)
        versus: list[dict[str, Any]] = []
        if baseline_target is not None:
            with progress(args, "scoring the baseline") as show:
                baseline = api.score(
                    baseline_target,
                    load_config(
                        target=baseline_target,
                        ruleset=args.baseline_ruleset or args.ruleset,
                        cache_dir=args.cache_dir,
                        use_cache=not args.no_cache,
                    ),
                    host,
                    jobs=jobs,
                    progress=show,
                )
            versus = baseline_rows(scores, baseline)
            compared = api.compare_baseline(
                Comparison(tuple(scores), tuple(baseline), str(args.baseline)), target, config, host
            )
            if compared:
                report = dataclasses.replace(report, findings=report.findings + tuple(compared))
        claims = [judge_claim(claim, scores) for claim in claimed]
        screen = Screen.of(None if args.output else sys.stdout)
        document = AuditDocument(report, peers, versus, claims, screen)
        write(rendered(fmt, AUDIT, document), args.output, [target, *also])
        return max(report.exit_code, claims_exit_code(claims))
