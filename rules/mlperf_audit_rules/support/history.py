"""Support for rule packs: which official checks entered the rules after a round was published.

A reviewer trusts a verdict only if it judges a round by the rules in force when it was reviewed.
mlperf-logging applies some checks to every round although they were added later (the seed check
of September 2024 fails v4.0 folders; the exact `status` wording meant to start at 4.1 is applied
from 4.0). The list of such checks is data (`data/later_checks.json`, with the official commit
and date of each); a rule asks `later_check(id, ruleset)` and, for an earlier round, reports its
finding as information that names the later rule instead of an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class LaterCheck:
    id: str
    rule: str  # the code of the rule that implements it
    title: str  # the official commit's subject
    since: str  # the first ruleset reviewed with it
    commit: str
    date: str
    source: str  # the official file it lives in
    before: str  # what the rules said before
    #: The oldest round it is later for, when older rounds were reviewed with it (a rule file fixed
    #: for one round only, or a check that was an error, then a warning, then an error again).
    from_: str | None = None

    def note(self, ruleset: str) -> str:
        return (
            f"not an error for {ruleset}: this check entered the official rules after that round was published "
            f'(mlperf-logging {self.commit}, {self.date}, "{self.title}"; in force from {self.since}); '
            f"before it, {self.before}"
        )


def _version(ruleset: str) -> tuple[int, ...]:
    return tuple(int(part) for part in ruleset.split("-", 1)[1].split("."))


@cache
def later_checks() -> dict[str, LaterCheck]:
    data = json.loads(resources.files("mlperf_audit_rules").joinpath("data/later_checks.json").read_text())
    return {
        entry["id"]: LaterCheck(**{("from_" if key == "from" else key): value for key, value in entry.items()})
        for entry in data["checks"]
    }


def later_check(check_id: str, ruleset: str) -> LaterCheck | None:
    """The check when `ruleset`'s round was published before it entered the rules, else None."""
    check = later_checks()[check_id]
    if check.from_ is not None and _version(ruleset) < _version(check.from_):
        return None
    return check if _version(ruleset) < _version(check.since) else None
