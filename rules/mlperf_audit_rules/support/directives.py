"""Support for rule packs: the directives of `package_checker_params` that switch an official check off.

A system- or benchmark-level file names directives (`rcp-bypass`); a submitter-level file holds
the options the round's verify script passes to the package checker, spelled as that round spells
them. The package-layout pack reports the directives; the RCP and seed checks obey them.
"""

from __future__ import annotations

from mlperf_audit import BenchmarkResult, rulesets

KNOWN_DIRECTIVES = {"rcp-bypass", "seed-checker-bypass"}
BYPASS_OPTIONS = ("rcp_bypass", "seed_checker_bypass")


def known_directives(level: str, ruleset: str) -> set[str]:
    """A submitter-level file holds the package checker's options, which the round's verify script
    passes for every folder of the submitter, spelled as that round's checker spells them."""
    if level != "submitter":
        return KNOWN_DIRECTIVES
    return {flag for option in rulesets.CHECKER_OPTIONS if (flag := rulesets.checker_flag(option, ruleset))}


def directive_in_force(result: BenchmarkResult, directive: str | None, option: str, ruleset: str) -> bool:
    """A system- or benchmark-level `directive`, or the submitter-level `option` of the round's verify
    script (spelled as the round spells it, on a newline-terminated line: the script's `read` drops the
    last one), is in force for the folder."""
    flag = rulesets.checker_flag(option, ruleset)
    return any(
        (params.level == "submitter" and line == flag and line in params.official)
        or (params.level != "submitter" and line == directive)
        for params in result.folder.params
        for _, line in params.lines
    )


def bypasses(level: str, ruleset: str) -> set[str]:
    if level != "submitter":
        return KNOWN_DIRECTIVES
    return {flag for option in BYPASS_OPTIONS if (flag := rulesets.checker_flag(option, ruleset))}
