"""The recipe to rerun one result as text, Markdown and JSON (document kind `recipe`).

Whatever the package says (a README's command, a variable's value) is a quotation: shown
escaped (`visible`, and Markdown's own syntax as character references), marked with where it
comes from, and never laid out as a command to paste.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ..recipes import Quoted, Recipe
from ..safety import json_document, no_workflow_commands, visible
from .ci import markdown_text
from .documents import RecipeDocument


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


def text_document(document: RecipeDocument) -> str:
    return render_text(document.recipe, document.opened)


def markdown_document(document: RecipeDocument) -> str:
    return render_markdown(document.recipe)


def json_document_of(document: RecipeDocument) -> str:
    return json_document(document.recipe.to_dict())
