"""The HTML report: self-contained, and every plot drawn in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRE_CHROMIUM_ENV = "MLPERF_AUDIT_REQUIRE_CHROMIUM"


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get(REQUIRE_CHROMIUM_ENV):
            pytest.fail("Debian's chromium is required here (.ci/run installs it) but missing")
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    return path


def render_dom(browser: str, page: Path, profile: Path) -> str:
    result = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.stdout


@pytest.mark.sample
def test_report_of_the_real_sample(cli, sample, tmp_path):
    page = tmp_path / "report.html"
    result = cli("report", str(sample), "-o", str(page))
    assert result.code == 0 and page.is_file()
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    assert "<script src" not in text and "<link" not in text  # nothing fetched when opened
    assert text.count('<svg class="plot convergence"') == 15 and text.count('<svg class="plot times"') == 15
    assert text.count('<svg class="plot utilisation"') == 8  # bert x4, gpt3 x2, llama2 x2
    # every closed result against the published envelope: all 15 have a bound from v4.0 and v3.1
    assert text.count('<svg class="plot envelope"') == 15 and "of the bound" in text
    assert 'class="rcp-band"' in text and 'class="target"' in text and "FOR004" in text
    dom = render_dom(chromium(), page, tmp_path / "profile")
    drawn = re.search(r'data-plots-drawn="(\d+)"', dom)
    total = re.search(r'data-plots-total="(\d+)"', dom)
    assert drawn and total and int(total.group(1)) == 53 and drawn.group(1) == total.group(1)


def test_report_refuses_to_write_inside_the_package(cli, fixtures, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "demo", tree)
    result = cli("report", str(tree), "-o", str(tree / "report.html"))
    assert result.code == 2 and not (tree / "report.html").exists()


def test_report_escapes_log_content(cli, fixtures, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "broken" / "wrong-benchmark-name", tree)
    log = tree / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_2.txt"
    log.write_text(log.read_text().replace('"value": "retinanet"', '"value": "<script>alert(1)</script>"'))
    page = tmp_path / "report.html"
    cli("report", str(tree), "-o", str(page))
    assert "<script>alert(1)</script>" not in page.read_text() and "&lt;script&gt;alert(1)" in page.read_text()
