"""`mlperf-audit plugins`: the loaded plugins and their versions (and mlperf-logging's)."""

from __future__ import annotations

import argparse
import json

from tabulate import tabulate

from ..engine.plugins import PluginHost
from ..report import mlperf_logging_version
from . import EXIT_OK, Command, write


class Plugins(Command):
    name = "plugins"
    help = "list the loaded plugins"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the plugins as JSON")

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        if args.json:
            write(json.dumps([p.to_dict() for p in host.plugins], indent=2) + "\n", None)
            return EXIT_OK
        counts = {p.name: 0 for p in host.plugins}
        for rule in host.rules:
            counts[rule.plugin] = counts.get(rule.plugin, 0) + 1
        rows = [
            (p.name, p.module, p.distribution, p.version, "yes" if p.builtin else "no", counts[p.name])
            for p in host.plugins
        ]
        headers = ("plugin", "module", "distribution", "version", "built-in", "rules")
        write(tabulate(rows, headers=headers) + "\n", None)
        write(f"mlperf-logging {mlperf_logging_version()}\n", None)
        return EXIT_OK
