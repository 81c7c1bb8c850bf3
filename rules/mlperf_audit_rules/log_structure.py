"""EVT: the structure every MLPerf Training log shares, whatever the benchmark or ruleset.

A run is `init_start`(s), one `init_stop`, one `run_start`, training and evaluation, one
`run_stop` with a status. Time-to-train is `run_stop.time_ms - run_start.time_ms`, taken from
the first of each, as the official result summarizer does. These rules look at file order
(what the official compliance checker sees) and at time (what it does not check).
"""

from __future__ import annotations

from typing import Any, Iterable

from mlperf_audit import (
    CheckContext,
    Finding,
    LogEvent,
    Rule,
    Run,
    RunRule,
    Severity,
    hookimpl,
)
from mlperf_audit_rules.support.causes import DAMAGED_LOG
from mlperf_audit_rules.support.official_compliance import official_codes

TRAINING_EVENTS = ("block_start", "epoch_start")


def _lines(events: Iterable[LogEvent]) -> str:
    lines = [str(e.line) for e in events]
    shown = ", ".join(lines[:5])
    return shown + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")


def _usable(run: Run) -> bool:
    """Structure rules say nothing about a file that could not be read at all."""
    return bool(run.events)


class _KeyMissing(RunRule):
    """Base: the run's log has no record of `key`."""

    follows_from = DAMAGED_LOG  # the record may be on the line that could not be read

    key: str
    consequence: str

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        if _usable(run) and run.first(self.key) is None:
            yield self.finding(f"no {self.key} record: {self.consequence}", path=run.path)


class _KeyRepeated(RunRule):
    """Base: the run's log has more than one record of `key`; time-to-train uses the first."""

    key: str

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        events = run.all(self.key)
        if len(events) > 1:
            yield self.finding(
                f"{len(events)} {self.key} records (lines {_lines(events)}); time-to-train uses the first",
                path=run.path,
                line=events[1].line,
            )


class RunStartMissing(_KeyMissing):
    """The log has no `run_start` record.

    What it checks: that the run logs `run_start`, the moment the timed part of training begins.

    Why it matters: time-to-train is measured from `run_start`; without it the run has no score
    and the official compliance checker fails it (`run_start` is EXACTLY_ONE).

    Example: a log that goes from `init_stop` straight to `block_start`.

    How to fix: log `mllogger.start(key=constants.RUN_START)` right after initialisation ends.
    """

    code = "EVT001"
    name = "run-start-missing"
    summary = "The log has no run_start."
    severity = Severity.ERROR
    scope = "run"
    covers = official_codes("common:run_start:REQ")
    fails_run = True
    key = "run_start"
    consequence = "the run has no time-to-train"


class RunStartRepeated(_KeyRepeated):
    """The log has more than one `run_start` record.

    What it checks: that `run_start` is logged once.

    Why it matters: time-to-train uses the first `run_start`; a second one (often from a second
    rank, or from a restarted run appended to the same file) makes the measured interval
    ambiguous. The official checker only warns when the repeated records have the same value.

    Example: two ranks both logging `run_start`.

    How to fix: log `run_start` from rank 0 only, and never append a restarted run to a log.
    """

    code = "EVT002"
    name = "run-start-repeated"
    summary = "The log has more than one run_start."
    severity = Severity.WARNING
    scope = "run"
    covers = official_codes("common:run_start:REPEATED")
    key = "run_start"


class RunStopMissing(_KeyMissing):
    """The log has no `run_stop` record.

    What it checks: that the run logs `run_stop`, the moment the timed part of training ends.

    Why it matters: without `run_stop` the run has no end, hence no time-to-train and no
    convergence status; the official checkers count it as not converged.

    Example: a log cut off during the last evaluation.

    How to fix: log `mllogger.end(key=constants.RUN_STOP, metadata={"status": "success"})` when the
    quality target is reached (or `"aborted"` when the run gives up).
    """

    code = "EVT003"
    name = "run-stop-missing"
    summary = "The log has no run_stop."
    severity = Severity.ERROR
    scope = "run"
    covers = official_codes("common:run_stop:REQ")
    fails_run = True
    key = "run_stop"
    consequence = "the run never ended"


class RunStopRepeated(_KeyRepeated):
    """The log has more than one `run_stop` record.

    What it checks: that `run_stop` is logged once.

    Why it matters: time-to-train uses the first `run_stop`; a later one means the log goes on
    after the run ended, or holds two runs.

    Example: `run_stop` logged by every rank.

    How to fix: log `run_stop` from rank 0 only.
    """

    code = "EVT004"
    name = "run-stop-repeated"
    summary = "The log has more than one run_stop."
    severity = Severity.WARNING
    scope = "run"
    covers = official_codes("common:run_stop:REPEATED")
    key = "run_stop"


class InitOrder(RunRule):
    """Initialisation is not logged as `init_start` ... `init_stop` before `run_start`.

    What it checks: at least one `init_start`; exactly one `init_stop`; no `init_start` after
    `init_stop`; `init_stop` after the first `init_start` and before `run_start`, both in the
    file and in time.

    Why it matters: the rules let a submitter exclude initialisation from time-to-train only
    when it is bracketed like this, and they bound its length (30 minutes closed, 240 open);
    the official compliance checker fails a log that breaks this order.

    Example: `run_start` logged before `init_stop`, or no `init_start` at all.

    How to fix: log `init_start` when the process starts, `init_stop` when initialisation ends,
    and `run_start` right after it.
    """

    code = "EVT005"
    name = "init-order"
    summary = "init_start, init_stop and run_start are missing or out of order."
    severity = Severity.ERROR
    scope = "run"
    covers = official_codes(
        "common:init_start:REQ",
        "common:init_stop:REQ",
        "common:init_stop:REPEATED",
        "common:run_start:CHECK",
        "common:init_start:CHECK",
    )
    fails_run = True

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        if not _usable(run):
            return
        starts, stops = run.all("init_start"), run.all("init_stop")
        run_start = run.first("run_start")
        if not starts:
            yield self.finding("no init_start record", path=run.path)
        if not stops:
            yield self.finding("no init_stop record", path=run.path)
            return
        if len(stops) > 1:
            yield self.finding(
                f"{len(stops)} init_stop records (lines {_lines(stops)}); exactly one is allowed",
                path=run.path,
                line=stops[1].line,
            )
        stop = stops[0]
        late = [e for e in starts if e.line > stop.line]
        if late:
            yield self.finding(
                f"init_start at line {late[0].line} comes after init_stop (line {stop.line})",
                path=run.path,
                line=late[0].line,
            )
        if starts and stop.time_ms < min(e.time_ms for e in starts):
            yield self.finding("init_stop is timed before the first init_start", path=run.path, line=stop.line)
        if run_start is not None:
            if run_start.line < stop.line:
                yield self.finding(
                    f"run_start (line {run_start.line}) comes before init_stop (line {stop.line})",
                    path=run.path,
                    line=run_start.line,
                )
            elif run_start.time_ms < stop.time_ms:
                yield self.finding(
                    f"run_start is timed {(stop.time_ms - run_start.time_ms) / 1000:.3f} s before init_stop",
                    path=run.path,
                    line=run_start.line,
                )


class RunStopStatusMissing(RunRule):
    """`run_stop` carries no `status` in its metadata.

    What it checks: that `run_stop` has `metadata.status`.

    Why it matters: the status says whether the run converged; the official compliance checker
    fails a `run_stop` without it, and the RCP checker counts the run as not converged.

    Example: `:::MLLOG {..., "key": "run_stop", "value": null, "metadata": {"file": "train.py", "lineno": 9}}`.

    How to fix: log `run_stop` with `metadata={"status": "success"}` (or `"aborted"`).
    """

    code = "EVT006"
    name = "run-stop-status-missing"
    summary = "run_stop has no status."
    severity = Severity.ERROR
    scope = "run"
    covers = official_codes("common:run_stop:CHECK")
    fails_run = True

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        stop = run.first("run_stop")
        if stop is not None and "status" not in stop.metadata:
            yield self.finding("run_stop has no metadata.status", path=run.path, line=stop.line)


class RunNotSuccessful(RunRule):
    """`run_stop` reports a status other than `success`.

    What it checks: that `run_stop`'s `metadata.status` is `success`.

    Why it matters: a run that did not reach the quality target is not a result. The official
    compliance checker lets `aborted` pass, but the RCP checker counts the run as not converged
    and the olympic scoring tolerates at most one such run per benchmark.

    Example: `"metadata": {"status": "aborted"}`.

    How to fix: nothing to fix in the log; the run failed. Replace it with a converged run, or
    rely on the one run olympic scoring may drop.
    """

    code = "EVT007"
    name = "run-not-successful"
    summary = "run_stop's status is not success."
    severity = Severity.ERROR
    scope = "run"
    fails_run = True

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        stop = run.first("run_stop")
        if stop is None or "status" not in stop.metadata:
            return
        status = stop.metadata["status"]
        if status != "success":
            yield self.finding(
                f"run_stop status is {status!r}: the run did not converge", path=run.path, line=stop.line
            )


class RunStopBeforeStart(RunRule):
    """`run_stop` comes before `run_start`, in the file or in time.

    What it checks: that the first `run_stop` follows the first `run_start` in the file and has a
    later `time_ms`.

    Why it matters: time-to-train is `run_stop - run_start`; a negative or reversed interval is
    not a measurement. The official checkers accept a `run_stop` timed before `run_start`, and the
    summarizer then publishes a negative time.

    Example: `run_start` at `time_ms` 1714470600000 and `run_stop` at 1714470500000.

    How to fix: regenerate the log; timestamps must come from one clock on one host.
    """

    code = "EVT008"
    name = "run-stop-before-start"
    summary = "run_stop precedes run_start (negative time-to-train)."
    severity = Severity.ERROR
    scope = "run"
    covers = official_codes("common:run_stop:CHECK")
    fails_run = True

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        start, stop = run.first("run_start"), run.first("run_stop")
        if start is None or stop is None:
            return
        if stop.line < start.line:
            yield self.finding(
                f"run_stop (line {stop.line}) comes before run_start (line {start.line}) in the file",
                path=run.path,
                line=stop.line,
            )
        elif stop.time_ms < start.time_ms:
            yield self.finding(
                f"run_stop is timed {(start.time_ms - stop.time_ms) / 1000:.3f} s before run_start: "
                "time-to-train would be negative",
                path=run.path,
                line=stop.line,
            )


class TrainingBeforeRunStart(RunRule):
    """Training (`block_start` or `epoch_start`) is logged before `run_start`.

    What it checks: that no `block_start` or `epoch_start` comes before the first `run_start` in
    the file.

    Why it matters: training done before `run_start` is not timed, which shortens time-to-train;
    the official compliance checker fails a `block_start` before `run_start`.

    Example: `block_start` at line 40 and `run_start` at line 52.

    How to fix: log `run_start` before the first training step.
    """

    code = "EVT009"
    name = "training-before-run-start"
    summary = "Training is logged before run_start."
    severity = Severity.ERROR
    scope = "run"
    covers = official_codes("common:block_start:CHECK")
    fails_run = True

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        start = run.first("run_start")
        if start is None:
            return
        for event in run.events:
            if event.line >= start.line:
                break
            if event.key in TRAINING_EVENTS:
                yield self.finding(
                    f"{event.key} at line {event.line} comes before run_start (line {start.line}): "
                    "that training is not timed",
                    path=run.path,
                    line=event.line,
                )
                return


def _line(event: LogEvent) -> int:
    return event.line


class IntervalPairing(RunRule):
    """A block, epoch or evaluation interval is nested in itself, or stopped without being started.

    What it checks: in file order, every `block_start`, `epoch_start` and `eval_start` is followed by
    its `*_stop` before the next start of the same kind, and no `*_stop` comes without a start. An
    interval left open at the end is allowed (the official rules accept a run that ends inside an
    epoch). Evaluations that name their epoch (`epoch_num`) pair by it and may overlap: an
    asynchronous evaluation of epoch N runs while epoch N+1 trains.

    Each problem is reported once per file, at its first line, with the number of repeats.

    Why it matters: the official checker does not pair intervals; a start without a stop, or two
    overlapping evaluations, means the log was assembled from several runs or ranks, and the
    evaluation schedule cannot be read from it.

    Example: `eval_start` at line 40, `eval_start` at line 44, `eval_stop` at line 47.

    How to fix: log each interval's start and stop once, from one rank.
    """

    code = "EVT010"
    name = "interval-pairing"
    summary = "A block, epoch or eval interval is nested or unbalanced."
    severity = Severity.WARNING
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        for kind in ("block", "epoch", "eval"):
            # evaluations may run asynchronously (v4.1 NVIDIA ssd evaluates epoch N while epoch N+1
            # trains): those that name their epoch pair by it, and may overlap
            by_epoch = kind == "eval"
            opened: dict[Any, LogEvent] = {}
            nested: list[tuple[LogEvent, LogEvent]] = []
            unopened: list[LogEvent] = []
            # the starts and stops in file order (each event has its own line)
            for event in sorted(run.all(f"{kind}_start") + run.all(f"{kind}_stop"), key=_line):
                if event.key == f"{kind}_start":
                    name = _epoch_of(event) if by_epoch else None
                    earlier = opened.get(name) if name is not None else next(iter(opened.values()), None)
                    if earlier is not None and (name is not None or not by_epoch or _epoch_of(earlier) is None):
                        nested.append((event, earlier))
                    if name is None:
                        opened.clear()
                    opened[name] = event
                elif event.key == f"{kind}_stop":
                    name = _epoch_of(event) if by_epoch else None
                    if name is not None and name in opened:
                        del opened[name]
                    elif opened and (name is None or None in opened or len(opened) == 1):
                        # an unnamed interval, or the only open one, is what a stop closes in file order
                        opened.pop(None) if None in opened else opened.popitem()
                    else:
                        unopened.append(event)
                        opened.pop(None, None)
            # one finding per problem and file: a logger that never pairs its intervals does so thousands of times
            if nested:
                event, earlier = nested[0]
                yield self.finding(
                    f"{kind}_start at line {event.line} while the {kind} started at line "
                    f"{earlier.line} is still open{_more(nested)}",
                    path=run.path,
                    line=event.line,
                )
            if unopened:
                event = unopened[0]
                yield self.finding(
                    f"{kind}_stop at line {event.line} without a {kind}_start{_more(unopened)}",
                    path=run.path,
                    line=event.line,
                )


def _more(found: list[Any]) -> str:
    return f" ({len(found) - 1} more in this file)" if len(found) > 1 else ""


def _epoch_of(event: LogEvent) -> Any:
    """The epoch an evaluation interval names (metadata `epoch_num`), hashable, or None."""
    value = event.metadata.get("epoch_num")
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None


RULES: list[type[Rule]] = [
    RunStartMissing,
    RunStartRepeated,
    RunStopMissing,
    RunStopRepeated,
    InitOrder,
    RunStopStatusMissing,
    RunNotSuccessful,
    RunStopBeforeStart,
    TrainingBeforeRunStart,
    IntervalPairing,
]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
