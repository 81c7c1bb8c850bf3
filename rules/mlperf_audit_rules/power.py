"""PWR: the power-measurement folders, as the official power checker reads them.

A benchmark with power results has `power/result_<n>/` for every `result_<n>.txt`, holding
`node_<i>` files (i from 0) and `sw_<i>` files for the switches, the same numbers in every run. A
run whose power folder is missing or malformed counts as a failed run for olympic scoring, as in
the official package checker.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from mlperf_audit import BenchmarkResult, CheckContext, Finding, Rule, Severity, hookimpl

#: ASCII digits, few enough for `int`: a name of thousands of digits (or of '٣') numbers no node.
_INDEX = re.compile(r"^(node|sw)_([0-9]{1,9})(\.[^.]*)?$")


def _runs(result: BenchmarkResult) -> list[str]:
    return [entry.path.rsplit("/", 1)[-1][: -len(".txt")] for entry in result.folder.result_files]


class _PowerRule(Rule):
    scope = "benchmark"
    fails_run = True

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if result.folder.power is not None:
            yield from self.check_power(result, dict(result.folder.power))

    def check_power(self, result: BenchmarkResult, power: dict[str, tuple[str, ...]]) -> Iterable[Finding]:
        raise NotImplementedError


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


RULES: list[type[Rule]] = [PowerRunMissing, PowerFileNames, PowerCountsDiffer, PowerUnknownFile]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
