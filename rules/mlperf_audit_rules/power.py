"""PWR: the power-measurement folders, and the power measurement rules their logs must follow.

A benchmark with power results has `power/result_<n>/` for every `result_<n>.txt`, holding
`node_<i>` files (i from 0) and `sw_<i>` files for the switches, the same numbers in every run. A
run whose power folder is missing or malformed counts as a failed run for olympic scoring, as in
the official package checker (PWR001-PWR004).

PWR005-PWR012 check what the MLPerf Training power measurement rules (training_policies
`power_measurement.adoc`) ask of the logs, which no official tool checks: a reading at least once
a second, the whole run measured, every node measured, the interconnect measured or estimated, 60
readings at least. They read the logs the core reads once per folder (`power_logs`), as the
official parser reads them, and do not change the scores.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    PowerLog,
    Rule,
    Run,
    Severity,
    SystemDescription,
    hookimpl,
    power_logs,
    rulesets,
)
from mlperf_audit_rules.support import policies
from mlperf_audit_rules.support.power_rounds import reads_in_file_order, stops_at_last_reading, summarizer_of

#: ASCII digits, few enough for `int`: a name of thousands of digits (or of '٣') numbers no node.
_INDEX = re.compile(r"^(node|sw)_([0-9]{1,9})(\.[^.]*)?$")


def _runs(result: BenchmarkResult) -> list[str]:
    return [entry.path.rsplit("/", 1)[-1][: -len(".txt")] for entry in result.folder.result_files]


class _PowerRule(BenchmarkRule):
    scope = "benchmark"
    fails_run = True

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if result.folder.power is not None:
            yield from self.check_power(result, dict(result.folder.power))

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        raise NotImplementedError

    @staticmethod
    def described_nodes(result: BenchmarkResult, context: CheckContext) -> tuple[SystemDescription | None, int | None]:
        """The system description of a result with power logs, and the nodes it declares (None: unknown)."""
        if result.folder.power is None or result.system is None:
            return None, None
        description = context.system_description(result.submitter, result.system)
        return description, description.count("number_of_nodes") if description is not None else None


class PowerRunMissing(_PowerRule):
    """A run has no power measurement folder.

    What it checks: that `power/result_<n>/` exists for every `result_<n>.txt` of a benchmark that
    has a `power/` folder.

    Why it matters: the energy score is an olympic mean over the runs' measurements; the official
    package checker counts the run as failed.

    Example: `power/result_0/` ... `power/result_8/` but no `power/result_9/`.

    How to fix: add the measurements of that run, or remove the run's result.
    """

    code = "PWR001"
    name = "power-run-missing"
    summary = "A run has no power measurement folder."
    severity = Severity.ERROR

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        for run in _runs(result):
            if run not in power:
                yield self.finding(f"no power/{run}/ for {run}.txt", path=f"{result.path}/power/{run}")


class PowerFileNames(_PowerRule):
    """Power files are not named `node_<i>` / `sw_<i>` with i from 0 to their count minus one.

    What it checks: the node and switch files of each `power/result_<n>/`: numbered from 0, no
    number twice, no gap. The official checker crashes on a name without a number and does not
    notice a number used twice.

    Why it matters: the summarizer integrates every node file and adds every switch file; a
    missing or doubled file changes the energy.

    Plots beside the measurements (`nodes_1_to_8.png`, any .png/.jpg/.svg/.pdf) are not
    measurements and are not judged (PWR004 lists them as information). Files numbered 1..N
    instead of 0..N-1 are a warning: the energy does not depend on the numbers, and the official
    checker, which counts every file starting with `node` (plots included), may accept them.

    Example: `node_1.txt`, `node_2.txt` (no `node_0`), or `node_0.txt` and `node_0.log`.

    How to fix: name the files `node_0` ... `node_<N-1>` and `sw_0` ... `sw_<M-1>`.
    """

    code = "PWR002"
    name = "power-file-names"
    summary = "Power files are not numbered node_0.., sw_0.. without gaps."
    severity = Severity.ERROR

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        for run, files in sorted(power.items()):
            for kind in ("node", "sw"):
                names = [name for name in files if name.startswith(kind) and not is_plot(name)]
                indexes = []
                for name in names:
                    match = _INDEX.match(name)
                    if match is None or match.group(1) != kind:
                        yield self.finding(
                            f"{name!r} is not named {kind}_<number>", path=f"{result.path}/power/{run}/{name}"
                        )
                    else:
                        indexes.append(int(match.group(2)))
                repeated = sorted(i for i, n in Counter(indexes).items() if n > 1)
                out_of_range = sorted(i for i in set(indexes) if i >= len(names))
                if repeated or out_of_range:
                    detail = "; ".join(
                        part
                        for part in (
                            f"{kind}_{', '.join(map(str, repeated))} repeated" if repeated else "",
                            f"{', '.join(f'{kind}_{i}' for i in out_of_range)} beyond {kind}_{len(names) - 1}"
                            if out_of_range
                            else "",
                        )
                        if part
                    )
                    severity = None
                    if not repeated and sorted(indexes) == list(range(1, len(names) + 1)):
                        # numbered 1..N: the energy is the same; the official checker counts plot
                        # files such as nodes_1_to_8.png as node files and so may accept the folder
                        severity = Severity.WARNING
                        detail += " (numbered from 1; the energy does not depend on the numbers)"
                    yield self.finding(
                        f"{kind} files of {run}: {detail}", path=f"{result.path}/power/{run}", severity=severity
                    )


#: Plots and documents beside the measurements (v4.0 Supermicro: `nodes_1_to_8.png`): not
#: measurements, so neither their names nor their number are judged; the official checker accepts them.
PLOT_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf")


def is_plot(name: str) -> bool:
    return name.lower().endswith(PLOT_SUFFIXES)


class PowerCountsDiffer(_PowerRule):
    """Runs have different numbers of node or switch power files.

    What it checks: that every run's power folder has as many `node_*` files, and as many `sw_*`
    files, as most runs have.

    Why it matters: the runs measure one system; a run with fewer files measured part of it, and
    the official checker counts it as failed.

    Example: nine runs with 8 node files and one with 7.

    How to fix: add the missing measurement files.
    """

    code = "PWR003"
    name = "power-counts-differ"
    summary = "Runs have different numbers of power files."
    severity = Severity.ERROR

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        for kind in ("node", "sw"):
            counts = {
                run: sum(1 for name in files if name.startswith(kind) and not is_plot(name))
                for run, files in power.items()
            }
            if not counts:
                continue
            usual = Counter(counts.values()).most_common(1)[0][0]
            for run, count in sorted(counts.items()):
                if count != usual:
                    yield self.finding(
                        f"{run} has {count} {kind} file(s), the other runs {usual}", path=f"{result.path}/power/{run}"
                    )


class PowerUnknownFile(_PowerRule):
    """A power folder holds a file that is neither a node nor a switch measurement.

    What it checks: that `power/result_<n>/` holds only `node_*` and `sw_*` files.

    Why it matters: the summarizer ignores other files; a misnamed measurement is silently lost.

    Example: `power/result_0/pdu_0.txt`.

    How to fix: rename measurement files to `node_<i>` or `sw_<i>`, and remove anything else.
    """

    code = "PWR004"
    name = "power-unknown-file"
    summary = "A power folder holds an unexpected file."
    severity = Severity.WARNING
    fails_run = False

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        for run, files in sorted(power.items()):
            for name in files:
                if is_plot(name):
                    yield self.finding(
                        f"plot {name!r} in power/{run} is not a measurement and is ignored",
                        path=f"{result.path}/power/{run}/{name}",
                        severity=Severity.INFO,
                    )
                elif not name.startswith(("node", "sw")):
                    yield self.finding(
                        f"unexpected file {name!r} in power/{run}", path=f"{result.path}/power/{run}/{name}"
                    )


#: The power measurement rules of MLPerf Training, quoted by the rules below (section numbers of
#: the document as rendered); a finding links the text in force at its round's deadline
#: (`data/policies.json`), this one where the data holds no round.
POWER_RULES = "mlcommons/training_policies power_measurement.adoc"

#: "Power measurement must be at least once every second" (POWER_RULES, 2.4). The published 1 Hz
#: node logs (v4.1 Dell, v5.0 Lenovo: 115 logs, `bench/power_logs.py`) have a median interval of
#: exactly 1000 ms; stamped in whole seconds, up to 27% of their steps are 2 s (and 19% 0 s), and
#: their meters tick a little slower than 1 Hz: mean intervals of 1050 to 1104 ms. The 2 s logs of
#: v4.0 (Sustainable Metal Cloud) have medians of 1976 to 2020 ms. A median above this is sampled
#: below 1 Hz whatever the stamping and the jitter.
MAX_MEDIAN_INTERVAL_MS = 1250.0
#: A gap in the readings inside a run's timed part longer than this is reported (PWR006): the
#: longest interval of the published 1 Hz logs is 7 s (v4.1 Dell).
MAX_GAP_MS = 10_000.0
#: How much of a run, at its start or its end, may lack readings before PWR007 says so: the
#: published 1 Hz logs leave at most 2.0 s (v4.1 Dell, the last reading before run_stop; one
#: interval and the rounding of whole-second stamps). Beyond a minute it is an error: no
#: published log's clock is that far from its result log's (v4.0 smc-*-power, v4.1 Dell, v5.0
#: Lenovo agree within 2 s where their windows cover the run).
UNCOVERED_WARNING_MS = 5_000.0
UNCOVERED_ERROR_MS = 60_000.0
#: "Measure max(a run, 60 power samples)" (POWER_RULES, 2.5).
MIN_SAMPLES = 60


def _node_logs(result: BenchmarkResult) -> list[PowerLog]:
    return [log for log in power_logs(result) if log.name.startswith("node_") and not is_plot(log.name)]


def _runs_by_folder(result: BenchmarkResult) -> dict[str, Run]:
    """The runs by the name of their power folder (result_0.txt -> result_0), as the summarizer pairs them."""
    return {run.name.split(".")[0]: run for run in result.runs}


def _timed(run: Run | None) -> tuple[float, float] | None:
    """The run's timed part (run_start, run_stop), when both are logged as numbers in order."""
    if run is None:
        return None
    start, stop = run.first("run_start"), run.first("run_stop")
    if start is None or stop is None or not stop.time_ms > start.time_ms:
        return None
    return start.time_ms, stop.time_ms


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


#: At most this many groups of a folded list of logs are named in a message (the rest are counted).
MAX_NAMED = 8
_NUMBERED = re.compile(r"^(.*?)([0-9]+)(\.[^.]*)?$")


def _names(names: list[str]) -> str:
    """File names in natural order, consecutive numbers folded: `node_1.txt to node_8.txt, node_10.txt`;
    beyond MAX_NAMED items the rest are counted."""
    parsed = {name: _NUMBERED.match(name) for name in names}
    items: list[str] = []
    numbered: dict[tuple[str, str], list[int]] = {}
    for name, match in parsed.items():
        if match is None:
            items.append(name)
        else:
            numbered.setdefault((match.group(1), match.group(3) or ""), []).append(int(match.group(2)))
    for (prefix, suffix), numbers in sorted(numbered.items()):
        numbers.sort()
        low = previous = numbers[0]
        for number in [*numbers[1:], None]:
            if number is not None and number == previous + 1:
                previous = number
                continue
            first, last = f"{prefix}{low}{suffix}", f"{prefix}{previous}{suffix}"
            items.append(
                first if low == previous else f"{first} to {last}" if previous > low + 1 else f"{first}, {last}"
            )
            if number is not None:
                low = previous = number
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")


def fold(logs: list[PowerLog], measured: list[PowerLog], noun: str = "node logs") -> str:
    """Which of a folder's node logs (`measured`) `logs` are, in one phrase, the runs with the same
    files named together: `all 80 node logs of 10 runs (node_1.txt to node_8.txt in each)`, `3 of 80
    node logs: power/result_4/node_5.txt; node_2.txt of 2 runs`."""
    if len(logs) == len(measured) == 1:
        return logs[0].shown
    runs = list(dict.fromkeys(log.run for log in logs))
    by_run: dict[str, list[str]] = {}
    for log in logs:
        by_run.setdefault(log.run, []).append(log.name)
    groups: dict[str, list[str]] = {}
    for run, names in by_run.items():
        groups.setdefault(_names(names), []).append(run)
    if len(logs) == len(measured):
        head = f"all {len(logs)} {noun} of " + (f"{len(runs)} runs" if len(runs) > 1 else f"power/{runs[0]}")
        if len(groups) == 1:
            return f"{head} ({next(iter(groups))}{' in each' if len(runs) > 1 else ''})"
    else:
        head = f"{len(logs)} of {len(measured)} {noun}"
    details = [
        (f"power/{group_runs[0]}/{names}" if len(by_run[group_runs[0]]) == 1 else f"power/{group_runs[0]}: {names}")
        if len(group_runs) == 1
        else f"{names} of {len(group_runs)} runs"
        for names, group_runs in list(groups.items())[:MAX_NAMED]
    ]
    more = f"; and {len(groups) - MAX_NAMED} more" if len(groups) > MAX_NAMED else ""
    return f"{head}: {'; '.join(details)}{more}"


def _related(logs: list[PowerLog], line: dict[str, int | None] | None = None) -> tuple[tuple[str, int | None], ...]:
    return tuple((log.path, (line or {}).get(log.path)) for log in logs[:20])


class PowerSamplingInterval(_PowerRule):
    """Node power logs are sampled less often than once a second.

    What it checks: the median interval between consecutive `power_reading` records (in time
    order) of every `node_*` log; above 1.25 s the node is sampled below 1 Hz. One finding per
    benchmark folder names the logs (folded: `node_1.txt to node_8.txt in each` run) and gives the
    measured medians, and the share of intervals longer than 1 s and the longest of the slowest log.

    Why it matters: the power rules require it: "Power measurement must be at least once every
    second distributed evenly throughout the timed portion of a run" (MLPerf Training power
    measurement rules, 2.4 "Report 1 Measurement per Second", training_policies
    power_measurement.adoc). A coarser meter smooths the peaks the energy is made of. The
    published 1 Hz logs have a median of exactly 1000 ms (up to 27% of their intervals are 2 s
    where readings are stamped in whole seconds); the v4.0 logs of Sustainable Metal Cloud
    (`smc-ac-power`, `smc-dc-power`) have medians near 2006 ms (mlcommons/training_results_v4.0
    issue 4). The hint links the text in force at the round's deadline (`data/policies.json`); for
    a round whose rules did not yet hold it (power_measurement.adoc entered the main branch on
    2023-09-21: rounds before v3.1) the finding is a warning.

    Example: `node_0.txt` with readings at 1715283519046, 1715283521052, 1715283523059 ...

    How to fix: configure the meter (IPMI, PDU, BMC polling) to report at least once a second and
    measure the runs again.
    """

    code = "PWR005"
    name = "power-sampling-interval"
    summary = "Node power logs are sampled less often than once a second."
    severity = Severity.ERROR
    fails_run = False  # the official scoring keeps the run; the finding says the rules do not

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if result.folder.power is not None:
            yield from self.sampling(result, context.version)

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        yield from self.sampling(result, "")

    def sampling(self, result: BenchmarkResult, version: str) -> Iterable[Finding]:
        cited = policies.cite("power-once-a-second", version)
        where = cited.quoted if cited is not None else f"{POWER_RULES}, 2.4"
        # a requirement the text in force at the round's deadline does not hold is at most a warning
        severity = policies.at_most_warning(self.severity, "power-once-a-second", version)
        measured = _node_logs(result)
        slow = [
            log
            for log in measured
            if log.sampling.median_interval_ms is not None and log.sampling.median_interval_ms > MAX_MEDIAN_INTERVAL_MS
        ]
        if not slow:
            return
        worst = max(slow, key=lambda log: log.sampling.median_interval_ms or 0)
        sampling = worst.sampling
        medians = sorted(log.sampling.median_interval_ms or 0 for log in slow)
        spread = f"{medians[0]:.0f}" if medians[0] == medians[-1] else f"{medians[0]:.0f} to {medians[-1]:.0f}"
        share = sampling.over_one_second / sampling.intervals if sampling.intervals else 0
        longest = max((b - a for a, b in sampling.gaps), default=0)
        yield self.finding(
            f"{fold(slow, measured)} {'is' if len(slow) == 1 else 'are'} sampled every {spread} ms (median interval); "
            + (f"{worst.shown}: " if len(slow) > 1 else "")
            + f"{share:.0%} of {sampling.intervals} intervals longer than 1 s"
            + (f", the longest {_seconds(longest)}" if longest else "")
            + "; the power rules require at least one reading per second",
            path=f"{result.path}/power",
            related=_related([worst, *(log for log in slow if log is not worst)]),
            severity=severity,
            hint=f"measure at least once a second ({where}) and measure the runs again",
        )


class PowerReadingGap(_PowerRule):
    """A node power log has no reading for more than 10 s inside a run's timed part.

    What it checks: the intervals between consecutive readings (time order) of every `node_*` log
    that fall between the run's `run_start` and `run_stop`; one longer than 10 s is a gap. The
    published 1 Hz logs never go longer than 7 s without a reading. One finding per benchmark
    folder counts the gaps, gives the longest and names the logs that have one.

    Why it matters: "Power measurement must be at least once every second distributed evenly
    throughout the timed portion of a run" (power_measurement.adoc, 2.4): the summarizer counts
    the reading after a gap for the whole gap, whatever the node drew meanwhile.

    Example: readings every second, then none from 1745514200000 to 1745514260000 (a minute).

    How to fix: find why the meter stopped reporting (a lost connection, a busy BMC) and measure
    the run again.
    """

    code = "PWR006"
    name = "power-reading-gap"
    summary = "A node power log has no reading for more than 10 s inside a run."
    severity = Severity.WARNING
    fails_run = False

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        runs = _runs_by_folder(result)
        measured = _node_logs(result)
        gapped: list[tuple[PowerLog, int, float, float, float]] = []  # (log, gaps, start, end, run_start)
        for log in measured:
            timed = _timed(runs.get(log.run))
            if timed is None:
                continue
            inside = [
                (max(a, timed[0]), min(b, timed[1]))
                for a, b in log.sampling.gaps
                if min(b, timed[1]) - max(a, timed[0]) > MAX_GAP_MS
            ]
            if inside:
                start, end = max(inside, key=lambda gap: gap[1] - gap[0])
                gapped.append((log, len(inside), start, end, timed[0]))
        if not gapped:
            return
        log, count, start, end, run_start = max(gapped, key=lambda item: item[3] - item[2])
        shown = [item[0] for item in gapped]
        total = sum(item[1] for item in gapped)
        yield self.finding(
            f"{total} gap(s) longer than {_seconds(MAX_GAP_MS)} inside the run, the longest {_seconds(end - start)} "
            f"from {_seconds(start - run_start)} after run_start"
            + (f" ({log.shown})" if len(shown) > 1 else "")
            + f", in {fold(shown, measured)}",
            path=log.path if len(shown) == 1 else f"{result.path}/power",
            related=_related(shown),
        )


class PowerRunNotCovered(_PowerRule):
    """A node's readings do not cover its run from `run_start` to `run_stop`, or its measurement window holds none.

    What it checks: for every `node_*` log, that the readings the round's summarizer integrates
    begin no later than 5 s after the run's `run_start` and end no earlier than 5 s before its
    `run_stop`. The published 1 Hz logs leave at most 2 s. More than a minute uncovered is an
    error: no published power log's clock differs from its result log's by that much. Which
    readings are integrated follows the round's summarizer (mlcommons/logging): from v4.1 on
    (c401ff0) those between `power_measurement_start` and `power_measurement_stop` in time; in
    v4.0 and before, those between the two records in the file, the v4.0 summarizer ending the
    window at the last reading when it is later than the stop (4054425).

    A `power_measurement_stop` stamped before every reading (at the start's time) is reported
    once per benchmark folder with the readings' real coverage: a warning where the round's
    summarizer still integrates the readings (v4.0: the records in file order, the window ending at
    the last reading), an error where it does not: from v4.1 on it integrates none of them (at the
    start's very time it divides by a window of 0 ms and fails; later, those nodes add no energy),
    and the v3.x summarizer ends the window at the stop's own time. Each cause is one finding per
    folder, naming the node logs it concerns.

    Why it matters: "Power measurement begins just before a run starts and stops just afterwards.
    Power measurement must include all timed operations" (power_measurement.adoc, 2.5). The
    energy is the window's mean power times the time-to-train: a window that misses the end of a
    run (the last epochs, the final evaluation) reports the power of another part of it. A stop
    record that does not mark the end of the measurement leaves the energy to how a given
    summarizer reads the log.

    Example: readings until 1715290000000, `power_measurement_stop` at 1715290000000, `run_stop`
    at 1715291744000 (29 minutes later); or (v4.0 Sustainable Metal Cloud) `power_measurement_stop`
    on the last line stamped 1715341078316 like `power_measurement_start` on the first, with 192
    readings between them covering the run.

    How to fix: start the measurement before `run_start` and stop it after `run_stop`, on clocks
    that agree (NTP), and log `power_measurement_stop` with the time the measurement ends.
    """

    code = "PWR007"
    name = "power-run-not-covered"
    summary = "A node's power readings do not cover its run, or its measurement window holds none."
    severity = Severity.ERROR
    fails_run = False

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if result.folder.power is None:
            return
        version = rulesets.get(context.ruleset).version
        file_order = reads_in_file_order(version)
        summarizer = summarizer_of(version)
        runs = _runs_by_folder(result)
        measured = _node_logs(result)
        #: (log, ms read before run_start, ms read after run_stop: negative where uncovered)
        misstamped: list[tuple[PowerLog, float, float]] = []
        lost: list[tuple[PowerLog, float, float]] = []  # stop before the readings: none integrated
        outside: list[PowerLog] = []  # every reading before power_measurement_start
        uncovered: dict[Severity, list[tuple[PowerLog, float, float]]] = {}
        for log in measured:
            timed = _timed(runs.get(log.run))
            sampling = log.sampling
            if timed is None or not sampling.readings:
                continue  # no readings at all: PWR012
            integrated = sampling.file_order_readings if file_order else sampling.window_readings
            early_stop = (
                sampling.measurement_stop_ms is not None
                and sampling.window_readings is None
                and sampling.readings_after_start is not None
            )
            if early_stop:
                span = sampling.readings_after_start
                assert span is not None
                # integrated whole only where the window ends at the last reading (v4.0); the v3.x
                # summarizer ends it at the stop's own time, however many readings it read
                whole = integrated is not None and stops_at_last_reading(version)
                (misstamped if whole else lost).append((log, timed[0] - span[0], span[1] - timed[1]))
                if integrated is None or not whole:
                    continue
            elif integrated is None:
                outside.append(log)
                continue
            late, early = integrated[0] - timed[0], timed[1] - integrated[1]
            if max(late, early) > UNCOVERED_WARNING_MS:
                severity = Severity.ERROR if max(late, early) > UNCOVERED_ERROR_MS else Severity.WARNING
                uncovered.setdefault(severity, []).append((log, late, early))
        if misstamped:
            yield self._early_stop(result, misstamped, measured, summarizer, integrated=True, windowed=not file_order)
        if lost:
            yield self._early_stop(result, lost, measured, summarizer, integrated=False, windowed=not file_order)
        if outside:
            yield self.finding(
                f"{fold(outside, measured)}: every reading lies before power_measurement_start, so the measurement "
                f"window holds none; {summarizer} finds no energy",
                path=f"{result.path}/power",
                related=_related(outside),
            )
        for severity in (Severity.ERROR, Severity.WARNING):
            if severity in uncovered:
                yield self._uncovered(result, uncovered[severity], measured, severity)

    def _early_stop(
        self,
        result: BenchmarkResult,
        logs: list[tuple[PowerLog, float, float]],
        measured: list[PowerLog],
        summarizer: str,
        *,
        integrated: bool,
        windowed: bool,
    ) -> Finding:
        shown = [log for log, _, _ in logs]
        offsets = sorted(
            log.sampling.measurement_stop_ms - log.sampling.measurement_start_ms
            for log in shown
            if log.sampling.measurement_stop_ms is not None and log.sampling.measurement_start_ms is not None
        )
        if offsets and offsets[0] == offsets[-1] == 0:
            stamped = "carries the start's time"
        elif offsets:
            low, high = _seconds(offsets[0]), _seconds(offsets[-1])
            stamped = f"is stamped before every reading ({low if low == high else low + ' to ' + high} after the start)"
        else:
            stamped = "is stamped before every reading"
        before, after = min(b for _, b, _ in logs), min(a for _, _, a in logs)
        missed = [max(-b, -a) for _, b, a in logs]
        worst = max(missed)
        if worst <= 0:
            coverage = (
                f"the readings cover every run, from at least {_seconds(before)} before run_start to "
                f"{_seconds(after)} after run_stop"
            )
        elif worst <= UNCOVERED_WARNING_MS:
            coverage = f"the readings cover each run to within {_seconds(worst)}"
        else:
            short = sum(1 for m in missed if m > UNCOVERED_WARNING_MS)
            coverage = (
                f"the readings cover each run to within {_seconds(worst)} ({short} log(s) miss more than "
                f"{_seconds(UNCOVERED_WARNING_MS)}" + (", reported apart" if integrated else "") + ")"
            )
        if integrated:
            effect = f"{summarizer} integrates them all"
        elif offsets and offsets[-1] == 0:
            effect = f"{summarizer} divides by a window of 0 ms and fails: the result has no energy"
        elif windowed:
            effect = (
                f"{summarizer} integrates none of these logs' readings: their nodes add no energy, and the "
                "result's energy is understated"
            )
        else:
            effect = f"{summarizer} ends the window at the stop's time: these nodes' energy is not what they used"
        lines = {log.path: log.sampling.measurement_stop_line for log in shown}
        first = shown[0]
        return self.finding(
            f"power_measurement_stop {stamped} in {fold(shown, measured)}; {coverage}; {effect}",
            path=f"{result.path}/power",
            severity=Severity.WARNING if integrated else Severity.ERROR,
            related=_related(shown, lines),
            hint=(
                "log power_measurement_stop with the time the measurement ends (after run_stop), e.g. "
                f"{first.shown}" + (f" line {lines[first.path]}" if lines[first.path] else "")
            ),
        )

    def _uncovered(
        self,
        result: BenchmarkResult,
        logs: list[tuple[PowerLog, float, float]],
        measured: list[PowerLog],
        severity: Severity,
    ) -> Finding:
        late = [(log, ms) for log, ms, _ in logs if ms > UNCOVERED_WARNING_MS]
        several = len(logs) > 1

        def at(log: PowerLog) -> str:
            return f" ({log.shown})" if several else ""

        early = [(log, ms) for log, _, ms in logs if ms > UNCOVERED_WARNING_MS]
        parts = []
        if late:
            log, worst = max(late, key=lambda item: item[1])
            parts.append(
                f"the first reading of {len(late)} is up to {_seconds(worst)} after run_start{at(log)}"
                if len(late) > 1
                else f"its first reading is {_seconds(worst)} after run_start{at(log)}"
            )
        if early:
            log, worst = max(early, key=lambda item: item[1])
            stopped = log.sampling.measurement_stop_ms
            cause = (
                " (power_measurement_stop ends the window)"
                if stopped is not None and log.sampling.last_ms is not None and log.sampling.last_ms > stopped
                else ""
            )
            parts.append(
                f"the last reading in the measurement window of {len(early)} is up to {_seconds(worst)} before "
                f"run_stop{at(log)}{cause}"
                if len(early) > 1
                else f"its last reading in the measurement window is {_seconds(worst)} before run_stop{at(log)}{cause}"
            )
        shown = [log for log, _, _ in logs]
        return self.finding(
            f"the run is not covered by the readings of {fold(shown, measured)}; " + " and ".join(parts),
            path=shown[0].path if len(shown) == 1 else f"{result.path}/power",
            severity=severity,
            related=_related(shown),
        )


class PowerTimeBackwards(_PowerRule):
    """A power log's readings go back in time.

    What it checks: that every `power_reading` of a `node_*` or `sw_*` log is stamped no earlier
    than the reading above it in the file. One finding per benchmark folder counts such readings,
    names the logs and gives the first of the log that goes furthest back.

    Why it matters: a meter logs readings as it takes them; a reading stamped before the one above
    it comes from a clock that jumped or from logs merged out of order. The summarizer sorts the
    readings by time, so the energy hides it: the log is no longer what the meter read.

    Example: `power_reading` at 1715300000500 on line 100, then at 1715300000300 on line 101.

    How to fix: log from one monotonic, synchronised clock and keep the readings in the order they
    were taken.
    """

    code = "PWR008"
    name = "power-time-backwards"
    summary = "A power log's readings go back in time."
    severity = Severity.WARNING
    fails_run = False

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        logs = list(power_logs(result))
        back = [log for log in logs if log.sampling.first_backwards is not None]
        if not back:
            return
        worst = max(back, key=lambda log: log.sampling.first_backwards[1])  # type: ignore[index]
        line, ms = worst.sampling.first_backwards  # type: ignore[misc]
        total = sum(log.sampling.backwards for log in back)
        single = len(back) == 1
        yield self.finding(
            f"{worst.shown}: {total} reading(s) stamped before the reading above them, the first at line {line} "
            f"({ms:.0f} ms back)"
            if single
            else f"{total} reading(s) stamped before the reading above them in {fold(back, logs, 'power logs')}; "
            f"{worst.shown} line {line}: {ms:.0f} ms back",
            path=worst.path if single else f"{result.path}/power",
            line=line if single else None,
            related=_related(back, {log.path: log.sampling.first_backwards[0] for log in back}),  # type: ignore[index]
        )


class PowerNodesDiffer(_PowerRule):
    """A run has fewer (or more) node power logs than the system description has nodes.

    What it checks: the number of `node_*` files of each `power/<run>/` against `number_of_nodes`
    of the system description. Fewer is an error; more is a warning (a file per power supply
    rather than per node is possible, but the description should say so).

    Why it matters: "All nodes participating in the performance runs must be measured"
    (power_measurement.adoc, 2.1.2 "Measure All Nodes"): the energy adds one log per node, so a
    node without a log is energy left out.

    Example: `number_of_nodes: "8"` and `node_0.txt` ... `node_6.txt`.

    How to fix: add the missing nodes' measurements, or correct `number_of_nodes`.
    """

    code = "PWR009"
    name = "power-nodes-differ"
    summary = "A run has a different number of node power logs than the system has nodes."
    severity = Severity.ERROR
    fails_run = False

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description, nodes = self.described_nodes(result, context)
        if not nodes:
            return  # no usable count: SYS002 says so
        for run, files in result.folder.power or ():
            count = sum(1 for name in files if name.startswith("node") and not is_plot(name))
            if count == nodes:
                continue
            yield self.finding(
                f"power/{run} has {count} node log(s), the system description {nodes} node(s)",
                path=f"{result.path}/power/{run}",
                severity=Severity.ERROR if count < nodes else Severity.WARNING,
                related=((description.path, description.field_lines.get("number_of_nodes")),)
                if description is not None
                else (),
            )


class PowerInterconnectMissing(_PowerRule):
    """A multi-node run has no measurement or estimate of its interconnect's power.

    What it checks: that every `power/<run>/` of a system of more than one node holds a `sw_*` log
    with an `interconnect_power_est` record or `power_reading` records.

    Why it matters: "If an interconnect is used to transmit weights, weight-updates, or
    activations, its power usage must be measured or estimated" (power_measurement.adoc, 2.1.3):
    the nodes of a multi-node run exchange gradients over it. The summarizer adds the switches'
    estimated power; without one the energy leaves the network out.

    Example: a system of 8 nodes whose `power/result_0/` holds `node_0.txt` ... `node_7.txt` only.

    How to fix: add `sw_0.txt` with the switches' measured readings or their estimated power
    (`interconnect_power_est`, the maximum specified power weighted by the provisioning to the
    run).
    """

    code = "PWR010"
    name = "power-interconnect-missing"
    summary = "A multi-node run has no interconnect power measurement or estimate."
    severity = Severity.ERROR
    fails_run = False

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description, nodes = self.described_nodes(result, context)
        if nodes is None or nodes < 2:
            return
        logs = power_logs(result)
        for run, _files in result.folder.power or ():
            switches = [log for log in logs if log.run == run and log.name.startswith("sw_")]
            if any(
                record.key in ("interconnect_power_est", "power_reading") for log in switches for record in log.records
            ):
                continue
            what = "no sw_* log" if not switches else "no interconnect_power_est or power_reading in its sw_* logs"
            yield self.finding(
                f"power/{run} of a {nodes}-node system has {what}",
                path=f"{result.path}/power/{run}",
            )


class PowerTooFewSamples(_PowerRule):
    """A node power log has fewer than 60 readings in its measurement window.

    What it checks: the number of `power_reading` records of each `node_*` log. One finding per
    benchmark folder names the logs with fewer and gives their range of counts.

    Why it matters: "Measure max(a run, 60 power samples) [...] For runs that take <60 samples to
    complete, suggest extending the training loop till the minimum required number of power
    samples is acquired" (power_measurement.adoc, 2.5): a mean of fewer readings is too coarse
    to score.

    Example: a run of 40 seconds measured at 1 Hz: 40 readings.

    How to fix: extend the measured loop as the rules describe (same code path, performance
    markers still logged) until 60 readings are taken.
    """

    code = "PWR011"
    name = "power-too-few-samples"
    summary = "A node power log has fewer than 60 readings."
    severity = Severity.WARNING
    fails_run = False
    follows_from = frozenset({"PWR005"})  # a run measured every 2 s has half the readings

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        measured = _node_logs(result)
        few = [log for log in measured if log.error is None and 0 < log.sampling.readings < MIN_SAMPLES]
        if not few:
            return
        counts = sorted(log.sampling.readings for log in few)
        spread = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]}"
        yield self.finding(
            (f"{few[0].shown} has" if len(few) == 1 else f"{fold(few, measured)} hold")
            + f" {spread} readings, fewer than {MIN_SAMPLES}",
            path=few[0].path if len(few) == 1 else f"{result.path}/power",
            related=_related(few),
        )


class PowerLogUnusable(_PowerRule):
    """A power log cannot be read, or a node log has no reading.

    What it checks: that every `node_*` and `sw_*` log reads as the official parser reads it, and
    that every `node_*` log holds at least one `power_reading`.

    Why it matters: the official summarizer stops with an exception on such a log, and the result
    gets no energy score; a node log without readings measured nothing.

    Example: a record without `metadata`, or a `node_0.txt` holding only the start and stop records.

    How to fix: regenerate the log with the mlperf-logging power tool (`power_measurement.py`).
    """

    code = "PWR012"
    name = "power-log-unusable"
    summary = "A power log cannot be read, or a node log has no reading."
    severity = Severity.ERROR
    fails_run = False  # the summarizer gives the result no energy score; its time score stands

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        for log in power_logs(result):
            if log.error is not None:
                yield self.finding(log.error, path=log.path)
            elif log.name.startswith("node_") and not log.sampling.readings:
                yield self.finding(f"{log.shown} has no power_reading record", path=log.path)


RULES: list[type[Rule]] = [
    PowerRunMissing,
    PowerFileNames,
    PowerCountsDiffer,
    PowerUnknownFile,
    PowerSamplingInterval,
    PowerReadingGap,
    PowerRunNotCovered,
    PowerTimeBackwards,
    PowerNodesDiffer,
    PowerInterconnectMissing,
    PowerTooFewSamples,
    PowerLogUnusable,
]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
