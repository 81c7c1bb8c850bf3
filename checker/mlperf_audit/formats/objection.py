"""`--format objection`: per submitter, the text of an objection as the MLPerf submission rules ask
a reviewer to file it.

The MLCommons submission rules (github.com/mlcommons/policies, `submission_rules.adoc`, "Filing
objections") ask for a GitHub issue in the submission repository "that cites the offending lines,
the rules section violated, and, if pertinent, corresponding lines of the reference
implementation", with a "by <org>" and an "against <org>" tag. This writes one such text per
submitter, in Markdown (what a GitHub issue holds): for every error that is not waived (and every
warning too when asked: `--fail-on warning`, `objected`), the finding, its evidence (each line it points at, `file:line`, and the record quoted
as the package holds it) and the rule it breaks (the rule's own documentation: what it checks and
why it matters, with where that documentation is kept). The reviewer adds the reference
implementation's lines where pertinent and their own organisation's tag.

Everything the package wrote (names, paths, messages, records) is escaped as the Markdown summary
escapes it (`ci.markdown_text`): shown as written, never markup, never a link.
"""

from __future__ import annotations

from itertools import groupby

from ..errors import AuditError
from ..model import Finding, Severity
from ..report import Report
from ..rule import Rule
from ..safety import no_workflow_commands
from .ci import markdown_text

#: Where the submission rules describe the objection an issue must be (cited in every text).
SUBMISSION_RULES = "github.com/mlcommons/policies, submission_rules.adoc, section “Filing objections”"
#: The sections of a rule's documentation an objection quotes: what the rule is, and why it matters.
CITED_SECTIONS = ("What it checks:", "Why it matters:")
_ALL_SECTIONS = (*CITED_SECTIONS, "Example:", "How to fix:")


def _of_the_round(paragraph: str, ruleset: str) -> str:
    """A list of what each round's rules say (`- training X.Y.Z: ...`) cut to the round checked."""
    items = [line.strip() for line in paragraph.strip().splitlines()]
    if not items or not all(item.startswith("- training ") for item in items):
        return paragraph
    version = ruleset.split("-", 1)[-1]
    kept = [item for item in items if item.startswith(f"- training {version}:")]
    return "\n".join(kept or items)


def _sections(rule: type[Rule], ruleset: str) -> list[str]:
    """The cited sections of the rule's documentation, each as one paragraph (a list by round
    holding only the round checked)."""
    cited: list[str] = []
    current: list[str] | None = None
    for paragraph in rule.doc().split("\n\n"):
        text = " ".join(_of_the_round(paragraph, ruleset).split())
        if text.startswith(_ALL_SECTIONS):
            current = [] if text.startswith(CITED_SECTIONS) else None
            if current is not None:
                cited.append("")
        if current is not None and text:
            cited[-1] = (cited[-1] + " " + text).strip()
    return cited


def _where(finding: Finding) -> str:
    location = finding.path or "(the checked folder)"
    return location + (f":{finding.line}" if finding.line else "")


def _evidence(report: Report, finding: Finding) -> list[str]:
    lines = []
    for path, line in ((finding.path, finding.line), *finding.related):
        quoted = report.quote(path, line)
        place = markdown_text(f"{path}:{line}" if line else str(path))
        if quoted is not None:
            lines.append(f"  - <code>{place}</code>: <code>{markdown_text(quoted)}</code>")
        elif path:
            lines.append(f"  - <code>{place}</code>")
    return lines


def _rule_text(report: Report, code: str, name: str) -> list[str]:
    rule = report.rule(code)
    if rule is None:
        return [f"Rule broken: {markdown_text(code)} {markdown_text(name)} (its plugin is not loaded here)."]
    lines = [f"Rule broken: **{markdown_text(code)} {markdown_text(rule.name)}**: {markdown_text(rule.summary)}", ""]
    lines += "\n>\n".join(f"> {markdown_text(section)}" for section in _sections(rule, report.ruleset)).splitlines()
    lines += [
        "",
        f"Source: the documentation of {markdown_text(code)} (<code>mlperf-audit explain {markdown_text(code)}</code>), "
        f"rule class <code>{markdown_text(rule.__module__ + '.' + rule.__qualname__)}</code>.",
    ]
    return lines


def _objection(report: Report, submitter: str, findings: list[Finding], left_out: int = 0) -> list[str]:
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    lines = [
        f"## Objection against {markdown_text(submitter)}",
        "",
        f"Tags: <code>by &#60;your org&#62;</code>, <code>against {markdown_text(submitter)}</code>",
        "",
        f"{len(findings)} finding(s), {errors} error(s), of mlperf-audit {markdown_text(report.tool_version)} "
        f"(ruleset <code>{markdown_text(report.ruleset)}</code>, {markdown_text(report.config.ruleset_named_by())}; mlperf-logging "
        f"{markdown_text(report.mlperf_logging)}) on <code>{markdown_text(report.target.path)}</code>. Filed as "
        f"the MLPerf submission rules ask ({markdown_text(SUBMISSION_RULES)}): the offending lines and the rule "
        "each breaks; add the reference implementation's lines where pertinent."
        + (
            f" {left_out} warning(s) of this submitter are not filed (<code>--fail-on warning</code> files them)."
            if left_out
            else ""
        ),
    ]
    by_rule = {
        code: list(group) for code, group in groupby(sorted(findings, key=lambda f: f.rule), key=lambda f: f.rule)
    }
    # the rules with an error first, then by code
    ordered = sorted(by_rule.items(), key=lambda item: (-max(f.severity.rank for f in item[1]), item[0]))
    for number, (code, listed) in enumerate(ordered, 1):
        lines += ["", f"### {number}. {markdown_text(code)} {markdown_text(listed[0].name)}", ""]
        lines += _rule_text(report, code, listed[0].name)
        lines.append("")
        for finding in listed:
            scope = "/".join(markdown_text(part) for part in (finding.system, finding.benchmark) if part)
            lines.append(
                f"- **{finding.severity.value}** at <code>{markdown_text(_where(finding))}</code>"
                + (f" ({scope})" if scope else "")
                + f": {markdown_text(finding.message)}"
            )
            lines += _evidence(report, finding)
            if finding.hint:
                lines.append(f"  - hint: {markdown_text(finding.hint)}")
    return lines


def objected(report: Report) -> Severity:
    """The lowest severity an objection is filed for: an error, a finding the rules are certain of,
    unless a warning fails the check too (`--fail-on warning` or `info`): a warning is a guess to
    read before filing, and an info a fact, never an objection."""
    if report.config.fail_on in ("warning", "info"):
        return Severity.WARNING
    return Severity.ERROR


def _left_out(report: Report, lowest: Severity) -> str:
    """What is not filed, and how to file it (warnings, when only errors are)."""
    warnings = sum(1 for f in report.findings if f.severity is Severity.WARNING and not f.waived_by)
    if lowest is Severity.WARNING or not warnings:
        return ""
    return (
        f" {warnings} warning(s) are not filed: a warning is a guess, read its evidence first "
        "(<code>--fail-on warning</code> files warnings too)."
    )


def render_objection(report: Report) -> str:
    """One objection per submitter with an error that is not waived (a warning too with `--fail-on
    warning`). None under a round that nothing named while the logs' dates fit another
    (`Config.ruleset_dates_fit`): what the round's rules found would be filed against rules the
    package may not be under."""
    config = report.config
    if config.ruleset_dates_fit and not config.ruleset_from:
        raise AuditError(
            f"no objection is written under a guessed round: nothing names the round, {config.ruleset} was "
            f"taken (the newest allowing every benchmark), but the logs were written in "
            f"{config.ruleset_dates_fit}'s window; name the round: --ruleset {config.ruleset_dates_fit}, or "
            f"--ruleset {config.ruleset} if the package is that round's"
        )
    lowest = objected(report)
    kept = [f for f in report.findings if f.severity.rank >= lowest.rank and not f.waived_by]
    if not kept:
        what = "error" if lowest is Severity.ERROR else "finding at warning or above"
        return no_workflow_commands(
            f"No objection: no {what} in <code>{markdown_text(report.target.path)}</code>."
            + _left_out(report, lowest)
            + "\n"
        )
    by_submitter: dict[str, list[Finding]] = {}
    for finding in kept:
        by_submitter.setdefault(finding.submitter or "(whole PATH)", []).append(finding)
    warnings: dict[str, int] = {}
    if lowest is Severity.ERROR:
        for finding in report.findings:
            if finding.severity is Severity.WARNING and not finding.waived_by:
                submitter = finding.submitter or "(whole PATH)"
                warnings[submitter] = warnings.get(submitter, 0) + 1
    parts: list[str] = []
    for submitter, findings in sorted(by_submitter.items()):
        parts += (["", "---", ""] if parts else []) + _objection(
            report, submitter, findings, warnings.get(submitter, 0)
        )
    return no_workflow_commands("\n".join(parts) + "\n")
