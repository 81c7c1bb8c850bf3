"""The built-in scoring: time-to-train and the olympic score, as the official result summarizer.

Per run, time-to-train is `(run_stop - run_start) / 60 / 1000` minutes from the first pair of
`run_start`/`run_stop` records (`_query_run_start_stop`). A run that fails the official compliance
rules or has log-syntax errors counts as the slowest (it is dropped first). The score is the mean
of the sorted times without the fastest and the slowest (4 of each for unet3d), where dropped
runs use up the slowest places; with more dropped runs than that there is no score. The score is
multiplied by the RCP normalisation factor, recomputed in memory (the official flow reads it from
the `scaling.json` that the package checker wrote).

Where the rules and the official summarizer disagree, the score follows the rules and the note
says so: a run whose `run_stop` status is not `success`, or whose time-to-train is negative, is
counted as failed (the official summarizer counts its time).

Energy (a benchmark folder with a `power/` folder), as `_compute_total_power` computes it: a run's
energy in joules is the sum over `power/<run>/node_*.txt` of `conversion_eff * sum(power_reading
W * ms since the previous reading) * time-to-train ms / (power_measurement_stop -
power_measurement_start ms) / 1000` (the node's mean power over its measurement window times the
time-to-train), plus over `power/<run>/sw_*.txt` of `conversion_eff * interconnect_power_est W *
time-to-train ms / 1000`. The energy score is the mean energy of the runs the olympic time score
keeps (runs ordered by time-to-train), times the same scaling factor. Files and tied runs are added
in the order the folder lists them, as the summarizer's `glob` does, so the floating-point sums
are the official ones to the last bit (in an archive, in name order). Power logs are read as the
official parser reads them (`mlperf_audit.read_power_log`, once per folder), not with the stricter result-log parser. Where the
summarizer stops with an exception (no node file, no power_measurement_start, an empty window, a
reading that is not a number), the run has no energy and the result no energy score; the note
says why. Each round's energy is its own summarizer's: the summarizers of v4.0 and before read a node
log in file order (`file_order_node_energy`; `support/power_rounds.py` has the history).
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import replace
from typing import Any, Sequence

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkScore,
    CheckContext,
    PowerRecord,
    Run,
    RunScore,
    benchmark_dir,
    hardware,
    hookimpl,
    listing_order,
    natural_key,
    power_logs,
    reference,
    rulesets,
    url_prefix,
)
from mlperf_audit_rules.support import precision
from mlperf_audit_rules.support.convergence import Verdict, bypass_in_force, evaluate, run_convergence, verdict_for
from mlperf_audit_rules.support.official_compliance import FALLBACK_CODE, code_of, interpret
from mlperf_audit_rules.support.power_rounds import reads_in_file_order, stops_at_last_reading
from mlperf_audit_rules.support.work import envelope_verdict, quality_target, run_work, time_to_train, time_to_train_ms

NON_ERROR_KINDS = {"REPEATED", "DEFECT"}
RCP_STATUS = {"RCP found": "Fail", "RCP Interpolation": "Interp. Fail", "Cannot find any RCPs": "No RCP"}


def peak_utilisation(result: BenchmarkResult, context: CheckContext, version: str) -> tuple[float, str] | None:
    """The highest utilisation among the converged runs of the peak the result is held to (that of
    the precision its launch configuration evidently uses, else the best), and which peak that is
    ("H100-SXM5-80GB's FP8 peak"); None without a work model, a count or a peak (the reviewer's report)."""
    count, accelerator = hardware.of_system(context.system_description(result.submitter, result.system))
    if not count or accelerator is None or result.benchmark not in hardware.WORK:
        return None
    peak = precision.peak_for(accelerator, precision.evident(result, context))
    if peak is None:
        return None
    values = [
        value
        for work in run_work(result, version)
        if (value := hardware.utilisation(work.units, work.minutes, result.benchmark, count, accelerator, peak.tflops))
        is not None
    ]
    return (max(values), f"{accelerator.model}'s {peak.precision} peak") if values else None


def official_failure(run: Run, context: CheckContext, version: str) -> str | None:
    """Why the official summarizer drops the run (compliance failure or parse error), if it does."""
    parse_errors = context.error_codes(run.issues)
    if parse_errors:
        return f"log errors ({', '.join(parse_errors)})"
    if not run.events:
        return "no records"
    failures = sorted(
        {
            code_of().get(m.family.id, FALLBACK_CODE)
            for m in interpret(run, version)
            if m.family.kind not in NON_ERROR_KINDS
        }
    )
    return f"non-compliant ({', '.join(failures)})" if failures else None


def run_score(run: Run, context: CheckContext, version: str) -> tuple[RunScore, str | None]:
    """The run's score and, where the rules and the official summarizer disagree, why."""
    minutes = time_to_train(run)
    failure = official_failure(run, context, version)
    if failure:
        return RunScore(run.path, minutes, failure), None
    convergence = run_convergence(run, version)
    # a point read from the string "Infinity" or "NaN" is no convergence point (the statistics of
    # the spread cannot take it)
    units = convergence.point if convergence.converged and math.isfinite(convergence.point) else None
    stop = run.first("run_stop")
    status = stop.meta("status") if stop is not None else None
    if status != "success":
        return (
            RunScore(run.path, minutes, f"not converged (run_stop status {status!r})", units),
            f"{run.name}: run_stop status {status!r}, the official summarizer counts its time",
        )
    if minutes is not None and minutes < 0:
        return (
            RunScore(run.path, minutes, "negative time-to-train", units),
            f"{run.name}: negative time-to-train, the official summarizer counts it",
        )
    return RunScore(run.path, minutes, "ok", units), None


def olympic(runs: list[RunScore], drop: int) -> tuple[float | None, tuple[str, ...]]:
    """The summarizer's olympic mean and the runs it leaves out."""
    counted = sorted((r.minutes, r.file) for r in runs if r.counted and r.minutes is not None)
    failed = [r.file for r in runs if not (r.counted and r.minutes is not None)]
    if len(failed) > drop:
        return None, tuple(name.rsplit("/", 1)[-1] for name in failed)
    kept = counted[drop : len(counted) - (drop - len(failed))]
    kept_set = set(kept)
    left_out = [name for item in counted if item not in kept_set for name in (item[1],)] + failed
    names = tuple(sorted((f.rsplit("/", 1)[-1] for f in left_out), key=natural_key))
    if not kept:
        return None, names
    return sum(m for m, _ in kept) * 1.0 / len(kept), names


class EnergyError(ValueError):
    """Why a run's energy cannot be computed (the official summarizer stops with an exception there)."""


def _number(record: PowerRecord, shown: str) -> float:
    if not isinstance(record.value, (int, float)) or not math.isfinite(record.value):
        raise EnergyError(f"{record.key} at line {record.line} of {shown} is not a number: {record.value!r}"[:200])
    return record.value


def node_energy(
    records: Sequence[PowerRecord], ttt_ms: float, shown: str = "the log", version: str | None = None
) -> float:
    """Joules of one node over the time-to-train, as `_compute_power_node` of the round's summarizer
    (`version`; None: the pinned one): its readings (watts) integrated from power_measurement_start
    on (each over the time since the previous one, in time order, until power_measurement_stop),
    divided by the measurement window, times time-to-train and the last `conversion_eff`. The
    summarizers of v4.0 and before read the records in file order (`file_order_node_energy`)."""
    if version is not None and reads_in_file_order(version):
        return file_order_node_energy(records, ttt_ms, shown, stop_at_last_reading=stops_at_last_reading(version))
    previous = last = start = stop = 0.0
    total: float = 0
    efficiency: float = 1.0
    started = stopped = False
    for record in sorted(records, key=lambda r: r.time_ms):  # stable, as the official list.sort
        if record.key == "power_measurement_start":
            start = previous = record.time_ms
            started = True
        if record.key == "power_reading" and started and not stopped:
            total += _number(record, shown) * (record.time_ms - previous)
            previous = record.time_ms
            last = max(last, record.time_ms)
        if record.key == "power_measurement_stop":
            stop = record.time_ms
            stopped = True
        if record.key == "conversion_eff":
            efficiency = _number(record, shown)
    if not started:
        raise EnergyError(f"no power_measurement_start record in {shown}")
    if not stopped:
        stop = last  # the summarizer takes the last reading (0 without one) as the stop
    if stop == start:
        raise EnergyError(f"the power measurement window of {shown} is empty")
    return efficiency * total * ttt_ms / (stop - start) / 1000


def file_order_node_energy(
    records: Sequence[PowerRecord], ttt_ms: float, shown: str = "the log", *, stop_at_last_reading: bool = True
) -> float:
    """Joules of one node as `_compute_power_node` computed them before mlcommons/logging c401ff0
    (2024-09-19; the summarizers of v3.1 and v4.0): the records in file order, every reading
    integrated (over the time since power_measurement_start or the previous reading; 0 before any)
    until the first power_measurement_stop, whose time ends the window; from 4054425 (2024-05-16,
    "Set power_measurement_stop to last measurement", the v4.0 summarizer) the window ends at the
    later of that stop and the last reading. A `conversion_eff` after the stop is not read."""
    previous = start = stop = last = 0.0
    total: float = 0
    efficiency: float = 1.0
    for record in records:  # file order: this summarizer does not sort
        if record.key == "power_measurement_start":
            start = previous = record.time_ms
        if record.key == "power_reading":
            total += _number(record, shown) * (record.time_ms - previous)
            previous = record.time_ms
            last = max(last, record.time_ms)
        if record.key == "power_measurement_stop":
            stop = record.time_ms
            break
        if record.key == "conversion_eff":
            efficiency = _number(record, shown)
    if stop_at_last_reading:
        stop = max(stop, last)
    if stop == start:  # the summarizer's ZeroDivisionError
        raise EnergyError(f"the power measurement window of {shown} is empty")
    return efficiency * total * ttt_ms / (stop - start) / 1000


def switch_energy(records: Sequence[PowerRecord], ttt_ms: float, shown: str = "the log") -> float:
    """Joules of one switch over the time-to-train, as `_compute_power_sw`: its first
    `interconnect_power_est` (watts; 0 without one) times time-to-train and the `conversion_eff`
    logged before it."""
    power: float = 0
    efficiency: float = 1.0
    for record in records:  # file order
        if record.key == "conversion_eff":
            efficiency = _number(record, shown)
        if record.key == "interconnect_power_est":
            power = _number(record, shown)
            break
    return efficiency * power * ttt_ms / 1000


def run_energy(result: BenchmarkResult, run: Run, version: str | None = None) -> float:
    """The run's energy in joules, from `power/<run>/node_*.txt` and `sw_*.txt` (`_compute_total_power`
    of the summarizer of the round `version`; None: the pinned one).

    Raises EnergyError when it cannot be computed."""
    ttt_ms = time_to_train_ms(run)
    if ttt_ms is None:
        raise EnergyError("no time-to-train")
    folder = run.name.split(".")[0]  # as the summarizer: result_0.txt -> power/result_0/
    if folder not in dict(result.folder.power or ()):
        raise EnergyError(f"no power/{folder}/ folder")
    logs = [log for log in power_logs(result) if log.run == folder]  # in the order the folder lists them
    if not any(fnmatch.fnmatch(log.name, "node_*.txt") for log in logs):
        raise EnergyError(f"no power/{folder}/node_*.txt file")
    total: float = 0
    for pattern in ("node_*.txt", "sw_*.txt"):
        for log in logs:
            if not fnmatch.fnmatch(log.name, pattern):
                continue
            if log.error is not None:
                raise EnergyError(log.error)
            try:
                total += (
                    node_energy(log.records, ttt_ms, log.shown, version)
                    if pattern == "node_*.txt"
                    else switch_energy(log.records, ttt_ms, log.shown)
                )
            except ArithmeticError as error:  # a number too large for a float
                raise EnergyError(f"{log.shown}: {error}") from None
    if not math.isfinite(total):  # a time_ms of "nan" or "inf", which float() takes
        raise EnergyError(f"the energy of {run.name} is not a finite number ({total!r})")
    return total


def olympic_energy(runs: list[RunScore], drop: int, order: Sequence[str]) -> float | None:
    """The mean energy of the runs the olympic time score keeps (`_index_olympic_average`); None when
    there is no time score or a counted run has no energy. `order` names the result files in the
    order the folder lists them: it breaks ties of time-to-train as the summarizer's does."""
    counted = [r for r in runs if r.counted and r.minutes is not None]
    failed = len(runs) - len(counted)
    if failed > drop or any(r.energy_joules is None for r in counted):
        return None
    position = {name: index for index, name in enumerate(order)}
    ranked = sorted(counted, key=lambda r: (r.minutes, position.get(r.file.rsplit("/", 1)[-1], len(position))))
    kept = [r.energy_joules for r in ranked[drop : len(ranked) - (drop - failed)] if r.energy_joules is not None]
    if not kept:
        return None
    return sum(kept) * 1.0 / len(kept)


def system_info(result: BenchmarkResult, context: CheckContext) -> dict[str, Any]:
    """The summarizer's system columns; empty when the description cannot give them."""
    description = context.system_description(result.submitter, result.system)
    if description is None or description.data is None:
        return {}
    d = description.data
    # the summarizer's int() of each count, bounded: an unreadable count leaves the system out, as
    # its crash does; SYS002 reports it (and a negative one, which the summarizer multiplies)
    nodes = description.count("number_of_nodes", signed=True)
    per_node = description.count("accelerators_per_node", signed=True)
    host_processors = description.count("host_processors_per_node", signed=True)
    if nodes is None or per_node is None or host_processors is None:
        return {}
    try:
        name = d["system_name"]
        accelerator = d["accelerator_model_name"]
        framework = d["framework"]
        renamed_system = reference.accelerators.summarizer_name(name)
        if renamed_system is not None:
            name = f"{renamed_system.shown}.{per_node * renamed_system.system_count_factor}"
        renamed_accelerator = reference.accelerators.summarizer_name(accelerator)
        if renamed_accelerator is not None:
            accelerator = renamed_accelerator.shown
        if "TensorFlow" in framework:
            commit = re.search(r" commit hash = .*", framework)
            framework = framework.replace(commit.group(0), "") if commit else framework
        return {
            "division": d["division"],
            "availability": d["status"],
            "submitter": d["submitter"],
            "system": name,
            "number_of_nodes": d["number_of_nodes"],
            "host_processor_model_name": d["host_processor_model_name"],
            "host_processors_count": host_processors * nodes,
            "accelerator_model_name": accelerator,
            "accelerators_count": per_node * nodes,
            "framework": framework,
            "notes": ";".join(s for s in (d["hw_notes"], d["sw_notes"]) if s),
            "private_id": "",
            "details_url": f"{url_prefix(context.ruleset)}/blob/main/{d['submitter']}/systems/{result.system}.json",
            "code_url": f"{url_prefix(context.ruleset)}/blob/master/{d['submitter']}/benchmarks",
        }
    except (KeyError, TypeError, ValueError):
        return {}


def _rcp_columns(
    result: BenchmarkResult, context: CheckContext, version: str, verdict: Verdict
) -> tuple[str, Any, Any]:
    """The summarizer's RCP, GBS and samples_to_converge columns (its own RCP run has no bypass)."""
    import numpy as np  # the official mean, as its summarizer takes it

    unbypassed: Verdict = (
        verdict
        if not verdict.bypassed and not bypass_in_force(result, context.ruleset)
        else evaluate(result, version, bypass=False)
    )
    status = (
        "Pass"
        if unbypassed.passed
        else RCP_STATUS.get(unbypassed.message, "Missing" if "Missing" in unbypassed.message else "Unknown state")
    )
    if unbypassed.message in ("Could not detect global_batch_size", "Insufficient convergence"):
        return status, None, None
    points = sorted(r.point for r in unbypassed.runs)
    samples = float(np.mean(points[1 : len(points) - 1])) if len(points) >= 3 else None
    return status, float(unbypassed.batch_size), samples


def _with_energies(result: BenchmarkResult, runs: list[RunScore], version: str) -> tuple[list[RunScore], str | None]:
    """The runs with their energies, and a note naming the counted runs that have none."""
    scored: list[RunScore] = []
    problems: list[str] = []
    for run, score in zip(result.runs, runs):
        try:
            scored.append(replace(score, energy_joules=run_energy(result, run, version)))
        except EnergyError as error:
            scored.append(score)
            if score.counted:
                problems.append(f"{run.name} ({error})")
    note = f"no energy score: no energy for {'; '.join(problems)}" if problems else None
    return scored, note


@hookimpl
def mlperf_audit_score_benchmark(result: BenchmarkResult, context: CheckContext) -> BenchmarkScore:
    round_ = rulesets.get(context.ruleset)
    version = round_.version
    runs: list[RunScore] = []
    notes: list[str] = []
    for run in result.runs:
        run_scored, deviation = run_score(run, context, version)
        runs.append(run_scored)
        if deviation:
            notes.append(deviation)
    drop = round_.olympic_drop(result.benchmark)
    mean, left_out = olympic(runs, drop)
    verdict = verdict_for(result, context)
    scaling = verdict.scaling_factor if verdict is not None else 1.0
    rcp_factor = verdict.factor if verdict is not None else 1.0
    score = mean * scaling if mean is not None else None
    energy = None
    if result.folder.power is not None:
        runs, energy_note = _with_energies(result, runs, version)
        mean_energy = olympic_energy(runs, drop, listing_order(benchmark_dir(result), (r.name for r in result.runs)))
        energy = mean_energy * scaling if mean_energy is not None else None
        if energy_note:
            notes.append(energy_note)
    rcp_status, gbs, samples = ("", None, None)
    if verdict is not None:
        rcp_status, gbs, samples = _rcp_columns(result, context, version, verdict)
    failed = [r for r in runs if not r.counted]
    required = round_.required_runs(result.benchmark)
    if mean is None and len(failed) > drop:
        notes.insert(0, f"no score: {len(failed)} runs failed, olympic scoring tolerates {drop}")
    elif mean is None:
        notes.insert(0, "no score: too few runs to drop the fastest and the slowest")
    elif failed:
        notes.insert(
            0, f"{', '.join(r.file.rsplit('/', 1)[-1] for r in failed)} counted as the slowest ({failed[0].status})"
        )
    if required is not None and len(runs) != required:
        pending = " (--partial: provisional)" if context.config.partial and len(runs) < required else ""
        notes.append(f"{len(runs)} of {required} required runs{pending}")
    if verdict is not None:
        if not verdict.passed:
            notes.append(f"RCP check failed ({verdict.message}); the official summarizer still publishes the score")
        elif scaling > 1:
            notes.append(f"scaled by {scaling:.6f} ({verdict.message})")
        if verdict.bypassed:
            notes.append("RCP check passed through rcp-bypass")
    on_disk = (result.scaling or {}).get("scaling_factor")
    if isinstance(on_disk, (int, float)) and not isinstance(on_disk, bool) and abs(on_disk - scaling) > 1e-12 * scaling:
        notes.append(f"scaling.json says {on_disk!r}; the recomputed factor {scaling!r} is used")
    return BenchmarkScore(
        submitter=result.submitter,
        system=result.system,
        benchmark=result.benchmark,
        path=result.path,
        runs=tuple(runs),
        required_runs=required,
        score_minutes=score,
        rcp_factor=float(rcp_factor),
        scaling_factor=float(scaling),
        rcp_status=rcp_status,
        gbs=gbs,
        samples_to_converge=samples,
        dropped=left_out,
        note="; ".join(notes),
        system_info=system_info(result, context),
        energy_joules=energy,
        quality_target=quality_target(version, result.benchmark, context.division_of(result) or "closed"),
        rcp_band=(verdict.minimum, float(verdict.record["RCP Mean"]))
        if verdict is not None and verdict.record is not None and verdict.minimum is not None
        else None,
        peak_utilisation=peak_utilisation(result, context, version),
        envelope=_envelope(result, context),
    )


def _envelope(result: BenchmarkResult, context: CheckContext) -> tuple[float, str] | None:
    found = envelope_verdict(result, context)
    return (found.factor, found.describe()) if found is not None else None
