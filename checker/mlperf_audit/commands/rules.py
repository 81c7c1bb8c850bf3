"""`mlperf-audit rules [SELECTOR ...]`: every rule with its plugin, or those the selectors name."""

from __future__ import annotations

import argparse
import json
import sys

from ..engine.plugins import PluginHost
from ..engine.selection import check_selectors, matches
from ..terminal import Screen, table
from . import EXIT_OK, Command, write


class Rules(Command):
    name = "rules"
    help = "list every rule with its plugin"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "selectors",
            nargs="*",
            metavar="SELECTOR",
            help="only the rules these name, as --select does: a code, a prefix of codes (AUD) or a rule name; "
            "comma-separated or repeated",
        )
        parser.add_argument("--json", action="store_true", help="print the rules as JSON")

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        selectors = [part.strip() for text in args.selectors for part in text.split(",") if part.strip()]
        check_selectors(host.rules, selectors)
        shown = [rule for rule in host.rules if not selectors or any(matches(rule, s) for s in selectors)]
        if args.json:
            write(json.dumps([rule.describe() for rule in shown], indent=2) + "\n", None)
            return EXIT_OK
        rows = [(r.code, r.name, r.severity.value, r.scope, r.plugin, r.summary) for r in shown]
        headers = ("code", "name", "severity", "scope", "plugin", "summary")
        write(table(rows, headers, Screen.of(sys.stdout)) + "\n", None)
        return EXIT_OK
