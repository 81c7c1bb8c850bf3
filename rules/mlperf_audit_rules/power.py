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
)
from mlperf_audit_rules.support import policies

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


class PowerSamplingInterval(_PowerRule):
    """Node power logs are sampled less often than once a second.

    What it checks: the median interval between consecutive `power_reading` records (in time
    order) of every `node_*` log; above 1.25 s the node is sampled below 1 Hz. The finding gives
    the measured median, the share of intervals longer than 1 s and the longest, per run.

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
        by_run: dict[str, list[PowerLog]] = {}
        for log in _node_logs(result):
            median = log.sampling.median_interval_ms
            if median is not None and median > MAX_MEDIAN_INTERVAL_MS:
                by_run.setdefault(log.run, []).append(log)
        for run, slow in by_run.items():
            measured = [log for log in _node_logs(result) if log.run == run]
            worst = max(slow, key=lambda log: log.sampling.median_interval_ms or 0)
            sampling = worst.sampling
            medians = sorted(log.sampling.median_interval_ms or 0 for log in slow)
            spread = f"{medians[0]:.0f}" if medians[0] == medians[-1] else f"{medians[0]:.0f} to {medians[-1]:.0f}"
            share = sampling.over_one_second / sampling.intervals if sampling.intervals else 0
            longest = max((b - a for a, b in sampling.gaps), default=0)
            yield self.finding(
                f"{len(slow)} of {len(measured)} node logs of power/{run} are sampled every {spread} ms (median "
                f"interval); {worst.name}: {share:.0%} of {sampling.intervals} intervals longer than 1 s"
                + (f", the longest {_seconds(longest)}" if longest else "")
                + "; the power rules require at least one reading per second",
                path=f"{result.path}/power/{run}",
                related=tuple((log.path, None) for log in [worst, *(log for log in slow if log is not worst)][:20]),
                severity=severity,
                hint=f"measure at least once a second ({where}) and measure the runs again",
            )


class PowerReadingGap(_PowerRule):
    """A node power log has no reading for more than 10 s inside a run's timed part.

    What it checks: the intervals between consecutive readings (time order) of every `node_*` log
    that fall between the run's `run_start` and `run_stop`; one longer than 10 s is a gap. The
    published 1 Hz logs never go longer than 7 s without a reading.

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
        for log in _node_logs(result):
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
                yield self.finding(
                    f"{log.shown} has {len(inside)} gap(s) longer than {_seconds(MAX_GAP_MS)} inside the run, the "
                    f"longest {_seconds(end - start)} from {_seconds(start - timed[0])} after run_start",
                    path=log.path,
                )


class PowerRunNotCovered(_PowerRule):
    """A node's readings do not cover its run from `run_start` to `run_stop`.

    What it checks: for every `node_*` log, that the readings inside its measurement window
    (`power_measurement_start` to `power_measurement_stop`, the readings the energy integrates)
    begin no later than 5 s after the run's `run_start` and end no earlier than 5 s before its
    `run_stop`. The published 1 Hz logs leave at most 2 s. More than a minute uncovered is an
    error: no published power log's clock differs from its result log's by that much. A window
    with no reading in it (a `power_measurement_stop` stamped at its start) is an error too: the
    summarizer integrates nothing and stops.

    Why it matters: "Power measurement begins just before a run starts and stops just afterwards.
    Power measurement must include all timed operations" (power_measurement.adoc, 2.5). The
    energy is the window's mean power times the time-to-train: a window that misses the end of a
    run (the last epochs, the final evaluation) reports the power of another part of it.

    Example: readings until 1715290000000, `power_measurement_stop` at 1715290000000, `run_stop`
    at 1715291744000 (29 minutes later).

    How to fix: start the measurement before `run_start` and stop it after `run_stop`, on clocks
    that agree (NTP), and log `power_measurement_stop` when the measurement ends.
    """

    code = "PWR007"
    name = "power-run-not-covered"
    summary = "A node's power readings do not cover its run from run_start to run_stop."
    severity = Severity.ERROR
    fails_run = False

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        runs = _runs_by_folder(result)
        for log in _node_logs(result):
            timed = _timed(runs.get(log.run))
            window = log.sampling.window_readings
            if timed is None or not log.sampling.readings:
                continue  # no readings at all: PWR012
            if window is None:
                stop = log.sampling.measurement_stop_ms
                start = log.sampling.measurement_start_ms
                yield self.finding(
                    f"{log.shown} has no reading inside its measurement window: power_measurement_stop"
                    + (f" (line {log.sampling.measurement_stop_line})" if log.sampling.measurement_stop_line else "")
                    + (
                        f" is stamped {_seconds(stop - start)} after power_measurement_start"
                        if stop is not None and start is not None
                        else " comes before every reading"
                    )
                    + f", and the {log.sampling.readings} readings lie outside; the summarizer finds no energy",
                    path=log.path,
                    line=log.sampling.measurement_stop_line,
                )
                continue
            late, early = window[0] - timed[0], timed[1] - window[1]
            missed = max(late, early)
            if missed <= UNCOVERED_WARNING_MS:
                continue
            parts = []
            if late > UNCOVERED_WARNING_MS:
                parts.append(f"its first reading is {_seconds(late)} after run_start")
            if early > UNCOVERED_WARNING_MS:
                stopped = log.sampling.measurement_stop_ms
                cause = (
                    " (power_measurement_stop ends the window)"
                    if stopped is not None and log.sampling.last_ms is not None and log.sampling.last_ms > stopped
                    else ""
                )
                parts.append(f"its last reading in the measurement window is {_seconds(early)} before run_stop{cause}")
            yield self.finding(
                f"{log.shown} does not cover the run: " + " and ".join(parts),
                path=log.path,
                severity=Severity.ERROR if missed > UNCOVERED_ERROR_MS else Severity.WARNING,
            )


class PowerTimeBackwards(_PowerRule):
    """A power log's readings go back in time.

    What it checks: that every `power_reading` of a `node_*` or `sw_*` log is stamped no earlier
    than the reading above it in the file.

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
        for log in power_logs(result):
            first = log.sampling.first_backwards
            if first is not None:
                line, back = first
                yield self.finding(
                    f"{log.shown}: {log.sampling.backwards} reading(s) stamped before the reading above them, the "
                    f"first at line {line} ({back:.0f} ms back)",
                    path=log.path,
                    line=line,
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

    What it checks: the number of `power_reading` records of each `node_*` log.

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
        for log in _node_logs(result):
            count = log.sampling.readings
            if log.error is None and 0 < count < MIN_SAMPLES:
                yield self.finding(f"{log.shown} has {count} readings, fewer than {MIN_SAMPLES}", path=log.path)


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
