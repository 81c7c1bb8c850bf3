"""Support for rule packs: the MLPerf Training rules in force per round (`data/policies.json`).

`bench/policies.py` generates the data from a mlcommons/training_policies git directory: per round,
the commit of the main branch in force at the round's submission deadline (with the deadline and
its source), and per citation the lines that hold the quoted words at that commit. A rule cites the
text of the round it checks (`cite`), never today's, and a rule whose words were not in the text in
force at a round's deadline is at most a warning for that round (`at_most_warning`): rules are
dated by their merge into the main branch, not by their author date.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mlperf_audit import Severity

GITHUB = "https://github.com"


@cache
def policies() -> dict[str, Any]:
    """`data/policies.json` (bench/policies.py)."""
    data = json.loads(resources.files("mlperf_audit_rules").joinpath("data/policies.json").read_text("utf-8"))
    return data if isinstance(data, dict) else {}


def _version(version: str) -> str:
    """`5.1`, `5.1.0` or `training-5.1.0` as the data's key (`5.1.0`)."""
    version = version.rsplit("-", 1)[-1]
    return version if version.count(".") == 2 else f"{version}.0"


@dataclass(frozen=True)
class Citation:
    """The words a rule quotes, as they stand in the text in force at one round's deadline."""

    name: str
    file: str
    quote: str
    round: str  # X.Y
    commit: str
    first_line: int
    last_line: int
    text: str  # the cited lines at the commit
    in_force: str  # "yes", or "uncertain" where the round's deadline is a window the text changed in
    merged: str  # the day the words entered the main branch
    pr: int | None

    @property
    def url(self) -> str:
        """A link a user can open: the file at the round's commit, at the lines quoted."""
        lines = f"L{self.first_line}" + (f"-L{self.last_line}" if self.last_line != self.first_line else "")
        return f"{GITHUB}/{policies().get('repository', 'mlcommons/training_policies')}/blob/{self.commit}/{self.file}#{lines}"

    @property
    def short(self) -> str:
        """`training_rules.adoc:446 at 65f0132, the rules in force for v5.1`: the place, for a message."""
        return f"{self.file}:{self.first_line} at {self.commit[:7]}, the rules in force for v{self.round}"

    @property
    def quoted(self) -> str:
        """The quoted words, the place and the link."""
        return f"“{self.quote}” ({self.short}: {self.url})"


def cite(name: str, version: str) -> Citation | None:
    """Citation `name` in the text in force at round `version`'s deadline; None where that text lacks the words
    (or the round or the citation is not in the data)."""
    data = policies()
    entry = data.get("citations", {}).get(name)
    key = _version(version)
    round_info = data.get("rounds", {}).get(key)
    found = entry.get("rounds", {}).get(key) if isinstance(entry, dict) else None
    if not isinstance(found, dict) or "lines" not in found or not isinstance(round_info, dict):
        return None
    merged = entry.get("merged") or {}
    first, last = found["lines"]
    return Citation(
        name=name,
        file=entry["file"],
        quote=entry["quote"],
        round=".".join(key.split(".")[:2]),
        commit=round_info["commit"],
        first_line=first,
        last_line=last,
        text=found.get("text", ""),
        in_force=found.get("in_force", "uncertain"),
        merged=merged.get("date", ""),
        pr=merged.get("pr"),
    )


def in_force(name: str, version: str) -> str:
    """Whether citation `name` was in the rules at round `version`'s deadline: "yes", "no", "uncertain" (the
    deadline is a window the text changed in) or "unknown" (a round or citation the data does not hold)."""
    entry = policies().get("citations", {}).get(name)
    found = entry.get("rounds", {}).get(_version(version)) if isinstance(entry, dict) else None
    return str(found.get("in_force", "unknown")) if isinstance(found, dict) else "unknown"


def first_round(name: str) -> tuple[int, int] | None:
    """The first round whose rules at its deadline certainly hold citation `name`'s words."""
    entry = policies().get("citations", {}).get(name)
    rounds = entry.get("rounds", {}) if isinstance(entry, dict) else {}
    held = [
        tuple(int(part) for part in version.split(".")[:2])
        for version, found in rounds.items()
        if isinstance(found, dict) and found.get("in_force") == "yes"
    ]
    return min(held) if held else None  # type: ignore[return-value]


def at_most_warning(severity: Severity, name: str, version: str) -> Severity:
    """`severity`, lowered to a warning where citation `name` was not, or not certainly, in the rules at the
    round's deadline: a rule added after a round is at most a warning for it. A round the data does not hold
    (newer than its generation) keeps the severity: rules are added, not withdrawn, between rounds."""
    if severity.rank > Severity.WARNING.rank and in_force(name, version) in ("no", "uncertain"):
        return Severity.WARNING
    return severity


def merged_text(name: str) -> str:
    """`merged 2025-07-10 (PR 559)`: when the words entered the main branch."""
    entry = policies().get("citations", {}).get(name) or {}
    merged = entry.get("merged") or {}
    pr = f", PR {merged['pr']}" if merged.get("pr") else ""
    return f"merged {merged.get('date', '?')}{pr}"
