"""The documents the commands hand to a format, one kind each: a format declares the kinds it
renders (`Format.documents`), and a command looks its `--format` up among the formats of its kind.

A document holds what is rendered and how a person reads it (the screen it is drawn for, how a
path of the package opens from the current folder); never how it was computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from ..report import Report
from ..scores import BenchmarkScore
from ..terminal import Screen

if TYPE_CHECKING:  # the documents' types only: importing claims would load YAML into every check
    from ..recipes import Recipe
    from ..review.claims import ClaimVerdict
    from ..review.comparison import BenchmarkComparison

#: `check`: the `Report` itself, which every format renders (`Format.render`).
CHECK = "check"
#: `score`: `ScoresDocument`.
SCORES = "scores"
#: `compare`: `ComparisonDocument`.
COMPARISON = "comparison"
#: `audit`: `AuditDocument`.
AUDIT = "audit"
#: `reproduce`: `RecipeDocument`.
RECIPE = "recipe"
#: `report`: `HtmlReportDocument`.
HTML_REPORT = "html-report"
#: `export`: `ExportDocument`.
EXPORT = "export"
KINDS = (CHECK, SCORES, COMPARISON, AUDIT, RECIPE, HTML_REPORT, EXPORT)


def _as_given(path: str) -> str:
    return path


@dataclass(frozen=True)
class ScoresDocument:
    """Every benchmark folder's score under the PATH `target` (as the user gave it)."""

    results: list[BenchmarkScore]
    ruleset: str
    target: str
    notes: tuple[str, ...] = ()
    screen: Screen | None = None
    #: a folder's path as it opens from the current folder
    opened: Callable[[str], str] = _as_given


@dataclass(frozen=True)
class ComparisonDocument:
    """The best score of each benchmark in the PATHs `a` and `b`, side by side."""

    rows: list[BenchmarkComparison]
    a: str
    b: str
    screen: Screen | None = None


@dataclass(frozen=True)
class AuditDocument:
    """The check's report, each result against its peers, the best results against a baseline's,
    and a verdict on each claim (`mlperf_audit.review.peers`, `mlperf_audit.review.claims`)."""

    report: Report
    peers: list[dict[str, Any]]
    baseline: list[dict[str, Any]] = field(default_factory=list)
    claims: list[ClaimVerdict] = field(default_factory=list)
    screen: Screen | None = None


@dataclass(frozen=True)
class RecipeDocument:
    """The recipe to rerun one result."""

    recipe: Recipe
    #: a path of the package as it opens from the current folder (the identity keeps them relative
    #: to the package)
    opened: Callable[[str], str] = _as_given


class PlottedCurve(Protocol):
    """One run's convergence: its name and its (unit, quality) points."""

    @property
    def name(self) -> str: ...

    @property
    def points(self) -> list[tuple[float, float]]: ...


@dataclass(frozen=True)
class FolderPlotData:
    """What one benchmark folder's plots draw: the runs' convergence curves against `unit`, the
    quality they measure, and the folder's score (None where it has none)."""

    path: str
    curves: Sequence[PlottedCurve]
    unit: str
    quality: str
    score: BenchmarkScore | None = None


@dataclass(frozen=True)
class HtmlReportDocument:
    """The check's report, the scores and each benchmark folder's plot data, for one page."""

    report: Report
    scores: list[BenchmarkScore]
    folders: list[FolderPlotData]


#: Findings counted by severity ("error", "warning", "info"; "waived" for the waived ones).
SeverityCounts = Mapping[str, int]


@dataclass(frozen=True)
class ExportedTree:
    """What `export` keeps of one PATH once its check is done: the round's ruleset, every benchmark
    folder's score and the findings counted per folder and per result file, never the report."""

    path: str  # as the user gave it
    ruleset: str
    scores: Sequence[BenchmarkScore]
    #: by (submitter, system, benchmark) folder names, as `BenchmarkScore` names them
    folder_findings: Mapping[tuple[str | None, str | None, str], SeverityCounts]
    #: by result file, as `RunScore.file` names it
    file_findings: Mapping[str, SeverityCounts]
    #: what named the round (`Config.ruleset_named_by`)
    ruleset_named_by: str = ""


@dataclass(frozen=True)
class ExportDocument:
    """Every result (every run with `runs`) of one or more PATHs, one tidy table."""

    trees: Sequence[ExportedTree]
    runs: bool = False
