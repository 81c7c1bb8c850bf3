"""The gate on MLPerf names in code: outside the reference layer, no string literal names a
benchmark or an accelerator. A fact named in code is a fact written twice, and the copies drift
(the HTML report kept 2 benchmarks measured in samples where the RCP rules kept 8).

The names come from the reference data itself, so a benchmark or accelerator added there is counted
too. A literal counts when it *is* a name (`"unet3d"`, `"TPUv3"`, any case for accelerators); prose
that mentions one (a message, a docstring) does not. There is none left: a new one fails the gate,
which names its file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mlperf_audit import reference, rulesets

ROOT = Path(__file__).resolve().parent.parent
SCANNED = (ROOT / "checker", ROOT / "rules")
LAYER = ROOT / "checker" / "mlperf_audit" / "reference"
#: What descriptions write for "no accelerator" (the CPU-only entry's alias): a placeholder, not a name.
PLACEHOLDERS = {"n/a"}


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


def literal_sites() -> list[str]:
    """Each name written in code outside the reference layer, as `path:line: 'literal'`."""
    benchmarks, accelerators = benchmark_names(), accelerator_names()
    sites = []
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            if path.is_relative_to(LAYER):
                continue
            for line, literal in named_literals(path.read_text(encoding="utf-8"), benchmarks, accelerators):
                sites.append(f"{path.relative_to(ROOT).as_posix()}:{line}: {literal!r}")
    return sites


def test_no_code_outside_the_reference_layer_names_a_benchmark_or_an_accelerator() -> None:
    sites = literal_sites()
    assert not sites, "benchmark or accelerator names written in code; ask mlperf_audit.reference instead:\n" + (
        "\n".join(sites)
    )


def test_the_gate_scans_the_code() -> None:
    """Both source roots hold the core's and the packs' modules (a moved tree would leave the gate
    scanning nothing, and passing)."""
    assert all(len(list(folder.rglob("*.py"))) >= 10 for folder in SCANNED)


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
