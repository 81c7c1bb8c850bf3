"""SEED: the official seed checker (closed division), and seeds unique by value.

The official checker (`package_checker/seed_checker.py`) requires every run of a closed benchmark
to log a seed that `int()` accepts, and no two runs to log the same seed from the same source
line (`metadata.file`, `metadata.lineno`). It fails the whole folder when any run has parse
errors. A `seed-checker-bypass` in `package_checker_params` switches it off (listed by PKG017).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    Rule,
    Run,
    Severity,
    hookimpl,
)
from mlperf_audit_rules.support.causes import DAMAGED_LOG, ROUND_NOT_NAMED

from .support import schemas
from .support.directives import directive_in_force
from .support.history import later_check

BYPASS = "seed-checker-bypass"


def applies(result: BenchmarkResult, context: CheckContext) -> bool:
    """Closed division, no bypass in force."""
    if context.division_of(result) != "closed":
        return False
    return not directive_in_force(result, BYPASS, "seed_checker_bypass", context.ruleset)


def _readable(run: Run, context: CheckContext) -> bool:
    return not context.error_codes(run.issues)


_SCALARS = (str, int, float, bool, type(None))


def _place(event: Any) -> tuple[Any, Any]:
    """Where a seed was logged, (`metadata.file`, `metadata.lineno`), as a key: a log may hold a
    list or an object there, compared by its whole repr (no list is a dict key)."""
    return tuple(
        value if isinstance(value, _SCALARS) else repr(value)  # type: ignore[return-value]
        for value in (event.meta("file"), event.meta("lineno"))
    )


def _shown_place(place: tuple[Any, Any]) -> str:
    return ":".join(str(part) if len(str(part)) <= 80 else str(part)[:77] + "..." for part in place)


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


class _SeedRule(BenchmarkRule):
    scope = "benchmark"
    follows_from = DAMAGED_LOG | ROUND_NOT_NAMED

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if applies(result, context):
            yield from self.check_seeds(result, context)

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        raise NotImplementedError


class SeedMissing(_SeedRule):
    """A run of a closed benchmark logs no `seed`.

    What it checks: that every readable run logs at least one `seed` record.

    Why it matters: the rules require closed submissions to log their seeds ("We expect all runs
    to log at least one seed", training_rules.adoc, merged into mlcommons/training_policies on
    2024-09-26 with PR 547: in force from v4.1), so that reviewers can see that runs were
    independent; the official seed checker fails the folder (no olympic tolerance applies).

    Example: a run whose launcher sets the seed but never logs it.

    Rounds published before 4.1 were reviewed with the earlier rule (mlperf-logging ac0096c,
    2024-09-13, made seeds mandatory): there, a run without a seed fails only when another run of
    the folder logs one; otherwise the finding is information that names the later rule.

    How to fix: log `mllogger.event(key=constants.SEED, value=seed)` where the seed is set.
    """

    code = "SEED001"
    name = "seed-missing"
    summary = "A closed run logs no seed."
    severity = Severity.ERROR

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        later = later_check("seed-always-logged", context.ruleset)
        # the rule before it: a run without a seed failed only beside a run that logged one
        others_log = any(run.first("seed") is not None for run in result.runs)
        for run in result.runs:
            if _readable(run, context) and run.events and run.first("seed") is None:
                if later is not None and not others_log:
                    yield self.finding(
                        f"no seed record; {later.note(context.ruleset)}", path=run.path, severity=Severity.INFO
                    )
                else:
                    yield self.finding("no seed record: the official seed checker fails this folder", path=run.path)


class SeedNotInteger(_SeedRule):
    """A `seed` value is not an integer.

    What it checks: that `int()` accepts every logged seed, as the official checker requires.

    Why it matters: the official seed checker fails the folder on such a value.

    Example: `"value": "random"` or `"value": null`.

    How to fix: log the integer seed itself.
    """

    code = "SEED002"
    name = "seed-not-integer"
    summary = "A seed is not an integer."
    severity = Severity.ERROR

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        for run in result.runs:
            for event in run.all("seed"):
                if _as_int(event.value) is None:
                    yield self.finding(
                        f"seed {schemas.shown(event.value)} is not an integer", path=run.path, line=event.line
                    )


class SeveralSeeds(_SeedRule):
    """A run logs more than one `seed`.

    What it checks: the number of seed records per run.

    Why it matters: the official checker only warns: some benchmarks seed each worker (ssd logs
    one seed per data-loader worker). It tells a reviewer which seed to look at.

    Example: eight `seed` records in one ssd run.

    How to fix: nothing, if each seed seeds a different part of the run.
    """

    code = "SEED003"
    name = "several-seeds"
    summary = "A run logs more than one seed."
    severity = Severity.INFO

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        for run in result.runs:
            seeds = run.all("seed")
            if len(seeds) > 1:
                yield self.finding(f"{len(seeds)} seed records", path=run.path, line=seeds[1].line)


class SeedReused(_SeedRule):
    """Two runs log the same seed from the same source line.

    What it checks: that no two runs log the same (`metadata.file`, `metadata.lineno`, seed), as
    the official seed checker does.

    Why it matters: runs must be independent; the same seed set at the same place means the same
    random stream, and the official checker fails the folder.

    Example: `result_0.txt` and `result_4.txt` both logging seed 1234 from `train.py:88`.

    How to fix: draw a fresh seed for every run (the reference launchers use `$RANDOM`).
    """

    code = "SEED004"
    name = "seed-reused"
    summary = "Two runs log the same seed at the same source line."
    severity = Severity.ERROR

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        first: dict[tuple[Any, Any, int], Run] = {}
        for run in result.runs:
            if not _readable(run, context):
                continue
            for event in run.all("seed"):
                seed = _as_int(event.value)
                if seed is None:
                    continue
                where = (*_place(event), seed)
                if where in first and first[where] is not run:
                    yield self.finding(
                        f"seed {seed} at {_shown_place(where[:2])} is already logged there by {first[where].name}",
                        path=run.path,
                        line=event.line,
                    )
                first.setdefault(where, run)


class SeedValueReused(_SeedRule):
    """Two runs use the same seed value, logged from different source lines.

    What it checks: seeds unique by value across the runs of a benchmark (beyond the official check,
    which compares the source line too and so misses a seed logged from two places).

    Why it matters: identical seeds give identical random streams, so the runs are not independent
    samples of time-to-train.

    Example: `result_0.txt` logs seed 42 from `train.py:88`, `result_3.txt` logs 42 from `run.py:12`.

    How to fix: draw a fresh seed for every run.
    """

    code = "SEED005"
    name = "seed-value-reused"
    summary = "Two runs use the same seed value."
    severity = Severity.WARNING

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        owners: dict[int, list[tuple[Run, Any]]] = defaultdict(list)
        for run in result.runs:
            for event in run.all("seed"):
                seed = _as_int(event.value)
                if seed is not None and all(owner is not run for owner, _ in owners[seed]):
                    owners[seed].append((run, event))
        for seed, uses in owners.items():
            places = {_place(e) for _, e in uses}
            if len(uses) > 1 and len(places) > 1:  # the same place is SEED004's
                run, event = uses[1]
                yield self.finding(
                    f"seed {seed} is also used by {', '.join(r.name for r, _ in uses if r is not run)}",
                    path=run.path,
                    line=event.line,
                )


class SeedsUnreadable(_SeedRule):
    """A run's log has errors, so the official seed checker fails the whole folder.

    What it checks: that every run of a closed benchmark parses without log-syntax errors.

    Why it matters: the official seed checker re-parses each run and fails the folder on any parse
    error, whatever olympic scoring tolerates for the run itself.

    Example: one run with a truncated last line.

    How to fix: fix or replace the run whose log has errors (see its LOG findings).
    """

    code = "SEED006"
    name = "seeds-unreadable"
    summary = "A run's log errors make the official seed checker fail the folder."
    severity = Severity.ERROR

    def check_seeds(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        for run in result.runs:
            if not _readable(run, context):
                codes = context.error_codes(run.issues)
                yield self.finding(
                    f"the official seed checker cannot read this run ({', '.join(codes)}) and fails the folder",
                    path=run.path,
                )


RULES: list[type[Rule]] = [SeedMissing, SeedNotInteger, SeveralSeeds, SeedReused, SeedValueReused, SeedsUnreadable]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
