"""Which rules are in force: `--select`, `--ignore` and the ruleset, and refusing a selector that names none."""

from __future__ import annotations

from typing import Sequence

from ..config import Config
from ..errors import SelectionError
from ..rule import Rule
from ..suggest import did_you_mean_rule


def matches(rule: type[Rule], selector: str) -> bool:
    """Whether a selector of `--select`, `--ignore` or `mlperf-audit rules` names the rule: ALL, a
    code or a prefix of codes (`AUD`, `AUD00`, `AUD006`), or the rule's name."""
    return selector == "ALL" or rule.code.startswith(selector) or rule.name == selector


def check_selectors(rules: Sequence[type[Rule]], selectors: Sequence[str]) -> None:
    """Refuse a selector that names no rule, suggesting the closest codes or names."""
    for selector in selectors:
        if not any(matches(rule, selector) for rule in rules):
            hint = did_you_mean_rule(selector, [rule.code for rule in rules], [rule.name for rule in rules])
            raise SelectionError(
                f"unknown rule selector {selector!r}{hint}: not a code, prefix or name of any rule "
                "(`mlperf-audit rules` lists them)"
            )


def select_rules(rules: Sequence[type[Rule]], config: Config) -> list[type[Rule]]:
    """The rules in force: matched by `select`, not matched by `ignore`, applicable to the ruleset."""
    check_selectors(rules, config.select + config.ignore)
    return [
        rule
        for rule in rules
        if rule.applies_to(config.ruleset)
        and any(matches(rule, s) for s in config.select)
        and not any(matches(rule, s) for s in config.ignore)
    ]
