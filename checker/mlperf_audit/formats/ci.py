"""Formats for where users work: SARIF 2.1.0 (code scanning), JUnit XML (CI test reports), GitHub
workflow commands (annotations on the PR's lines) and Markdown (a job summary).

Paths are relative to the current directory (the checked PATH joined with each finding's path),
so a job that runs from the repository root gets repository-relative paths.

What the package put in a finding is escaped as each consumer requires: the runner's own
%-escapes in workflow commands, character references in XML and Markdown (where HTML is obeyed),
backslashes before square brackets in SARIF messages (which are plain text with embedded links),
links a Markdown renderer would find by itself made inert, and `visible` escapes in all of them
for what XML or a terminal cannot show.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Callable, Iterator, Sequence
from xml.etree import ElementTree

from tabulate import tabulate

from ..model import Finding, Severity
from ..report import Report
from ..safety import json_document, visible

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
#: What GitHub shows of one step's workflow commands: the runner keeps the first 10 errors, the
#: first 10 warnings and the first 10 notices of a step and only counts the rest
#: (`_maxCountPerIssueType = 10` in actions/runner, src/Runner.Worker/ExecutionContext.cs, where the
#: steps of a composite action add theirs to the one step of the job that uses it), and a job shows
#: at most 50 in all ("10 per step, or 50 per job": github.com/orgs/community/discussions/26680,
#: zizmorcore/zizmor#634). The rest are dropped without a word.
ANNOTATIONS_PER_KIND = 10
ANNOTATIONS_PER_JOB = 50
#: The runner refuses a whole step summary over 1 MiB (`AttachmentSizeLimit = 1024 * 1024` of
#: CreateStepSummaryCommand in actions/runner: "$GITHUB_STEP_SUMMARY upload aborted, supports
#: content up to a size of 1024k"): the summary is then lost, not cut.
STEP_SUMMARY_LIMIT = 1024 * 1024
#: What the Markdown report may take of that by default; keep well under it.
MARKDOWN_LIMIT = 900_000
#: Rows of one rule in a submitter's table of the Markdown report; the rest are counted in one row.
ROWS_PER_RULE = 10


#: A square bracket, with the backslashes right before it.
_SARIF_BRACKET = re.compile(r"(\\*)([\[\]])")


def sarif_text(text: str) -> str:
    """A SARIF plain-text message (SARIF 2.1.0 §3.11.6): `[text](target)` there is an embedded
    link, so every literal `[` and `]` is escaped with a backslash. The backslashes already in
    front of one are doubled first, so that a bracket is escaped whether a viewer reads `\\\\` as
    one backslash or as two."""
    return _SARIF_BRACKET.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def render_sarif(report: Report) -> str:
    codes = sorted({f.rule for f in report.findings})
    index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        rule = report.rule(code)
        doc = rule.doc() if rule is not None else ""
        rules.append(
            {
                "id": code,
                "name": rule.name if rule is not None else code,
                "shortDescription": {"text": sarif_text(rule.summary if rule is not None else code)},
                "fullDescription": {"text": sarif_text(doc or code)},
                "help": {"text": sarif_text(doc or code)},
                "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity] if rule is not None else "error"},
                "properties": {"tags": [code.rstrip("0123456789")], "plugin": getattr(rule, "plugin", "")},
            }
        )
    results = []
    for finding in report.findings:
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": SARIF_LEVEL[finding.severity],
            "message": {"text": sarif_text(finding.message + (f"\nHint: {finding.hint}" if finding.hint else ""))},
            "partialFingerprints": {"mlperfAudit/v1": finding.fingerprint},
        }
        path = report.repository_path(finding.path)
        if path is not None:
            location: dict[str, Any] = {"artifactLocation": {"uri": path}}
            if finding.line:
                location["region"] = {"startLine": finding.line}
            result["locations"] = [{"physicalLocation": location}]
        related: list[dict[str, Any]] = []
        for other, line in finding.related:
            uri = report.repository_path(other)
            if uri is not None:
                place: dict[str, Any] = {"artifactLocation": {"uri": uri}}
                if line:
                    place["region"] = {"startLine": line}
                related.append({"id": len(related), "physicalLocation": place})
        if related:
            result["relatedLocations"] = related
        if finding.waived_by:
            result["suppressions"] = [{"kind": "external", "justification": finding.waived_by}]
        results.append(result)
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mlperf-audit",
                        "version": report.tool_version,
                        "informationUri": "https://github.com/mlcommons/logging",
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": report.exit_code != 2,
                        "properties": {
                            "ruleset": report.ruleset,
                            "rulesetNamedBy": report.config.ruleset_named_by(),
                            "mlperfLogging": report.mlperf_logging,
                        },
                    }
                ],
                "results": results,
            }
        ],
    }
    return json_document(document, keep_newlines=True)  # a rule's description keeps its lines


def workflow_data(text: str) -> str:
    """As the runner unescapes a command's message: only the tool's own line breaks survive,
    as %0A, so nothing after them can start a command."""
    return visible(text, keep_newlines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(report: Report, finding: Finding) -> str:
    """One finding as a workflow command: an annotation on its file and line."""
    properties = []
    path = report.repository_path(finding.path)
    if path is not None:
        properties.append(f"file={workflow_property(path)}")
        if finding.line:
            properties.append(f"line={finding.line}")
    properties.append(f"title={workflow_property(f'{finding.rule} {finding.name}')}")
    message = finding.message + (f"\nHint: {finding.hint}" if finding.hint else "")
    return f"::{GITHUB_COMMAND[finding.severity]} {','.join(properties)}::{workflow_data(message)}"


def _counts(report: Report) -> str:
    summary = report.summary
    return f"{summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info"


def render_github(report: Report) -> str:
    """Every finding that is not waived as a workflow command (as `ruff --output-format github`
    does), then a line of counts. The Action itself keeps within GitHub's limits (`annotate`)."""
    lines = [annotation(report, finding) for finding in report.findings if not finding.waived_by]
    lines.append(f"mlperf-audit: {_counts(report)}")
    return "\n".join(lines) + "\n"


#: The kinds of annotation, in the order they are given room: errors first.
KINDS = (Severity.ERROR, Severity.WARNING, Severity.INFO)


@dataclass(frozen=True)
class Annotations:
    """The workflow commands of one step, within what GitHub shows, and what they leave out."""

    commands: tuple[str, ...]
    annotated: dict[Severity, int]  # commands of each kind
    left: dict[Severity, int]  # findings of each kind without a command
    info_asked: bool  # whether infos were to be annotated at all
    annotated_rules: dict[str, int]  # annotations of each rule's findings

    def describe_left(self) -> str:
        """ "12 errors, 80 warnings and 367 info findings" (only the kinds that left something out)."""
        return _and([_count(self.left[kind], kind) for kind in KINDS if self.left[kind]])


def _count(number: int, kind: Severity) -> str:
    noun = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info finding"}[kind]
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _and(parts: list[str]) -> str:
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else "".join(parts)


def _spread(findings: list[Finding]) -> list[int]:
    """The findings' indices, the first of every rule before the second of any: when only some
    can be annotated, they show as many different problems as there are (a renamed folder gives
    ten findings of one rule, which would otherwise take every place)."""
    taken: Counter[str] = Counter()
    ranked = []
    for index, finding in enumerate(findings):
        ranked.append((taken[finding.rule], index))
        taken[finding.rule] += 1
    return [index for _, index in sorted(ranked)]


def annotate(
    report: Report,
    *,
    annotate_info: bool = False,
    gate_errors: Sequence[str] = (),
    per_kind: int = ANNOTATIONS_PER_KIND,
    per_job: int = ANNOTATIONS_PER_JOB,
) -> Annotations:
    """At most `per_kind` annotations of each kind and `per_job` in all, errors given room first,
    then warnings, then (only when `annotate_info`) infos; every finding left out is counted, so
    that the job summary can say so. `gate_errors` are the caller's own error commands (what the
    Action refuses to check), annotated before the findings' errors."""
    chosen: dict[Severity, list[str]] = {kind: [] for kind in KINDS}
    left = dict.fromkeys(KINDS, 0)
    by_rule: Counter[str] = Counter()
    room = per_job
    for kind in KINDS:
        findings = [f for f in report.findings if f.severity is kind and not f.waived_by]
        offered = len(findings) + (len(gate_errors) if kind is Severity.ERROR else 0)
        if kind is Severity.INFO and not annotate_info:
            left[kind] = offered
            continue
        places = max(0, min(per_kind, room, offered))
        commands = list(gate_errors[:places]) if kind is Severity.ERROR else []
        picked = sorted(_spread(findings)[: places - len(commands)])  # annotated in report order
        commands += [annotation(report, findings[index]) for index in picked]
        by_rule.update(findings[index].rule for index in picked)
        chosen[kind] = commands
        left[kind] = offered - len(commands)
        room -= len(commands)
    return Annotations(
        commands=tuple(command for kind in KINDS for command in chosen[kind]),
        annotated={kind: len(chosen[kind]) for kind in KINDS},
        left=left,
        info_asked=annotate_info,
        annotated_rules=dict(by_rule),
    )


def _xml(text: str) -> str:
    """Text that XML 1.0 can hold: ElementTree escapes markup, but writes a control character
    (an ESC in a member name) as it is, which makes the document ill-formed."""
    return visible(text, keep_newlines=True)


def render_junit(report: Report) -> str:
    """A test suite per benchmark folder, a test case per run and one for the folder itself."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_path[finding.path or "."].append(finding)
    folders: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for kind, path in report.checked:
        folder = path if kind == "benchmark" else path.rsplit("/", 1)[0] if "/" in path else "."
        folders[folder].append((kind, path))
    claimed = {path for cases in folders.values() for _, path in cases}
    root = ElementTree.Element("testsuites", name="mlperf-audit", tests="0", failures="0")
    total = failures = 0

    def case(suite: ElementTree.Element, name: str, classname: str, findings: list[Finding]) -> int:
        element = ElementTree.SubElement(suite, "testcase", name=_xml(name), classname=_xml(classname))
        failing = [f for f in findings if report.config.fails(f.severity) and not f.waived_by]
        text = "\n".join(
            f"{f.rule} [{f.severity.value}] {f.message}" + (f" (line {f.line})" if f.line else "") for f in findings
        )
        if failing:
            failure = ElementTree.SubElement(
                element, "failure", message=_xml(failing[0].message[:200]), type=_xml(failing[0].rule)
            )
            failure.text = _xml(text)
        elif text:
            ElementTree.SubElement(element, "system-out").text = _xml(text)
        return 1 if failing else 0

    for folder, cases in sorted(folders.items()):
        suite = ElementTree.SubElement(root, "testsuite", name=_xml(folder))
        suite_failures = 0
        for kind, path in cases:
            findings = [
                f
                for p, fs in by_path.items()
                for f in fs
                if p == path or (kind == "benchmark" and p.startswith(path + "/") and p not in claimed)
            ]
            suite_failures += case(suite, path.rsplit("/", 1)[-1] if kind == "run" else "(folder)", folder, findings)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(suite_failures))
        total += len(cases)
        failures += suite_failures
    loose = [
        f
        for p, fs in sorted(by_path.items())
        for f in fs
        if p not in claimed and not any(p.startswith(folder + "/") for folder in folders if folder != ".")
    ]
    suite = ElementTree.SubElement(root, "testsuite", name="package")
    suite_failures = case(suite, "package and system descriptions", "package", loose)
    suite.set("tests", "1")
    suite.set("failures", str(suite_failures))
    root.set("tests", str(total + 1))
    root.set("failures", str(failures + suite_failures))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


#: Characters of data written as character references: HTML's (GitHub obeys HTML in a job
#: summary), a table cell's pipe, and what starts emphasis, code, a link, an image, strikethrough,
#: math, a heading or an escape. A reference is decoded the same in Markdown text and in the HTML of
#: the <details> line, where a backslash escape would show as written.
_MARKDOWN = {ord(c): f"&#{ord(c)};" for c in "&<>|\\`*_[]!~$#"}


#: Where GitHub's Markdown makes a link of plain text by itself (the autolink extension of GitHub
#: Flavored Markdown): the `:` of a scheme's `://` (`http://`, `https://`, `ftp://`), the dot of
#: `www.` (in any case) and the `@` of an e-mail address (`mailto:` and `xmpp:` links need one too).
_AUTOLINK_TRIGGER = re.compile(r":(?=//)|(?<=www)\.|@", re.IGNORECASE)


def inert_links(text: str) -> str:
    """`text` with every autolink trigger in square brackets (`https[:]//`, `www[.]`, `a[@]b.org`),
    the way addresses are defanged in security reports: still readable, never a link. The
    extension reads the text after character references are decoded, so a reference alone would
    not do."""
    return _AUTOLINK_TRIGGER.sub(lambda match: f"[{match.group()}]", text)


def markdown_text(text: str) -> str:
    """Data for the Markdown summary: shown as written, whether in a table cell or in HTML, and
    never a link (the brackets `inert_links` adds are written as character references too)."""
    return inert_links(visible(text)).translate(_MARKDOWN)


@dataclass(frozen=True)
class _Section:
    """A collapsible part of the Markdown report whose table can be cut after any row."""

    summary: str  # the HTML of its <summary> line
    table: list[str]  # header, separator, then one line per row
    opened: bool = False

    def text(self, rows: int | None = None) -> str:
        lines = self.table if rows is None else self.table[: 2 + rows]
        body = "\n".join(lines)
        return f"\n<details{' open' if self.opened else ''}><summary>{self.summary}</summary>\n\n{body}\n\n</details>"


def _table(rows: list[list[str]], headers: list[str]) -> list[str]:
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True).splitlines()


def _annotation_note(annotations: Annotations, sarif_file: str | None) -> str:
    """What the annotations on the files show and what they leave out, in counts that add up."""
    shown = _and([_count(annotations.annotated[kind], kind) for kind in KINDS if annotations.annotated[kind]])
    note = f"Annotated on the files: {shown or 'nothing'}."
    if not any(annotations.left.values()):
        return note
    why = []
    if annotations.left[Severity.ERROR] or annotations.left[Severity.WARNING] or annotations.info_asked:
        why.append(
            f"GitHub shows at most {ANNOTATIONS_PER_KIND} annotations of each kind per step "
            f"and {ANNOTATIONS_PER_JOB} per job, and drops the rest without a word"
        )
    if annotations.left[Severity.INFO] and not annotations.info_asked:
        why.append("info findings are annotated only with <code>annotate-info: true</code>")
    where = "the tables below list them" + (
        f", and the SARIF file <code>{markdown_text(sarif_file)}</code> holds every finding" if sarif_file else ""
    )
    return f"{note} **Not annotated: {annotations.describe_left()}** ({'; '.join(why)}): {where}."


def _by_rule(report: Report, annotations: Annotations | None) -> _Section:
    """One row per rule: how many findings, how many annotated, in how many submitters."""
    counted: Counter[str] = Counter()
    waived: Counter[str] = Counter()
    submitters: dict[str, set[str]] = defaultdict(set)
    first: dict[str, Finding] = {}
    for finding in report.findings:
        first.setdefault(finding.rule, finding)
        (waived if finding.waived_by else counted)[finding.rule] += 1
        submitters[finding.rule].add(finding.submitter or "")
    order = sorted(first, key=lambda code: (KINDS.index(first[code].severity), -counted[code], code))
    rows = []
    for code in order:
        finding = first[code]
        rule = report.rule(code)
        parts = [f"{counted[code]} in {len(submitters[code])} submitter(s)"]
        if annotations is not None:
            parts.append(f"{annotations.annotated_rules.get(code, 0)} annotated")
        if waived[code]:
            parts.append(f"{waived[code]} waived")
        rows.append(
            [
                finding.severity.value,
                f"<code>{markdown_text(code)}</code> {markdown_text(finding.name)}",
                ", ".join(parts),
                markdown_text(rule.summary if rule is not None else ""),
            ]
        )
    return _Section(
        f"<b>by rule</b>: {len(order)} rule(s)", _table(rows, ["severity", "rule", "findings", "summary"]), True
    )


def _submitter(report: Report, submitter: str, findings: list[Finding]) -> _Section:
    """A submitter's findings, errors first; beyond `ROWS_PER_RULE` of one rule, one row counts the rest."""
    rows = []
    shown: Counter[str] = Counter()
    more: dict[str, list[Finding]] = defaultdict(list)
    for finding in sorted(findings, key=lambda f: KINDS.index(f.severity)):
        if shown[finding.rule] >= ROWS_PER_RULE:
            more[finding.rule].append(finding)
            continue
        shown[finding.rule] += 1
        rows.append(
            [
                finding.severity.value + (" (waived)" if finding.waived_by else ""),
                f"<code>{markdown_text(finding.rule)}</code>",
                markdown_text(
                    f"{report.repository_path(finding.path) or '-'}" + (f":{finding.line}" if finding.line else "")
                ),
                markdown_text(finding.message),
            ]
        )
    for code, rest in more.items():
        rows.append(
            [
                rest[0].severity.value,
                f"<code>{markdown_text(code)}</code>",
                "…",
                f"and {len(rest)} more like these in this submitter (the SARIF and JSON reports list every one)",
            ]
        )
    errors = sum(1 for f in findings if f.severity is Severity.ERROR and not f.waived_by)
    return _Section(
        f"<b>{markdown_text(submitter)}</b>: {len(findings)} finding(s), {errors} error(s)",
        _table(rows, ["severity", "rule", "location", "message"]),
        opened=errors > 0,
    )


def _submitter_name(finding: Finding) -> str:
    return finding.submitter or "(whole PATH)"


#: Room kept for the line that says the report was cut (its numbers included).
_CUT_ROOM = 400


def render_markdown(
    report: Report,
    *,
    annotations: Annotations | None = None,
    sarif_file: str | None = None,
    limit: int = MARKDOWN_LIMIT,
) -> str:
    """The job summary: the status, the counts, what the annotations left out (given `annotations`,
    as the Action does), a table by rule, a table per submitter and the scores. At most `limit`
    bytes of UTF-8 (GitHub drops a whole step summary over 1 MiB): a table that does not fit is cut
    after its last row that does, and a line says how much was left out."""
    summary = report.summary
    status = {0: "passed", 1: "failed", 2: "could not complete (internal or plugin error)"}[report.exit_code]
    icon = {0: "✅", 1: "❌", 2: "⚠️"}[report.exit_code]
    parts = [
        f"### {icon} mlperf-audit {status}",
        "",
        f"**{summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info**"
        + (f", {summary['waived']} waived" if summary.get("waived") else "")
        + f" in {report.target.result_files} result file(s) — {markdown_text(report.target.describe())}; ruleset "
        f"<code>{markdown_text(report.ruleset)}</code> ({markdown_text(report.config.ruleset_named_by())}), mlperf-logging {markdown_text(report.mlperf_logging)}, "
        f"fail-on <code>{markdown_text(report.config.fail_on)}</code>.",
    ]
    if annotations is not None:
        parts += ["", _annotation_note(annotations, sarif_file)]
    groups = [(submitter, list(group)) for submitter, group in groupby(report.findings, key=_submitter_name)]
    # built one at a time: what comes after a cut is never tabulated
    sections: Iterator[Callable[[], _Section]] = itertools.chain(
        [functools.partial(_by_rule, report, annotations)] if report.findings else [],
        (functools.partial(_submitter, report, submitter, findings) for submitter, findings in groups),
    )
    count = len(groups) + (1 if report.findings else 0)
    used = sum(len(part.encode()) + 1 for part in parts) + _CUT_ROOM  # the limit is in bytes; data may be any script
    for index, build in enumerate(sections):
        section = build()
        text = section.text()
        if used + len(text.encode()) + 1 <= limit:
            parts.append(text)
            used += len(text.encode()) + 1
            continue
        rows = len(section.table) - 2
        fitting = 0
        size = len(section.text(0).encode()) + 1
        while fitting < rows and used + size + len(section.table[2 + fitting].encode()) + 1 <= limit:
            size += len(section.table[2 + fitting].encode()) + 1
            fitting += 1
        if fitting:
            parts.append(section.text(fitting))
        rows_left, tables_left = (rows - fitting, count - index - 1) if fitting else (0, count - index)
        parts.append(
            f"\n_The summary was cut here to stay under GitHub's 1 MiB limit of a step summary: "
            f"{rows_left} more row(s) of the last table and {tables_left} more table(s)"
            f"{' and the scores' if report.scores else ''} are not shown; the SARIF and JSON reports are complete._"
        )
        return "\n".join(parts) + "\n"
    if report.scores:
        scores = _markdown_scores(report)
        if used + len(scores.encode()) + 1 <= limit:
            parts.append(scores)
        else:
            parts.append(
                "\n_The scores are not shown, to stay under GitHub's 1 MiB limit of a step summary; "
                "the JSON report holds them._"
            )
    return "\n".join(parts) + "\n"


def _markdown_scores(report: Report) -> str:
    """The scores table of `check --score` (the Action's summary), from the same parse as the findings."""
    rows = [
        [
            markdown_text(score.submitter or "-"),
            markdown_text(score.system or "-"),
            markdown_text(score.benchmark),
            markdown_text(score.division or "-"),
            markdown_text(
                f"{score.system_info.get('accelerators_count', '?')} x {score.system_info.get('accelerator_model_name', '?')}"
            ),
            f"{sum(1 for run in score.runs if run.counted)}/{len(score.runs)}",
            "-" if score.score_minutes is None else f"{score.score_minutes:.3f}",
            "yes" if score.valid else f"**{score.validity}**: {markdown_text(', '.join(score.invalid))}",
        ]
        for score in report.scores
    ]
    table = tabulate(
        rows,
        headers=[
            "submitter",
            "system",
            "benchmark",
            "division",
            "accelerators",
            "runs converged",
            "score (min)",
            "valid",
        ],
        tablefmt="github",
        disable_numparse=True,
    )
    invalid = sum(1 for score in report.scores if score.valid is False)
    unknown = sum(1 for score in report.scores if score.valid is None)
    counted = f", {invalid} invalid (an error about the folder: scored all the same)" if invalid else ""
    if unknown:
        counted += f", {unknown} of unknown validity (their errors follow from a round nothing named)"
    return f"\n<details><summary><b>scores</b>: {len(rows)} benchmark result(s){counted}</summary>\n\n{table}\n\n</details>"
