"""`mlperf-audit formats`: the output formats, and the documents each renders."""

from __future__ import annotations

import argparse

from tabulate import tabulate

from ..engine.plugins import PluginHost
from . import EXIT_OK, Command, write


class Formats(Command):
    name = "formats"
    help = "list the output formats"

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        rows = [
            (f.name, f.description, ", ".join(f.kinds)) for f in sorted(host.formats.values(), key=lambda f: f.name)
        ]
        write(tabulate(rows, headers=("format", "description", "renders")) + "\n", None)
        return EXIT_OK
