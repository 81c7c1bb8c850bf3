"""Claims about MLPerf Training results, and their verdicts: the domain of `audit --claims`.

Claims file (YAML)::

    claims:
      - id: h200-bert
        statement: "NVIDIA's H200 system trains BERT 5% faster than Dell's H100 system"
        benchmark: bert
        faster: {submitter: NVIDIA, system: h200_ngc23.09_pytorch}
        than: {submitter: Dell, system: XE9680x8H100-SXM-80GB}
        speedup_percent: 5          # or speedup: 1.05; per_accelerator: true compares accelerator-minutes
      - id: gpt3-minutes
        statement: "trained GPT-3 in 96.7 minutes on 256 GPUs"
        benchmark: gpt3
        result: {submitter: NVIDIA, system: eos_n32_ngc24.09_nemo}
        minutes: 96.7
        accelerators: 256

A claimed number is supported when it equals the recomputed one to the precision it is written
with (half a unit of its last digit, at least 1%).

The claims file is read and validated before the check runs (`load_claims`): every field by type
and range (`Claim`), an unknown key named with the closest known one, a benchmark no round has
named with the closest one; YAML aliases are refused (`yaml_input`). Any of these is a usage error
(exit 2) naming the claim and the field. A claim about a result PATH does not hold is "not
checkable", its reason naming what matched nothing (the submitter, the system or the benchmark)
and the name of the tree that was likely meant: a system named as its description names it
(`ND_H200_v5 x64`) is led to its folder. An overstated or not checkable claim makes the exit code
1. docs/claims.md documents the format, the verdicts and the tolerance.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Iterable

import msgspec

from .. import reference, suggest
from ..errors import AuditError
from ..model import open_binary, read_at_most
from ..reading import yaml_input
from ..reference import hardware, rulesets
from ..scores import (
    ACCELERATOR_MINUTES_RATIO,
    WORK_RATE_RATIO,
    BenchmarkScore,
    accelerator_minutes_ratio,
    work_rate_ratio,
)
from .peers import hardware_bound


class ClaimsError(AuditError):
    """The claims file cannot be read, or is not a claims file."""


#: A claims file is a few claims written by hand: far below this.
MAX_CLAIMS_BYTES = 1 << 20
#: Claimed numbers, as written (an int stays an int: `_tolerance` reads the precision it is written
#: with), finite and within reason (a billion minutes, a speedup of a million, more accelerators
#: than any system has): a NaN, an infinity or a number of hundreds of digits is refused.
Minutes = Annotated[int, msgspec.Meta(gt=0, le=10**9)] | Annotated[float, msgspec.Meta(gt=0, le=1e9)]
Speedup = Annotated[int, msgspec.Meta(gt=0, le=10**6)] | Annotated[float, msgspec.Meta(gt=0, le=1e6)]
Percent = Annotated[int, msgspec.Meta(gt=-100, le=10**8)] | Annotated[float, msgspec.Meta(gt=-100, le=1e8)]
Accelerators = Annotated[int, msgspec.Meta(ge=1, le=hardware.MAX_ACCELERATORS)]


class Party(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A result a claim is about: the submitter folder and the system folder under results/."""

    submitter: str
    system: str

    def __str__(self) -> str:
        return f"{self.submitter}/{self.system}"


class Claim(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One claim: a time (`minutes`, of `result`) or a speedup (`speedup` or `speedup_percent`, of
    `faster` over `than`). A claim without the result or the number it needs is "not checkable"."""

    id: str
    benchmark: str
    statement: str = ""
    result: Party | None = None
    minutes: Minutes | None = None
    accelerators: Accelerators | None = None
    faster: Party | None = None
    than: Party | None = None
    speedup_percent: Percent | None = None
    speedup: Speedup | None = None
    per_accelerator: bool = False


class ClaimsFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    claims: list[Claim]


#: What each field must be, as the error says it.
_PARTY = "a mapping of submitter and system (the folder names, as strings)"
EXPECTED = {
    "id": "a string",
    "benchmark": "a string naming a benchmark",
    "statement": "a string",
    "result": _PARTY,
    "faster": _PARTY,
    "than": _PARTY,
    "submitter": "a string",
    "system": "a string",
    "minutes": "a number of minutes above 0 (at most 1e9)",
    "accelerators": f"a whole number from 1 to {hardware.MAX_ACCELERATORS:,}",
    "speedup_percent": "a number above -100 (at most 1e8)",
    "speedup": "a number above 0 (at most 1e6)",
    "per_accelerator": "true or false",
}
_FIELDS = {
    "file": tuple(ClaimsFile.__struct_fields__),
    "claim": tuple(Claim.__struct_fields__),
    "party": tuple(Party.__struct_fields__),
}


def samples_to_converge(result: BenchmarkScore) -> float | None:
    points = sorted(r.units for r in result.runs if r.counted and r.units)
    kept = points[1:-1] if len(points) >= 3 else points
    return sum(kept) / len(kept) if kept else None


def _find(scores: list[BenchmarkScore], benchmark: str, who: Party | None) -> BenchmarkScore | None:
    if who is None:
        return None
    for result in scores:
        if result.benchmark == benchmark and result.submitter == who.submitter and result.system == who.system:
            return result
    return None


def _closest(name: str, names: Iterable[str]) -> str | None:
    """The name of `names` that `name` most likely meant (`llama2_70b_lora` for `llama2`)."""
    close = suggest.closest(name, sorted(set(names)), count=1)
    return close[0] if close else None


def _suggest(name: str, names: Iterable[str]) -> str:
    closest = _closest(name, names)
    return f"; did you mean {closest!r}?" if closest else ""


def _not_found(scores: list[BenchmarkScore], benchmark: str, who: Party) -> str:
    """Why PATH holds no scored `benchmark` result of `who`, naming the part that matched nothing
    (the submitter, the system, the benchmark) and the name of the tree it was likely meant as. A
    system named as its description names it (`ND_H200_v5 x64`) is matched to its folder."""
    submitters = {s.submitter for s in scores if s.submitter is not None}
    if who.submitter not in submitters:
        described = {str(s.submitter) for s in scores if s.system_info.get("submitter") == who.submitter}
        if len(described) == 1:
            folder = described.pop()
            return (
                f"no submitter {who.submitter!r} in PATH; did you mean {folder!r}? (its system descriptions "
                f"name it {who.submitter!r})"
            )
        return f"no submitter {who.submitter!r} in PATH{_suggest(who.submitter, submitters)}"
    own = [s for s in scores if s.submitter == who.submitter]
    systems = {s.system for s in own if s.system is not None}
    if who.system not in systems:
        named_so = [s for s in own if str(s.system_info.get("system", "")).casefold() == who.system.casefold()]
        # several folders may share a description's name (NVIDIA's "DGX H200"): those of the benchmark
        meant = {str(s.system) for s in named_so if s.benchmark == benchmark} or {str(s.system) for s in named_so}
        if meant:
            folders = " or ".join(repr(folder) for folder in sorted(meant))
            return (
                f"no system folder {who.system!r} of {who.submitter} in PATH; did you mean {folders}? (a claim "
                f"names the folder under results/; {who.system!r} is the system_name its description gives)"
            )
        return f"no system {who.system!r} of {who.submitter} in PATH{_suggest(who.system, systems)}"
    held = {s.benchmark: s for s in own if s.system == who.system}
    if benchmark not in held:
        return f"{who} has no {benchmark} result in PATH (it has {', '.join(sorted(held))})"
    note = held[benchmark].note
    return f"{who}'s {benchmark} result has no score" + (f" ({note})" if note else "")


def _unmatched(scores: list[BenchmarkScore], benchmark: str, *named: Party | None) -> list[str]:
    """For each named result that is not a scored result of PATH, why not (`_not_found`)."""
    reasons = []
    for who in named:
        if who is None:
            continue
        result = _find(scores, benchmark, who)
        if result is None or not result.score_minutes:
            reasons.append(_not_found(scores, benchmark, who))
    return reasons


def _tolerance(written: Any) -> float:
    """Half a unit of the last digit written."""
    exponent = Decimal(str(written)).normalize().as_tuple().exponent
    return 0.5 * float(10 ** (exponent if isinstance(exponent, int) else 0))


@dataclass
class ClaimVerdict:
    id: str
    statement: str
    verdict: str  # supported, overstated, understated, not checkable
    claimed: Any = None
    recomputed: Any = None
    hardware: str = ""
    caveats: list[str] = field(default_factory=list)
    #: a speedup split into throughput (work per accelerator-minute) and convergence (fewer
    #: units to the target), with the numbers behind each
    breakdown: str = ""
    #: why a claim is not checkable: what in it matched nothing in PATH, and what was likely meant
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "statement": self.statement,
            "verdict": self.verdict,
            "reason": self.reason,
            "claimed": self.claimed,
            "recomputed": self.recomputed,
            "hardware": self.hardware,
            "caveats": self.caveats,
            "breakdown": self.breakdown,
        }


def _compare(claimed: float, actual: float, tolerance: float, larger_is_better: bool = True) -> str:
    if abs(claimed - actual) <= tolerance:
        return "supported"
    more = claimed > actual
    return "overstated" if more == larger_is_better else "understated"


def judge_claim(claim: Claim, scores: list[BenchmarkScore]) -> ClaimVerdict:
    identifier, statement, benchmark = claim.id, claim.statement, claim.benchmark
    caveat = reference.facts(benchmark).claim_caveat
    caveats = [caveat] if caveat else []
    if claim.minutes is not None:
        result = _find(scores, benchmark, claim.result)
        if result is None or result.score_minutes is None:
            reasons = _unmatched(scores, benchmark, claim.result) if claim.result else ["the claim names no result"]
            return ClaimVerdict(
                identifier, statement, "not checkable", claim.minutes, None, caveats=caveats, reason="; ".join(reasons)
            )
        claimed = float(claim.minutes)
        tolerance = max(_tolerance(claim.minutes), 0.01 * result.score_minutes)
        verdict = _compare(claimed, result.score_minutes, tolerance, larger_is_better=False)
        if claim.accelerators is not None and claim.accelerators != result.accelerators:
            verdict = "overstated" if claim.accelerators < (result.accelerators or 0) else verdict
            caveats.append(f"the result used {result.accelerators} accelerators, the claim says {claim.accelerators}")
        return ClaimVerdict(identifier, statement, verdict, claimed, round(result.score_minutes, 4), caveats=caveats)
    faster, than = _find(scores, benchmark, claim.faster), _find(scores, benchmark, claim.than)
    written = claim.speedup_percent if claim.speedup_percent is not None else claim.speedup
    if written is None or faster is None or than is None or not faster.score_minutes or not than.score_minutes:
        reasons = [f"the claim gives no {name}" for name in ("faster", "than") if getattr(claim, name) is None]
        reasons += ["the claim gives no speedup, speedup_percent or minutes"] if written is None else []
        reasons += _unmatched(scores, benchmark, claim.faster, claim.than)
        return ClaimVerdict(
            identifier, statement, "not checkable", written, None, caveats=caveats, reason="; ".join(reasons)
        )
    speedup = than.score_minutes / faster.score_minutes
    per_accelerator = claim.per_accelerator
    if per_accelerator and faster.accelerators and than.accelerators:
        speedup = accelerator_minutes_ratio(than, faster) or speedup
    if claim.speedup_percent is not None:
        claimed = 1 + float(written) / 100
        tolerance = max(_tolerance(written) / 100, 0.01 * speedup)
    else:
        claimed = float(written)
        tolerance = max(_tolerance(written), 0.01 * speedup)
    verdict = _compare(claimed, speedup, tolerance)
    bound, basis = hardware_bound(faster, than, hardware.SOFTWARE_SAME_ROUND)
    rate_new, rate_old, rate_ratio = faster.work_rate, than.work_rate, work_rate_ratio(than, faster)
    stc_new, stc_old = samples_to_converge(faster), samples_to_converge(than)
    gain = claimed if per_accelerator else claimed * (than.accelerators or 1) / (faster.accelerators or 1)
    # what the hardware bounds is throughput: a gain from converging in fewer units is the
    # recipe's, not the accelerator's, so the claim's throughput share is held to the bound
    convergence = stc_old / stc_new if stc_new and stc_old else None
    throughput = gain / convergence if convergence else gain
    breakdown = ""
    cost_ratio = accelerator_minutes_ratio(than, faster)
    if rate_new and rate_old and rate_ratio and cost_ratio and convergence:
        breakdown = (
            # three averages (olympic times, per-run rates, trimmed units): the product is close, not exact
            f"{cost_ratio:.3f}x {ACCELERATOR_MINUTES_RATIO} (recomputed) ~ {rate_ratio:.3f}x {WORK_RATE_RATIO} "
            f"({rate_new:,.6g} against {rate_old:,.6g}) x {convergence:.3f}x convergence "
            f"({stc_new:,.6g} against {stc_old:,.6g} units to converge)"
        )
    if bound is None:
        fit = f"not checkable: {basis}"
    else:
        what = f"the claim's {WORK_RATE_RATIO}" if convergence else f"the claim's {ACCELERATOR_MINUTES_RATIO}"
        fit = (
            f"fits ({what}: {throughput:.2f}x <= {basis})"
            if throughput <= bound
            else f"exceeds what the hardware supports ({what}: {throughput:.2f}x > {basis})"
        )
    if stc_new and stc_old and stc_old / stc_new > 1.05:
        caveats.append(
            f"part of the gain is convergence, not hardware: {stc_new:,.6g} against {stc_old:,.6g} units to converge"
        )
    if faster.accelerators != than.accelerators and not per_accelerator:
        caveats.append(f"different scales: {faster.accelerators} against {than.accelerators} accelerators")
    if rate_new and rate_old and rate_ratio and not breakdown:
        caveats.append(f"{WORK_RATE_RATIO}: {rate_new:,.6g} against {rate_old:,.6g} ({rate_ratio:.3f}x)")
    shown = round((speedup - 1) * 100, 2) if claim.speedup_percent is not None else round(speedup, 4)
    return ClaimVerdict(identifier, statement, verdict, written, shown, fit, caveats, breakdown)


def load_claims(path: str) -> list[Claim]:
    """The claims of a claims file, every field checked by type and range (`Claim`); a
    `ClaimsError` naming the claim and the field otherwise, read before any check runs."""
    try:
        with open_binary(path) as stream:
            raw = read_at_most(stream, MAX_CLAIMS_BYTES)
    except OSError as error:
        raise ClaimsError(f"{path}: cannot read the claims file: {error.strerror or error}") from None
    if len(raw) > MAX_CLAIMS_BYTES:
        raise ClaimsError(f"{path}: the claims file is larger than {MAX_CLAIMS_BYTES >> 20} MiB; not read")
    try:
        data = yaml_input.load(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise ClaimsError(f"{path}: the claims file is not UTF-8 text (byte {error.start})") from None
    except yaml_input.YamlInputError as error:
        raise ClaimsError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(data, dict) or "claims" not in data:
        raise ClaimsError(f"{path}: expected a mapping with a list 'claims'")
    _refuse_unknown_fields(path, data)
    try:
        claims = msgspec.convert(data, ClaimsFile).claims
    except msgspec.ValidationError as error:
        raise ClaimsError(f"{path}: {_explain(error, data)}") from None
    for index, claim in enumerate(claims):
        _check_claim(path, index, claim)
    return claims


def _where(index: int, claim: Any) -> str:
    identifier = claim.get("id") if isinstance(claim, dict) else getattr(claim, "id", None)
    return f"claim {index + 1}" + (f" ({identifier!r})" if isinstance(identifier, str) else "")


def _unknown(where: str, mapping: dict[Any, Any], known: tuple[str, ...]) -> None:
    for key in mapping:
        if key not in known:
            closest = suggest.closest(key, known, count=1, stems_first=False) if isinstance(key, str) else []
            hint = f"; did you mean {closest[0]!r}?" if closest else f" (known: {', '.join(known)})"
            raise ClaimsError(f"{where}: unknown key {key!r}{hint}")


def _refuse_unknown_fields(path: str, data: dict[Any, Any]) -> None:
    """An unknown key, named with the closest known one (a misspelt `speedup_pct` would otherwise
    leave a claim without its number, "not checkable", without a word about why)."""
    _unknown(path, data, _FIELDS["file"])
    claims = data["claims"]
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if isinstance(claim, dict):
            _unknown(f"{path}: {_where(index, claim)}", claim, _FIELDS["claim"])
            for name in ("result", "faster", "than"):
                if isinstance(claim.get(name), dict):
                    _unknown(f"{path}: {_where(index, claim)}: {name}", claim[name], _FIELDS["party"])


_STEP = re.compile(r"\.([A-Za-z_]+)|\[([0-9]+)\]")


def _explain(error: msgspec.ValidationError, data: Any) -> str:
    """msgspec's error as the claim, the field, what it must be and what it is: its path
    (`$.claims[1].minutes`) holds only known names (unknown ones are refused before)."""
    message, _, location = str(error).partition(" - at `")
    steps = [(name, int(number) if number else None) for name, number in _STEP.findall(location.rstrip("`"))]
    value, names, where = data, list[str](), ""  # names: the field's path inside its claim, or in the file
    for name, number in steps:
        if number is not None and isinstance(value, list) and number < len(value):
            if names == ["claims"]:
                where, names = f"{_where(number, value[number])}: ", []
            value = value[number]
        elif name and isinstance(value, dict):
            value = value.get(name)
            names.append(name)
    if "missing required field" in message:
        missing = message.rsplit("`", 2)[-2] if message.count("`") >= 2 else "?"
        return f"{where}{'.'.join(names + [missing])} is missing ({EXPECTED.get(missing, 'required')})"
    if not names:
        return f"{where.rstrip(': ')} must be a mapping of the claim's fields, not {_brief(value)}"
    if names == ["claims"]:
        return f"expected a mapping with a list 'claims', not claims: {_brief(value)}"
    expected = EXPECTED.get(names[-1], "of another type")
    return f"{where}{'.'.join(names)} must be {expected}, not {_brief(value)}"


def _brief(value: Any) -> str:
    """A value of the file in a message: its repr, cut short, and no wider than a number can be shown."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"a number of {len(str(abs(value)))} digits"
    if isinstance(value, datetime.date):  # YAML reads 2024-06-01 as a date
        return f"the date {value.isoformat()} (quote it to make it text)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_claim(path: str, index: int, claim: Claim) -> None:
    """What types cannot say: one kind of claim per claim, and a benchmark some round has."""
    where = f"{path}: {_where(index, claim)}"
    speedup_fields = [name for name in ("speedup", "speedup_percent", "faster", "than") if getattr(claim, name)]
    if claim.minutes is not None and speedup_fields:
        raise ClaimsError(
            f"{where}: gives minutes and {', '.join(speedup_fields)}: a claim is a time or a speedup, not both"
        )
    if claim.speedup is not None and claim.speedup_percent is not None:
        raise ClaimsError(f"{where}: gives speedup and speedup_percent: give one")
    if claim.accelerators is not None and claim.minutes is None:
        raise ClaimsError(f"{where}: accelerators belongs to a time claim (with minutes)")
    known = _benchmarks()
    if claim.benchmark not in known:
        closest = _closest(claim.benchmark, known)
        raise ClaimsError(
            f"{where}: benchmark {claim.benchmark!r} is no MLPerf Training benchmark"
            + (f"; did you mean {closest!r}?" if closest else f" (known: {', '.join(sorted(known))})")
        )


def _benchmarks() -> set[str]:
    return {benchmark for ruleset in rulesets.SUPPORTED for benchmark in rulesets.get(ruleset).benchmarks}


#: The verdicts that fail `audit --claims` (exit 1): a claim the results do not support, or one
#: they cannot check (a gate must not pass a claim nobody verified).
FAILING_VERDICTS = ("overstated", "not checkable")


def claims_exit_code(claims: list[ClaimVerdict]) -> int:
    return 1 if any(claim.verdict in FAILING_VERDICTS for claim in claims) else 0
