"""The HTML report's data block is read by our script: no name a package chooses may stop the
page from showing itself, whatever object property that name happens to spell."""

from __future__ import annotations

import shutil

import pytest

from report_browser import Page

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
