"""Crash isolation: a rule that raises becomes a `CHK001` finding instead of hiding the other rules' findings."""

from __future__ import annotations

import traceback
from typing import Any

from ..model import (
    Finding,
    Severity,
)
from ..rule import ENGINE, Rule

INTERNAL_RULE = "CHK001"


def crash_finding(rule: Rule, target: Any, error: Exception) -> Finding:
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return Finding(
        rule=INTERNAL_RULE,
        name="rule-crashed",
        severity=Severity.ERROR,
        message=(
            f"rule {rule.code} ({rule.plugin}) crashed: {type(error).__name__}: {error} "
            f"[{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}]"
        ),
        path=getattr(target, "path", None),
        hint="This is a bug in the rule, not in the package: report it to the plugin's authors.",
    )


class RuleCrashed(Rule):
    """A rule raised an exception while checking a target.

    What it checks: nothing in the package. The engine reports this finding when a rule's code
    fails, so that one broken rule cannot hide the findings of the others.

    Why it matters: a rule that crashed said nothing about its target, so the check is
    incomplete; the run exits with code 2 (an internal or plugin error), whatever `--fail-on`
    says, and CI cannot mistake it for a pass.

    Example: `rule XYZ001 (my_plugin) crashed: KeyError: 'status' [my_rules.py:42]`.

    How to fix: report the message, which names the rule, its plugin and the failing line, to
    the plugin's authors. Until it is fixed, `--ignore CODE` switches the crashing rule off.
    """

    code = INTERNAL_RULE
    name = "rule-crashed"
    summary = "A rule raised an exception (an internal or plugin error)."
    severity = Severity.ERROR
    scope = "tree"
    produced_by = ENGINE
