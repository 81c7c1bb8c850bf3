"""Output formats: each turns one `Report` into text. Plugins add formats through the
`mlperf_audit_register_formats` hook; this module registers the built-in ones the same way.

The `Report` already shows every control or invisible character of the findings visibly; each
format also escapes what its own syntax gives meaning to (`mlperf_audit.safety`), since a file
name or a log value is written by whoever made the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Callable

from tabulate import tabulate

from .. import scores
from ..markers import hookimpl
from ..report import Report
from ..safety import json_document, no_workflow_commands, visible

#: Messages wider than this wrap inside their table cell.
MESSAGE_WIDTH = 90


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    render: Callable[[Report], str]


def render_json(report: Report) -> str:
    return json_document(report.to_dict())


def _group_title(key: tuple[str | None, str | None, str | None]) -> str:
    parts = [part for part in key if part]
    return " / ".join(parts) if parts else "(whole PATH)"


def render_text(report: Report) -> str:
    lines = [
        f"mlperf-audit {report.tool_version} · ruleset {report.ruleset} · mlperf-logging {report.mlperf_logging}",
        f"checked {report.target.path} ({visible(report.target.describe())})",
        f"config: {visible(report.config.describe())}",
    ]
    lines += [f"note: {note}" for note in report.config.notes]
    for key, group in groupby(report.findings, key=lambda f: (f.submitter, f.system, f.benchmark)):
        rows = []
        for finding in group:
            # the Report already shows every text of a finding visibly (`report.shown`)
            text = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
            if finding.waived_by:
                text += f"\nwaived: {finding.waived_by}"
            severity = finding.severity.value + (" (waived)" if finding.waived_by else "")
            rows.append((finding.location, severity, finding.rule, text))
        lines += ["", _group_title(key)]
        table = tabulate(
            rows,
            headers=("location", "severity", "rule", "message"),
            tablefmt="simple",
            maxcolwidths=[None, None, None, MESSAGE_WIDTH],
            disable_numparse=True,  # a location or message is shown as written, never reformatted as a number
        )
        lines += ["  " + line for line in table.splitlines()]
    summary = report.summary
    verdict = {
        0: f"passed (nothing at or above --fail-on {report.config.fail_on})",
        1: f"failed (findings at or above --fail-on {report.config.fail_on})",
        2: "internal error: a rule crashed (CHK001)",
    }[report.exit_code]
    if report.exit_code == 0 and report.config.fail_on == "never":
        verdict = "exit 0 (--fail-on never)"
    if report.scores:
        lines += ["", "scores:", scores.render_text(list(report.scores)).rstrip("\n")]
    lines += [
        "",
        f"{summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info "
        f"in {report.target.result_files} result file(s): {verdict}",
    ]
    # wrapping a long message can put any part of it at the start of a line
    return no_workflow_commands("\n".join(lines) + "\n")


TEXT = Format("text", "a table per submitter / system / benchmark, then a summary line", render_text)
JSON = Format("json", "the stable machine-readable report (schema_version 1)", render_json)


@hookimpl
def mlperf_audit_register_formats() -> list[Format]:
    from . import ci

    return [
        TEXT,
        JSON,
        Format("sarif", "SARIF 2.1.0 for code scanning (github/codeql-action/upload-sarif)", ci.render_sarif),
        Format("junit", "JUnit XML: a test suite per benchmark folder, a test case per run", ci.render_junit),
        Format("github", "GitHub workflow commands: annotations on the offending lines", ci.render_github),
        Format("markdown", "a Markdown job summary: status first, then a table per submitter", ci.render_markdown),
    ]
