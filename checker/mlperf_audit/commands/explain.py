"""`mlperf-audit explain CODE|NAME`: a rule's documentation."""

from __future__ import annotations

import argparse

from ..engine.plugins import PluginHost
from ..suggest import did_you_mean_rule
from . import EXIT_OK, Command, UsageError, write


class Explain(Command):
    name = "explain"
    help = "print the documentation of a rule"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("rule", metavar="CODE", help="a rule code (e.g. LOG005) or name")

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        rule = host.rule(args.rule)
        if rule is None:
            hint = did_you_mean_rule(args.rule, [r.code for r in host.rules], [r.name for r in host.rules])
            raise UsageError(f"no rule {args.rule!r}{hint}; `mlperf-audit rules` lists them")
        rulesets = ", ".join(sorted(rule.rulesets)) if rule.rulesets is not None else "every ruleset"
        header = (
            f"{rule.code} {rule.name}\n"
            f"severity: {rule.severity.value} · scope: {rule.scope} · plugin: {rule.plugin} · "
            f"applies to: {rulesets}\n\n"
        )
        write(header + rule.doc() + "\n", None)
        return EXIT_OK
