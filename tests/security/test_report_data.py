"""The HTML report's data: no name a package chooses may stop the page from showing itself,
whatever object property that name happens to spell, and the data costs time linear in the
number of systems and findings a package brings."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.formats.documents import HtmlReportDocument
from mlperf_audit.formats.html import page_data
from mlperf_audit.model import Finding, Severity
from mlperf_audit.scores import BenchmarkScore, RunScore
from report_browser import Page

from .test_growth import assert_linear, operations
from .test_output import package


@pytest.mark.parametrize("benchmark", ["__proto__", "constructor"])
def test_a_benchmark_folder_named_after_an_object_property_cannot_stop_the_report(cli, tmp_path, benchmark):
    """The attack: a benchmark folder named `__proto__` (or `constructor`) beside a system that has
    no such folder. The overview kept each system's cells in a plain object, so the other system
    found Object.prototype (or Object) as its cell, and the script stopped: no matrix, no charts,
    no findings on the page."""
    root = package(tmp_path / "p")
    results = root / "Fixture" / "results"
    shutil.copytree(results / "fx_8xh100", results / "fx_8xh100b")
    shutil.copy(root / "Fixture" / "systems" / "fx_8xh100.json", root / "Fixture" / "systems" / "fx_8xh100b.json")
    (results / "fx_8xh100" / "gnn").rename(results / "fx_8xh100" / benchmark)
    page = tmp_path / "report.html"
    assert cli("report", str(root), "-o", str(page), "--no-progress").code in (0, 1)
    with Page(page, tmp_path / "profile") as browser:
        assert browser.errors() == []
        assert browser.evaluate("document.body.dataset.ready") == "yes"
        # each system shows a score under its own benchmark only
        cells = browser.evaluate(
            "[...document.querySelectorAll('#matrix tbody tr')]"
            ".map(r => [...r.querySelectorAll(\"td[data-column^='b:']\")].map(c => c.textContent !== ''))"
        )
        assert sorted(cells) == [[False, True], [True, False]]


def _document_of_systems(report, count: int) -> HtmlReportDocument:
    """`count` systems of one benchmark folder each, and two findings in each folder."""
    scores = [
        BenchmarkScore(
            "S",
            f"sys{index}",
            "ssd",
            f"S/results/sys{index}/ssd",
            (RunScore(f"S/results/sys{index}/ssd/result_0.txt", 10.0, "ok", 1000.0),),
            5,
            10.0,
            1.0,
            1.0,
        )
        for index in range(count)
    ]
    findings = tuple(
        Finding("LOG001", "x", Severity.WARNING, "m", path=f"S/results/sys{index}/ssd/result_{run}.txt")
        for index in range(count)
        for run in range(2)
    )
    return HtmlReportDocument(dataclasses.replace(report, findings=findings), scores, [])


def test_the_report_places_findings_in_folders_in_linear_operations(tmp_path):
    """The attack: thousands of systems, each with a folder and its findings. Each finding was
    matched against every folder to find the one it lies in: systems x findings operations."""
    report = check(package(tmp_path / "p"), Config(cache_dir=None))
    small, large = (_document_of_systems(report, count) for count in (150, 600))
    assert len(page_data(large)["findings"]) == 1200
    assert page_data(large)["folders"][599]["findings"]["warning"] == 2
    assert_linear(operations(lambda: page_data(small)), operations(lambda: page_data(large)), "report data")
