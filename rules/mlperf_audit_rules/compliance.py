"""CMP: the official per-run compliance rules, read from the installed mlperf-logging.

`support.official_compliance` interprets the rule files with the official semantics and keeps the
append-only table of codes; this pack makes a rule class of each family the table lists, and
reports each run's official messages under their family's code. `python -m
mlperf_audit_rules.compliance --update` (`support.compliance_data`) regenerates the shipped table,
the shipped families and `docs/compliance-rules.md`.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from functools import cache
from typing import Iterable, Sequence

from mlperf_audit import (
    CheckContext,
    Finding,
    Rule,
    Run,
    RunRule,
    Severity,
    hookimpl,
    rulesets,
)
from mlperf_audit_rules.support.causes import DAMAGED_LOG, ROUND_NOT_NAMED
from mlperf_audit_rules.support.history import LaterCheck, later_check
from mlperf_audit_rules.support.official_compliance import (
    FALLBACK_CODE,
    Family,
    Message,
    all_families,
    code_of,
    code_table,
    interpret,
)

_KIND_TEXT = {
    "REQ": (
        "a required number of {key!r} records is missing or exceeded",
        "the log holds the number of {key!r} records the rule requires",
    ),
    "REPEATED": (
        "{key!r} is logged several times with the same value where exactly one is required",
        "{key!r} is logged once (the official checker only warns when the repeats are identical)",
    ),
    "CHECK": ("a {key!r} record fails the official check", "every {key!r} record satisfies the official check"),
    "FIRST_CHECK": (
        "the first {key!r} record fails the official check",
        "the first {key!r} record satisfies the official check",
    ),
    "ATLEAST_ONE_CHECK": (
        "no {key!r} record satisfies the official check",
        "at least one {key!r} record satisfies the official check",
    ),
    "ALTERNATIVES": ("none of {key} is logged", "at least one of {key} is logged"),
    "CODE": (
        "the official PRE or POST code for {key!r} fails on the log",
        "the official PRE/POST code of the {key!r} record runs without error",
    ),
    "BEGIN": ("the official BEGIN block fails on the log", "the config's BEGIN block runs on the log"),
    "END": ("the official END check fails", "the config's END checks pass"),
    "MISSING": (
        "the round has no official rule file for this division and benchmark",
        "the round ships a rule file for the log's division and benchmark",
    ),
    "DEFECT": (
        "the official rule data is defective here; the rules' intent is applied",
        "nothing the submitter must fix: the official rule data is defective here",
    ),
}
_FIXES = {
    "REQ": "Log {key!r} through mllog exactly as often as the rule requires, as the reference implementation does.",
    "REPEATED": "Log {key!r} once, from one rank.",
    "CHECK": "Log a value (and metadata) of {key!r} that satisfies the check; in the closed division the rules fix "
    "these hyperparameters.",
    "FIRST_CHECK": "Make the first {key!r} record satisfy the check.",
    "ATLEAST_ONE_CHECK": "For eval_accuracy this is the quality target: the run must reach it before run_stop, "
    "or it is not a converged run.",
    "ALTERNATIVES": "Log one of {key} with the metadata the rules require.",
    "CODE": "Log {key!r} with the value type and metadata the reference implementation uses.",
    "BEGIN": "Give every record the BEGIN block reads the fields it needs.",
    "END": "Log what the END check requires.",
    "MISSING": "Check submission_benchmark and submission_division: this round has no rules for that pair.",
    "DEFECT": "Nothing in the log; a reviewer should know the official checker disagrees here.",
}


def _rule_name(family: Family) -> str:
    key = family.key.replace("|", "-or-").replace("*", "config")
    raw = f"cmp-{family.config}-{key}-{family.kind}".lower()
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", raw)).strip("-")


def _make_rule(code: str, family: Family, versions: dict[str, list[str]]) -> type[Rule]:
    key_text = " or ".join(repr(k) for k in family.key.split("|")) if family.kind == "ALTERNATIVES" else family.key
    summary_text, what = _KIND_TEXT[family.kind]
    problem = summary_text.format(key=key_text if family.kind == "ALTERNATIVES" else family.key)
    summary = f"{family.config}: {problem}"
    rules_text = "\n".join(
        f"    - training {version}: " + ("; ".join(f"`{e}`" for e in exprs) if exprs else "(no expression)")
        for version, exprs in sorted(versions.items())
    )
    doc = (
        f"{problem[0].upper()}{problem[1:]} ({family.config}.yaml).\n\n"
        f"What it checks: {what.format(key=key_text if family.kind == 'ALTERNATIVES' else family.key)}, as "
        f"`{family.config}.yaml` of the official compliance checker says:\n\n{rules_text}\n\n"
        f"Why it matters: this is the official compliance verdict (mlperf-logging's rule files, run with the "
        f"official semantics); a run that fails it is not compliant. One non-compliant run per benchmark is "
        f"tolerated by olympic scoring.\n\n"
        f"Example: a log whose {key_text} record(s) break the rule above.\n\n"
        f"How to fix: {_FIXES[family.kind].format(key=key_text if family.kind == 'ALTERNATIVES' else family.key)}\n"
    )
    severity = {"REPEATED": Severity.WARNING, "DEFECT": Severity.INFO}.get(family.kind, Severity.ERROR)
    attributes = {
        "__doc__": doc,
        "__module__": __name__,
        "code": code,
        "name": _rule_name(family),
        "summary": summary,
        "severity": severity,
        "scope": "run",
        "rulesets": frozenset(f"{rulesets.USAGE}-{v}" for v in versions),
        "family": family,
        "fails_run": severity is Severity.ERROR,
    }
    return type(f"Compliance_{code}", (ComplianceRule,), attributes)


class ComplianceRule(RunRule):
    """Base of the generated compliance rules: reports the official messages of one family."""

    family: Family
    group = "compliance"  # hundreds of rules, one interpretation of the log: checked in one call
    # a record lost to a broken line is then missing; another round than the package's has other rules
    follows_from = DAMAGED_LOG | ROUND_NOT_NAMED

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        return self.check_group([self], run, context)

    @classmethod
    def check_group(cls, rules: Sequence[Rule], run: Run, context: CheckContext) -> Iterable[Finding]:
        by_code = context.memo(run, "compliance", lambda: _messages_by_code(run, context.ruleset.split("-", 1)[1]))
        if not by_code:
            return ()
        findings = []
        for rule in rules:
            for m in by_code.get(rule.code, ()):
                later = later_rule(m, run, context.ruleset)
                findings.append(
                    rule.finding(
                        f"{m.text}; {later.note(context.ruleset)}" if later else m.text,
                        path=run.path,
                        line=m.line,
                        hint=m.hint,
                        severity=Severity.INFO if later and rule.severity is Severity.ERROR else None,
                    )
                )
        return findings


def later_rule(message: Message, run: Run, ruleset: str) -> LaterCheck | None:
    """The check added after the round was published that this official message comes from, if any:
    weights_initialization failures (warnings when 1.1 was reviewed), and 2.1's closed_bert renaming
    opt_epsilon to opt_lamb_epsilon two weeks after publication."""
    family = message.family
    if (family.key == "weights_initialization" and family.kind == "REQ") or (
        family.kind == "END" and "sorted(s['initialized_tensors'])" in message.text
    ):
        return later_check("weights-initialization-fails", ruleset)
    if (family.config, family.key, family.kind) == ("closed_bert", "opt_lamb_epsilon", "REQ") and len(
        run.all("opt_epsilon")
    ) == 1:
        return later_check("bert-opt-lamb-epsilon", ruleset)
    return None


class UnknownFamily(ComplianceRule):
    """A compliance message of a family that the code table does not list yet.

    What it checks: nothing of its own; it carries official messages whose family (config, key, kind)
    has no code yet, so that no official verdict is lost when mlperf-logging adds a rule.

    Why it matters: the message is an official compliance failure.

    Example: a rule added to a newer mlperf-logging than the table was generated from.

    How to fix: as the message says; maintainers run `python -m mlperf_audit_rules.compliance --update`.
    """

    code = FALLBACK_CODE
    name = "cmp-unlisted-family"
    summary = "An official compliance failure of a family without its own code yet."
    severity = Severity.ERROR
    scope = "run"
    family = Family("*", "*", "*")
    fails_run = True


def _messages_by_code(run: Run, version: str) -> dict[str, list[Message]]:
    grouped: dict[str, list[Message]] = defaultdict(list)
    codes = code_of()
    for message in interpret(run, version):
        grouped[codes.get(message.family.id, FALLBACK_CODE)].append(message)
    return grouped


@cache
def rule_classes() -> list[type[Rule]]:
    families = all_families()
    classes: list[type[Rule]] = [UnknownFamily]
    for code, family in sorted(code_table().items()):
        if family in families:
            classes.append(_make_rule(code, family, families[family]))
    return classes


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return rule_classes()


if __name__ == "__main__":
    # the documented maintenance command; the code lives apart, since no check needs it
    from mlperf_audit_rules.support import compliance_data

    sys.exit(compliance_data.main(sys.argv[1:]))
