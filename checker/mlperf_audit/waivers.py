"""Waivers and baselines: the findings a review has accepted, and the ones a PR did not introduce.

A waivers file (TOML, `--waivers FILE` or `waivers = "FILE"` in the configuration) lists::

    [[waiver]]
    rule = "RCP001"                       # a code, a prefix or a rule name
    path = "NVIDIA/results/*/gpt3*"       # a glob on the finding's path (relative to PATH)
    reason = "RCP bypass approved by the review committee, 2024-10-01"   # required
    expires = 2025-06-01                  # optional

A waived finding stays in every report, marked with its reason, and no longer fails the run. A
waiver that matches nothing, or has expired, is itself a finding (CHK002, CHK003).

A baseline (`--write-baseline FILE`, then `--baseline FILE`) records the fingerprints of the
findings of a run (rule, path and message without line numbers, so moving lines does not matter);
with it, only new findings are reported, and CHK004 says how many known ones were left out.

Either file of any other shape (not UTF-8, not TOML or JSON, a field of the wrong type, a list
where a table belongs, an unknown key) is a `ConfigError` naming the file and what is wrong: exit
code 2, never a traceback.
"""

from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import json
import tomllib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .errors import ConfigError
from .markers import hookimpl
from .model import Finding, Severity, Tree
from .rule import Rule, TreeRule
from .safety import visible

BASELINE_VERSION = 1


@dataclass(frozen=True)
class Waiver:
    rule: str
    path: str
    reason: str
    expires: datetime.date | None
    source: str  # "FILE:index"

    def matches(self, finding: Finding, rules: Mapping[str, Any]) -> bool:
        rule = rules.get(finding.rule)
        by_rule = (
            self.rule == "ALL" or finding.rule.startswith(self.rule) or (rule is not None and rule.name == self.rule)
        )
        return by_rule and fnmatch.fnmatchcase(finding.path or "", self.path)

    def expired(self, today: datetime.date) -> bool:
        return self.expires is not None and self.expires < today


#: A waivers or baseline file larger than this is not read (a baseline holds ~45 bytes per finding).
MAX_FILE_BYTES = 16 << 20
WAIVER_FIELDS = ("rule", "path", "reason", "expires")


def _read(path: str, what: str) -> str:
    """The text of a waivers or baseline file; anything that is not a readable UTF-8 file is a
    ConfigError naming it (it is the user's file, but no more trusted than a package)."""
    shown = visible(path)
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{shown}: cannot read the {what}: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{shown}: the {what} file is larger than {MAX_FILE_BYTES >> 20} MiB; not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{shown}: the {what} file is not UTF-8 text (byte {error.start})") from None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "an integer", float: "a number", list: "an array", dict: "a table"}.get(
        type(value), f"a {type(value).__name__}"
    )


def load_waivers(path: str) -> list[Waiver]:
    shown = visible(path)
    text = _read(path, "waivers")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{shown}: not valid TOML: {visible(str(error))}") from None
    except RecursionError:
        raise ConfigError(f"{shown}: not valid TOML: nested too deeply to read") from None
    unknown = sorted(set(data) - {"waiver"})
    if unknown:
        raise ConfigError(
            f"{shown}: unknown key(s) {', '.join(visible(repr(k)) for k in unknown)}; waivers are [[waiver]] tables"
        )
    entries = data.get("waiver", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{shown}: 'waiver' is {_kind(entries)}; waivers are [[waiver]] tables")
    waivers = []
    for index, entry in enumerate(entries, 1):
        where = f"{shown}: waiver {index}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: is {_kind(entry)}, not a table; waivers are [[waiver]] tables")
        unknown = sorted(set(entry) - set(WAIVER_FIELDS))
        if unknown:
            raise ConfigError(
                f"{where}: unknown field(s) {', '.join(visible(name) for name in unknown)}; "
                f"known: {', '.join(WAIVER_FIELDS)}"
            )
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise ConfigError(f"{where}: a waiver needs a reason (a non-empty string)")
        if not isinstance(entry.get("rule"), str) or not entry["rule"].strip():
            raise ConfigError(f"{where}: a waiver needs a rule (code, prefix or name, a string)")
        pattern = entry.get("path", "*")
        if not isinstance(pattern, str):
            raise ConfigError(f"{where}: path must be a string (a glob on finding paths), not {_kind(pattern)}")
        expires = entry.get("expires")
        # a TOML date-time is a datetime, which is a date but does not compare with one
        if expires is not None and (not isinstance(expires, datetime.date) or isinstance(expires, datetime.datetime)):
            raise ConfigError(f"{where}: expires must be a date (YYYY-MM-DD), not {_kind(expires)}")
        # matched as written; shown only through `visible` (a reason is echoed into every report)
        waivers.append(
            Waiver(entry["rule"].strip(), pattern, visible(entry["reason"].strip()), expires, f"{shown}:{index}")
        )
    return waivers


def load_baseline(path: str) -> Counter[str]:
    shown = visible(path)
    text = _read(path, "baseline")
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{shown}: cannot read the baseline: not valid JSON ({visible(str(error))})") from None
    except RecursionError:
        raise ConfigError(f"{shown}: cannot read the baseline: JSON nested too deeply") from None
    if not isinstance(data, dict) or data.get("schema_version") != BASELINE_VERSION:
        raise ConfigError(
            f"{shown}: not an mlperf-audit baseline (schema_version {BASELINE_VERSION}); "
            "write one with --write-baseline"
        )
    fingerprints = data.get("fingerprints")
    if not isinstance(fingerprints, dict):
        raise ConfigError(
            f"{shown}: 'fingerprints' must be an object of fingerprint: count, not "
            f"{'missing' if fingerprints is None else _kind(fingerprints)}"
        )
    counts: Counter[str] = Counter()
    for fingerprint, count in fingerprints.items():
        if type(count) is not int or count < 0:
            raise ConfigError(
                f"{shown}: fingerprint {visible(repr(fingerprint))[:80]} has the count "
                f"{visible(repr(count))[:40]}; counts are whole numbers of 0 or more"
            )
        counts[fingerprint] = count
    return counts


def baseline_document(findings: Iterable[Finding]) -> str:
    counts = Counter(f.fingerprint for f in findings)
    return (
        json.dumps({"schema_version": BASELINE_VERSION, "fingerprints": dict(sorted(counts.items()))}, indent=1) + "\n"
    )


class _Meta(TreeRule):
    scope = "tree"

    def check(self, tree: Tree, context: Any) -> Iterable[Finding]:
        return ()  # reported while findings are filtered: see `mlperf_audit_modify_findings`


class UnusedWaiver(_Meta):
    """A waiver matches no finding.

    What it checks: that every waiver of the waivers file accepts at least one finding.

    Why it matters: a waiver that waives nothing was made for a problem that is gone (or is
    misspelt); left in place, it would silently accept the next problem that matches it.

    Example: a waiver for `RCP001` on a folder whose RCP check now passes.

    How to fix: remove the waiver, or correct its rule or path.
    """

    code = "CHK002"
    name = "unused-waiver"
    summary = "A waiver matches no finding."
    severity = Severity.WARNING


class ExpiredWaiver(_Meta):
    """A waiver has expired.

    What it checks: the `expires` date of each waiver against today; an expired waiver waives nothing.

    Why it matters: acceptances are given for a review; after it, the finding must be looked at again.

    Example: `expires = 2024-12-31` on a check run in 2025.

    How to fix: renew the waiver with a new reason and date, or fix the finding.
    """

    code = "CHK003"
    name = "expired-waiver"
    summary = "A waiver has expired and no longer waives."
    severity = Severity.WARNING


class BaselineHidden(_Meta):
    """Findings known from the baseline are not shown.

    What it checks: nothing; it says how many findings `--baseline` left out as already known.

    Why it matters: a PR check shows only what the PR introduced, but a reader must know that more
    findings exist.

    Example: "12 findings known from the baseline are not shown".

    How to fix: nothing; run without `--baseline` to see them all.
    """

    code = "CHK004"
    name = "baseline-hidden"
    summary = "Findings known from the baseline are left out."
    severity = Severity.INFO


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return [UnusedWaiver, ExpiredWaiver, BaselineHidden]


def _checked_paths(tree: Any) -> list[str]:
    paths = []
    for submission in tree.submissions:
        paths.append(submission.path)
        paths += [system.path for system in submission.systems]
        for folder in submission.benchmarks:
            paths.append(folder.path)
            paths += [entry.path for entry in folder.result_files]
    paths += [entry.path for entry in tree.loose_logs]
    return paths


@hookimpl(trylast=True)  # after the other filters (olympic tolerance), on the findings as reported
def mlperf_audit_modify_findings(findings: list[Finding], context: Any) -> None:
    config = context.config
    if config.waivers:
        today = datetime.date.today()
        waivers = load_waivers(config.waivers)
        used: set[str] = set()
        for index, finding in enumerate(findings):
            for waiver in waivers:
                if not waiver.expired(today) and waiver.matches(finding, context.catalogue):
                    findings[index] = dataclasses.replace(finding, waived_by=waiver.reason)
                    used.add(waiver.source)
                    break
        checked = _checked_paths(context.tree)
        for waiver in waivers:
            if (
                context.tree.subset
                and not any(fnmatch.fnmatchcase(path, waiver.path) for path in checked)
                and not any(
                    fnmatch.fnmatchcase(submission.name, waiver.path.split("/", 1)[0])
                    for submission in context.tree.submissions
                )
            ):
                continue  # about a submitter this run (a pull request's subset) did not check
            if waiver.expired(today) and context.is_selected(ExpiredWaiver.code):
                findings.append(
                    ExpiredWaiver().finding(
                        f"waiver {waiver.source} ({visible(waiver.rule)} on {visible(waiver.path)}) expired on "
                        f"{waiver.expires}"
                    )
                )
            elif waiver.source not in used and context.is_selected(UnusedWaiver.code):
                findings.append(
                    UnusedWaiver().finding(
                        f"waiver {waiver.source} ({visible(waiver.rule)} on {visible(waiver.path)}) matches no finding"
                    )
                )
    if config.baseline:
        known = load_baseline(config.baseline)
        kept = []
        hidden = 0
        for finding in findings:
            if known[finding.fingerprint] > 0:
                known[finding.fingerprint] -= 1
                hidden += 1
            else:
                kept.append(finding)
        findings[:] = kept
        if hidden and context.is_selected(BaselineHidden.code):
            findings.append(BaselineHidden().finding(f"{hidden} finding(s) known from the baseline are not shown"))
