"""SYS: the system descriptions, `systems/<system>.json`."""

from __future__ import annotations

import difflib
import re
from typing import Any, Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    IssueRule,
    LogEvent,
    Problem,
    Rule,
    Run,
    Severity,
    SystemDescription,
    SystemRule,
    hardware,
    hookimpl,
)
from mlperf_audit_rules.support import affected, schemas
from mlperf_audit_rules.support.causes import ROUND_NOT_NAMED
from mlperf_audit_rules.support.history import LaterCheck, later_check

SCHEMA = "system_description.schema.json"


class SystemJsonInvalid(IssueRule):
    """A system description cannot be read as one JSON object.

    What it checks: that `systems/<system>.json` is UTF-8 text holding one JSON object.

    Why it matters: the division, the availability and the hardware of every result come from
    this file; the official package checker and summarizer crash on a broken one.

    Example: a trailing comma (`"sw_notes": "",}`), or a JSON list instead of an object.

    How to fix: validate the file with `python -m json.tool systems/<system>.json` and correct it.
    """

    code = "SYS001"
    problem = Problem.SYSTEM_JSON_INVALID
    name = "system-json-invalid"
    summary = "A system description is not one valid JSON object."
    severity = Severity.ERROR
    scope = "system"


class SystemSchema(SystemRule):
    """A system description misses a required field or has a value of the wrong type.

    What it checks: `systems/<system>.json` against `schemas/system_description.schema.json`: every
    field the official system_desc_checker requires; `division` closed or open; `status` one of
    "Available on-premise", "Available cloud", "Research, Development, or Internal (RDI)",
    "Preview" (exact case); `number_of_nodes` a positive integer and `accelerators_per_node` and
    `host_processors_per_node` whole numbers >= 0 (0 accelerators: a CPU-only system; the official
    checker only requires the field), each at most 999999 and written as numbers or ASCII digit
    strings; names not empty.

    Why it matters: the official checker fails a description without a required field or with
    another availability wording, and the summarizer calls `int()` on the counts (a crash, or a
    wrong accelerator count in every published table); a count of hundreds of digits overflows
    every rate per accelerator. A count that is not one is used by no rule or table.

    Example: `"status": "available"`, `"number_of_nodes": "1-2"`, `"number_of_nodes": "1²"`,
    `"accelerators_per_node": 99999999999999999999`, no `cooling`.

    `status` follows the rules of the round: unchecked before 4.0, a lenient list in any case in
    4.0 (`onprem`, `cloud`, `available`, ...; the exact wording starts at 4.1, mlperf-logging
    191ed2c), exact from 4.1. A status that only a later rule rejects is information naming it.

    How to fix: correct the field named in the finding.
    """

    code = "SYS002"
    follows_from = ROUND_NOT_NAMED  # each round has its own schema
    name = "system-description-schema"
    summary = "A system description misses a field or has a wrong value."
    severity = Severity.ERROR
    scope = "system"

    def check(self, system: SystemDescription, context: CheckContext) -> Iterable[Finding]:
        if system.data is None:
            return
        for error in schemas.errors(SCHEMA, system.data):
            field = schemas.field_of(error)
            message = f"{field}: {schemas.describe(error)}"
            later = _status_rule_later(system.data, field, context.ruleset) if error.validator != "required" else None
            yield self.finding(
                f"{message}; {later.note(context.ruleset)}" if later else message,
                path=system.path,
                line=system.field_lines.get(field),
                severity=Severity.INFO if later else None,
            )


#: The `status` values accepted before the exact wording was required (mlperf-logging 9d75268).
LENIENT_STATUS = frozenset(
    {
        "available on-premise",
        "onprem",
        "available",
        "available onprem",
        "available cloud",
        "cloud",
        "research, development, or internal (rdi)",
        "rdi",
        "research",
        "development",
        "internal",
        "preview",
    }
)


def _status_rule_later(data: Any, field: str, ruleset: str) -> LaterCheck | None:
    """The later check that a wrong `status` breaks, when the round predates it: none before 4.0
    (no status check), the lenient list in 4.0 (the exact wording starts at 4.1)."""
    if field != "status" or not isinstance(data, dict):
        return None
    enforced = later_check("status-enforced", ruleset)
    if enforced is not None:
        return enforced
    status = data.get("status")
    if isinstance(status, str) and (status in LENIENT_STATUS or status.lower() in LENIENT_STATUS):
        return later_check("status-exact-wording", ruleset)
    return None


def _values(result: BenchmarkResult, key: str) -> list[tuple[Run, LogEvent]]:
    return [(run, event) for run in result.runs if (event := run.first(key)) is not None]


class DivisionMismatch(BenchmarkRule):
    """A log's `submission_division` differs from the system description's `division`.

    What it checks: `submission_division` in every run against `division` in the system description.

    Why it matters: the official package checker takes the division from the description (it
    decides whether seeds and RCPs are checked), the compliance checker from the log; a mismatch
    means the run is judged by one division's rules and published under the other.

    Example: an open-division log in a closed system's folder.

    How to fix: run under the right division, or correct the description.
    """

    code = "SYS003"
    name = "division-mismatch"
    summary = "submission_division differs from the system description."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description = context.system_description(result.submitter, result.system)
        if description is None or description.division is None:
            return
        for run, event in _values(result, "submission_division"):
            if event.value != description.division:
                yield self.finding(
                    f"submission_division is {event.value!r}, the system description says "
                    f"{description.division!r} ({description.path})",
                    path=run.path,
                    line=event.line,
                )


class SubmitterMismatch(BenchmarkRule):
    """A log's `submission_org` differs from the submitter of the package.

    What it checks: `submission_org` against the system description's `submitter` and the name of
    the submitter folder.

    Why it matters: OEMs reuse logs of another submitter's runs (mlcommons/logging#241); a result
    must come from the submitter who publishes it.

    Names are compared regardless of case, spaces and punctuation; the reference launchers'
    unset default, `SUBMISSION_ORG_PLACEHOLDER`, is information (no evidence either way).

    The message says what the evidence supports, and names every run that logs the other name
    ("all 10 runs" when every run of the folder does). Implementations that OEMs run as published
    log their author's name unless told otherwise (`VENDOR_DEFAULTS`: NVIDIA's, AMD's, Habana's,
    MosaicML's launchers, the MLCommons reference's `reference_implementation`; NVIDIA's dlrm_dcnv2
    and AMD's llama2_70b_lora write it in their own code). Where the logs' `submission_platform`
    names this package's system (Supermicro's v4.1 `1xAS-8125GS-TNHR`, AMD's `1xMI350X` in Cisco's
    `1xC885A_M8-8xMI350X-OAM-288GB`), the runs were made for this package and the name is the
    implementation's: information, not a warning. Where the platform is the launcher's placeholder
    too (`SUBMISSION_PLATFORM_PLACEHOLDER`, `your_platform`, the default organisation again), neither
    name was set: information, as the reference's `SUBMISSION_ORG_PLACEHOLDER` (no sign either way).
    A vendor's name in the vendor's own package (`Habana` in Intel-HabanaLabs's) is not reported.
    Where the platform names another system, or is missing, the name is worded as a vendor default
    kept (a warning: the logs may be of another system). Only another name than these is worded as
    what may be another submitter's runs; a name a letter or two from the package's is said to look
    like a misspelling.

    Example: `submission_org: "NVIDIA"` in `Dell/results/...`.

    How to fix: set `submission_org` to your organisation in the launcher; if the runs are not
    your own, submit your own runs.
    """

    code = "SYS004"
    name = "submitter-mismatch"
    summary = "submission_org differs from the package's submitter."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description = context.system_description(result.submitter, result.system)
        named = (result.submitter, description.get("submitter") if description else None)
        expected = {name for name in named if isinstance(name, str) and name}
        if not expected:
            return
        # the runs of each other name, in folder order: one finding per name, naming every run that logs it
        by_value: dict[str, list[tuple[Run, LogEvent]]] = {}
        for run, event in _values(result, "submission_org"):
            if not (
                isinstance(event.value, str)
                and any(_same_org(event.value, name) or _own_vendor(event.value, name) for name in expected)
            ):
                by_value.setdefault(repr(event.value), []).append((run, event))
        for pairs in by_value.values():
            run, event = pairs[0]
            placeholder = event.value == PLACEHOLDER
            why, hint, severity = (
                (
                    ": the reference launchers' default, never set (no sign of another submitter's runs)",
                    None,
                    Severity.INFO,
                )
                if placeholder
                else self.evidence(result, run, event, expected, description)
            )
            yield self.finding(
                f"submission_org is {event.value!r} in {affected.which_runs([r for r, _ in pairs], result.runs)}, "
                f"the package is {' / '.join(sorted(expected))!r}{why}",
                path=run.path,
                line=event.line,
                severity=severity,
                hint=hint,
                related=affected.related(pairs),
            )

    @staticmethod
    def evidence(
        result: BenchmarkResult, run: Run, event: LogEvent, expected: set[str], description: SystemDescription | None
    ) -> tuple[str, str, Severity | None]:
        """What the logs show beside the other name, the fix it calls for, and the severity (None: the rule's)."""
        text = str(event.value)
        vendor = VENDOR_DEFAULTS.get(_letters(text))
        if vendor is None:
            close = [name for name in sorted(expected) if _misspelt(text, name)]
            if close:
                return (
                    f": it looks like a misspelling of {close[0]!r}",
                    "Correct submission_org in the launcher to the submitter's name.",
                    None,
                )
            return (
                ": the logs name another organisation; these may be another submitter's runs",
                "Submit your own runs, or correct submission_org in the launcher if they are yours.",
                None,
            )
        platform = run.first("submission_platform")
        shown = str(platform.value) if platform is not None else None
        names = [result.system or "", str(description.get("system_name") or "") if description else ""]
        fix = (
            f"Set submission_org to your organisation in the launcher ({vendor}'s implementation logs {text!r} unless "
            "told otherwise); if these are not your runs, submit your own."
        )
        if shown is not None and not _platform_placeholder(shown, text):
            if _names_system(shown, names):
                # the runs name this package's system: the name is the implementation's, not a sign of reuse
                written = event.meta("file")
                by = f" (written by {str(written)!r})" if isinstance(written, str) and written else ""
                return (
                    f": the name {vendor}'s implementation logs itself{by}; the logs' submission_platform {shown!r} "
                    "names this package's system (no sign of another submitter's runs)",
                    fix,
                    Severity.INFO,
                )
            where = f"the logs' submission_platform {shown!r} does not name this package's system either"
        elif shown is not None:
            # neither name was set: the launcher's defaults say nothing of whose runs these are (as the
            # reference's SUBMISSION_ORG_PLACEHOLDER)
            return (
                f": {vendor}'s default submission_org, beside the launcher's placeholder submission_platform "
                f"{shown!r}: neither was set (no sign of another submitter's runs)",
                fix,
                Severity.INFO,
            )
        else:
            where = "no submission_platform"
        return (f": {vendor}'s default submission_org, kept ({where})", fix, None)


#: What the reference launchers log until a submitter sets submission_org.
PLACEHOLDER = "SUBMISSION_ORG_PLACEHOLDER"

#: submission_org values that published implementations log by default (letters and digits,
#: lowercase), and whose launcher logs them: OEMs that run these keep them (docs/published-rounds-reviews.yaml,
#: SYS004: NVIDIA's in Supermicro, Dell, Lenovo packages; AMD's in Oracle, Supermicro, Cisco, MiTAC;
#: Habana's; MosaicML's in Ailiverse's; `reference_implementation` in Intel's).
VENDOR_DEFAULTS = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "habana": "Habana",
    "habanalabs": "Habana",
    "mosaicml": "MosaicML",
    "referenceimplementation": "the MLCommons reference implementation",
}


#: submission_platform values that launchers log until a submitter sets one (letters, lowercase), beside
#: those with "placeholder" in them: v1.0 Supermicro unet3d's `your_platform`.
PLATFORM_DEFAULTS = {"yourplatform"}


def _platform_placeholder(platform: str, org: str) -> bool:
    """A submission_platform that is a launcher's default: empty but for a count, a placeholder, or the
    default organisation again (Intel's `reference_implementation` in both)."""
    letters = _letters(re.sub(r"^[0-9]+x", "", platform.strip()))
    return not letters or "placeholder" in letters or letters in PLATFORM_DEFAULTS or letters == _letters(org)


def _own_vendor(logged: str, name: str) -> bool:
    """A vendor's default name in the vendor's own package ('Habana' in Intel-HabanaLabs's)."""
    vendor = VENDOR_DEFAULTS.get(_letters(logged))
    if vendor is None or vendor.startswith("the "):
        return False
    mine = _letters(name)
    keys = [key for key, owner in VENDOR_DEFAULTS.items() if owner == vendor]
    return any(mine == key or (len(key) >= 5 and key in mine) for key in keys)


def _letters(text: str) -> str:
    return "".join(re.findall(r"[a-z0-9]+", text.casefold()))


def _misspelt(logged: str, name: str) -> bool:
    """A name one or two letters away from the submitter's ('GigaComptuing' for 'GigaComputing')."""
    a, b = _letters(logged), _letters(name)
    return len(b) >= 6 and difflib.SequenceMatcher(None, a, b).ratio() >= 0.85


def _names_system(platform: str, systems: list[str]) -> bool:
    """Whether a submission_platform ('1xAS-8125GS-TNHR', 'GX2560M7_H100_SXM_80GBx4') names one of
    the package's system names (its folder, its description's system_name), counts aside."""
    wanted = _letters(re.sub(r"^[0-9]+x", "", platform.strip()))
    return len(wanted) >= 3 and any(
        wanted in _letters(system) or (len(_letters(system)) >= 3 and _letters(system) in wanted) for system in systems
    )


def _same_org(logged: str, name: str) -> bool:
    """The same organisation, however written: case, spaces and punctuation aside ('KRAI' and
    'Krai', 'Juniper Networks' and 'JuniperNetworks'), or the logged words all in the name
    ('Clemson Research Computing and Data' in 'Clemson University Research Computing and Data')."""
    words = [re.findall(r"[a-z0-9]+", text.casefold()) for text in (logged, name)]
    return bool(words[0]) and ("".join(words[0]) == "".join(words[1]) or set(words[0]) <= set(words[1]))


class NodeCountMismatch(BenchmarkRule):
    """`submission_platform` names another node count than the system description.

    What it checks: a platform written `<N>x<name>` (the reference launchers' convention) against
    `number_of_nodes`.

    Why it matters: the node count sets the accelerator count that every published table and
    every "per accelerator" comparison uses.

    A platform that counts accelerators instead (`2xA5000`: the count equals the system's
    accelerators and the name is part of `accelerator_model_name`, "NVIDIA RTX A5000") is not a
    node count.

    Example: `submission_platform: "8xDGX H100"` with `"number_of_nodes": "1"`.

    How to fix: run on the described system, or correct the description.
    """

    code = "SYS005"
    name = "node-count-mismatch"
    summary = "submission_platform names another node count than the description."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description = context.system_description(result.submitter, result.system)
        nodes = description.count("number_of_nodes") if description else None
        # a count written as a float (1.0: MosaicML and Ailiverse, v2.0 to v3.1) is left alone, as it
        # always was: their platforms count GPUs ("8xA100_80GB-baseline"), in words that are not
        # the accelerator's model name
        if description is None or nodes is None or isinstance(description.get("number_of_nodes"), float):
            return
        for run, event in _values(result, "submission_platform"):
            match = re.match(r"^([0-9]{1,9})x(.*)$", str(event.value))
            if match and _counts_accelerators(match.group(2), int(match.group(1)), description):
                continue
            if match and int(match.group(1)) != nodes:
                yield self.finding(
                    f"submission_platform {event.value!r} names {match.group(1)} node(s), the system "
                    f"description {nodes}",
                    path=run.path,
                    line=event.line,
                )
                return


def _counts_accelerators(name: str, count: int, description: SystemDescription) -> bool:
    """`<count>x<name>` names the system's accelerators: the count is their total and the name is
    part of the accelerator model's name."""
    nodes, per_node = description.count("number_of_nodes"), description.count("accelerators_per_node")
    if nodes is None or per_node is None:
        return False
    total = nodes * per_node
    model = str(description.get("accelerator_model_name") or "").lower()
    name = name.strip().lower()
    return count == total and len(name) >= 2 and name in model


def _capacity(system: SystemDescription) -> tuple[float, float] | None:
    return hardware.capacity_bytes(system.get("accelerator_memory_capacity")) if system.data is not None else None


def _written(system: SystemDescription) -> str:
    return f"accelerator_memory_capacity {system.get('accelerator_memory_capacity')!r}"


def _contradicts_name(system: SystemDescription, written: tuple[float, float]) -> bool:
    """The capacity contradicts the one the model name writes (SYS007 says so, not SYS006)."""
    named = hardware.named_capacity_gb(system.get("accelerator_model_name"))
    return named is not None and not hardware.capacities_agree(written, named)


class MemoryContradictsAccelerator(SystemRule):
    """The memory a system description gives its accelerator is not that accelerator's.

    What it checks: `accelerator_memory_capacity` against the capacity the hardware reference
    gives the accelerator `accelerator_model_name` names (`data/accelerators.json`), read both as
    GB and as GiB (vendors write either: nvidia-smi's 81559 MiB is an "80GB" H100) and 10% apart
    at least (usable memory is a few percent below the nominal).

    Why it matters: a capacity copied from another system's description (an H200's 143771 MiB in
    a GB200's, which has 186 GB) says the description was not written for the hardware that ran,
    and the memory every reader compares is wrong.

    Vendors ship variants of one accelerator with other memory (H100 with 80, 94 or 96 GB), and a
    new one may not be in the reference yet: this is a warning. A capacity that contradicts the
    one the model name itself writes is SYS007's.

    Example: `"accelerator_model_name": "NVIDIA Blackwell GPU (GB200)"` with
    `"accelerator_memory_capacity": "143771 MiB"`.

    How to fix: write the memory of the accelerator the runs used (nvidia-smi's or the
    datasheet's); if the accelerator is a variant the reference lacks, report it.
    """

    code = "SYS006"
    name = "memory-contradicts-accelerator"
    summary = "The accelerator memory described is not that of the accelerator named."
    severity = Severity.WARNING
    scope = "system"

    def check(self, system: SystemDescription, context: CheckContext) -> Iterable[Finding]:
        written = _capacity(system)
        accelerator = hardware.match(system.get("accelerator_model_name"))
        if written is None or accelerator is None or not accelerator.hbm_gb or _contradicts_name(system, written):
            return
        if not hardware.capacities_agree(written, accelerator.hbm_gb):
            yield self.finding(
                f"{_written(system)} is not the {accelerator.hbm_gb:g} GB of a {accelerator.model}, the accelerator "
                f"{system.get('accelerator_model_name')!r} names (read as GB or GiB, "
                f"{hardware.CAPACITY_TOLERANCE:.0%} apart at least)",
                path=system.path,
                line=system.field_lines.get("accelerator_memory_capacity"),
            )


class MemoryContradictsName(SystemRule):
    """The accelerator memory of a system description contradicts the capacity its model name writes.

    What it checks: `accelerator_memory_capacity` against a capacity written in
    `accelerator_model_name` itself ("NVIDIA A100-PCIE-80GB (300W)", "NVIDIA H200 NVL 141GB"),
    read as GB or GiB and 10% apart at least.

    Why it matters: the description contradicts itself; one of the two was copied from another
    system, and readers cannot tell which hardware ran.

    A description that no `results/<system>/` folder of its submission uses describes no result:
    its contradiction is then info (a fact to correct before a result uses it, not a fault of any
    result), as in Dell's v5.1 `systems/1xXE7745x8H200-NVL-141GB.json`, published without results.

    Example: `"accelerator_model_name": "NVIDIA H200 NVL 141GB"` with
    `"accelerator_memory_capacity": "96000 MiB"` (an RTX PRO 6000's).

    How to fix: correct the field that is not the hardware the runs used.
    """

    code = "SYS007"
    name = "memory-contradicts-name"
    summary = "The accelerator memory described contradicts the capacity in the model name."
    severity = Severity.ERROR
    scope = "system"

    def check(self, system: SystemDescription, context: CheckContext) -> Iterable[Finding]:
        written = _capacity(system)
        named = hardware.named_capacity_gb(system.get("accelerator_model_name"))
        if written is not None and named is not None and _contradicts_name(system, written):
            used = _used(system, context)
            yield self.finding(
                f"{_written(system)} is not the {named:g} GB that accelerator_model_name "
                f"{system.get('accelerator_model_name')!r} writes"
                + ("" if used else f"; no results/{system.name}/ folder uses this description"),
                path=system.path,
                line=system.field_lines.get("accelerator_memory_capacity"),
                severity=None if used else Severity.INFO,
                hint=None
                if used
                else "Correct the field that is not the accelerator's, or remove the description if no result is "
                "meant to use it.",
            )


def _used(system: SystemDescription, context: CheckContext) -> bool:
    """Whether a `results/<system>/` folder of the submission that holds the description uses it
    (true when that submission is not found: nothing then says the description is unused)."""
    for submission in context.tree.submissions:
        if any(described is system for described in submission.systems):
            return system.name in submission.system_dirs
    return True


RULES: list[type[Rule]] = [
    SystemJsonInvalid,
    SystemSchema,
    DivisionMismatch,
    SubmitterMismatch,
    NodeCountMismatch,
    MemoryContradictsAccelerator,
    MemoryContradictsName,
]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
