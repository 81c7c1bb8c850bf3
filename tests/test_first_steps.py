"""First steps (issue 26, item 12): `make demo` installs only the project and shows only its own
rules; `make test` installs the test tools and the example plugin, and says before it runs which
tests will skip for want of the real samples."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, REQUIRE_SAMPLE_ENV, SHARED_DATA_ENV


def _make(*args: str, venv: Path, folder: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(folder), *args, f"VENV={venv}"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _installs(plan: str) -> list[str]:
    return [line for line in plan.splitlines() if " -m pip install" in line and "--upgrade pip" not in line]


def test_make_demo_installs_the_project_alone_and_make_test_the_test_tools(tmp_path):
    """The plan of each target in a fresh environment (`make -n`: nothing is installed here)."""
    venv = tmp_path / "fresh"
    demo = _make("-n", "demo", venv=venv)
    test = _make("-n", "test", venv=venv)
    assert demo.returncode == 0 and test.returncode == 0, demo.stderr + test.stderr
    assert [line.split("pip install", 1)[1].split() for line in _installs(demo.stdout)] == [["--quiet", "-e", "."]]
    assert "[test]" not in demo.stdout and "mlperf-audit-example" not in demo.stdout
    (tested,) = _installs(test.stdout)
    assert "'.[test]'" in tested and "plugins/mlperf-audit-example" in tested


@pytest.mark.third_party_plugins
def test_make_demo_shows_no_rule_of_the_example_plugin(tmp_path):
    """`make demo` in this environment, which holds the example plugin (`make test` set it up), on
    the demo package with a result file the plugin's EXA001 reports (mostly shell noise): the
    demo's report is the tool's own. Its stamps are taken as made: nothing is installed."""
    copy = tmp_path / "checkout"
    shutil.copytree(REPO / "fixtures" / "packages" / "demo", copy / "fixtures" / "packages" / "demo")
    shutil.copy2(REPO / "Makefile", copy / "Makefile")
    result_file = sorted((copy / "fixtures" / "packages" / "demo").glob("*/results/*/*/result_0.txt"))[0]
    lines = result_file.read_text().splitlines()
    result_file.write_text("\n".join(lines + ["+ echo noise"] * (3 * len(lines))) + "\n")
    venv = Path(sys.prefix)
    stamps = [arg for name in (".installed", ".installed-project") for arg in ("-o", str(venv / name))]
    noisy = subprocess.run(
        [str(venv / "bin" / "mlperf-audit"), "check", str(result_file), "--no-cache", "-v"],
        capture_output=True,
        text=True,
    )
    # the plugin is here, and this file makes it speak (an info: shown with -v)
    assert "EXA001" in noisy.stdout, noisy.stdout
    result = _make(*stamps, "demo", venv=venv, folder=copy)
    assert result.returncode == 0, result.stdout + result.stderr
    rules = set(re.findall(r"\b([A-Z]{3,4}[0-9]{3,4})\b", result.stdout))
    assert rules and not any(code.startswith("EXA") for code in rules), result.stdout
    # infos are hidden by default, and counted: the demo's count holds no EXA001 of that file
    with_plugin = subprocess.run(
        [str(venv / "bin" / "mlperf-audit"), "check", str(copy / "fixtures" / "packages" / "demo"), "--no-cache"],
        capture_output=True,
        text=True,
    )
    infos = [int(re.findall(r"(\d+) info", text)[-1]) for text in (with_plugin.stdout, result.stdout)]
    assert infos[0] > infos[1], (with_plugin.stdout, result.stdout)


def _pytest(data: Path, *args: str, require: bool = False) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if name != REQUIRE_SAMPLE_ENV}
    environment[SHARED_DATA_ENV] = str(data)
    if require:
        environment[REQUIRE_SAMPLE_ENV] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_test_run_says_first_which_tests_skip_for_want_of_the_samples(tmp_path):
    """Without the samples, the header names what is missing, and the count it gives before any
    test runs is the number of tests that then skip for it."""
    empty = tmp_path / "no-data"
    empty.mkdir()
    files = ["tests/test_sample.py", "tests/test_energy.py", f"--basetemp={tmp_path / 'run'}"]
    result = _pytest(empty, "-rs", *files)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    head = out.split("tests/test_sample.py", 1)[0]  # what is printed before the first test
    assert f"real data missing: the v4.1 sample ({empty / 'mlperf-training-v4.1-sample'})" in head, head
    announced = re.search(r"(\d+) of (\d+) selected test\(s\) will be skipped", head)
    assert announced, head
    skipped = sum(int(n) for n in re.findall(r"SKIPPED \[(\d+)\] .*is not present at " + re.escape(str(empty)), out))
    ran = re.search(r"(\d+) passed, (\d+) skipped", out)
    assert ran and int(announced.group(1)) == skipped == int(ran.group(2)) > 0, out
    assert int(announced.group(2)) == int(ran.group(1)) + int(ran.group(2))
    assert "need the v4.1 sample" in head and "need the v5.0 power sample" in head


def test_the_header_says_missing_samples_fail_where_they_are_required(tmp_path):
    empty = tmp_path / "no-data"
    empty.mkdir()
    result = _pytest(empty, "--collect-only", "-q", "tests/test_sample.py", require=True)
    assert re.search(r"\d+ of \d+ selected test\(s\) will FAIL \(MLPERF_AUDIT_REQUIRE_SAMPLE is set\)", result.stdout)


def test_the_header_is_one_line_when_the_samples_are_here(tmp_path):
    result = _pytest(
        Path(os.environ.get(SHARED_DATA_ENV) or REPO.parent / "shared" / "data"),
        "--collect-only",
        "tests/test_sample.py",
    )
    if "real data missing" in result.stdout:
        pytest.skip("the samples are not here: the tests above cover that case")
    assert re.search(
        r"^real data: v4\.1 sample, v4\.1 implementations, v5\.0 power sample found in ", result.stdout, re.M
    )
    assert "selected test(s) will" not in result.stdout
