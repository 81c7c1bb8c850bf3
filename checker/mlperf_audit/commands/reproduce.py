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
import json
import os
import posixpath
from pathlib import Path
from typing import Any, Callable

from .. import api
from ..config import load_config
from ..errors import AuditError, TargetError
from ..formats import openable
from ..formats.ci import markdown_text
from ..plugins import PluginHost
from ..recipes import Quoted, Recipe
from ..safety import json_document, no_workflow_commands, output_path, visible, write_text
from . import EXIT_FINDINGS, EXIT_OK, add_reading_options, write


def _quoted(quote: Quoted, opened: Callable[[str], str] = str) -> str:
    return f"«{visible(quote.text)}»  ({visible(_located(quote.source, opened))})"


def _located(source: str, opened: Callable[[str], str]) -> str:
    """A `path[:line]` of the package as `opened` shows the path."""
    path, colon, line = source.rpartition(":")
    if colon and line.isdigit():
        return f"{opened(path)}:{line}"
    return opened(source)


def _value(value: Any) -> str:
    return visible(json.dumps(value) if not isinstance(value, str) else value)


def render_text(recipe: Recipe, opened: Callable[[str], str] = str) -> str:
    """The recipe as text; `opened` turns a path of the package into one that opens from where the
    reader is (the identity keeps them relative to the package)."""
    lines = [
        f"Recipe for {visible(opened(recipe.result))} ({recipe.benchmark}, {visible(recipe.system or '?')}, "
        f"{recipe.division or 'division unknown'})",
        "",
    ]

    def section(title: str, items: list[str]) -> None:
        lines.append(f"{title}:")
        lines.extend(f"  {item}" for item in items or ["(none)"])
        lines.append("")

    implementation = opened(recipe.implementation) if recipe.implementation else "no implementation found"
    section("Code", [visible(implementation), visible(recipe.trace)])
    section(
        "Environment",
        [f"framework: {visible(recipe.framework or '?')}"]
        + [
            f"base image {_quoted(q, opened)}: {'pinned by digest' if p else 'not pinned'}"
            for q, p in zip(recipe.images, recipe.pinned)
        ]
        + [f"the logs say the runs used {_quoted(q, opened)}" for q in recipe.ran_in],
    )
    section(
        f"Launch configuration ({recipe.certainty})",
        ([visible(opened(recipe.config))] if recipe.config else [])
        + [f"{visible(name)} = {_quoted(q, opened)}" for name, q in recipe.variables],
    )
    section(
        "How it is launched (quoted from the package, check before running)",
        ([f"configuration chosen by {_quoted(recipe.selection, opened)}"] if recipe.selection else [])
        + [_quoted(q, opened) for q in recipe.launch],
    )
    section("Hyperparameters the logs record", [f"{visible(k)} = {_value(v)}" for k, v in recipe.hyperparameters])
    section("Seeds", [f"{visible(run)}: {_value(seed)}" for run, seed in recipe.seeds])
    section("Data and checkpoints the benchmark needs", list(recipe.data))
    section("Missing for a rerun", [visible(m) for m in recipe.missing])
    lines += [f"note: {visible(n)}" for n in recipe.notes]
    return no_workflow_commands("\n".join(lines).rstrip() + "\n")


def render_markdown(recipe: Recipe) -> str:
    md = markdown_text

    def quote(q: Quoted) -> str:
        return f"«{md(q.text)}» <sub>{md(q.source)}</sub>"

    parts = [
        f"## Recipe: {md(recipe.result)}",
        "",
        f"{md(recipe.benchmark)} on {md(recipe.system or '?')}, {md(recipe.division or 'division unknown')}",
        "",
        "### Code",
        "",
        f"- {md(recipe.implementation or 'no implementation found')}",
        f"- {md(recipe.trace)}",
        "",
        "### Environment",
        "",
        f"- framework: {md(recipe.framework or '?')}",
    ]
    parts += [
        f"- base image {quote(q)}: {'pinned by digest' if p else 'not pinned'}"
        for q, p in zip(recipe.images, recipe.pinned)
    ]
    parts += [f"- the logs say the runs used {quote(q)}" for q in recipe.ran_in]
    parts += ["", f"### Launch configuration ({md(recipe.certainty)})", ""]
    parts += [f"- {md(recipe.config)}"] if recipe.config else ["- none"]
    parts += [f"- {md(name)} = {quote(q)}" for name, q in recipe.variables]
    parts += ["", "### How it is launched", "", "Quoted from the package: check before running anything.", ""]
    if recipe.selection:
        parts.append(f"- configuration chosen by {quote(recipe.selection)}")
    parts += [f"- {quote(q)}" for q in recipe.launch] or ["- none"]
    parts += ["", "### Hyperparameters the logs record", ""]
    parts += [f"- {md(k)} = {md(_value(v))}" for k, v in recipe.hyperparameters] or ["- none"]
    parts += ["", "### Seeds", ""] + ([f"- {md(run)}: {md(_value(seed))}" for run, seed in recipe.seeds] or ["- none"])
    parts += ["", "### Data and checkpoints the benchmark needs", ""] + (
        [f"- {md(d)}" for d in recipe.data] or ["- unknown"]
    )
    parts += ["", "### Missing for a rerun", ""] + ([f"- {md(m)}" for m in recipe.missing] or ["- nothing"])
    return no_workflow_commands("\n".join(parts) + "\n")


FORMATS = {"text": render_text, "markdown": render_markdown, "json": lambda r: json_document(r.to_dict())}


def run(args: argparse.Namespace, host: PluginHost) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise TargetError(f"{visible(args.folder)}: no such folder")
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
    if args.format == "text":  # where a person reads it: paths that open from the current folder
        as_given = posixpath.normpath(posixpath.join(str(args.folder).replace(os.sep, "/"), "..", "..", ".."))
        text = render_text(recipe, lambda path: openable(as_given, path))
    else:
        text = FORMATS[args.format](recipe)
    if args.output:
        write_text(args.output, text, [package])
    else:
        write(text, None)
    return EXIT_OK if recipe.complete else EXIT_FINDINGS


def add_command(commands: Any) -> None:
    parser = commands.add_parser("reproduce", help="the recipe to rerun one result folder from its package")
    parser.add_argument("folder", metavar="RESULT_FOLDER", help="<submitter>/results/<system>/<benchmark>")
    parser.add_argument("--format", default="text", choices=sorted(FORMATS))
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (never inside the submitter's package; - for standard output)",
    )
    add_reading_options(parser, partial=False)
    parser.set_defaults(handler=run)
