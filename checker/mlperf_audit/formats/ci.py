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

import re
from collections import defaultdict
from itertools import groupby
from typing import Any
from xml.etree import ElementTree

from tabulate import tabulate

from ..model import Finding, Severity
from ..report import Report
from ..safety import json_document, visible

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
#: GitHub refuses a step summary over 1 MiB; keep well under it.
MARKDOWN_LIMIT = 900_000


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
                        "properties": {"ruleset": report.ruleset, "mlperfLogging": report.mlperf_logging},
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


def render_github(report: Report) -> str:
    lines = []
    for finding in report.findings:
        if finding.waived_by:
            continue
        properties = []
        path = report.repository_path(finding.path)
        if path is not None:
            properties.append(f"file={workflow_property(path)}")
            if finding.line:
                properties.append(f"line={finding.line}")
        properties.append(f"title={workflow_property(f'{finding.rule} {finding.name}')}")
        message = finding.message + (f"\nHint: {finding.hint}" if finding.hint else "")
        lines.append(f"::{GITHUB_COMMAND[finding.severity]} {','.join(properties)}::{workflow_data(message)}")
    summary = report.summary
    lines.append(f"mlperf-audit: {summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info")
    return "\n".join(lines) + "\n"


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


def render_markdown(report: Report) -> str:
    summary = report.summary
    status = {0: "passed", 1: "failed", 2: "could not complete (internal or plugin error)"}[report.exit_code]
    icon = {0: "✅", 1: "❌", 2: "⚠️"}[report.exit_code]
    parts = [
        f"### {icon} mlperf-audit {status}",
        "",
        f"**{summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info**"
        + (f", {summary['waived']} waived" if summary.get("waived") else "")
        + f" in {report.target.result_files} result file(s) — {markdown_text(report.target.describe())}; ruleset "
        f"<code>{markdown_text(report.ruleset)}</code>, mlperf-logging {markdown_text(report.mlperf_logging)}, "
        f"fail-on <code>{markdown_text(report.config.fail_on)}</code>.",
    ]
    used = sum(len(p.encode()) for p in parts)  # the limit is in bytes, and data may be any script
    truncated = False
    for submitter, group in groupby(report.findings, key=lambda f: f.submitter or "(whole PATH)"):
        findings = list(group)
        rows = [
            [
                f.severity.value + (" (waived)" if f.waived_by else ""),
                f"<code>{markdown_text(f.rule)}</code>",
                markdown_text(f"{report.repository_path(f.path) or '-'}" + (f":{f.line}" if f.line else "")),
                markdown_text(f.message),
            ]
            for f in findings
        ]
        errors = sum(1 for f in findings if f.severity is Severity.ERROR and not f.waived_by)
        table = tabulate(
            rows, headers=["severity", "rule", "location", "message"], tablefmt="github", disable_numparse=True
        )
        section = (
            f"\n<details{' open' if errors else ''}><summary><b>{markdown_text(submitter)}</b>: "
            f"{len(findings)} finding(s), "
            f"{errors} error(s)</summary>\n\n{table}\n\n</details>"
        )
        size = len(section.encode())
        if used + size > MARKDOWN_LIMIT:
            truncated = True
            break
        parts.append(section)
        used += size
    if report.scores and not truncated:
        section = _markdown_scores(report)
        if used + len(section.encode()) > MARKDOWN_LIMIT:
            truncated = True
        else:
            parts.append(section)
    if truncated:
        parts.append(
            "\n_The summary was cut to stay under GitHub's 1 MiB limit; the SARIF and JSON reports are complete._"
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
        ]
        for score in report.scores
    ]
    table = tabulate(
        rows,
        headers=["submitter", "system", "benchmark", "division", "accelerators", "runs converged", "score (min)"],
        tablefmt="github",
        disable_numparse=True,
    )
    return f"\n<details><summary><b>scores</b>: {len(rows)} benchmark result(s)</summary>\n\n{table}\n\n</details>"
