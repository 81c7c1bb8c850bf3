"""Output formats: each turns a document into text: the check's `Report`, and the documents of
`score`, `compare`, `audit`, `reproduce`, `report` and `export` (`formats.documents`, one kind each). Plugins
add formats through the `mlperf_audit_register_formats` hook, each declaring the kinds it renders;
this module registers the built-in ones the same way, and every command looks its `--format` up
among the formats of its kind (`lookup`).

The `Report` already shows every control or invisible character of the findings visibly; each
format also escapes what its own syntax gives meaning to (`mlperf_audit.safety`), since a file
name or a log value is written by whoever made the package.
"""

from __future__ import annotations

import importlib
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..errors import AuditError
from ..markers import hookimpl
from ..model import Finding, Severity
from ..report import Report
from ..safety import json_document, no_workflow_commands, visible
from ..suggest import did_you_mean
from ..terminal import Screen, render
from .documents import AUDIT, CHECK, COMPARISON, EXPORT, HTML_REPORT, KINDS, RECIPE, SCORES

#: What a format renders a document into: its text, or the texts of several files (`Format.companions`).
Rendered = str | tuple[str, ...]


@dataclass(frozen=True)
class Format:
    """An output format: `render` turns the check's `Report` into text (None: the format renders no
    check report), and `documents` renders each further kind of document it declares
    (`formats.documents`: SCORES, COMPARISON, AUDIT, RECIPE, HTML_REPORT, EXPORT) into text."""

    name: str
    description: str
    render: Callable[[Report], str] | None = None
    #: The format cites the lines the findings point at: the check quotes them into the report
    #: (`Report.evidence`), reading those files again.
    quotes: bool = False
    documents: Mapping[str, Callable[[Any], Rendered]] = field(default_factory=dict)
    #: A format written as several files (CSV's two tables): the file name's ending (".csv") and,
    #: for each file after the first, what is added before it ("_detailed" gives FILE_detailed.csv).
    extension: str = ""
    companions: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of document it renders."""
        return tuple(kind for kind in KINDS if self.renders(kind))

    def renders(self, kind: str) -> bool:
        return self.render is not None if kind == CHECK else kind in self.documents

    def render_document(self, kind: str, document: Any) -> Rendered:
        if kind == CHECK and self.render is not None:
            return self.render(document)
        if kind not in self.documents:
            raise AuditError(f"the format {self.name!r} renders no {kind} document")
        return self.documents[kind](document)


def _deferred(module: str, name: str) -> Callable[[Any], Rendered]:
    """The renderer `name` of `formats.<module>`, imported when first called: the scores, audit
    and HTML renderers pull in the claims, YAML and template code, which a check (and each of its
    worker processes) never needs."""

    def renderer(document: Any) -> Rendered:
        function: Callable[[Any], Rendered] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return function(document)

    renderer.__qualname__ = renderer.__name__ = f"{module}.{name}"
    return renderer


class UnknownFormat(AuditError):
    """No format of that name renders the document asked for: a usage error (exit 2)."""


def formats_of(formats: Mapping[str, Format], kind: str) -> list[str]:
    """The names of the formats that render `kind`, in the order they were registered."""
    return [name for name, fmt in formats.items() if fmt.renders(kind)]


def lookup(formats: Mapping[str, Format], kind: str, name: str) -> Format:
    """The format `name` for a document of `kind`; an error naming the closest one that renders it."""
    known = formats_of(formats, kind)
    if name not in known:
        raise UnknownFormat(
            f"unknown format {name!r}{did_you_mean(name, known)}; available: {', '.join(sorted(known))}"
        )
    return formats[name]


def as_files(rendered: Rendered) -> Sequence[str]:
    return (rendered,) if isinstance(rendered, str) else rendered


def render_json(report: Report) -> str:
    return json_document(report.to_dict())


@dataclass(frozen=True)
class TextDisplay:
    """What the text format shows and how: infos or not, only the summary (`--quiet`), the table
    by rule (`--statistics`), and the screen it is drawn for (`terminal.Screen`)."""

    show_info: bool = False
    quiet: bool = False
    statistics: bool = False
    screen: Screen = Screen()


#: A rule found more often than this in one folder shows its first finding and "and N more like it".
REPEATS_SHOWN = 3
#: How many other locations "and N more like it" names before an ellipsis.
REPEATS_NAMED = 3
_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}


def openable(base: str, path: str | None = None) -> str:
    """`path` (relative to the folder `base`, as the user gave it) as a person opens it from the
    current folder: relative to it when it lies under it, else joined to `base` as given (absolute
    if `base` was). Lexical: a link is never resolved."""
    base = base.replace(os.sep, "/")
    joined = posixpath.normpath(posixpath.join(base, path)) if path else posixpath.normpath(base)
    if posixpath.isabs(joined):
        relative = os.path.relpath(joined, os.getcwd()).replace(os.sep, "/")
        if relative != ".." and not relative.startswith("../"):
            return relative
    return joined


def opened_path(report: Report, path: str | None) -> str:
    """A finding's `path` (relative to the checked PATH; None: the PATH itself) as a person opens it
    from the current folder."""
    if path is None:
        return openable(report.target.path)
    base = report.target.path
    if report.target.kind == "log file":
        base = posixpath.dirname(base.replace(os.sep, "/")) or "."
    return openable(base, path)


@dataclass
class _Shown:
    """A finding the text shows, with what is folded under it."""

    finding: Finding
    effects: list[Finding] = field(default_factory=list)  # findings that follow from it
    repeats: list[Finding] = field(default_factory=list)  # the same rule again in the same folder
    cause: Finding | None = None  # what it follows from, when it is shown on its own (-v)

    @property
    def worst(self) -> int:
        """The rank of the most severe finding it stands for (a waived one ranks last)."""
        ranks = [f.severity.rank for f in [self.finding, *self.effects, *self.repeats] if not f.waived_by]
        return max(ranks, default=-1)


def _folder(finding: Finding) -> tuple[str | None, ...]:
    """The rule and the folder a finding is in: its benchmark folder, else its file's folder."""
    where = None if finding.benchmark else posixpath.dirname(finding.path or "")
    return (finding.rule, finding.submitter, finding.system, finding.benchmark, where)


def _shown_findings(report: Report, display: TextDisplay) -> list[_Shown]:
    """The findings to show, in report order, each with the findings folded under it (-v folds
    nothing: each finding on its own, one that follows from another saying so)."""
    show_info = display.show_info or report.config.fail_on == "info"
    visible_ones = [f for f in report.findings if show_info or f.severity is not Severity.INFO]
    if display.show_info:
        first: dict[str, Finding] = {}
        for finding in report.findings:
            first.setdefault(finding.fingerprint, finding)
        return [_Shown(f, cause=first.get(f.caused_by) if f.caused_by else None) for f in visible_ones]
    shown_by_fingerprint: dict[str, _Shown] = {}
    for finding in visible_ones:
        shown_by_fingerprint.setdefault(finding.fingerprint, _Shown(finding))
    top: list[_Shown] = []
    for finding in visible_ones:
        cause = shown_by_fingerprint.get(finding.caused_by) if finding.caused_by else None
        if cause is not None and cause.finding is not finding:
            cause.effects.append(finding)
            continue
        entry = shown_by_fingerprint[finding.fingerprint]
        top.append(entry if entry.finding is finding else _Shown(finding))
    by_folder: dict[tuple[str | None, ...], list[_Shown]] = {}
    for entry in top:
        by_folder.setdefault(_folder(entry.finding), []).append(entry)
    kept: list[_Shown] = []
    for entry in top:
        same = by_folder[_folder(entry.finding)]
        if len(same) <= REPEATS_SHOWN:
            kept.append(entry)
        elif entry is same[0]:
            for other in same[1:]:
                entry.repeats.append(other.finding)
                entry.effects.extend(other.effects)
            kept.append(entry)
    return kept


def _severity_text(finding: Finding) -> Text:
    label = finding.severity.value + (" (waived)" if finding.waived_by else "")
    return Text(label, style="dim" if finding.waived_by else _STYLE[finding.severity])


def _finding_rows(entry: _Shown, hints_shown: set[tuple[str, str]]) -> tuple[Text, Text, Text, Text]:
    finding = entry.finding
    body = Text(finding.message)
    if finding.hint and (finding.rule, finding.hint) not in hints_shown:
        hints_shown.add((finding.rule, finding.hint))
        body.append("\nhint: " + finding.hint, style="dim")
    if finding.waived_by:
        body.append("\nwaived: " + finding.waived_by, style="dim")
    if entry.cause is not None:
        location = posixpath.basename(entry.cause.path or "") + (f":{entry.cause.line}" if entry.cause.line else "")
        body.append(f"\nfollows from {entry.cause.rule} ({location})", style="italic")
    if entry.effects:
        codes = list(dict.fromkeys(f"{f.rule} ({f.severity.value})" for f in entry.effects))
        count = len(entry.effects)
        body.append(f"\n{count} more follow{'s' if count == 1 else ''} from it: {', '.join(codes)}", style="italic")
    if entry.repeats:
        named = [posixpath.basename(f.path or "") + (f":{f.line}" if f.line else "") for f in entry.repeats]
        listed = ", ".join(named[:REPEATS_NAMED]) + (", …" if len(named) > REPEATS_NAMED else "")
        body.append(f"\nand {len(entry.repeats)} more like it in this folder: {listed}", style="italic")
    line = Text(f"{finding.line}:" if finding.line else "", style="dim")
    return line, _severity_text(finding), Text(finding.rule, style="bold"), body


def _findings_section(report: Report, display: TextDisplay) -> list[Any]:
    entries = _shown_findings(report, display)
    groups: dict[str, list[_Shown]] = {}
    for entry in entries:
        groups.setdefault(opened_path(report, entry.finding.path), []).append(entry)
    # errors first: the files with an error, then those with a warning, each in report order; at
    # each severity, a finding about the whole PATH that others follow from (the round taken) leads
    ordered = sorted(
        groups.items(),
        key=lambda item: (
            -max(entry.worst for entry in item[1]),
            not any(entry.effects and entry.finding.path in (None, ".") for entry in item[1]),
        ),
    )
    hints_shown: set[tuple[str, str]] = set()
    parts: list[Any] = []
    for path, group in ordered:
        group.sort(key=lambda entry: (-entry.worst, entry.finding.line or 0))
        table = Table.grid(padding=(0, 1), pad_edge=False)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(ratio=1, overflow="fold")
        for entry in group:
            table.add_row(*_finding_rows(entry, hints_shown))
        parts += [Text(""), Text(path, style="bold", no_wrap=True, overflow="ignore"), Padding(table, (0, 0, 0, 2))]
    return parts


def _statistics(report: Report) -> Table:
    """Findings by rule and by the severity each was reported at (a rule's findings may differ from
    its declared severity: a tolerated LOG005 is a warning), errors first, then the most frequent."""
    counts: dict[tuple[str, Severity], int] = {}
    names: dict[str, str] = {}
    for finding in report.findings:
        if not finding.waived_by:
            key = (finding.rule, finding.severity)
            counts[key] = counts.get(key, 0) + 1
            names.setdefault(finding.rule, finding.name)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column("count", justify="right")
    table.add_column("code")
    table.add_column("name", overflow="fold")
    table.add_column("severity")
    rank = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    for (code, level), count in sorted(counts.items(), key=lambda item: (rank[item[0][1]], -item[1], item[0][0])):
        rule = report.rule(code)
        name = rule.name if rule is not None else names[code]
        table.add_row(str(count), code, visible(name), Text(level.value, style=_STYLE[level]))
    return table


def _summary(report: Report, display: TextDisplay) -> Text:
    summary = report.summary
    fail_on = report.config.fail_on
    verdict = {0: "passed", 1: "failed", 2: "internal error: a rule crashed (CHK001)"}[report.exit_code]
    if report.exit_code == 0 and fail_on == "never":
        verdict = "exit 0 (--fail-on never)"
    elif report.exit_code < 2 and fail_on not in ("error", "never"):  # the default goes without saying
        verdict += f" (--fail-on {fail_on})"
    infos_hidden = summary["info"] and not (display.show_info or fail_on == "info")
    text = Text(no_wrap=display.quiet, overflow="ignore")  # -q: one line, for scripts
    for severity, label in ((Severity.ERROR, "error(s)"), (Severity.WARNING, "warning(s)")):
        count = summary[severity.value]
        text.append(f"{count} {label}", style=_STYLE[severity] if count else "")
        text.append(", ")
    text.append(f"{summary['info']} info" + (" (hidden, -v)" if infos_hidden else ""))
    if summary.get("waived"):
        text.append(f", {summary['waived']} waived")
    text.append(f" in {report.target.result_files} result file(s): ")
    text.append(verdict, style="bold " + ("green" if report.exit_code == 0 else "red"))
    return text


def render_text(report: Report, display: TextDisplay | None = None) -> str:
    """Problems first: errors and warnings grouped under the file they are about (errors first),
    infos counted (shown with `display.show_info`), what follows from one cause folded under it,
    a rule repeated in one folder shown once; then the summary line."""
    display = display or TextDisplay()
    parts: list[Any] = []
    if not display.quiet:
        target = opened_path(report, None)
        inferred = f"ruleset {report.ruleset} inferred"
        # the round a package fits is said in the header; why it fits, with -v (PKG020 says when it does not)
        notes = [note for note in report.config.notes if display.show_info or not note.startswith(inferred)]
        ruleset = f"{report.ruleset} ({visible(report.config.ruleset_named_by())})"
        files = report.target.result_files
        parts.append(
            Text(f"mlperf-audit {report.tool_version} · {ruleset} · {target}: {files} result file{'s' * (files != 1)}")
        )
        if display.show_info:
            parts.append(Text(f"checked {visible(report.target.describe())}", style="dim"))
            parts.append(Text(f"mlperf-logging {report.mlperf_logging}", style="dim"))
        # the options typed are known to who typed them; a configuration file obeyed may not be
        if display.show_info or set(report.config.sources) - {"command line"}:
            parts.append(Text(f"config: {visible(report.config.describe())}", style="dim"))
        parts += [Text(f"note: {note}", style="dim") for note in notes]
        parts += _findings_section(report, display)
        if report.scores:
            from . import score_tables

            table = score_tables.render_text(
                list(report.scores), display.screen, lambda path: opened_path(report, path)
            )
            # drawn for the screen already (fitted, or rows kept whole for a pipe): written as it is
            parts += [Text(""), Text("scores:"), Text.from_ansi(table.rstrip("\n"), no_wrap=True)]
    if display.statistics:
        parts += [Text(""), _statistics(report)] if not display.quiet else [_statistics(report)]
    if parts:
        parts.append(Text(""))
    parts.append(_summary(report, display))
    # wrapping a long message can put any part of it at the start of a line
    return no_workflow_commands(render(display.screen, *parts) + "\n")


TEXT = Format(
    "text",
    "problems first, grouped by file (infos with check -v), then a summary line",
    render_text,
    documents={
        SCORES: _deferred("score_tables", "text_document"),
        COMPARISON: _deferred("comparison", "text_document"),
        AUDIT: _deferred("audit", "text_document"),
        RECIPE: _deferred("recipe", "text_document"),
    },
)
JSON = Format(
    "json",
    "the stable machine-readable report (schema_version 1)",
    render_json,
    documents={
        SCORES: _deferred("score_tables", "json_document_of"),
        COMPARISON: _deferred("comparison", "json_document_of"),
        AUDIT: _deferred("audit", "json_document_of"),
        RECIPE: _deferred("recipe", "json_document_of"),
        EXPORT: _deferred("export", "json_document_of"),
    },
)
CSV = Format(
    "csv",
    "the official summarizer's two tables of scores: FILE.csv and FILE_detailed.csv",
    documents={SCORES: _deferred("score_tables", "csv_document"), EXPORT: _deferred("export", "csv_document")},
    extension=".csv",
    companions=("_detailed",),
)
HTML = Format(
    "html",
    "a self-contained HTML page with plots, for reviewers",
    documents={HTML_REPORT: _deferred("html", "render_document")},
)
SUMMARY_JSON = Format(
    "summary-json",
    "the official result summarizer's JSON summary (its strong-scaling table's rows) of export's results",
    documents={EXPORT: _deferred("export", "summary_json")},
)


@hookimpl
def mlperf_audit_register_formats() -> list[Format]:
    from . import ci, objection

    return [
        TEXT,
        JSON,
        CSV,
        HTML,
        SUMMARY_JSON,
        Format("sarif", "SARIF 2.1.0 for code scanning (github/codeql-action/upload-sarif)", ci.render_sarif),
        Format("junit", "JUnit XML: a test suite per benchmark folder, a test case per run", ci.render_junit),
        Format("github", "GitHub workflow commands: annotations on the offending lines", ci.render_github),
        Format(
            "markdown",
            "a Markdown job summary: status first, then a table per submitter",
            ci.render_markdown,
            documents={RECIPE: _deferred("recipe", "markdown_document")},
        ),
        Format(
            "objection",
            "per submitter, the text of an objection as the submission rules ask reviewers to file it (Markdown)",
            objection.render_objection,
            quotes=True,
        ),
    ]


def builtin_formats() -> dict[str, Format]:
    """The built-in formats by name, as the registry holds them without plugins."""
    return {fmt.name: fmt for fmt in mlperf_audit_register_formats()}
