"""`mlperf-audit audit PATH [--baseline PATH] [--claims FILE]`: a reviewer's view of claims, and of
speedups over a baseline that the hardware cannot support.

The command checks and scores PATH in one pass (every rule, the plausibility and forensic ones
included), then:

- without a claims file, a peer table per benchmark: each result's score, accelerators, work per
  accelerator per minute and its ratio to the median of its peers, utilisation where the work
  model applies, and the codes of the findings on that result (what stands out);
- with `--baseline PATH`, the best result of each benchmark in PATH against the baseline's: the
  two per-accelerator measures `compare` shows under the same names (`mlperf_audit.scores`), the
  accelerator-minutes ratio and the work per accelerator-minute ratio, the latter against what the
  hardware supports (the rules of scope "comparison", AUD007 among them, judge the same
  `Comparison`);
- with `--claims FILE`, a verdict per claim: supported, overstated, understated or not checkable,
  with the recomputed numbers, whether the gain fits what the hardware supports, and caveats.

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

Names, description fields and claims are shown `visible`, and no line of the text can start a CI
workflow command. `-o FILE` must lie outside PATH and outside the baseline PATH.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import difflib
import re
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Iterable

import msgspec

from .. import api, hardware, rulesets, yaml_input
from ..config import load_config
from ..errors import AuditError, TargetError
from ..formats import TEXT, TextDisplay
from ..formats import render_text as render_report_text
from ..model import open_binary, read_at_most
from ..plugins import PluginHost
from ..safety import json_document, no_workflow_commands, output_path, visible, write_text
from ..scores import (
    ACCELERATOR_MINUTES_RATIO,
    MEASURE_HEADERS,
    WORK_RATE_RATIO,
    BenchmarkScore,
    Comparison,
    accelerator_minutes_ratio,
    best_of,
    measures_legend,
    work_rate_ratio,
)
from ..terminal import Screen, table, wrapped
from . import add_reading_options, checked_target, noted, progress

#: Above this share of peers' median work per accelerator, a result stands out.
STANDS_OUT = 1.5
CAVEATS = {
    "gpt3": "gpt3 trains a ~1.2e9-token slice from a checkpoint (about 0.4% of a full 300e9-token run), not GPT-3",
    "llama2_70b_lora": "llama2_70b_lora is a LoRA fine-tune of a few thousand 8k-token samples, not pre-training",
}


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


def hardware_bound(new: BenchmarkScore, old: BenchmarkScore, software: float) -> tuple[float | None, str]:
    """The largest per-accelerator speedup of `new` over `old` that their hardware supports."""
    return hardware.speedup_bound(
        new.system_info.get("accelerator_model_name", ""), old.system_info.get("accelerator_model_name", ""), software
    )


def _find(scores: list[BenchmarkScore], benchmark: str, who: Party | None) -> BenchmarkScore | None:
    if who is None:
        return None
    for result in scores:
        if result.benchmark == benchmark and result.submitter == who.submitter and result.system == who.system:
            return result
    return None


def _closest(name: str, names: Iterable[str]) -> str | None:
    """The name of `names` that `name` most likely meant: the same but for case, else the only one
    that `name` begins (`llama2` for `llama2_70b_lora`), else difflib's closest."""
    names = sorted(set(names))
    same = [known for known in names if known.casefold() == name.casefold()]
    if same:
        return same[0]
    started = [known for known in names if name and known.casefold().startswith(name.casefold())]
    if len(started) == 1:
        return started[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
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
    return 0.5 * 10 ** (exponent if isinstance(exponent, int) else 0)


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
    caveats = [CAVEATS[benchmark]] if benchmark in CAVEATS else []
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
            closest = difflib.get_close_matches(str(key), known, n=1) if isinstance(key, str) else []
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


def _model(result: BenchmarkScore) -> str:
    accelerator = hardware.match(str(result.system_info.get("accelerator_model_name", "")))
    return accelerator.model if accelerator else str(result.system_info.get("accelerator_model_name"))


def _median_without(sorted_values: list[float], index: int) -> float | None:
    """The median of `sorted_values` without the one at `index` (None when none is left), as
    `statistics.median` gives it, in constant time."""
    count = len(sorted_values) - 1
    if count < 1:
        return None

    def at(position: int) -> float:
        return sorted_values[position if position < index else position + 1]

    middle = count // 2
    return at(middle) if count % 2 else (at(middle - 1) + at(middle)) / 2


def peer_rows(scores: list[BenchmarkScore], codes: dict[tuple[Any, Any, Any], set[str]]) -> list[dict[str, Any]]:
    """Per benchmark, each result against its peers: the other results on the same accelerator model."""
    rows = []
    # each result's model once, and the rates of each model sorted once: searching the group for each
    # result's peers made 400 results of one benchmark cost 4.9x 100 in `audit`
    models = {id(s): _model(s) for s in scores}
    by_benchmark: dict[str, list[BenchmarkScore]] = {}
    for s in scores:
        by_benchmark.setdefault(s.benchmark, []).append(s)
    for benchmark in sorted(by_benchmark):
        group = by_benchmark[benchmark]
        rates = {id(s): s.work_rate for s in group}
        by_model: dict[str, list[tuple[float, int]]] = {}
        for p in group:
            if rates[id(p)]:
                by_model.setdefault(models[id(p)], []).append((rates[id(p)] or 0.0, id(p)))
        place: dict[int, tuple[list[float], int]] = {}
        for entries in by_model.values():
            entries.sort()
            sorted_rates = [rate for rate, _ in entries]
            for index, (_, key) in enumerate(entries):
                place[key] = (sorted_rates, index)
        for s in sorted(group, key=lambda s: (s.score_minutes is None, s.score_minutes or 0)):
            rate = rates[id(s)]
            peers_median = _median_without(*place[id(s)]) if id(s) in place else None
            relative = rate / peers_median if rate and peers_median is not None else None
            accelerator = hardware.match(str(s.system_info.get("accelerator_model_name", "")))
            model = hardware.WORK.get(benchmark)
            utilisation = (
                rate * model.flops_per_unit / 60 / (accelerator.best_peak_tflops * 1e12)
                if rate and model and accelerator and accelerator.best_peak_tflops
                else None
            )
            flags = sorted(codes.get((s.submitter, s.system, s.benchmark), set()))
            if relative and relative > STANDS_OUT:
                flags.insert(0, f">{STANDS_OUT:g}x peers")
            rows.append(
                {
                    "benchmark": benchmark,
                    "submitter": s.submitter,
                    "system": s.system,
                    "accelerators": s.accelerators,
                    "accelerator": s.system_info.get("accelerator_model_name"),
                    "score_minutes": s.score_minutes,
                    "work_per_accelerator_minute": rate,
                    "relative_to_peers": relative,
                    "utilisation": utilisation,
                    # the precision of the peak it is measured against (FP4 on Blackwell: half of FP8's share)
                    "utilisation_precision": accelerator.best_precision
                    if utilisation is not None and accelerator
                    else None,
                    "envelope": s.envelope[0] if s.envelope is not None else None,
                    "stands_out": flags,
                }
            )
    return rows


def baseline_rows(scores: list[BenchmarkScore], baseline: list[BenchmarkScore]) -> list[dict[str, Any]]:
    rows = []
    for benchmark in sorted({s.benchmark for s in scores} & {s.benchmark for s in baseline}):
        new, old = best_of(scores, benchmark), best_of(baseline, benchmark)
        if new is None or old is None:
            continue
        speedup = work_rate_ratio(old, new)
        bound, basis = hardware_bound(new, old, hardware.SOFTWARE_ACROSS_ROUNDS)
        verdict = (
            "not checkable"
            if speedup is None or bound is None
            else "fits"
            if speedup <= bound
            else "exceeds what the hardware supports"
        )
        rows.append(
            {
                "benchmark": benchmark,
                "new": f"{new.submitter}/{new.system}",
                "baseline": f"{old.submitter}/{old.system}",
                "accelerator_minutes_ratio": accelerator_minutes_ratio(old, new),
                "work_per_accelerator_minute_ratio": speedup,
                "hardware_bound": bound,
                "basis": basis,
                "verdict": verdict,
            }
        )
    return rows


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _shown(value: Any) -> str:
    return visible(str(value))


def render_text(
    report_text: str,
    peers: list[dict[str, Any]],
    versus: list[dict[str, Any]],
    claims: list[ClaimVerdict],
    screen: Screen | None = None,
) -> str:
    parts = [
        report_text.rstrip("\n"),
        "",
        wrapped(
            "Peers (work/acc-min = work per accelerator-minute, convergence units per minute per accelerator; "
            "vs peers = against the median of the "
            "other results on the same accelerator; utilisation = of the best dense peak the accelerator offers, in "
            "the precision named; envelope = the published envelope's bound over the result's "
            "accelerator-minutes, above 1.00 beyond it: AUD008, AUD009):",
            screen,
        ),
    ]
    parts.append(
        table(
            [
                [
                    _shown(p["benchmark"]),
                    _shown(f"{p['submitter']}/{p['system']}"),
                    _shown(f"{p['accelerators']} x {p['accelerator']}"),
                    _fmt(p["score_minutes"], ".3f"),
                    _fmt(p["work_per_accelerator_minute"], ",.6g"),
                    _fmt(p["relative_to_peers"], ".2f"),
                    _fmt(p["utilisation"], ".0%")
                    + (f" {p['utilisation_precision']}" if p["utilisation_precision"] else ""),
                    _fmt(p["envelope"], ".2f"),
                    _shown(", ".join(p["stands_out"]) or "-"),
                ]
                for p in peers
            ],
            [
                "benchmark",
                "result",
                "accelerators",
                "score (min)",
                "work/acc-min",
                "vs peers",
                "utilisation",
                "envelope",
                "stands out",
            ],
            screen,
        )
    )
    if versus:
        parts += ["", "Against the baseline (best result per benchmark):"]
        parts.append(
            table(
                [
                    [
                        _shown(v["benchmark"]),
                        _shown(v["new"]),
                        _shown(v["baseline"]),
                        _fmt(v["accelerator_minutes_ratio"], ".3f"),
                        _fmt(v["work_per_accelerator_minute_ratio"], ".3f"),
                        _fmt(v["hardware_bound"], ".2f"),
                        _shown(v["verdict"]),
                    ]
                    for v in versus
                ],
                ["benchmark", "result", "baseline", *MEASURE_HEADERS, "hardware bound", "verdict"],
                screen,
            )
        )
        parts += [
            "",
            wrapped(measures_legend("the baseline", "the result"), screen),
            f"the hardware bound judges the {WORK_RATE_RATIO}",
        ]
    claims_from = len(parts)
    if claims:
        parts += ["", "Claims:"]
        for claim in claims:
            said = f": {_shown(claim.statement)}" if claim.statement else ""
            parts.append(f"- [{claim.verdict}] {_shown(claim.id)}{said}")
            if claim.reason:
                parts.append(f"    why: {_shown(claim.reason)}")
            if claim.recomputed is not None:
                parts.append(f"    claimed {_shown(claim.claimed)}, recomputed {_shown(claim.recomputed)}")
            elif claim.claimed is not None:
                parts.append(f"    claimed {_shown(claim.claimed)}, nothing recomputed")
            if claim.breakdown:
                parts.append(f"    breakdown: {_shown(claim.breakdown)}")
            if claim.hardware:
                parts.append(f"    hardware: {_shown(claim.hardware)}")
            parts += [f"    caveat: {_shown(c)}" for c in claim.caveats]
    if claims:  # the claims' lines, each wrapped to the screen (the tables above are fitted already)
        parts[claims_from:] = [wrapped(part, screen) for part in parts[claims_from:]]
    return no_workflow_commands("\n".join(parts) + "\n")


def run(args: argparse.Namespace, host: PluginHost) -> int:
    for given in [args.path] + ([args.baseline] if args.baseline else []):
        if not Path(given).exists():
            raise TargetError(f"{visible(given)}: no such file or folder")
    target, note = checked_target(args.path)
    baseline_target = checked_target(args.baseline)[0] if args.baseline else None
    checked = [target] + ([baseline_target] if baseline_target else [])
    if args.output:
        output_path(args.output, checked)  # refused before the minutes a check takes, not after
    claimed = load_claims(args.claims) if args.claims else []  # so is a claims file that is not one
    config = load_config(
        target=target,
        config_file=args.config,
        trust_tree_config=args.trust_tree_config,
        ruleset=args.ruleset,
        fail_on=args.fail_on,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    config = noted(config, note)
    jobs = max(1, args.jobs)
    with progress(args, "checking") as show:  # one parse for the check and the scores
        review = api.review(target, config, host, show, jobs=jobs, score=True)
    report, scores = review.report, list(review.scores)
    config = report.config  # the ruleset resolved for the package, as the check used it
    codes: dict[tuple[Any, Any, Any], set[str]] = {}
    for finding in report.findings:
        if finding.severity.value != "info" and finding.rule[:3] in ("AUD", "FOR", "RCP", "PKG", "HYP"):
            codes.setdefault((finding.submitter, finding.system, finding.benchmark), set()).add(finding.rule)
    peers = peer_rows(scores, codes)
    versus: list[dict[str, Any]] = []
    if baseline_target is not None:
        with progress(args, "scoring the baseline") as show:
            baseline = api.score(
                baseline_target,
                load_config(
                    target=baseline_target,
                    ruleset=args.baseline_ruleset or args.ruleset,
                    cache_dir=args.cache_dir,
                    use_cache=not args.no_cache,
                ),
                host,
                jobs=jobs,
                progress=show,
            )
        versus = baseline_rows(scores, baseline)
        compared = api.compare_baseline(
            Comparison(tuple(scores), tuple(baseline), str(args.baseline)), target, config, host
        )
        if compared:
            report = dataclasses.replace(report, findings=report.findings + tuple(compared))
    claims = [judge_claim(claim, scores) for claim in claimed]
    if args.format == "json":
        document = report.to_dict()
        document.update({"peers": peers, "baseline": versus, "claims": [c.to_dict() for c in claims]})
        text = json_document(document)
    else:
        screen = Screen.of(None if args.output else sys.stdout)
        shown = host.formats["text"]
        report_text = render_report_text(report, TextDisplay(screen=screen)) if shown is TEXT else shown.render(report)
        text = render_text(report_text, peers, versus, claims, screen)
    if args.output:
        write_text(args.output, text, checked)
    else:
        sys.stdout.write(text)
    return max(report.exit_code, claims_exit_code(claims))


#: The verdicts that fail `audit --claims` (exit 1): a claim the results do not support, or one
#: they cannot check (a gate must not pass a claim nobody verified).
FAILING_VERDICTS = ("overstated", "not checkable")


def claims_exit_code(claims: list[ClaimVerdict]) -> int:
    return 1 if any(claim.verdict in FAILING_VERDICTS for claim in claims) else 0


EXIT_CODES = """\
exit codes:
  0  no finding at or above --fail-on, and every claim supported or understated
  1  a finding at or above --fail-on, or a claim overstated or not checkable
  2  a usage or configuration error: PATH missing, a claims file that is not valid
     (unknown key, wrong type, unknown benchmark: one line naming the claim and the field)

The claims file format: docs/claims.md."""


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "audit",
        help="plausibility, forensics, peers and claims: a reviewer's view",
        description="Checks and scores PATH with every rule, then shows each result against its peers, "
        "the best results against a --baseline PATH, and a verdict on each claim of a --claims file.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", metavar="PATH", help="any PATH that `check` accepts")
    parser.add_argument("--baseline", metavar="PATH", help="compare each benchmark's best result with this PATH's")
    parser.add_argument("--baseline-ruleset", metavar="RULESET", help="the round of the baseline, if not --ruleset")
    parser.add_argument(
        "--claims",
        metavar="FILE",
        help="a YAML file of claims to verify (docs/claims.md); exit 1 if one is overstated or not checkable",
    )
    parser.add_argument("--format", default="text", choices=("text", "json"))
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE instead of standard output (never inside PATH or the baseline PATH)",
    )
    parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"))
    add_reading_options(parser, partial=False, jobs="check and score benchmark folders")
    parser.set_defaults(handler=run)
