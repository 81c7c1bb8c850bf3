"""The HTML report: self-contained, and driven in headless Chromium as a reviewer would use it.

The page is opened through the DevTools protocol (`report_browser.Page`): no script error, nothing
fetched, every chart drawn (one curve per run, counted in the DOM), the overview matrix sorted and
filtered, and the keyboard reaching and working its controls.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from mlperf_audit.formats import html
from report_browser import Page


def page_data(page: Path) -> dict[str, Any]:
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page.read_text(), re.DOTALL)
    assert block is not None
    return json.loads(block.group(1))


def visible_rows(page: Page) -> list[list[str]]:
    return page.evaluate(
        "[...document.querySelectorAll('#matrix tbody tr')].filter(r => !r.hidden)"
        ".map(r => [...r.cells].map(c => c.textContent))"
    )


@pytest.fixture(scope="module")
def sample_page(sample, tmp_path_factory) -> Path:
    from mlperf_audit.cli import main

    page = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", str(sample), "-o", str(page), "--no-progress"]) == 0
    return page


@pytest.mark.sample
def test_the_page_loads_nothing_and_runs_only_its_own_scripts(sample_page, tmp_path):
    text = sample_page.read_text()
    assert "<script src" not in text and "<link" not in text and "<iframe" not in text
    # every executable script is allowed by its hash, and the policy allows no other
    scripts = re.findall(r"<script>(.*?)</script>", text, re.DOTALL)
    hashes = {f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts}
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text).group(1)
    assert set(re.findall(r"'sha256-[^']*'", policy)) == hashes and len(hashes) == 3
    assert "default-src 'none'" in policy and "unsafe-eval" not in policy
    with Page(sample_page, tmp_path / "profile") as page:
        assert page.errors() == []
        assert page.requests() == [sample_page.as_uri()]
        assert page.evaluate("document.body.dataset.ready") == "yes"


@pytest.mark.sample
def test_every_chart_draws_every_run(sample_page, tmp_path):
    data = page_data(sample_page)
    assert len(data["folders"]) == 15 and sum(len(f["runs"]) for f in data["folders"]) == 126
    with Page(sample_page, tmp_path / "profile") as page:
        assert page.errors() == []
        charts, drawn = page.evaluate("[+document.body.dataset.chartsTotal, +document.body.dataset.chartsDrawn]")
        # a convergence and a times chart per folder, and a chart per benchmark with a scored result
        benchmarks = {f["benchmark"] for f in data["folders"] if f["score"] and f["accelerators"]}
        assert charts == drawn == 2 * 15 + len(benchmarks)
        for folder in data["folders"]:
            drawn_curves = page.evaluate(
                f"[...document.querySelectorAll('#{folder['id']} g.run-curve path')].map(p => p.textContent)"
            )
            # one path per run, each titled with its run (dropped runs say so)
            assert sorted(name.split(" ")[0] for name in drawn_curves) == sorted(c["run"] for c in folder["curves"])
            assert len(folder["curves"]) == len(folder["runs"]), folder["path"]
            bars = page.evaluate(f"document.querySelectorAll('#{folder['id']} g.run-time rect').length")
            assert bars == len([r for r in folder["runs"] if r["minutes"] is not None])
        # the RCP band, the quality target and the envelope's bounds are drawn where known
        assert page.evaluate("document.querySelectorAll('g.rcp-band rect').length") == sum(
            1 for f in data["folders"] if f["band"]
        )
        assert page.evaluate("document.querySelectorAll('g.quality-target line').length") == 15
        assert page.evaluate("document.querySelectorAll('g.envelope-bound path').length") == 15


@pytest.mark.sample
def test_the_matrix_sorts_and_filters(sample_page, tmp_path):
    with Page(sample_page, tmp_path / "profile") as page:
        assert len(visible_rows(page)) == 10
        header = page.evaluate("[...document.querySelectorAll('#matrix th')].map(th => th.textContent)")
        bert = header.index("bert")
        page.evaluate("document.querySelector('#matrix th button[data-column=\"b:bert\"]').click()")
        scores = [float(row[bert].split()[0]) for row in visible_rows(page) if row[bert]]
        assert scores == sorted(scores) and len(scores) == 4
        assert page.evaluate("document.querySelector('th[data-column=\"b:bert\"]').getAttribute('aria-sort')") == (
            "ascending"
        )
        page.evaluate("document.querySelector('#matrix th button[data-column=\"b:bert\"]').click()")
        scores = [float(row[bert].split()[0]) for row in visible_rows(page) if row[bert]]
        assert scores == sorted(scores, reverse=True)
        assert visible_rows(page)[-1][bert] == ""  # results without a bert score last either way

        def choose(name: str, value: str) -> None:
            page.evaluate(
                f"(() => {{const s = document.getElementById('filter-{name}'); s.value = {json.dumps(value)};"
                "s.dispatchEvent(new Event('change'));})()"
            )

        choose("submitter", "NVIDIA")
        assert {row[0] for row in visible_rows(page)} == {"NVIDIA"} and len(visible_rows(page)) == 6
        choose("benchmark", "gpt3")
        assert [row[1] for row in visible_rows(page)] == ["eos_n32_ngc24.09_nemo"]
        hidden = page.evaluate("[...document.querySelectorAll('#matrix thead th')].filter(t => t.hidden).length")
        assert hidden == len(header) - 7  # every benchmark column but gpt3's
        choose("submitter", "")
        choose("benchmark", "")
        choose("accelerator", "TPU-trillium")
        assert [row[1] for row in visible_rows(page)] == ["cloud-tpu-trillium-512-maxtext"]
        assert page.evaluate("document.getElementById('matrix-status').textContent") == "1 of 10 systems shown"
        # each cell links to its folder's section
        target = page.evaluate("document.querySelector('#matrix tbody tr:not([hidden]) a').getAttribute('href')")
        assert page.evaluate(f"document.querySelector('{target} h3').textContent").startswith("Google/results/")


@pytest.mark.sample
def test_the_keyboard_reaches_and_works_the_controls(sample_page, tmp_path):
    with Page(sample_page, tmp_path / "profile") as page:
        focused = []
        for _ in range(11):
            page.press("Tab", "Tab", 9)
            focused.append(page.evaluate("document.activeElement.id || document.activeElement.textContent"))
        # the skip link, the section links, then the filters, in reading order
        assert focused[:6] == [
            "skip to the overview",
            "Overview",
            "Benchmarks",
            "Benchmark folders",
            "All findings",
            "filter-division",
        ]
        assert focused[6:10] == ["filter-availability", "filter-benchmark", "filter-accelerator", "filter-submitter"]
        assert focused[10] == "submitter"  # the first column's sort button
        page.press("Enter", "Enter", 13, "\r")
        assert page.evaluate("document.querySelector('th[data-column=\"submitter\"]').getAttribute('aria-sort')") == (
            "ascending"
        )
        page.press(" ", "Space", 32, " ")
        assert page.evaluate("document.querySelector('th[data-column=\"submitter\"]').getAttribute('aria-sort')") == (
            "descending"
        )
        assert visible_rows(page)[0][0] == "tinycorp"
        # a folder's severity filter, by keyboard: info findings hidden, then shown again
        section = "Dell/results/XE9680x8H100-SXM-80GB/bert"
        box = f"[...document.querySelectorAll('.folder')].find(s => s.querySelector('h3').textContent === '{section}')"
        page.evaluate(f"{box}.querySelector('input[data-severity=info]').focus()")
        page.press(" ", "Space", 32, " ")
        assert page.evaluate(f"[...{box}.querySelectorAll('li')].filter(li => !li.hidden).length") == 0
        page.press(" ", "Space", 32, " ")
        assert page.evaluate(f"[...{box}.querySelectorAll('li')].filter(li => !li.hidden).length") == 2


def test_report_refuses_to_write_inside_the_package(cli, fixtures, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "demo", tree)
    result = cli("report", str(tree), "-o", str(tree / "report.html"))
    assert result.code == 2 and not (tree / "report.html").exists()


HOSTILE = "</script><script>alert(1)</script><!--\u2028"


def test_report_escapes_log_content(cli, fixtures, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "broken" / "wrong-benchmark-name", tree)
    log = tree / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_2.txt"
    log.write_text(log.read_text().replace('"value": "retinanet"', f'"value": {json.dumps(HOSTILE)}'))
    page = tmp_path / "report.html"
    cli("report", str(tree), "-o", str(page))
    text = page.read_text()
    assert "<script>alert(1)" not in text and "<!--" not in text.split("<body>", 1)[1] and "\u2028" not in text
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in text
    assert any(HOSTILE[:-1] in finding["message"] for finding in page_data(page)["findings"])
    with Page(page, tmp_path / "profile") as browser:
        assert browser.errors() == []
        # the value is text on the page, and no element came of it
        assert browser.evaluate("document.scripts.length") == 4
        assert "</script><script>alert(1)</script>" in browser.evaluate(
            "document.getElementById('findings').textContent"
        )


def test_script_json_cannot_leave_its_element():
    text = html.script_json({"a": "</script><!-- \u2028\u2029 & >"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text and "\u2029" not in text
    # the value itself unchanged, but for the line separators, shown as their escapes (`visible`)
    assert json.loads(text) == {"a": "</script><!-- \\u2028\\u2029 & >"}


def test_a_report_of_an_unchanged_tree_is_answered_from_the_cache(cli, fixtures, tmp_path, monkeypatch):
    from mlperf_audit.engine import api

    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "demo", tree)
    pages = [tmp_path / f"report-{index}.html" for index in range(3)]
    cached = ["--cache-dir", str(tmp_path / "cache")]
    for page in pages[:2]:
        cli("report", str(tree), "-o", str(page), *cached)

    def not_again(*args: object, **kwargs: object) -> None:
        raise AssertionError("the unchanged tree was checked again")

    monkeypatch.setattr(api, "run_checks", not_again)
    cli("report", str(tree), "-o", str(pages[2]), *cached)
    assert pages[2].read_bytes() == pages[0].read_bytes()
    assert page_data(pages[2])["folders"] and all(f["curves"] for f in page_data(pages[2])["folders"])
