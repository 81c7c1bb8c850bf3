"""`mlperf-audit reproduce RESULT_FOLDER`: the recipe to rerun one result from its package.

It reads the submitter's package above `results/` and prints (text, JSON or Markdown): the code,
the container image and its base (pinned or not), the framework release, the launch
configuration and what it sets, how the implementation's scripts choose it and the launch
commands its README gives, the hyperparameters and seeds the logs record, the dataset and
checkpoints the benchmark needs, and what a rerun lacks (exit code 1 when something is missing).

Whatever the package says (a README's command, a variable's value) is a quotation: shown
escaped (`visible`, and Markdown's own syntax as character references), marked with where it
comes from, and never laid out as a command to paste.
"""

from __future__ import annotations

import argparse
import os
import posixpath
from pathlib import Path

from ..config import load_config
from ..engine import api
from ..engine.plugins import PluginHost
from ..errors import AuditError, TargetError
from ..formats import openable
from ..formats.documents import RECIPE, RecipeDocument
from ..safety import output_path, visible
from . import EXIT_FINDINGS, EXIT_OK, Command, output_format, reading_options, rendered, write


class Reproduce(Command):
    name = "reproduce"
    help = "the recipe to rerun one result folder from its package"
    document = RECIPE

    def parents(self) -> list[argparse.ArgumentParser]:
        return [reading_options(partial=False)]

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("folder", metavar="RESULT_FOLDER", help="<submitter>/results/<system>/<benchmark>")
        parser.add_argument(
            "-o",
            "--output",
            metavar="FILE",
            help="write to FILE (never inside the submitter's package; - for standard output)",
        )

    def run(self, args: argparse.Namespace, host: PluginHost) -> int:
        fmt = output_format(host, RECIPE, args.format)
        folder = Path(args.folder)
        if not folder.is_dir():
            raise TargetError(f"{visible(args.folder)}: no such folder")
        # the package is the submitter's folder, three above the result: its checked PATH
        package = Path(os.path.abspath(folder)).parent.parent.parent  # lexically: links are not followed
        if args.output:
            output_path(args.output, [package])
        config = load_config(
            target=package,
            config_file=args.config,
            trust_tree_config=args.trust_tree_config,
            ruleset=args.ruleset,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
        )
        recipe = api.reproduce(folder, config, host)
        if recipe is None:
            raise AuditError("no plugin makes recipes (is the reproducibility plugin disabled?)")
        # where a person reads it: paths that open from the current folder
        as_given = posixpath.normpath(posixpath.join(str(args.folder).replace(os.sep, "/"), "..", "..", ".."))
        document = RecipeDocument(recipe, lambda path: openable(as_given, path))
        write(rendered(fmt, RECIPE, document), args.output, [package])
        return EXIT_OK if recipe.complete else EXIT_FINDINGS
