"""SYS: the system descriptions, `systems/<system>.json`."""

from __future__ import annotations

from mlperf_audit import IssueRule, Rule, Severity, hookimpl
from mlperf_audit.discovery import Code


class SystemJsonInvalid(IssueRule):
    """A system description cannot be read as one JSON object.

    What it checks: that `systems/<system>.json` is UTF-8 text holding one JSON object.

    Why it matters: the division, the availability and the hardware of every result come from
    this file; the official package checker and summarizer crash on a broken one.

    Example: a trailing comma (`"sw_notes": "",}`), or a JSON list instead of an object.

    How to fix: validate the file with `python -m json.tool systems/<system>.json` and correct it.
    """

    code = Code.SYSTEM_JSON_INVALID
    name = "system-json-invalid"
    summary = "A system description is not one valid JSON object."
    severity = Severity.ERROR
    scope = "system"


RULES: list[type[Rule]] = [SystemJsonInvalid]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
