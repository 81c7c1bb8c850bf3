"""HYP and VAL: logged values that must agree with their types and across the runs of a benchmark."""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from typing import Any, Callable, Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    Rule,
    Run,
    RunRule,
    Severity,
    hookimpl,
)
from mlperf_audit_rules.support import disclosure, schemas
from mlperf_audit_rules.support.constants import dataset_constants
from mlperf_audit_rules.support.convergence import verdict_for

VALUES_SCHEMA = "mllog_values.schema.json"
#: Keys that configure training and so must be the same in every run of a benchmark.
HYPERPARAMETER_PREFIXES = ("opt_", "lora_")
# (train_samples is not one: bert and gpt3 log there how many samples the run trained on)
HYPERPARAMETER_KEYS = {
    "global_batch_size",
    "gradient_accumulation_steps",
    "max_sequence_length",
    "init_checkpoint_step",
    "eval_samples",
    "num_warmup_steps",
    "start_warmup_step",
    "submission_benchmark",
    "submission_division",
    "submission_platform",
    *disclosure.KEYS,  # 6.x: precision, parallelism, micro batch, launch configuration
}


def _is_hyperparameter(key: str) -> bool:
    return key in HYPERPARAMETER_KEYS or key.startswith(HYPERPARAMETER_PREFIXES)


@cache
def _value_schemas(benchmark: str | None) -> dict[str, tuple[dict[str, Any], Callable[[Any], bool]]]:
    """Key -> (its sub-schema, a validity check) for the common keys and the benchmark's own."""
    table = schemas.load(VALUES_SCHEMA)
    merged = dict(table["common"])
    merged.update(table.get(benchmark or "", {}) if isinstance(table.get(benchmark or ""), dict) else {})
    return {
        key: (schema, schemas.value_checker(VALUES_SCHEMA, json.dumps(schema, sort_keys=True)))
        for key, schema in merged.items()
    }


def _keys(run: Run) -> dict[str, None]:
    """The keys a run logs, each once, in the order first logged."""
    return run.cached("consistency.keys", lambda: dict.fromkeys(event.key for event in run.events))


def _line(event: Any) -> int:
    return int(event.line)


class ValueType(RunRule):
    """A logged value has the wrong JSON type for its key.

    What it checks: the `value` of the keys listed in `schemas/mllog_values.schema.json` (common
    keys, and each benchmark's hyperparameters): batch sizes and step counts integers, rates and
    accuracies numbers (maskrcnn's accuracy `{"BBOX": number, "SEGM": number}`, the official
    format; either form when the benchmark is unknown), names non-empty strings.

    Why it matters: the official checkers compare values with `==` and `>`; a string `"2048"`
    passes presence checks but never matches an RCP batch size, and summaries then mis-scale.

    Example: `"key": "global_batch_size", "value": "2048"`.

    How to fix: log the number itself (mllog writes Python ints and floats as JSON numbers).
    """

    code = "VAL001"
    name = "value-type"
    summary = "A logged value has the wrong type for its key."
    severity = Severity.WARNING
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        benchmark = run.benchmark or run.value("submission_benchmark")
        expected = _value_schemas(benchmark if isinstance(benchmark, str) else None)
        logged = _keys(run)
        # the keys with an expectation, then their records in file order (each has its own line)
        events = sorted((event for key in expected if key in logged for event in run.all(key)), key=_line)
        for event in events:
            schema, is_valid = expected[event.key]
            if not is_valid(event.value):
                yield self.finding(
                    f"{event.key} = {schemas.shown(event.value)} is not {schemas.explain(schema)}",
                    path=run.path,
                    line=event.line,
                )


class HyperparametersDiffer(BenchmarkRule):
    """A hyperparameter has different values in different runs of one benchmark.

    What it checks: every logged hyperparameter (`opt_*`, `lora_*`, `global_batch_size`,
    `gradient_accumulation_steps`, the submission keys, 6.x's disclosure of precision, parallelism,
    micro batch and `config_filename`, ...) across the runs of a folder.

    Why it matters: the runs of a result are repeats of one configuration; the score averages them
    and the RCP check assumes one batch size. Different values mean several configurations were
    mixed, perhaps to keep the fastest.

    The finding names every run of a value other than the one most runs log; where no value is
    held by more runs than every other, one finding names each value with its runs (none is the odd
    one out).

    Example: `opt_base_learning_rate` 0.002 in nine runs and 0.0025 in one.

    How to fix: rerun with one configuration.
    """

    code = "HYP001"
    name = "hyperparameters-differ"
    summary = "A hyperparameter differs between the runs of a benchmark."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        # values are told apart by their whole repr, and quoted shortened (a log value may be huge)
        seen: dict[str, dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
        quoted: dict[str, str] = {}
        first_line: dict[tuple[str, str], int] = {}
        for run in result.runs:
            hyperparameters = [key for key in _keys(run) if _is_hyperparameter(key)]
            # every hyperparameter's records, in file order (each has its own line)
            for event in sorted((e for key in hyperparameters for e in run.all(key)), key=_line):
                whole = repr(event.value)
                if whole not in quoted:
                    quoted[whole] = schemas.shown(event.value)
                if run not in seen[event.key][whole]:
                    seen[event.key][whole].append(run)
                    first_line.setdefault((run.path, event.key), event.line)
        for key, values in sorted(seen.items()):
            if len(values) < 2:
                continue
            counts = sorted((len(runs) for runs in values.values()), reverse=True)
            if counts[0] == counts[1]:
                # no value is held by more runs than every other: none is the odd one out, every run is named
                split = sorted(values.items(), key=lambda item: (-len(item[1]), item[1][0].name))
                every = [run for _, runs in split for run in runs]
                yield self.finding(
                    f"{key} differs between the runs, no value held by most: "
                    + "; ".join(f"{quoted[whole]} in {', '.join(run.name for run in runs)}" for whole, runs in split),
                    path=every[0].path,
                    line=first_line.get((every[0].path, key)),
                    related=[(run.path, first_line.get((run.path, key))) for run in every[1:21]],
                )
                continue
            majority = max(values.items(), key=lambda item: len(item[1]))[0]
            for whole, runs in values.items():
                if whole == majority:
                    continue
                names = ", ".join(run.name for run in runs)
                yield self.finding(
                    f"{key} is {quoted[whole]} in {names} but {quoted[majority]} in "
                    f"{len(values[majority])} other run(s)",
                    path=runs[0].path,
                    line=first_line.get((runs[0].path, key)),
                    related=[(run.path, first_line.get((run.path, key))) for run in runs[1:21]],
                )


class HyperparametersDifferFromRcp(BenchmarkRule):
    """A logged hyperparameter differs from the one of the RCP record used.

    What it checks: the hyperparameters that the RCP record at the submission's batch size lists
    under the same key name as the log (for example `opt_base_learning_rate`), for a closed
    benchmark whose RCP was found (not interpolated).

    Why it matters: the RCP's convergence was measured with those hyperparameters; with others
    (borrowed or tuned within the rules) the comparison says less. Informational: the rules allow
    some hyperparameters to differ.

    Example: bert at batch 448 with `opt_base_learning_rate` 0.00096 against the RCP's 0.000425.

    How to fix: nothing, if the values are allowed by the rules; a reviewer may ask why.
    """

    code = "HYP002"
    name = "hyperparameters-differ-from-rcp"
    summary = "A logged hyperparameter differs from the RCP record's."
    severity = Severity.INFO
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        verdict = verdict_for(result, context)
        if verdict is None or verdict.record is None or verdict.message != "RCP found" or not result.runs:
            return
        hyperparameters = verdict.record.get("Hyperparams") or {}
        run = result.runs[0]
        for key, expected in sorted(hyperparameters.items()):
            event = run.first(key)
            if event is not None and not _same(event.value, expected):
                yield self.finding(
                    f"{key} is {schemas.shown(event.value)}, the RCP at BS {verdict.record['BS']} used "
                    f"{schemas.shown(expected)}",
                    path=run.path,
                    line=event.line,
                )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        try:
            return abs(float(a) - float(b)) <= 1e-12 * max(1.0, abs(float(b)))
        except OverflowError:  # an integer too large for a float is compared exactly
            return bool(a == b)
    return bool(a == b)


def _as_number(value: Any) -> int | float | None:
    """A logged number as bench/constants.py keys it (3001600.0 is 3001600); anything else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    return value


def _peers(entry: dict[str, Any]) -> str:
    counts = entry.get("peers") or {}
    return "; ".join(
        f"{value}: {c.get('submitters')} submitter(s), {c.get('folders')} folder(s)" for value, c in counts.items()
    )


class DatasetConstantDiffers(BenchmarkRule):
    """A dataset constant (`train_samples`, `eval_samples`) differs from the reference of its round.

    What it checks: in the closed division, the `train_samples` and `eval_samples` that each run
    logs against the value of the round and benchmark in `data/constants.json`, generated by
    `bench/constants.py` from, in this order: the round's rules (an equality check in the closed
    rule file), the reference implementation where it logs the dataset's size (stable_diffusion,
    gpt3 (two references), bert's evaluation set, resnet's ImageNet), else the published majority
    of the round (more submitters than every other value together, at least three). A value the
    round's rules require is left to their official check (a CMP error, with its olympic tolerance
    of one run); this rule reports the others, which no official tool checks, as warnings: the
    rules did not name them. Keys that are not sizes of the dataset in
    the reference (retinanet's and maskrcnn's batches per epoch, samples consumed, dlrm_dcnv2's
    train_samples, rnnt's filtered count) are not compared. A value that the round's reference
    implementation itself logged as a placeholder is not reported (`placeholders` in the data, with
    its source: v3.1's stable_diffusion reference logged `train_samples` 1, "a placeholder until a
    dataset is picked", until 2024-02-29). The finding names the reference, its source and how many
    published submitters and folders log each value.

    Why it matters: the closed division fixes the dataset. A training or evaluation set of another
    size is another benchmark (an image missing from the validation set, COCO without the reference's
    filtering), and a logged size that is not a size at all (batches, steps) hides what the run read.
    The official tools check these values only where the rules name them, in recent rounds.

    Example: `eval_samples` 49999 in a resnet log, where the reference and every other submitter of
    the round evaluate ImageNet's 50000 validation images.

    How to fix: train and evaluate on the reference dataset, whole, and log its size as the
    reference does.
    """

    code = "HYP003"
    name = "dataset-constant-differs"
    summary = "A dataset constant differs from the reference of its round."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        if context.division_of(result) != "closed" or not result.runs:
            return
        rounds = dataset_constants().get("rounds", {})
        reference = rounds.get(context.version, {}).get(result.benchmark, {}) if isinstance(rounds, dict) else {}
        for key, entry in sorted(reference.items()):
            if entry.get("required"):  # the official check of the round reports it (CMP)
                continue
            # what the round's reference implementation itself logged as a placeholder is not the run's defect
            placeholders = [p.get("value") for p in entry.get("placeholders", ()) if isinstance(p, dict)]
            differing = [
                (run, event)
                for run in result.runs
                if run.text("submission_benchmark") == result.benchmark  # another benchmark's log is PKG011's
                and (event := run.first(key)) is not None
                and (value := _as_number(event.value)) is not None
                and value not in entry.get("values", ())
                and value not in placeholders
            ]
            if not differing:
                continue
            run, event = differing[0]
            values = " or ".join(str(v) for v in entry["values"])
            runs = f" (and {len(differing) - 1} other run(s))" if len(differing) > 1 else ""
            peers = _peers(entry)
            yield self.finding(
                f"{key} is {schemas.shown(event.value)}{runs}; the reference of v{context.version.rsplit('.', 1)[0]} "
                f"{result.benchmark} is {values}, from {entry.get('source')}"
                + (f"; the published folders log {peers}" if peers else ""),
                path=run.path,
                line=event.line,
            )


RULES: list[type[Rule]] = [ValueType, HyperparametersDiffer, HyperparametersDifferFromRcp, DatasetConstantDiffers]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
