"""FOR: logs that were edited, assembled or copied.

What honest logs look like was learned from the real v4.1 sample (126 runs): time never goes
backwards inside the training interval; after `run_stop` come only bookkeeping records (`status`,
`tracked_stats`, `seed`, `epoch_stop`, `block_stop`, `train_samples`, `trained_samples`) and, for
stable_diffusion and minigo, the offline evaluation of the saved checkpoints; evaluation points of the
samples-based benchmarks are multiples of the global batch size (tokens: times 2048 for gpt3).
Runs of one system overlapping in time are normal and are not a finding.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple, Sequence

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    Channel,
    CheckContext,
    Finding,
    LogEvent,
    Rule,
    Run,
    RunRule,
    Severity,
    SystemDescription,
    Tree,
    TreeRule,
    hardware,
    hookimpl,
    limits,
    natural_key,
    open_binary,
    reference,
    rulesets,
)
from mlperf_audit_rules.support import affected, envelope, peers, policies, published_runs
from mlperf_audit_rules.support.constants import dataset_constants
from mlperf_audit_rules.support.convergence import bypass_in_force, evaluate
from mlperf_audit_rules.support.envelope import round_of
from mlperf_audit_rules.support.official_compliance import LogLine, load_config
from mlperf_audit_rules.support.work import run_work, time_to_train

#: Time may go backwards by this much inside the training interval (ranks' clocks); the sample: 0.
BACKWARDS_TOLERANCE_MS = 60_000
#: A target-reaching evaluation may be logged this long after run_stop (the same step's bookkeeping).
STOP_TOLERANCE_MS = 1_000
EVAL_KEYS = {"eval_start", "eval_stop", "eval_accuracy", "eval_result"}
#: The virtual record into which stable_diffusion's rules gather FID and CLIP per samples_count.
AGGREGATED = "aggregated_eval_accuracy"
#: Evaluation intervals that training may run past run_stop while deferred evaluations wait (twice the 4
#: of Habana's published bert logs).
DEFERRED_INTERVALS = 8
#: Records of training or evaluation work: anything else after run_stop (status, tracked_stats, a
#: learning rate, throughput, submission_* repeated by a launcher) is bookkeeping that counts no time.
WORK_KEYS = {
    "run_start",
    "init_start",
    "init_stop",
    "block_start",
    "epoch_start",
    "eval_start",
    "eval_accuracy",
    "eval_stop",
    "eval_result",
    "cache_clear",
}
#: Training bookkeeping of a loop that runs one more block after run_stop, without evaluating.
LOOP_TAIL = {"block_start", "epoch_start"}


def _offline(benchmark: str | None) -> bool:
    """Whether the benchmark evaluates saved checkpoints after training: its evaluation records carry
    the time of the checkpoint or of the evaluation, and run_stop the time the winning checkpoint was
    saved, earlier than the training logged before it."""
    return reference.benchmarks.facts(benchmark).offline_evaluation


def _cadence(benchmark: str) -> tuple[str, int] | None:
    """(metadata key, factor of the global batch size) of the evaluations' step, where it is known."""
    facts = reference.benchmarks.facts(benchmark)
    return None if facts.cadence_batch_factor is None else (facts.convergence_key, facts.cadence_batch_factor)


def _interval(run: Run) -> tuple[int, int] | None:
    start = next((i for i, e in enumerate(run.events) if e.key == "run_start"), None)
    stop = next((i for i, e in enumerate(run.events) if e.key == "run_stop"), None)
    if start is None:
        return None
    return start, (stop if stop is not None and stop > start else len(run.events) - 1)


class TimeGoesBackwards(RunRule):
    """Inside the training interval, a record is timed earlier than one logged before it.

    What it checks: between `run_start` and `run_stop`, in file order, that no record's `time_ms`
    is more than 60 s earlier than the latest time logged so far (the real sample never goes
    backwards at all). Left out:

    - for stable_diffusion and minigo, the checkpoints are evaluated offline, after training: the
      evaluation records (`eval_start`, `eval_accuracy`, `eval_stop`, `eval_result`) keep a clock of
      their own and are checked against each other, the training records against the training's.
      Left out: `run_stop`, which carries the time of the checkpoint that reached the target
      (minigo: run_start plus the winning model's time), earlier than the training that went on
      after it; the winning checkpoint's scores restated at run_stop's time (v3.1 NVIDIA's
      `report_end.py`); and whatever an evaluation logs besides its own records between its
      `eval_start` and `eval_stop` (validation blocks, minigo's `resign_threshold`);
    - for every benchmark, a deferred evaluation: all of the run's evaluation records logged in one
      batch after the training blocks and right before `run_stop` (Habana's bert, v1.0-v3.1),
      provided the batch's own times never decrease and lie inside [`run_start`, `run_stop`], and
      the training logged before it runs at most 8 evaluation intervals past `run_stop` (Habana: 4);
      `run_stop` then carries the time of the evaluation that reached the target. An evaluation
      outside the run, a batch that goes backwards, or evaluations logged in place besides the
      batch are still checked (and FOR002 checks the target against `run_stop`).

    Why it matters: a log written as the run ran only moves forward; a jump back means records
    were edited or spliced from another run, and time-to-train may be shortened by it.

    Example: an `eval_accuracy` at 12:40 after a `block_stop` at 13:40, with training logged after it.

    How to fix: submit the log as the run wrote it.
    """

    code = "FOR001"
    name = "time-goes-backwards"
    summary = "Time goes backwards inside the training interval."
    severity = Severity.ERROR
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        interval = _interval(run)
        if interval is None:
            return
        events = run.events[interval[0] : interval[1] + 1]
        offline = _offline(run.text("submission_benchmark"))
        deferred = _deferred_evaluation(events)
        # an offline evaluator keeps a clock of its own: its records are checked against each other (it
        # evaluates the checkpoints one after the other), the training's against the training's
        latest: dict[bool, LogEvent] = {False: events[0], True: events[0]}
        in_evaluation = False
        stop_ms = events[-1].time_ms if events[-1].key == "run_stop" else None
        for index, event in enumerate(events):
            evaluation = offline and event.key in EVAL_KEYS
            if offline:
                # run_stop carries the time of the checkpoint that reached the target, earlier than the
                # training that went on, and so do the winning checkpoint's scores restated with it (v3.1
                # NVIDIA's report_end.py); what an evaluation logs besides its own records (validation blocks,
                # minigo's resign_threshold in seconds) follows neither clock
                skip = (
                    event.key == "run_stop"
                    or (in_evaluation and not evaluation)
                    or (evaluation and event.time_ms == stop_ms)
                )
                if event.key == "eval_start":
                    in_evaluation = True
                elif event.key == "eval_stop":
                    in_evaluation = False
                if skip:
                    continue
            if index in deferred:
                continue
            before = latest[evaluation]
            if before.time_ms - event.time_ms > BACKWARDS_TOLERANCE_MS:
                order = ", in the order of the offline evaluations" if evaluation else ""
                yield self.finding(
                    f"{event.key} is timed {(before.time_ms - event.time_ms) / 60000:.1f} min before the "
                    f"{before.key} logged at line {before.line}{order}",
                    path=run.path,
                    line=event.line,
                )
                return
            if event.time_ms > before.time_ms:
                latest[evaluation] = event


def _deferred_evaluation(events: tuple[LogEvent, ...]) -> set[int]:
    """Indices of a deferred evaluation in the interval `events` (run_start .. run_stop): every evaluation
    record of the run, logged in one batch right before run_stop, timed in order inside the run; with
    run_stop's own index, which then carries the time of the evaluation that reached the target."""
    if len(events) < 3 or events[-1].key != "run_stop":
        return set()
    first = len(events) - 1
    while first > 1 and events[first - 1].key in EVAL_KEYS:
        first -= 1
    batch = events[first:-1]
    if not any(e.key == "eval_accuracy" for e in batch):
        return set()
    if any(e.key in EVAL_KEYS for e in events[1:first]):  # evaluations also logged in place: not a batch
        return set()
    start_ms, stop_ms = events[0].time_ms, events[-1].time_ms
    times = [e.time_ms for e in batch]
    if not all(isinstance(t, (int, float)) and start_ms <= t <= stop_ms for t in times):
        return set()
    if any(later < earlier for earlier, later in zip(times, times[1:])):
        return set()
    # training goes on while the evaluations wait in their queue, but only so long past run_stop:
    # Habana's v1.0-v3.1 bert logs train 4 evaluation intervals past it; far more means run_stop was moved
    cadence = max((later - earlier for earlier, later in zip(times, times[1:])), default=0)
    if any(
        isinstance(e.time_ms, (int, float))
        and e.time_ms - stop_ms > DEFERRED_INTERVALS * cadence + BACKWARDS_TOLERANCE_MS
        for e in events[1:first]
    ):
        return set()
    return set(range(first, len(events)))


def _target_record(context: CheckContext, run: Run, key: str = "eval_accuracy") -> Any:
    """The official rules' record of `key` for the run's benchmark and division, if any."""
    benchmark, division = run.value("submission_benchmark"), run.value("submission_division")
    if not isinstance(benchmark, str) or division not in ("closed", "open"):
        return None
    config = load_config(context.ruleset.split("-", 1)[1], f"{division}_{benchmark}")
    return config.keys.get(key) if config else None


def _target_check(context: CheckContext, run: Run) -> Any:
    """The compiled quality-target expression of the run's benchmark and division, if any."""
    record = _target_record(context, run)
    return record.at_least_one[1] if record and record.at_least_one else None


def first_reaching_target(context: CheckContext, run: Run) -> LogEvent | None:
    """The first evaluation that meets the official quality target of the run's round, benchmark and
    division; for stable_diffusion, whose rules aggregate FID and CLIP per `samples_count` into one
    virtual record, the last of the records that make up the first aggregate to meet it."""
    code = _target_check(context, run)
    if code is not None:
        return next((e for e in run.all("eval_accuracy") if reaches_target(code, e)), None)
    record = _target_record(context, run, AGGREGATED)
    if record is None or record.at_least_one is None:
        return None
    metrics: dict[str, dict[str, Any]] = {}
    for event in run.all("eval_accuracy"):
        metric, point = event.meta("metric"), event.meta("samples_count")
        if not isinstance(metric, str) or not _number(point):
            continue
        metrics.setdefault(repr(point), {"samples_count": point})[metric] = event.value
        if _meets(record.at_least_one[1], AGGREGATED, dict(metrics[repr(point)]), {}, event.time_ms, event.line):
            return event
    return None


def reaches_target(code: Any, event: LogEvent) -> bool:
    return _meets(code, event.key, event.value, dict(event.metadata), event.time_ms, event.line)


def _meets(code: Any, key: str, value: Any, metadata: dict[str, Any], time_ms: float, line_number: int) -> bool:
    line = LogLine("", time_ms, key, {"value": value, "metadata": metadata}, line_number)
    try:
        return bool(eval(code, {"s": {}, "math": math}, {"ll": line, "v": line.value}))
    except Exception:  # a record the official expression cannot read does not reach the target
        return False


class StopBeforeTarget(RunRule):
    """`run_stop` is timed before the evaluation that reached the quality target.

    What it checks: that the first `eval_accuracy` reaching the benchmark's target (the official
    expression) is timed no later than `run_stop` (1 s of bookkeeping allowed). stable_diffusion
    and minigo evaluate saved checkpoints after the run, so their evaluation times say nothing
    about run_stop; for minigo, the check is instead that `run_stop` is no earlier than `run_start`
    plus the time the winning model was trained (the `timestamp` of its `eval_result`, in seconds;
    run_stop equals it, or is later, on every published minigo log).

    Why it matters: time-to-train ends when the target is reached; stopping the clock before that
    shortens the score.

    Example: `run_stop` at 10:00 and the first `eval_accuracy` above 0.72 at 10:25.

    How to fix: log `run_stop` after the evaluation that reaches the target.
    """

    code = "FOR002"
    name = "stop-before-target"
    summary = "run_stop is timed before the target was reached."
    severity = Severity.ERROR
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        stop = run.first("run_stop")
        if stop is None or stop.meta("status") != "success":
            return
        benchmark = run.text("submission_benchmark")
        if _offline(benchmark):
            yield from self._trained_after_stop(run, stop, reference.benchmarks.facts(benchmark).trained_at)
            return
        reached = first_reaching_target(context, run)
        if reached is not None and reached.time_ms > stop.time_ms + STOP_TOLERANCE_MS:
            yield self.finding(
                f"the target is first reached at line {reached.line}, {(reached.time_ms - stop.time_ms) / 60000:.1f} min "
                f"after run_stop: time-to-train is short by that much",
                path=run.path,
                line=stop.line,
            )

    def _trained_after_stop(self, run: Run, stop: LogEvent, field: tuple[str, str] | None) -> Iterable[Finding]:
        """An offline evaluator's own record of when the winning checkpoint was trained, against run_stop."""
        start = run.first("run_start")
        if field is None or start is None:
            return
        record = next((e for e in run.all(field[0]) if _number(e.meta(field[1]))), None)
        if record is None:
            return
        trained_ms = start.time_ms + record.meta(field[1]) * 1000
        if trained_ms > stop.time_ms + STOP_TOLERANCE_MS:
            yield self.finding(
                f"the {field[0]} at line {record.line} says the model that reached the target was trained "
                f"{record.meta(field[1]) / 60:.1f} min after run_start, run_stop is {(stop.time_ms - start.time_ms) / 60000:.1f} "
                f"min after it: time-to-train is short by {(trained_ms - stop.time_ms) / 60000:.1f} min",
                path=run.path,
                line=stop.line,
            )


class AbortedAtTarget(RunRule):
    """`run_stop` says the run was aborted, yet one of its evaluations reached the quality target.

    What it checks: a `run_stop` whose `status` is not `success` in a run where an `eval_accuracy`
    meets the official target of the round, benchmark and division (stable_diffusion: FID and CLIP
    of one `samples_count` together, as its rules aggregate them).

    Why it matters: the log contradicts itself. The official tools trust the status: the run counts
    as not converged (EVT007, RCP002) and its time is dropped from the score, while its evaluations
    say it converged; either the status or the evaluations were edited, or the training script
    stopped on another condition than the rules' target. A reviewer cannot tell which from the log.

    Example: `eval_accuracy` 0.7215 at line 812 (bert's target 0.720) and then `run_stop` with
    `"status": "aborted"`.

    How to fix: find out why the run was marked aborted; submit the log as the run wrote it, or a
    run whose status and evaluations agree.
    """

    code = "FOR011"
    name = "aborted-at-target"
    summary = "run_stop says aborted, yet an evaluation reached the target."
    severity = Severity.WARNING
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        stop = run.first("run_stop")
        if stop is None or "status" not in stop.metadata or stop.meta("status") == "success":
            return
        reached = first_reaching_target(context, run)
        if reached is not None:
            yield self.finding(
                f"run_stop's status is {_quoted(stop.meta('status'))}, but the eval_accuracy at line {reached.line} "
                f"({_shown_value(reached.value)}) already meets the target of {context.ruleset}: the run is counted as "
                "not converged while its evaluations say it converged",
                path=run.path,
                line=stop.line,
            )


def _shown_value(value: Any) -> str:
    return f"{value:g}" if _number(value) else f"value {_quoted(value)}"


def _quoted(value: Any) -> str:
    """A value of the log for a message, its repr cut short (a log value may be huge)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class EventsAfterStop(RunRule):
    """Training or evaluation is logged after `run_stop`.

    What it checks: records of training or evaluation work after `run_stop` in the file (run,
    init, block, epoch and evaluation records, `cache_clear`); the real logs show bookkeeping there
    (`status`, `tracked_stats`, `seed`, `epoch_stop`, `block_stop`, a learning rate or throughput,
    `submission_*` repeated by a launcher), which is not flagged, nor the offline evaluation of
    stable_diffusion and minigo (`eval_start`, `eval_accuracy`, `eval_stop`, `eval_result`), nor
    records timed between the last record before `run_stop` and `run_stop` (HugeCTR's last
    evaluation logged at run_stop's millisecond), nor a launcher's `cache_clear` timed before it. A block opened after
    `run_stop` with no evaluation (the unet3d reference loop's last iteration) is information.

    Why it matters: training or evaluation after the clock stopped is work the time-to-train does
    not count, or a sign that two runs were joined.

    Example: `block_start` and `eval_accuracy` records after `run_stop`.

    How to fix: log `run_stop` when the run ends, and nothing of training after it.
    """

    code = "FOR003"
    name = "events-after-stop"
    summary = "Training or evaluation is logged after run_stop."
    severity = Severity.WARNING
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        stop = next((i for i, e in enumerate(run.events) if e.key == "run_stop"), None)
        if stop is None:
            return
        offline = _offline(run.text("submission_benchmark"))
        stop_ms = run.events[stop].time_ms
        before_ms = run.events[stop - 1].time_ms if stop > 0 else None
        late = [
            e
            for e in run.events[stop + 1 :]
            if e.key in WORK_KEYS and not (offline and e.key in EVAL_KEYS) and not _flushed_late(e, stop_ms, before_ms)
        ]
        if late:
            keys = ", ".join(sorted({e.key for e in late}))
            if {e.key for e in late} <= LOOP_TAIL:
                # the unet3d reference loop opens its next block at run_stop's millisecond, then breaks:
                # training that cannot change the converged result, on every v4.0 unet3d log
                yield self.finding(
                    f"{len(late)} record(s) after run_stop ({keys}): the training loop's last "
                    "block, no evaluation; the time-to-train is unaffected",
                    path=run.path,
                    line=late[0].line,
                    severity=Severity.INFO,
                )
            else:
                yield self.finding(f"{len(late)} record(s) after run_stop ({keys})", path=run.path, line=late[0].line)


def _flushed_late(event: Any, stop_ms: Any, before_ms: Any) -> bool:
    """A record written after run_stop but timed at it (HugeCTR's last evaluation at run_stop's
    millisecond, v1.0), or a launcher's cache_clear gathered after the run's output (v5.0, v5.1): not work
    after the stop. Any other record timed before run_stop, and before the last record logged ahead of it,
    was moved there: it is reported."""
    if not (isinstance(event.time_ms, (int, float)) and isinstance(stop_ms, (int, float))):
        return False
    if event.key == "cache_clear":
        return event.time_ms <= stop_ms
    return isinstance(before_ms, (int, float)) and before_ms <= event.time_ms <= stop_ms


def fingerprint(run: Run) -> tuple[Any, ...] | None:
    """The run's evaluation curve with its timing relative to run_start (seeds left out), once per run."""
    return run.cached("forensics.evaluations", lambda: _evaluations(run))


def _evaluations(run: Run) -> tuple[Any, ...] | None:
    start = run.first("run_start")
    evaluations = run.all("eval_accuracy")
    if start is None or len(evaluations) < 2:
        return None
    return tuple(
        (
            repr(e.value),  # repr: hashable whatever the log holds (a list, a dict)
            published_runs.metadata_of(e),
            round(e.time_ms - start.time_ms),
        )
        for e in evaluations
    )


class ClonedRun(BenchmarkRule):
    """Two runs of a benchmark have the same evaluation curve with the same timing.

    What it checks: every evaluation's value, metadata and time after `run_start`, run against run;
    independent runs (different seeds) never repeat each other to the millisecond.

    Why it matters: a copied run counts twice in the olympic mean; a copy with another seed is made
    to pass the seed checker. Reported as a warning: the tool cannot tell a deliberate copy from an
    accidental one, a reviewer must ask.

    Example: `result_8.txt` equal to `result_3.txt` but for its seed.

    How to fix: replace the copy with an independent run.
    """

    code = "FOR004"
    name = "cloned-run"
    summary = "Two runs repeat each other's evaluations and timing."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        seen: dict[tuple[Any, ...], Run] = {}
        for run in result.runs:
            key = fingerprint(run)
            if key is None:
                continue
            if key in seen:
                first = seen[key]
                seeds = (first.value("seed"), run.value("seed"))
                detail = f"seeds {seeds[0]} and {seeds[1]}" if seeds[0] != seeds[1] else f"the same seed {seeds[0]}"
                yield self.finding(
                    f"{run.name} repeats {first.name}: {len(key)} evaluations with the same values and "
                    f"timing ({detail})",
                    path=run.path,
                )
            else:
                seen[key] = run


class EvalCadence(RunRule):
    """Evaluation points are not whole multiples of the global batch size.

    What it checks: for llama2_70b_lora and stable_diffusion (`samples_count`) and gpt3
    (`epoch_num` in tokens, 2048 per sample), that every evaluation point is a multiple of
    `global_batch_size` (times 2048 for gpt3), as training proceeds in whole steps.

    Why it matters: a point between steps cannot come from the logged configuration: the batch
    size or the points were changed.

    Example: llama2 at batch 8 evaluating at `samples_count` 3,076.

    How to fix: log the batch size the run used and the points it evaluated at.
    """

    code = "FOR005"
    name = "eval-cadence"
    summary = "Evaluation points are not multiples of the batch size."
    severity = Severity.WARNING
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        rule = _cadence(str(run.value("submission_benchmark")))
        batch = run.value("global_batch_size")
        if rule is None or not isinstance(batch, int) or isinstance(batch, bool) or batch <= 0:
            return
        step = batch * rule[1]
        for event in run.all("eval_accuracy"):
            point = event.meta(rule[0])
            if isinstance(point, (int, float)) and not isinstance(point, bool) and point % step:
                yield self.finding(
                    f"{rule[0]} {_shown(point)} is not a multiple of {_shown(step)} (global_batch_size {_shown(batch)}"
                    f"{' x 2048 tokens' if rule[1] > 1 else ''})",
                    path=run.path,
                    line=event.line,
                )
                return


class EvalFrequency(BenchmarkRule):
    """Evaluations are spaced otherwise than the evaluation interval of the round's rules.

    What it checks: in the closed division, for the benchmarks whose rules set the evaluation
    frequency in samples (`data/constants.json`, quoting mlcommons/training_policies'
    training_rules.adoc as it stood at the round's submission deadline, `data/policies.json`; an
    interval the round's text does not hold is not checked: llama2_70b_lora every 384 sequences
    from v4.0, gpt3 every 24576 (v3.0 to v4.1, points in tokens), stable_diffusion's checkpoints
    every 512,000 images (v4.0 to v5.0),
    llama31_405b every 46080 in v5.0 and 18432 after, llama31_8b every 12288, flux1 every 262144),
    that consecutive evaluation points lie a multiple of the interval apart, the interval rounded
    to whole global batches: `CEIL(N / global_batch_size) * global_batch_size` as the rules write
    it, or rounded down (as NVIDIA's implementations do: one batch either way is taken as
    rounding). A multiple, because stable_diffusion's checkpoints may be evaluated selectively;
    where the first evaluation falls (the rules skip the first few) is not checked, nor the step
    from it to the second (v5.0 NVIDIA llama2 at batch 9 evaluates at 1530, then on a grid of 378:
    1890, 2268, ...).

    Why it matters: "The quality measure must be evaluated at the same frequency ... as in the
    reference implementation"; a finer grid detects convergence earlier than the reference could,
    which shortens time-to-train, and a coarser or shifted one makes the run incomparable with the
    reference convergence points (RCPs). The official tools do not check it (v6.1 checks the first
    evaluation, FIRST_CHECK; an issue of mlcommons/logging open since 2021 asks for the rest).

    Example: stable_diffusion at global batch 256 evaluating checkpoints every 128,000 images,
    where the rules collect them every 512,000.

    How to fix: evaluate (or collect checkpoints) at the rules' interval, rounded to whole batches.
    """

    code = "FOR012"
    name = "eval-frequency"
    summary = "Evaluations are spaced otherwise than the rules' interval."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        table = dataset_constants().get("eval_frequency", {})
        intervals = table.get(context.version, {}) if isinstance(table, dict) else {}
        if not intervals or context.division_of(result) != "closed":
            return
        off: list[tuple[Run, str]] = []
        first: LogEvent | None = None
        for run in result.runs:
            benchmark = run.text("submission_benchmark")
            if run.benchmark and benchmark != run.benchmark:
                continue  # a log of another benchmark than its folder's (PKG011): neither interval applies
            entry = intervals.get(benchmark) or {}
            cited = policies.cite(str(entry.get("citation")), context.version)
            if cited is None:
                continue  # the interval is not in the text in force at the round's deadline
            unit, factor = _cadence(str(benchmark)) or ("samples_count", 1)
            samples, batch = entry.get("samples"), run.value("global_batch_size")
            if not isinstance(samples, int) or not isinstance(batch, int) or isinstance(batch, bool) or batch <= 0:
                continue
            steps = {step * factor for step in (-(-samples // batch) * batch, samples // batch * batch) if step > 0}
            previous: LogEvent | None = None
            seen = 0
            for event in run.all("eval_accuracy"):
                point = event.meta(unit)
                if not _number(point) or (previous is not None and point == previous.meta(unit)):
                    continue  # stable_diffusion logs FID and CLIP of one checkpoint apart
                seen += 1
                # from the third point: the first one's place is the implementation's (v5.0 NVIDIA llama2 at
                # batch 9: 1530, then 1890 on a grid of 378; MangoBoost at batch 8: 1560, then 1920 on 384's)
                if seen > 2 and previous is not None and all((point - previous.meta(unit)) % step for step in steps):
                    ceil = -(-samples // batch) * batch
                    down = samples // batch * batch
                    first = first or event
                    off.append(
                        (
                            run,
                            f"{unit} {_shown(previous.meta(unit))} and {_shown(point)} (lines {previous.line} and "
                            f"{event.line}) are {_shown(point - previous.meta(unit))} apart; the rules evaluate every "
                            f"{samples} samples: CEIL({samples} / {_shown(batch)}) x {_shown(batch)} = {ceil}"
                            + (f" (or {down} rounded down)" if 0 < down != ceil else "")
                            + (f" x {factor} tokens" if factor > 1 else "")
                            + f" at global_batch_size {_shown(batch)} ({cited.quoted})",
                        )
                    )
                    break
                previous = event
        if off and first is not None:
            run, message = off[0]
            others = f" ({len(off) - 1} other run(s) too)" if len(off) > 1 else ""
            yield self.finding(message + others, path=run.path, line=first.line)


def _shown(number: int | float) -> str:
    """A number for a message: floats in %g, integers whole unless absurdly long."""
    if isinstance(number, float):
        return f"{number:g}"
    text = str(number)
    return text if len(text) <= 30 else f"an integer of {len(text)} digits"


class PlatformMismatch(BenchmarkRule):
    """`submission_platform` names another accelerator than the system description.

    What it checks: the accelerator family named in the logs' `submission_platform` (H100, H200,
    B200, TPU v5p, Trillium, MI300X, ...) against the description's `accelerator_model_name`; the
    finding names every run that logs it ("all 10 runs" when every run of the folder does). For a
    closed result with a score, it then says which accelerator the runs' speed fits: the result's
    accelerator-minutes (as AUD011 measures them) against the median of the published results
    (`data/peers.json`) of the benchmark at a similar scale (1/1.5 to 1.5 times its accelerators,
    its own round, else the round before) on the described accelerator and on the logged one; where
    only some runs log it, their times-to-train against the other runs'. The speed "fits" an
    accelerator within 1.4x of its median (AUD011's same-round allowance): fitting the described
    one, and closer to it than to the logged one, is worded as a label left over; more than 1.4x
    faster than the logged one's median, with no described peer, too; fitting only the logged one
    as runs that may come from it; anything else as a speed that does not tell.

    Why it matters: logs reused from another system, or a description that names other hardware
    than the runs used, make every per-accelerator comparison wrong. A label left over in the
    launcher from another system (v5.1 NVIDIA's GB300 `theia` logging "NVIDIA GB200", faster than
    the GB200 results) is a defect of the logs, not a sign of reuse; the message says which the
    speed supports.

    Example: logs saying `tpu-v5p` in a folder whose system is described as TPU Trillium.

    How to fix: describe the hardware the runs used, or resubmit runs from the described system;
    if the label is a leftover, set `submission_platform` in the launcher to the described system.
    """

    code = "FOR006"
    name = "platform-mismatch"
    summary = "submission_platform names another accelerator than the description."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description = context.system_description(result.submitter, result.system)
        described = hardware.family_of_text(description.get("accelerator_model_name")) if description else None
        if described is None or description is None:
            return
        by_value: dict[str, list[tuple[Run, LogEvent]]] = {}
        for run in result.runs:
            event = run.first("submission_platform")
            logged = hardware.family_of_text(event.value) if event is not None else None
            if event is not None and logged is not None and logged != described:
                by_value.setdefault(repr(event.value), []).append((run, event))
        for pairs in by_value.values():
            run, event = pairs[0]
            logged = hardware.family_of_text(event.value)
            yield self.finding(
                f"submission_platform {event.value!r} in {affected.which_runs([r for r, _ in pairs], result.runs)} "
                f"names {logged}, the system description {description.get('accelerator_model_name')!r}"
                + (
                    _speed_fits(result, context, description, hardware.match(str(event.value)))
                    if len(pairs) == len(result.runs)
                    else _time_among_others([r for r, _ in pairs], result.runs)
                ),
                path=run.path,
                line=event.line,
                related=affected.related(pairs),
            )


def _time_among_others(labelled: Sequence[Run], runs: Sequence[Run]) -> str:
    """Where some runs carry the label: their times-to-train against the other runs' (the end of FOR006's
    message; '' without times)."""
    others = [m for run in runs if run not in labelled and (m := time_to_train(run))]
    mine = [(run.name, m) for run in labelled if (m := time_to_train(run))]
    if not others or not mine:
        return ""
    low, high = min(others), max(others)
    inside = all(low <= m <= high for _, m in mine)
    times = ", ".join(f"{name} {m:.2f}" for name, m in mine)
    return (
        f"; time-to-train: {times} min, {'within' if inside else 'outside'} the other runs' {low:.2f} to "
        f"{high:.2f} min" + (" (the speed does not set the labelled runs apart)" if inside else "")
    )


def _speed_fits(
    result: BenchmarkResult,
    context: CheckContext,
    description: SystemDescription,
    labelled: hardware.Accelerator | None,
) -> str:
    """What the result's speed shows against published peers on the described and the labelled
    accelerator at a similar scale: the end of FOR006's message ('' without a measure)."""
    version = context.ruleset.split("-", 1)[1]
    found = envelope.measure(result, description, [w.minutes for w in run_work(result, version)])
    if found is None or labelled is None or labelled.model == found.accelerator.model:
        return ""
    me = peers.Peer.of(result, version, found)
    on_described, on_labelled = peers.at_scale(me, found.accelerator.model), peers.at_scale(me, labelled.model)
    described_model, labelled_model = found.accelerator.model, labelled.model

    def against(group: list[peers.Peer], model: str) -> tuple[str, float | None]:
        if not group:
            return f"no {model} result", None
        median = statistics.median(p.accelerator_minutes for p in group)
        return f"{model} a median of {median:,.1f} ({len(group)} result(s) of v{group[0].round})", median

    described_text, described_median = against(on_described, described_model)
    labelled_text, labelled_median = against(on_labelled, labelled_model)
    facts = (
        f"{me.accelerator_minutes:,.1f} accelerator-minutes on {me.accelerators} x {described_model}; at "
        f"{peers.scale_of(me.accelerators)}: {described_text}, {labelled_text}"
    )

    def ratio(median: float | None) -> float | None:
        return me.accelerator_minutes / median if median else None

    to_described, to_labelled = ratio(described_median), ratio(labelled_median)

    def fits(value: float | None) -> bool:
        return value is not None and 1 / peers.SAME_ROUND <= value <= peers.SAME_ROUND

    def gap(value: float | None) -> float:
        return abs(math.log(value)) if value else math.inf

    if fits(to_described) and on_labelled and gap(to_described) < gap(to_labelled):
        return (
            f"; the runs' speed fits the described {described_model} better than the logged {labelled_model} "
            f"({facts}): the label looks left over from another system, not a sign of reused runs"
        )
    if fits(to_described) and not on_labelled:
        return (
            f"; the runs' speed fits the described {described_model}, with no {labelled_model} result to compare "
            f"({facts})"
        )
    if to_labelled is not None and to_labelled < 1 / peers.SAME_ROUND and not on_described:
        return (
            f"; the runs are more than {peers.SAME_ROUND:g}x faster than the median of the {labelled_model} results ({facts}): "
            f"the label looks left over from another system, not a sign of runs from a {labelled_model} system"
        )
    if fits(to_labelled) and not fits(to_described) and on_described:
        return (
            f"; the runs' speed fits the logged {labelled_model}, not the described {described_model} ({facts}): "
            f"the runs may come from a {labelled_model} system"
        )
    return f"; the runs' speed does not tell which accelerator ran ({facts})"


def _comparable(run: Run) -> published_runs.Fingerprint | None:
    found = published_runs.fingerprint(run)
    return found if found is not None and found.comparable() else None


def _names(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


class OneRunCopied(BenchmarkRule):
    """Every run of a folder is one run, copied.

    What it checks: the records of each run of a benchmark folder, in file order and timed from
    `run_start`, leaving out the seed and the `submission_*` lines (what a copier edits); a folder
    of two or more runs (each with `run_start` and an evaluation) whose runs all share them is one
    run copied, whatever the seeds say. A folder where only some runs repeat is FOR004's warning.

    Why it matters: the score is the olympic mean of independent runs; one run copied ten times with
    new seeds has the spread of none, passes the seed checker and is scored as if it were ten.

    Example: `result_0.txt` to `result_9.txt`, each `result_0.txt` with another `seed` line.

    How to fix: submit the runs the benchmark requires, each run independently.
    """

    code = "FOR007"
    name = "one-run-copied"
    summary = "Every run of a folder is the same run, copied."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        # one run copied has one trace: a folder of several traces is not digested record by record
        if len(result.runs) < 2 or len({published_runs.trace_of(run) for run in result.runs}) > 1:
            return
        prints = [(run, _comparable(run)) for run in result.runs]
        copies = [run for run, found in prints if found is not None]
        if len(copies) < 2 or len(copies) < len(result.runs):
            return
        if len({found.records for _, found in prints if found is not None}) == 1:
            seeds = {repr(run.value("seed")) for run in copies}
            yield self.finding(
                f"the {len(copies)} runs are one run: {_names([r.name for r in copies[1:]])} repeat "
                f"{copies[0].name} record for record and to the millisecond, but for the seed and submission lines "
                f"({len(seeds)} different seed(s))",
                path=result.path,
                related=[(run.path, None) for run in copies[:5]],
            )


class Evidence(NamedTuple):
    """What a folder's own logs say about the system that ran them, and where its runs were published
    before: what tells which of two folders holding the same runs is the copy (plain data: it crosses
    between processes)."""

    platforms: tuple[str, ...]  # the distinct `submission_platform` values of its runs
    dump: tuple[str | None, str | None]  # the `:::SYSJSON` system dump's system_name and host processor
    published: tuple[str, ...]  # earlier publications of its runs: "5.0 Dell/results/<system>/<benchmark>"


#: Each benchmark folder's runs, published while checking it, read by CopiedFromFolder: (folder path,
#: submitter, whether it holds power logs, ((run name, digest of its evaluations as FOR004 compares
#: them), ...), what its logs say of the system that ran them).
RUN_PRINTS: Channel[tuple[str, str, bool, tuple[tuple[str, str], ...], Evidence]] = Channel("forensics.run_prints")
#: How much of a log is read for its `:::SYSJSON` system dump (printed before the run, in the first lines).
DUMP_BYTES = 1 << 20
DUMP_MARK = b":::SYSJSON"


def _norm(text: str | None) -> str:
    return "".join(ch for ch in (text or "").casefold() if ch.isalnum())


class CopiedFromFolder(TreeRule):
    """Runs of a folder are copies of another folder's runs in the checked tree.

    What it checks: each run's evaluations (value, metadata and time after `run_start` to the
    millisecond, as FOR004 compares the runs of one folder; at least two) against the runs of every
    other benchmark folder of the tree: another system of the same submission, or another
    submitter. Independent runs never repeat each other's evaluations to the millisecond, whatever
    else a copier edits (seed, organisation, platform). Not reported: the runs of a power result and
    the performance result of the same submitter (the power rules measure the performance runs:
    power_measurement.adoc, "choose the same runs as the performance score's"; v4.0's `smc` and
    `smc-ac-power`, v4.1's Dell `-POWER` system).

    Which folder is the copy is told by what the logs of each folder say, against the other: the
    `submission_platform` of its logs names the other folder's system (and not its own); the system
    dump printed in its logs (`:::SYSJSON`) names the other system, or the other description's host
    processor where its own description names another; its runs were published in an earlier round
    under the other system's name (the published-runs index of FOR009). Only the copy is reported:
    an error when every run is a copy, a warning when some are, with the evidence. When the logs do
    not tell (no evidence, or evidence both ways), the finding says so. For two folders of one
    submitter, one finding names both, placed on the folder listed second: an error when every run
    of each is the other's (one of the two results was not measured on its system, whichever it is),
    else a warning. For two submitters' folders, a warning on each (either may be the one copied
    from, and an objection must not be filed against the original).

    Why it matters: a result must come from runs of the system it describes. Runs copied to a second
    system (v5.1: Dell's `1xXE9780x8B200-SXM-180GB` retinanet and rgat, whose logs name the platform
    `1xXE9680Lx8B200-SXM-180GB` and the host processor 8562Y+ in their system dump where the
    description says 6767P, are the runs of `1xXE9680Lx8B200-SXM-180GB`, published in v5.0) or from
    another submitter publish a result no one measured.

    Example: `results/sysB/bert/result_3.txt` equal to `results/sysA/bert/result_3.txt` but for its
    `seed` line, its `submission_platform` naming sysA.

    How to fix: submit the runs of each system from that system; remove the copies.
    """

    code = "FOR008"
    name = "copied-from-folder"
    summary = "Runs are copies of another folder's runs in the same tree."
    severity = Severity.ERROR
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        folders = context.received(RUN_PRINTS)
        where: dict[str, list[tuple[int, str]]] = {}
        for number, (_, _, _, runs, _) in enumerate(folders):
            for name, records in runs:
                where.setdefault(records, []).append((number, name))
        undecided: set[frozenset[int]] = set()
        for number, (path, submitter, power, runs, _) in enumerate(folders):
            by_other: dict[int, list[tuple[str, str]]] = {}
            for name, records in runs:
                for other, other_name in where[records]:
                    if other == number or self._measured_twice(folders[other], submitter, power):
                        continue
                    by_other.setdefault(other, []).append((name, other_name))
            for other, pairs in sorted(by_other.items()):
                copied = sorted({name for name, _ in pairs}, key=natural_key)
                every = len(copied) == len(runs)
                other_path, other_submitter = folders[other][0], folders[other][1]
                same = published_runs.same_submitter(submitter, other_submitter)
                whose = "another system of the same submitter" if same else f"another submitter's ({other_submitter})"
                mine = self._copy_evidence(context, folders[number], folders[other])
                theirs = self._copy_evidence(context, folders[other], folders[number])
                said = (
                    f"{'every run is a copy' if every else f'{len(copied)} of {len(runs)} runs are copies'} of runs of "
                    f"{other_path}, {whose}, the same evaluations to the millisecond from run_start: "
                    + _names([f"{name} is {other_name}" for name, other_name in sorted(pairs)])
                )
                related = [(f"{other_path}/{other_name}", None) for _, other_name in sorted(pairs)[:5]]
                severity = Severity.ERROR if every else Severity.WARNING
                if mine and not theirs:
                    yield self.finding(
                        f"{said}; this folder is the copy: " + "; ".join(mine),
                        path=f"{path}/{copied[0]}",
                        severity=severity,
                        related=related,
                    )
                elif theirs and not mine:
                    continue  # the original: the copy's finding names it
                elif not same:
                    yield self.finding(
                        f"{said}; which folder is the copy the logs do not tell ({self._why_undecided(mine, theirs)})",
                        path=f"{path}/{copied[0]}",
                        severity=Severity.WARNING,
                        related=related,
                    )
                elif frozenset((number, other)) not in undecided:
                    undecided.add(frozenset((number, other)))
                    yield self._undecided(folders, number, other, pairs, whose, self._why_undecided(mine, theirs))

    def _undecided(
        self,
        folders: list[tuple[str, str, bool, tuple[tuple[str, str], ...], Evidence]],
        number: int,
        other: int,
        pairs: list[tuple[str, str]],
        whose: str,
        why: str,
    ) -> Finding:
        """One finding for two folders of one submitter holding the same runs, neither told the copy: on the
        folder listed second; an error when every run of each is the other's (one of the two results was
        not measured on its system, whichever it is), else a warning."""
        if folders[number][0] > folders[other][0]:
            second, first, at_pairs = number, other, sorted(pairs)
        else:
            second, first, at_pairs = other, number, sorted((theirs, mine) for mine, theirs in pairs)
        every = len({name for name, _ in at_pairs}) == len(folders[second][3]) and len(
            {name for _, name in at_pairs}
        ) == len(folders[first][3])
        copied = sorted({name for name, _ in at_pairs}, key=natural_key)
        return self.finding(
            f"{folders[first][0]} and {folders[second][0]} hold the same runs, {whose}, the same evaluations to the "
            f"millisecond from run_start: "
            + _names([f"{name} is {first_name}" for name, first_name in at_pairs])
            + f"; one of them is a copy, and which the logs do not tell ({why})",
            path=f"{folders[second][0]}/{copied[0]}",
            severity=Severity.ERROR if every else Severity.WARNING,
            related=[(f"{folders[first][0]}/{first_name}", None) for _, first_name in at_pairs[:5]],
        )

    @staticmethod
    def _why_undecided(mine: list[str], theirs: list[str]) -> str:
        if not mine and not theirs:
            return "neither folder's platform label, system dump or earlier publication names the other system"
        return "evidence points both ways: " + "; ".join(mine + theirs)

    @staticmethod
    def _copy_evidence(
        context: CheckContext,
        folder: tuple[str, str, bool, tuple[tuple[str, str], ...], Evidence],
        other: tuple[str, str, bool, tuple[tuple[str, str], ...], Evidence],
    ) -> list[str]:
        """What the logs of `folder` say that makes it the copy of `other`'s runs."""
        path, submitter, _, _, evidence = folder
        other_path, other_submitter, _, _, _ = other
        mine_system, theirs_system = _system_of(path), _system_of(other_path)
        if mine_system is None or theirs_system is None or _norm(mine_system) == _norm(theirs_system):
            return []
        mine_description = context.system_description(submitter, mine_system)
        theirs_description = context.system_description(other_submitter, theirs_system)
        mine_names = {_norm(mine_system), _norm(_text(mine_description, "system_name"))} - {""}
        theirs_names = {_norm(theirs_system), _norm(_text(theirs_description, "system_name"))} - {""}
        found = []
        for label in evidence.platforms:
            if _norm(label) in theirs_names and _norm(label) not in mine_names:
                found.append(f"its logs' submission_platform {_quoted(label)} names the other system")
                break
        dump_name, dump_cpu = evidence.dump
        if dump_name is not None and _norm(dump_name) in theirs_names and _norm(dump_name) not in mine_names:
            found.append(f"the system dump in its logs (:::SYSJSON) names system_name {_quoted(dump_name)}")
        mine_cpu, theirs_cpu = (
            _text(mine_description, "host_processor_model_name"),
            _text(theirs_description, "host_processor_model_name"),
        )
        if dump_cpu is not None and mine_cpu and theirs_cpu and _norm(mine_cpu) != _norm(theirs_cpu):
            if _norm(dump_cpu) == _norm(theirs_cpu):
                found.append(
                    f"the system dump in its logs names the host processor {_quoted(dump_cpu)}, the other description's, "
                    f"where this folder's description says {_quoted(mine_cpu)}"
                )
        theirs_folder = other_path.split("/results/", 1)[-1].split("/", 1)[0]
        before = [
            entry
            for entry in evidence.published
            if entry.split(" ", 1)[-1].split("/results/", 1)[-1].split("/", 1)[0] == theirs_folder
            and published_runs.same_submitter(entry.split(" ", 1)[-1].split("/", 1)[0], other_submitter)
        ]
        mine_folder = path.split("/results/", 1)[-1].split("/", 1)[0]
        if before and not any(
            entry.split(" ", 1)[-1].split("/results/", 1)[-1].split("/", 1)[0] == mine_folder
            for entry in evidence.published
        ):
            found.append(f"its runs were published before as the other system's, in v{before[0]}")
        return found

    @staticmethod
    def _measured_twice(
        other: tuple[str, str, bool, tuple[tuple[str, str], ...], Evidence], submitter: str, power: bool
    ) -> bool:
        """A power result and a performance result of one submitter share their runs by the power rules."""
        return (power or other[2]) and published_runs.same_submitter(submitter, other[1])


def _system_of(path: str) -> str | None:
    """The system folder of a benchmark folder's path (`<submitter>/results/<system>/<benchmark>`)."""
    parts = path.split("/")
    return parts[-2] if len(parts) >= 3 and parts[-3] == "results" else None


def _text(description: Any, name: str) -> str | None:
    value = description.get(name) if description is not None else None
    return value if isinstance(value, str) else None


def _dump(result: BenchmarkResult) -> tuple[str | None, str | None]:
    """The system_name and host processor of the first `:::SYSJSON` system dump in the folder's first log."""
    if not result.folder.result_files:
        return None, None
    try:
        with open_binary(result.folder.result_files[0].fs_path) as stream:
            data = limits.read_at_most(stream, DUMP_BYTES)
    except OSError:
        return None, None
    for line in data.split(b"\n"):
        at = line.find(DUMP_MARK)
        if at < 0:
            continue
        start, end = line.find(b"{", at), line.rfind(b"}")
        if start < 0 or end < start:
            continue
        try:
            dump = json.loads(line[start : end + 1].decode("utf-8", "replace"))
        except (RecursionError, ValueError):  # a dump nested too deeply for the decoder, or not JSON
            continue
        if isinstance(dump, dict):
            name, cpu = dump.get("system_name"), dump.get("host_processor_model_name")
            return (
                name[:200] if isinstance(name, str) else None,
                cpu[:200] if isinstance(cpu, str) else None,
            )
    return None, None


def _published_as(result: BenchmarkResult, context: CheckContext) -> tuple[str, ...]:
    """The earlier publications of the folder's runs ("5.0 Dell/results/<system>/<benchmark>"), cheap when
    none: a run's trace is looked up before its records are digested."""
    checked = round_of(context.version)
    index = published_runs.index()
    found: set[str] = set()
    for run in result.runs:
        trace = published_runs.trace_of(run)
        if trace is None or index.first_round_of_trace.get(trace, checked) >= checked:
            continue
        prints = _comparable(run)
        if prints is None:
            continue
        for published in index.by_records.get(prints.records, ()):
            if round_of(published.round + ".0") < checked:
                found.add(f"{published.round} {published.folder}")
    return tuple(sorted(found))


@hookimpl
def mlperf_audit_check_benchmark(result: BenchmarkResult, context: CheckContext) -> None:
    """Keeps each folder's run fingerprints for CopiedFromFolder (runs are not kept)."""
    if not context.is_selected(CopiedFromFolder.code) or result.submitter is None:
        return
    runs = tuple(
        (run.name, published_runs.digest([repr(curve)]))
        for run in result.runs
        if (curve := fingerprint(run)) is not None
    )
    if runs:
        platforms = tuple(sorted({p for run in result.runs if isinstance(p := run.value("submission_platform"), str)}))
        evidence = Evidence(tuple(p[:200] for p in platforms[:20]), _dump(result), _published_as(result, context))
        context.publish(RUN_PRINTS, (result.path, result.submitter, result.folder.power is not None, runs, evidence))


@dataclass(frozen=True)
class _Republished:
    """Runs of the checked folder published before: where first, and the publication compared with."""

    origin: published_runs.Published  # the first publication of the first of these runs
    #: each run with its counterpart in `compared`: the earlier folder that holds every one of them,
    #: the latest (or, for the submitter's own runs, the one whose description is nearest the checked one)
    pairs: tuple[tuple[Run, published_runs.Published], ...]
    compared: published_runs.Published
    comparable: int  # runs of the checked folder that could be compared at all
    changes: tuple[published_runs.Change, ...] | None  # None: a description missing on either side
    same_description: bool
    #: per run: (its raw digests, and whether run_start is the published one); None: a file not readable
    raw: tuple[tuple[published_runs.RawPrint | None, bool], ...]

    def raw_edits(self) -> dict[str, list[str]]:
        """What differs outside the MLLOG records, by what: the runs' names."""
        edits: dict[str, list[str]] = {}
        for (run, published), (mine, same_start) in zip(self.pairs, self.raw):
            if mine is None or published.raw is None:
                continue
            if mine.other != published.raw.other:
                edits.setdefault("other", []).append(run.name)
            if mine.places != published.raw.places:
                edits.setdefault("places", []).append(run.name)
            if not same_start:
                edits.setdefault("start", []).append(run.name)
        return edits

    def raw_known(self) -> bool:
        return all(mine is not None and p.raw is not None for (_, p), (mine, _) in zip(self.pairs, self.raw))


def _version_of(round_name: str) -> str:
    return f"{round_name}.0"


def republished(result: BenchmarkResult, context: CheckContext) -> tuple[_Republished, ...]:
    """The checked folder's runs published in an earlier round, by first publication (shared by FOR009,
    FOR010 and FOR013: computed once per folder)."""
    return context.memo(result, "forensics.republished", lambda: tuple(_republished(result, context)))


def _traced_before(
    result: BenchmarkResult, checked: tuple[int, int]
) -> tuple[int, list[tuple[Run, published_runs.Fingerprint]]]:
    """(how many runs of the folder can be compared with published ones, those whose code trace was
    published before the round `checked`, with their fingerprints): a run published before has a
    trace published before, so only those are digested record by record (FOR009, FOR010)."""
    index = published_runs.index()
    comparable, traced = 0, []
    for run in result.runs:
        trace = published_runs.trace_of(run)
        if trace is None or run.first("run_start") is None:
            continue
        comparable += 1
        if index.first_round_of_trace.get(trace, checked) >= checked:
            continue
        found = _comparable(run)
        if found is not None:
            traced.append((run, found))
    return comparable, traced


def _republished(result: BenchmarkResult, context: CheckContext) -> Iterable[_Republished]:
    checked = round_of(context.version)
    index = published_runs.index()
    by_origin: dict[tuple[str, str], list[tuple[Run, published_runs.Fingerprint, published_runs.Published]]] = {}
    comparable, traced = _traced_before(result, checked)
    for run, found in traced:
        origin = _first_before(index.by_records.get(found.records, ()), checked)
        if origin is not None:
            by_origin.setdefault((origin.round, origin.folder), []).append((run, found, origin))
    if not by_origin:
        return
    description = context.system_description(result.submitter, result.system) if result.system else None
    data = description.data if description is not None else None
    mine = published_runs.system_digest(data)
    entries = {entry.path: entry for entry in result.folder.result_files}
    for group in by_origin.values():
        # the earlier folders that hold every run of the group, each run's counterpart in it
        holders: dict[tuple[str, str], dict[str, published_runs.Published]] = {}
        for number, (run, found, _) in enumerate(group):
            for published in index.by_records.get(found.records, ()):
                if round_of(_version_of(published.round)) < checked:
                    key = (published.round, published.folder)
                    if number == 0:
                        holders.setdefault(key, {})[run.name] = published
                    elif key in holders:
                        holders[key].setdefault(run.name, published)
        complete = {key: runs for key, runs in holders.items() if len(runs) == len(group)}
        origin = group[0][2]
        candidates = complete or {(origin.round, origin.folder): {run.name: p for run, _, p in group}}

        chosen = candidates[min(candidates, key=lambda key: _nearness(candidates[key], index, data))]
        pairs = tuple((run, chosen[run.name]) for run, _, _ in group)
        compared = pairs[0][1]
        old = index.descriptions.get(compared.system_digest or "")
        same = mine is not None and mine == compared.system_digest
        changes = None if old is None or data is None else tuple(published_runs.description_changes(old, data))
        raw = tuple(
            (
                published_runs.raw_print(run, entries.get(run.path)),
                found.start_ms is not None and found.start_ms == published.start_ms,
            )
            for (run, found, _), (_, published) in zip(group, pairs)
        )
        yield _Republished(origin, pairs, compared, comparable, changes, same, raw)


def _nearness(
    runs: dict[str, published_runs.Published], index: published_runs.Index, data: Any
) -> tuple[bool, int, tuple[int, ...]]:
    """How far a publication's description is from the checked one: hardware or software changed first,
    then the number of changes, then the latest round first."""
    first = next(iter(runs.values()))
    old = index.descriptions.get(first.system_digest or "")
    changes = published_runs.description_changes(old, data)
    return (
        old is None or any(c.material for c in changes),
        len(changes),
        tuple(-part for part in round_of(_version_of(first.round))),
    )


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _changes_shown(changes: Iterable[published_runs.Change], limit: int = 8) -> str:
    shown = [
        f"{_cut(c.field)}: {'absent' if c.old is None else _quoted(c.old)} -> {'absent' if c.new is None else _quoted(c.new)}"
        + ("" if c.material else f" ({c.kind})")
        for c in changes
    ]
    return "; ".join(shown[:limit]) + (f"; and {len(shown) - limit} more" if len(shown) > limit else "")


class PublishedBefore(BenchmarkRule):
    """Runs were published in an earlier round.

    What it checks: each run's records (in file order, timed from `run_start`, without the seed and
    the `submission_*` lines) against the index of every run of the published rounds v1.0-v5.1
    (`data/published_runs.json.gz`), for runs of rounds before the one checked; the finding names the
    round, submitter, folder and file, and says what is identical: the MLLOG records, or the whole
    files but for those lines (the index keeps digests of the lines outside the records and of the
    records' code places; FOR010 reports files edited there). A run checked in the round it was
    published in (a reviewer checking v4.1 itself) is not compared with itself: only earlier rounds
    count.

    Whether it is allowed is the round's rule. From 5.1, training_rules.adoc ("Results
    Resubmission", merged into mlcommons/training_policies on 2025-07-10 with PR 559, after v5.0's
    deadline and before v5.1's: `data/policies.json`) lets submitters resubmit their
    own logs of a previous round only if the system.json matches exactly (and the review committee
    was told in an issue before the first review meeting). The checked description is compared field
    by field with the one published with the runs (the index keeps every published description;
    where the runs were published more than once, the publication whose description is nearest),
    and every finding shows what changed (`field: old -> new`):

    - the same description: information;
    - only names, notes and annotations (`system_name`, `hw_notes`, `sw_notes`, `status`, a blank
      field filled in or left blank, a version string of the software stack or a driver annotated,
      `2.26.3` written `2.26.3-fix-v2.25.1-1`, or a spelling in other case or spacing; a model name
      is no version, "H100 NVL" is not an annotated "H100"): a warning, as the rule asks
      for the same file but the hardware and software described are those the runs were published
      with;
    - hardware or software (accelerator, processor, memory, storage, counts, framework and library
      versions that differ otherwise): an error, the description is not that of the system the runs
      were published on.

    The rules of the rounds before 5.1 say nothing of it, and submitters did it (v2.1 holds hundreds
    of v2.0's runs): information. Another submitter's runs are never a resubmission: an error in
    every round.

    Why it matters: a result published again is not a new measurement; on another system's
    description, or under another submitter, it claims a result that system or submitter did not
    measure.

    Example: v5.1 `NVIDIA/results/tyche_ngpu8_ngc25.04_pytorch/retinanet`, the runs of v5.0's folder,
    with `other_software_stack.nccl_version` "2.26.3" written "2.26.3-fix-v2.25.1-1" (a warning);
    v5.1 `Dell/results/1xXE9680Lx8B200-SXM-180GB/retinanet`, v5.0's runs with the framework and CUDA
    versions of the description changed (an error).

    How to fix: from 5.1, resubmit only with the same system.json, and announce it to the review
    committee; otherwise submit new runs.
    """

    code = "FOR009"
    name = "published-before"
    summary = "Runs were published in an earlier round."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        checked = round_of(context.version)
        description = context.system_description(result.submitter, result.system) if result.system else None
        for found in republished(result, context):
            yield self._finding(result, found, checked, description is not None and description.data is not None)

    def _finding(
        self, result: BenchmarkResult, found: _Republished, checked: tuple[int, int], described: bool
    ) -> Finding:
        origin, compared = found.origin, found.compared
        pairs = found.pairs
        runs = "every run" if len(pairs) == found.comparable else f"{len(pairs)} of {found.comparable} runs"
        where = f"in v{origin.round} {origin.folder} (submitter {origin.submitter})"
        if (compared.round, compared.folder) != (origin.round, origin.folder):
            where += f", again in v{compared.round} {compared.folder}"
        edits = found.raw_edits()
        if found.raw_known() and not edits:
            same = "the same files but for the seed and submission_* lines"
        elif edits:
            same = (
                "the same MLLOG records, timed from run_start, but for the seed and submission_* lines; the files "
                f"differ otherwise ({_raw_edits_said(edits)})"
            )
        else:
            same = "the same MLLOG records, timed from run_start, but for the seed and submission_* lines"
        said = f"{runs} published before, {where}: {same}: " + _names([f"{run.name} is {p.file}" for run, p in pairs])
        severity, verdict = self.verdict(result.submitter or "", found, checked, described)
        return self.finding(
            f"{said}; {verdict}",
            path=pairs[0][0].path,
            severity=severity,
            related=[(run.path, None) for run, _ in pairs[1:5]],
        )

    @staticmethod
    def verdict(submitter: str, found: _Republished, checked: tuple[int, int], described: bool) -> tuple[Severity, str]:
        compared = found.compared
        theirs = f"{compared.submitter}/systems/{compared.system}.json of v{compared.round}"
        if found.same_description:
            described_as = f" (the same system description as {theirs})"
        elif found.changes:
            described_as = f" (the system description differs from {theirs}: {_changes_shown(found.changes)})"
        else:
            described_as = ""
        if not published_runs.same_submitter(submitter, compared.submitter):
            return Severity.ERROR, "another submitter's runs are not a resubmission" + described_as
        if checked < published_runs.RESUBMISSION_SINCE:
            return Severity.INFO, (
                f"the rules of v{checked[0]}.{checked[1]} have no provision on resubmission (it entered the "
                "training rules for 5.1)" + described_as
            )
        if found.same_description:
            return (
                Severity.INFO,
                f"the same system description as {theirs}: allowed as a resubmission by "
                f"{published_runs.resubmission_rule(checked)}",
            )
        if not described:
            return Severity.WARNING, (
                f"the system has no readable description to compare with {theirs}; "
                f"{published_runs.resubmission_rule(checked)} allows a resubmission only with the same system.json"
            )
        if found.changes is None:
            return Severity.WARNING, (
                f"the description published with them ({theirs}) is not in the index, so what changed cannot be "
                f"shown; {published_runs.resubmission_rule(checked)} allows a resubmission only with the same system.json"
            )
        material = [c for c in found.changes if c.material]
        if material:
            return Severity.ERROR, (
                f"the hardware or software described differs from {theirs}: {_changes_shown(found.changes)}; "
                f"{published_runs.resubmission_rule(checked)} allows a resubmission only with the same system.json"
            )
        return Severity.WARNING, (
            f"the description differs from {theirs} only in names, notes or annotations ("
            f"{_changes_shown(found.changes)}): the hardware and software described are the same, but "
            f"{published_runs.resubmission_rule(checked)} asks for the same system.json"
        )


def _raw_edits_said(edits: dict[str, list[str]]) -> str:
    said = []
    if "other" in edits:
        said.append(f"lines outside the MLLOG records, such as a :::SYSJSON system dump, in {_names(edits['other'])}")
    if "places" in edits:
        said.append(
            f"the records' code places, the file paths and line numbers they were logged from, in {_names(edits['places'])}"
        )
    if "start" in edits:
        said.append(f"the clock, every record shifted with run_start, in {_names(edits['start'])}")
    return "; ".join(said)


def _first_before(
    published: Iterable[published_runs.Published], checked: tuple[int, int]
) -> published_runs.Published | None:
    earlier = [p for p in published if round_of(p.round + ".0") < checked]
    return min(earlier, key=lambda p: (round_of(p.round + ".0"), p.folder, p.file)) if earlier else None


class EditedRepublished(BenchmarkRule):
    """Runs of an earlier round were published again with records edited, or with their files edited.

    What it checks: two kinds of edit of runs published in an earlier round.

    - Records: runs that FOR009 does not find (their records differ from every published run's) but
      whose `run_start` is, to the millisecond, that of a run published in an earlier round, with the
      same evaluation trace (each evaluation's epoch or sample point and accuracy): the same run,
      edited beyond its seed and submission lines. The published copies rename a key the newer rules
      want: `opt_epsilon` became `opt_lamb_epsilon` in Dell's v2.0 and v2.1 bert runs published again
      in v3.0, and in xFusion's v2.1 bert runs published in v3.0 for another system. A warning for
      the submitter's own runs (the rules of 5.1 let a resubmission through only if the logs pass the
      new round's package checker; they do not say whether they may be edited to), an error for
      another submitter's.
    - Files: runs that FOR009 finds (the same MLLOG records but for the seed and `submission_*`
      lines) whose files differ otherwise from the published ones: the lines outside the MLLOG
      records (a launcher's output, the `:::SYSJSON` system dump), the records' code places (the
      `file` paths they were logged from), or the clock (every record shifted). The index keeps a
      digest of each, so the finding says which differ, not how. From 5.1 a warning for the
      submitter's own runs (a resubmission is of the logs the runs wrote), information before (no
      rule on resubmission); an error for another submitter's.

    Why it matters: a log edited after the run is not the log the run wrote; a reviewer must know it
    is an old run, and what was changed.

    Example: v3.0 `xFusion/results/G5500V7x8xA30/bert`, the runs of v2.1's `G5500V6x8xA30_pytorch_22.09`
    with records edited; v5.1 `Dell/results/1xXE9680x8H200-SXM-141GB/retinanet`, v5.0's runs with the
    `:::SYSJSON` system dump in the files edited ("Dell H200" written "NVIDIA H200").

    How to fix: submit the logs as the runs wrote them; resubmit unedited logs, or new runs.
    """

    code = "FOR010"
    name = "edited-republished-run"
    summary = "Runs of an earlier round were published again, edited."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        yield from self._records_edited(result, context)
        checked = round_of(context.version)
        for found in republished(result, context):
            edits = found.raw_edits()
            if not edits:
                continue
            origin = found.compared
            edited = sorted({name for names in edits.values() for name in names}, key=lambda n: natural_key(n))
            runs = (
                "every run"
                if len(edited) == len(found.pairs) == found.comparable
                else (f"{len(edited)} of {found.comparable} runs")
            )
            if not published_runs.same_submitter(result.submitter or "", origin.submitter):
                severity, verdict = Severity.ERROR, "another submitter's runs are not a resubmission"
            elif checked < published_runs.RESUBMISSION_SINCE:
                severity, verdict = (
                    Severity.INFO,
                    (f"the rules of v{checked[0]}.{checked[1]} have no provision on resubmission"),
                )
            else:
                severity, verdict = (
                    Severity.WARNING,
                    "a resubmitted log must be the log the run wrote; ask what was edited",
                )
            first = next(run for run, _ in found.pairs if run.name == edited[0])
            yield self.finding(
                f"{runs} published in v{origin.round} {origin.folder} with the same MLLOG records but for the seed "
                f"and submission_* lines, and the files edited otherwise: {_raw_edits_said(edits)}; {verdict}",
                path=first.path,
                severity=severity,
                related=[(run.path, None) for run, _ in found.pairs if run.name in edited[1:5]],
            )

    def _records_edited(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        checked = round_of(context.version)
        index = published_runs.index()
        by_origin: dict[tuple[str, str], list[tuple[Run, published_runs.Published]]] = {}
        comparable, traced = _traced_before(result, checked)
        for run, found in traced:
            if found.start_ms is None or found.trace is None:
                continue
            if _first_before(index.by_records.get(found.records, ()), checked):
                continue  # FOR009's: the same records
            same_run = index.by_start.get((found.start_ms, found.trace), ())
            origin = _first_before((p for p, records in same_run if records != found.records), checked)
            if origin is not None:
                by_origin.setdefault((origin.round, origin.folder), []).append((run, origin))
        for pairs in by_origin.values():
            origin = pairs[0][1]
            runs = "every run" if len(pairs) == comparable else f"{len(pairs)} of {comparable} runs"
            if not published_runs.same_submitter(result.submitter or "", origin.submitter):
                severity, verdict = Severity.ERROR, "another submitter's runs are not a resubmission"
            else:
                severity, verdict = (
                    Severity.WARNING,
                    "a resubmitted log must be the log the run wrote; ask what was edited",
                )
            yield self.finding(
                f"{runs} published before, in v{origin.round} {origin.folder} (submitter {origin.submitter}), the same "
                "run_start to the millisecond and the same evaluations, with other records edited: "
                + _names([f"{run.name} is {p.file}" for run, p in pairs])
                + f"; {verdict}",
                path=pairs[0][0].path,
                severity=severity,
                related=[(run.path, None) for run, _ in pairs[1:5]],
            )


class RescoredRepublished(BenchmarkRule):
    """Runs published before score otherwise under the checked round's rules.

    What it checks: a folder whose every run was published in an earlier round (FOR009: the same
    MLLOG records), as the whole of an earlier folder (the same number of runs), every run
    converged: its score (the olympic mean of the times to train, times the RCP scaling factor)
    under the earlier round's rules and under the checked round's. The times are the same; the
    reference convergence points (RCPs), and so the scaling factor, may not be. Information: a
    fact a reader comparing the two rounds' tables needs, not a fault.

    Why it matters: the same logs published with two scores look like two measurements, or like a
    better system; a reviewer comparing rounds must know the change is the RCPs'.

    Example: v5.1 `Nebius/results/nebius_h200_n64/llama31_405b`, v5.0's runs, scored 244.59 min
    under v5.0's RCPs and 237.61 min under v5.1's.

    How to fix: nothing to fix; say in the submission that the result is a resubmission rescored
    under the round's RCPs.
    """

    code = "FOR013"
    name = "rescored-republished-run"
    summary = "Runs published before score otherwise under this round's RCPs."
    severity = Severity.INFO
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        index = published_runs.index()
        for found in republished(result, context):
            compared = found.compared
            if not (
                len(found.pairs) == found.comparable == len(result.runs)
                and index.run_counts.get((compared.round, compared.folder)) == len(result.runs)
            ):
                continue
            then = _score(result, context, _version_of(compared.round))
            now = _score(result, context, context.version)
            if then is None or now is None or abs(then[0] - now[0]) < 0.005:
                continue
            yield self.finding(
                f"the {len(result.runs)} runs published in v{compared.round} {compared.folder} score {now[0]:.2f} min "
                f"under the RCPs of {context.ruleset} (scaling factor {now[1]:.4f}), {then[0]:.2f} min under those of "
                f"v{compared.round} (factor {then[1]:.4f}): the same times to train, other reference convergence points",
                path=result.path,
            )


def _score(result: BenchmarkResult, context: CheckContext, version: str) -> tuple[float, float] | None:
    """(score in minutes, RCP scaling factor) of the folder's runs under `version`'s rules, when every run
    converged and the RCP check passes or does not apply; None otherwise (the summarizer's rules for
    failed runs are not repeated here)."""
    minutes = []
    for run in result.runs:
        stop = run.first("run_stop")
        ttt = time_to_train(run)
        if stop is None or stop.meta("status") != "success" or ttt is None or ttt < 0:
            return None
        minutes.append(ttt)
    ruleset = f"{rulesets.USAGE}-{version}"
    if ruleset not in rulesets.SUPPORTED:
        return None
    drop = rulesets.get(ruleset).olympic_drop(result.benchmark)
    kept = sorted(minutes)[drop : len(minutes) - drop]
    if not kept:
        return None
    factor = 1.0
    if context.division_of(result) == "closed" and reference.benchmarks.facts(result.benchmark).rcp_checked:
        verdict = evaluate(result, version, bypass_in_force(result, ruleset))
        if not verdict.passed:
            return None
        factor = verdict.scaling_factor
    return sum(kept) / len(kept) * factor, factor


RULES: list[type[Rule]] = [
    TimeGoesBackwards,
    StopBeforeTarget,
    AbortedAtTarget,
    EventsAfterStop,
    ClonedRun,
    EvalCadence,
    EvalFrequency,
    PlatformMismatch,
    OneRunCopied,
    CopiedFromFolder,
    PublishedBefore,
    EditedRepublished,
    RescoredRepublished,
]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
