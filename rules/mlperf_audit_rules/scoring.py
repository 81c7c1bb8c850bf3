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
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from mlperf_audit import BenchmarkResult, Run, Severity, hookimpl, rulesets
from mlperf_audit.engine import CheckContext
from mlperf_audit.model import natural_key
from mlperf_audit.scores import BenchmarkScore, RunScore, url_prefix
from mlperf_audit_rules import compliance
from mlperf_audit_rules.rcp import Verdict, bypass_in_force, evaluate, run_convergence, verdict_for

NON_ERROR_KINDS = {"REPEATED", "DEFECT"}
RCP_STATUS = {"RCP found": "Fail", "RCP Interpolation": "Interp. Fail", "Cannot find any RCPs": "No RCP"}


def time_to_train(run: Run) -> float | None:
    """Minutes between run_start and run_stop, read as `_query_run_start_stop` reads them."""
    start = stop = None
    for event in run.events:
        if event.key == "run_start":
            start = event.time_ms
        if event.key == "run_stop":
            stop = event.time_ms
        if start is not None and stop is not None:
            break
    if start is None or stop is None:
        return None
    return (float(stop) - float(start)) / 60 / 1000


def official_failure(run: Run, context: CheckContext, version: str) -> str | None:
    """Why the official summarizer drops the run (compliance failure or parse error), if it does."""
    parse_errors = sorted({i.code for i in run.issues if context.severity_of(i.code) is Severity.ERROR})
    if parse_errors:
        return f"log errors ({', '.join(parse_errors)})"
    if not run.events:
        return "no records"
    failures = sorted({
        compliance._code_of().get(m.family.id, compliance.FALLBACK_CODE)
        for m in compliance.interpret(run, version) if m.family.kind not in NON_ERROR_KINDS
    })
    return f"non-compliant ({', '.join(failures)})" if failures else None


def run_score(run: Run, context: CheckContext, version: str) -> tuple[RunScore, str | None]:
    """The run's score and, where the rules and the official summarizer disagree, why."""
    minutes = time_to_train(run)
    failure = official_failure(run, context, version)
    if failure:
        return RunScore(run.path, minutes, failure), None
    convergence = run_convergence(run, version)
    units = convergence.point if convergence.converged else None
    stop = run.first("run_stop")
    status = stop.meta("status") if stop is not None else None
    if status != "success":
        return (RunScore(run.path, minutes, f"not converged (run_stop status {status!r})", units),
                f"{run.name}: run_stop status {status!r}, the official summarizer counts its time")
    if minutes is not None and minutes < 0:
        return (RunScore(run.path, minutes, "negative time-to-train", units),
                f"{run.name}: negative time-to-train, the official summarizer counts it")
    return RunScore(run.path, minutes, "ok", units), None


def olympic(runs: list[RunScore], drop: int) -> tuple[float | None, tuple[str, ...]]:
    """The summarizer's olympic mean and the runs it leaves out."""
    counted = sorted((r.minutes, r.file) for r in runs if r.counted and r.minutes is not None)
    failed = [r.file for r in runs if not (r.counted and r.minutes is not None)]
    if len(failed) > drop:
        return None, tuple(name.rsplit("/", 1)[-1] for name in failed)
    kept = counted[drop:len(counted) - (drop - len(failed))]
    kept_set = set(kept)
    left_out = [name for item in counted if item not in kept_set for name in (item[1],)] + failed
    names = tuple(sorted((f.rsplit("/", 1)[-1] for f in left_out), key=natural_key))
    if not kept:
        return None, names
    return sum(m for m, _ in kept) * 1.0 / len(kept), names


def system_info(result: BenchmarkResult, context: CheckContext) -> dict[str, Any]:
    """The summarizer's system columns; empty when the description cannot give them."""
    description = context.system_description(result.submitter, result.system)
    if description is None or description.data is None:
        return {}
    d = description.data
    try:
        name = d["system_name"]
        accelerator = d["accelerator_model_name"]
        framework = d["framework"]
        if name == "tpu-v3":
            name = f"TPUv3.{int(d['accelerators_per_node']) * 2}"
        if accelerator == "tpu-v3":
            accelerator = "TPUv3"
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
            "host_processors_count": int(d["host_processors_per_node"]) * int(d["number_of_nodes"]),
            "accelerator_model_name": accelerator,
            "accelerators_count": int(d["accelerators_per_node"]) * int(d["number_of_nodes"]),
            "framework": framework,
            "notes": ";".join(s for s in (d["hw_notes"], d["sw_notes"]) if s),
            "private_id": "",
            "details_url": f"{url_prefix(context.ruleset)}/blob/main/{d['submitter']}/systems/{result.system}.json",
            "code_url": f"{url_prefix(context.ruleset)}/blob/master/{d['submitter']}/benchmarks",
        }
    except (KeyError, TypeError, ValueError):
        return {}


def _rcp_columns(result: BenchmarkResult, context: CheckContext, version: str,
                 verdict: Verdict) -> tuple[str, Any, Any]:
    """The summarizer's RCP, GBS and samples_to_converge columns (its own RCP run has no bypass)."""
    unbypassed: Verdict = verdict if not verdict.bypassed and not bypass_in_force(result) else evaluate(
        result, version, bypass=False, cache_dir=context.config.cache_dir)
    status = "Pass" if unbypassed.passed else RCP_STATUS.get(
        unbypassed.message, "Missing" if "Missing" in unbypassed.message else "Unknown state")
    if unbypassed.message in ("Could not detect global_batch_size", "Insufficient convergence"):
        return status, None, None
    points = sorted(r.point for r in unbypassed.runs)
    samples = float(np.mean(points[1:len(points) - 1])) if len(points) >= 3 else None
    return status, float(unbypassed.batch_size), samples


@hookimpl
def mlperf_audit_score_benchmark(result: BenchmarkResult, context: CheckContext) -> BenchmarkScore:
    round_ = rulesets.get(context.ruleset)
    version = round_.version
    runs: list[RunScore] = []
    notes: list[str] = []
    for run in result.runs:
        score, deviation = run_score(run, context, version)
        runs.append(score)
        if deviation:
            notes.append(deviation)
    drop = round_.olympic_drop(result.benchmark)
    mean, left_out = olympic(runs, drop)
    verdict = verdict_for(result, context)
    scaling = verdict.scaling_factor if verdict is not None else 1.0
    rcp_factor = verdict.factor if verdict is not None else 1.0
    score = mean * scaling if mean is not None else None
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
        notes.insert(0, f"{', '.join(r.file.rsplit('/', 1)[-1] for r in failed)} counted as the slowest ({failed[0].status})")
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
    )
