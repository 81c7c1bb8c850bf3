"""The gate on MLPerf names in code: outside the reference layer, no string literal names a
benchmark or an accelerator. A fact named in code is a fact written twice, and the copies drift
(the HTML report kept 2 benchmarks measured in samples where the RCP rules kept 8).

The names come from the reference data itself, so a benchmark or accelerator added there is counted
too. A literal counts when it *is* a name (`"unet3d"`, `"TPUv3"`, any case for accelerators); prose
that mentions one (a message, a docstring) does not. `REMAINING` lists today's sites and can only
shrink: phase 2 of issue 28 converts the commands and the rule packs and brings it to zero.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from mlperf_audit import reference, rulesets

ROOT = Path(__file__).resolve().parent.parent
SCANNED = (ROOT / "checker", ROOT / "rules")
LAYER = ROOT / "checker" / "mlperf_audit" / "reference"
#: What descriptions write for "no accelerator" (the CPU-only entry's alias): a placeholder, not a name.
PLACEHOLDERS = {"n/a"}

#: Files still naming benchmarks or accelerators, and how many literals each holds.
REMAINING = {
    "checker/mlperf_audit/commands/report.py": 4,
}


def benchmark_names() -> set[str]:
    """Every benchmark the reference lists and every round of the pinned mlperf-logging allows."""
    allowed = {name for ruleset in rulesets.SUPPORTED for name in rulesets.get(ruleset).benchmarks}
    return set(reference.benchmarks.names()) | allowed


def accelerator_names() -> set[str]:
    return {name.lower() for name in reference.accelerators.names()} - PLACEHOLDERS


def named_literals(source: str, benchmarks: set[str], accelerators: set[str]) -> list[tuple[int, str]]:
    """(line, literal) of each string literal in `source` that is a benchmark or accelerator name."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value in benchmarks or node.value.lower() in accelerators)
    ]


def literal_counts() -> Counter[str]:
    benchmarks, accelerators = benchmark_names(), accelerator_names()
    counts: Counter[str] = Counter()
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            if path.is_relative_to(LAYER):
                continue
            found = named_literals(path.read_text(encoding="utf-8"), benchmarks, accelerators)
            if found:
                counts[path.relative_to(ROOT).as_posix()] = len(found)
    return counts


def test_names_are_literals_only_where_the_allowlist_says() -> None:
    counts = literal_counts()
    grown = {path: (n, REMAINING.get(path, 0)) for path, n in counts.items() if n > REMAINING.get(path, 0)}
    assert not grown, (
        "benchmark or accelerator names written in code (file: (found, allowed)); ask mlperf_audit.reference "
        f"instead: {grown}"
    )
    shrunk = {path: (counts.get(path, 0), n) for path, n in REMAINING.items() if counts.get(path, 0) < n}
    assert not shrunk, f"fewer names than REMAINING allows (file: (found, allowed)); lower REMAINING: {shrunk}"


def test_the_core_outside_commands_names_none() -> None:
    core = [path for path in literal_counts() if path.startswith("checker/") and "/commands/" not in path]
    assert core == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ('X = {"unet3d": 4}', [(1, "unet3d")]),
        ('if name == "TPUv3":\n    pass', [(1, "TPUv3")]),
        ('y = "gb300"', [(1, "gb300")]),
        ('"""unet3d drops 4 runs."""\nmessage = f"{b} is not unet3d"', []),  # prose is not a name
        ('z = "N/A"', []),
    ],
)
def test_what_counts_as_a_name(source: str, expected: list[tuple[int, str]]) -> None:
    assert named_literals(source, benchmark_names(), accelerator_names()) == expected


def test_a_benchmark_added_to_the_reference_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "newbench_1t" not in benchmark_names()
    monkeypatch.setattr(reference.benchmarks, "names", lambda: ("newbench_1t",))
    assert named_literals('K = "newbench_1t"', benchmark_names(), accelerator_names()) == [(1, "newbench_1t")]
