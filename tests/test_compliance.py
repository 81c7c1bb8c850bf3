"""Every compliance check family of training 4.1.0: a fixture run that passes it, one that fails it.

The families come from the rule files of the installed mlperf-logging. For each, the clean fixture
run of the family's benchmark (division switched where the family is an open one) must not raise
it, and a mutation of that run, chosen by the family's kind, must: records removed (REQ,
ALTERNATIVES), a record repeated (REPEATED), values or metadata replaced until the official
expression fails (CHECK, ATLEAST_ONE_CHECK, CODE), and so on. The same interpreter also runs on
the other supported rounds' rule files.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator

import pytest

from mlperf_audit import LogEvent, Run
from mlperf_audit.reading.parser import parse_log
from mlperf_audit_rules.support import compliance_data, official_compliance
from mlperf_audit_rules.support.official_compliance import Family

CLEAN = Path(__file__).resolve().parent.parent / "fixtures" / "packages" / "clean" / "Fixture" / "results"
VERSION = "4.1.0"
# the CODE family (a PRE or POST block that raises) cannot be reached with 4.1.0's blocks: test_code_family
FAMILIES = sorted((f for f in official_compliance.families_of_round(VERSION) if f.kind != "CODE"), key=lambda f: f.id)
VALUE_CANDIDATES: list[Any] = [-1, 0, 1e9, 3.0, 123457, "x", "", None, True, [], {"a": 1}]


@cache
def _clean_run(benchmark: str) -> Run:
    (folder,) = CLEAN.glob(f"*/{benchmark}")  # gpt3 runs on its own 64-GPU system
    return parse_log(folder / "result_0.txt", f"{benchmark}/result_0.txt")


def clean_run(benchmark: str) -> Run:
    """A fresh copy of the parsed clean run: what a run has computed (`Run.cached`, the official
    interpretation included) is not carried into a test that patches the rule files."""
    return dataclasses.replace(_clean_run(benchmark))


BENCHMARKS = ["ssd", "bert", "dlrm_dcnv2", "gnn", "gpt3", "llama2_70b_lora", "stable_diffusion"]


def target_of(family: Family) -> tuple[str, str]:
    """(division, benchmark) whose run exercises a family's config.

    A common config's verdict on a key is replaced by a benchmark config that has a record for the
    same key (the official override), so a benchmark without one is chosen.
    """
    config = family.config
    division, _, benchmark = config.partition("_")
    if config in ("common", "*") or benchmark == "common":
        division = "closed" if config in ("common", "*") else division
        for candidate in BENCHMARKS:
            overriding = official_compliance.load_config(VERSION, f"{division}_{candidate}")
            if overriding is None or family.key not in overriding.keys:
                return division, candidate
    return division, benchmark


def with_events(run: Run, events: list[LogEvent]) -> Run:
    return dataclasses.replace(run, events=tuple(events))


def set_division(run: Run, division: str) -> Run:
    return with_events(
        run, [dataclasses.replace(e, value=division) if e.key == "submission_division" else e for e in run.events]
    )


def codes(run: Run) -> set[str]:
    return {
        official_compliance.code_of().get(m.family.id, official_compliance.FALLBACK_CODE)
        for m in official_compliance.interpret(run, VERSION)
    }


def replace_value(event: LogEvent, value: Any) -> LogEvent:
    return dataclasses.replace(event, value=value)


def strip_metadata(event: LogEvent) -> LogEvent:
    kept = {k: v for k, v in event.metadata.items() if k in ("file", "lineno")}
    return dataclasses.replace(event, metadata=MappingProxyType(kept))


def injected(run: Run, key: str) -> Run:
    """The run with one bare record of `key` added after run_start (for keys the fixture never logs)."""
    events = list(run.events)
    at = next(i for i, e in enumerate(events) if e.key == "run_start") + 1
    bare = dataclasses.replace(events[at], key=key, value=None, metadata=MappingProxyType({}))
    return with_events(run, events[:at] + [bare] + events[at:])


def aggregated_mutations(run: Run, kind: str) -> Iterator[Run]:
    """stable_diffusion's BEGIN block makes 'aggregated_eval_accuracy' from eval_accuracy lines with a metric."""
    events = list(run.events)
    if kind == "REQ":
        yield with_events(run, [e for e in events if not (e.key == "eval_accuracy" and "metric" in e.metadata)])
    elif kind == "CHECK":
        yield with_events(
            run,
            [
                dataclasses.replace(e, metadata=MappingProxyType({**e.metadata, "metric": "fid"}))
                if e.meta("metric") == "FID"
                else e
                for e in events
            ],
        )
    elif kind == "ATLEAST_ONE_CHECK":
        yield with_events(run, [replace_value(e, 200.0) if e.meta("metric") == "FID" else e for e in events])
        yield with_events(run, [replace_value(e, -1.0) if e.meta("metric") == "FID" else e for e in events])  # open


def mutations(run: Run, family: Family) -> Iterator[Run]:
    """Candidate runs that should raise `family`, most specific first."""
    if family.key == "aggregated_eval_accuracy":
        yield from aggregated_mutations(run, family.kind)
        return
    events = list(run.events)
    keys = family.key.split("|")
    indexes = [i for i, e in enumerate(events) if e.key in keys]
    kind = family.kind
    if kind in ("REQ", "ALTERNATIVES"):
        yield with_events(run, [e for e in events if e.key not in keys])
        if indexes:  # EXACTLY_ONE: a second record with another value
            first = events[indexes[0]]
            yield with_events(run, events + [replace_value(first, "another value")])
        required = official_compliance.load_config(VERSION, family.config).keys.get(family.key)  # AT_LEAST(n): keep one
        if required is not None and indexes:
            yield with_events(run, [e for i, e in enumerate(events) if i not in indexes[1:]])
    elif kind == "REPEATED" and indexes:
        yield with_events(run, events[: indexes[0] + 1] + [events[indexes[0]]] + events[indexes[0] + 1 :])
    elif kind in ("CHECK", "FIRST_CHECK", "ATLEAST_ONE_CHECK") and not indexes:
        yield injected(run, family.key)
    elif kind in ("CHECK", "FIRST_CHECK", "ATLEAST_ONE_CHECK") and indexes:
        change_all = kind == "ATLEAST_ONE_CHECK"
        chosen = indexes if change_all else indexes[:1]
        edits: list[Callable[[LogEvent], LogEvent]] = [strip_metadata]
        edits += [lambda e, v=value: replace_value(e, v) for value in VALUE_CANDIDATES]
        for edit in edits:
            yield with_events(run, [edit(e) if i in chosen else e for i, e in enumerate(events)])
        if family.key in ("init_stop", "init_start", "run_start", "run_stop", "block_start"):
            # order checks: move the record before everything it must follow, or the compile limit
            record = events[indexes[0]]
            yield with_events(run, [record] + [e for i, e in enumerate(events) if i != indexes[0]])
            late = dataclasses.replace(record, time_ms=record.time_ms + 10 * 3_600_000)
            yield with_events(run, [late if i == indexes[0] else e for i, e in enumerate(events)])
            yield with_events(run, events + [record])  # a second record after everything
    elif kind == "BEGIN":
        yield with_events(
            run,
            [
                dataclasses.replace(e, metadata=MappingProxyType({"metric": e.meta("metric")}))
                if e.meta("metric")
                else e
                for e in events
            ],
        )
    elif kind == "MISSING":
        yield with_events(run, [replace_value(e, "unet3d") if e.key == "submission_benchmark" else e for e in events])


def base_run(family: Family) -> Run:
    division, benchmark = target_of(family)
    run = clean_run(benchmark)
    return set_division(run, division) if division == "open" else run


DEFECT_TRIGGERS: dict[str, Callable[[], Run]] = {
    # open llama2: open_common.yaml's list omits the benchmark
    "open_common": lambda: set_division(clean_run("llama2_70b_lora"), "open"),
    # open gpt3: open_gpt3.yaml copies the closed learning-rate rule
    "open_gpt3": lambda: with_events(
        clean_run("gpt3"),
        [
            replace_value(e, 4e-5) if e.key == "opt_base_learning_rate" else e
            for e in set_division(clean_run("gpt3"), "open").events
        ],
    ),
    # open llama2: open_llama2_70b_lora.yaml asks for epoch_num where samples_count is meant
    "open_llama2_70b_lora": lambda: set_division(clean_run("llama2_70b_lora"), "open"),
}


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.id)
def test_family_passes_on_the_clean_run_and_fails_on_a_mutation(family):
    code = official_compliance.code_of()[family.id]
    if family.kind == "DEFECT":
        run = DEFECT_TRIGGERS[family.config]()
        assert code in codes(run)
        assert code not in codes(clean_run("llama2_70b_lora")) and code not in codes(clean_run("gpt3"))
        return
    base = base_run(family)
    assert code not in codes(base), f"{code} fires on the clean {target_of(family)} run"
    for candidate in mutations(base, family):
        if code in codes(candidate):
            return
    pytest.fail(f"no mutation of the clean {target_of(family)} run raises {code} ({family.id})")


def test_open_llama2_is_accepted_as_the_rules_intend():
    messages = official_compliance.interpret(set_division(clean_run("llama2_70b_lora"), "open"), VERSION)
    assert {m.family.kind for m in messages} == {"DEFECT"}
    texts = " ".join(m.text for m in messages)
    assert "open_common.yaml's list of benchmarks is stale" in texts and "samples_count is accepted" in texts


def test_code_family(monkeypatch):
    """A PRE or POST block that raises becomes the CODE family's finding, not a crash."""
    config = official_compliance.load_config(VERSION, "closed_ssd")
    broken = dataclasses.replace(
        config,
        keys={
            **config.keys,
            "opt_name": dataclasses.replace(config.keys["opt_name"], post=compile("s['x'] = 1 / 0", "<test>", "exec")),
        },
    )
    real = official_compliance.load_config
    monkeypatch.setattr(official_compliance, "load_config", lambda v, n: broken if n == "closed_ssd" else real(v, n))
    (message,) = official_compliance.interpret(clean_run("ssd"), VERSION)
    assert message.family == Family("*", "*", "CODE") and "ZeroDivisionError" in message.text


def test_open_gpt3_hyperparameters_are_free_but_the_target_is_not():
    open_gpt3 = DEFECT_TRIGGERS["open_gpt3"]()
    assert {m.family.kind for m in official_compliance.interpret(open_gpt3, VERSION)} == {"DEFECT"}
    missed = with_events(
        open_gpt3, [replace_value(e, 2.8) if e.key == "eval_accuracy" else e for e in open_gpt3.events]
    )
    kinds = {(m.family.config, m.family.kind) for m in official_compliance.interpret(missed, VERSION)}
    assert ("open_gpt3", "ATLEAST_ONE_CHECK") in kinds


@pytest.mark.parametrize("version", ["4.0.0", "5.0.0", "5.1.0"])
def test_other_rounds_load_and_judge(version):
    families = official_compliance.families_of_round(version)
    assert families and all(f.id in official_compliance.code_of() for f in families)
    messages = official_compliance.interpret(clean_run("bert"), version)
    ids = {m.family.id for m in messages}
    if version == "4.0.0":  # 4.0 still required submission_status
        assert ids == {"common:submission_status:REQ"}
    elif version == "5.1.0":  # bert is not a 5.1 benchmark
        assert "closed_common:submission_benchmark:CHECK" in ids
    else:
        assert messages == []


def test_the_shipped_families_are_what_the_pinned_mlperf_logging_gives():
    """Every round's check families and expressions are shipped (reading 287 YAML files cost 0.6 s
    of every start); after a pin moves, `python -m mlperf_audit_rules.compliance --update`."""
    assert official_compliance.families_path().read_text() == compliance_data.families_json()
    official_compliance.all_families.cache_clear()
    assert official_compliance.all_families() == official_compliance.computed_families()


def test_families_of_another_mlperf_logging_are_computed(monkeypatch, tmp_path):
    official_compliance.all_families.cache_clear()
    forged = tmp_path / "families.json"
    forged.write_text('{"mlperf_logging": "0.0.1", "families": [["closed_x", "k", "CHECK", {}]]}')
    monkeypatch.setattr(official_compliance, "families_path", lambda: forged)
    try:
        assert official_compliance.all_families() == official_compliance.computed_families()
    finally:
        official_compliance.all_families.cache_clear()


def test_code_table_is_complete_and_stable():
    table = official_compliance.code_table()
    every = official_compliance.all_families()
    assert set(every) <= set(table.values())  # run `python -m mlperf_audit_rules.compliance --update`
    assert len(set(table.values())) == len(table)
    docs = (Path(__file__).resolve().parent.parent / "docs" / "compliance-rules.md").read_text()
    assert docs == compliance_data.markdown_table()
