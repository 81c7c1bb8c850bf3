"""Waivers (accepted findings stay visible) and baselines (a PR shows only new findings)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

WAIVERS = """
[[waiver]]
rule = "EVT003"
path = "Fixture/results/fx_8xh100/ssd/result_*.txt"
reason = "the two runs were cut by a power outage; the review accepted them"

[[waiver]]
rule = "PKG019"
path = "Fixture/results/fx_8xh100/ssd"
reason = "accepted by the review"

[[waiver]]
rule = "too-many-failed-runs"
path = "Nowhere/*"
reason = "matches nothing"

[[waiver]]
rule = "SEED"
path = "*"
reason = "an old acceptance"
expires = 2024-01-01
"""


def findings(result) -> list[dict]:
    return json.loads(result.out)["findings"]


def test_waived_findings_stay_visible_and_stop_failing(cli, fixtures, tmp_path):
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(WAIVERS)
    target = str(fixtures / "broken" / "two-runs-without-run-stop")
    before = cli("check", target, "--format", "json", "--select", "PKG019,CHK,EVT")
    assert before.code == 1
    after = cli("check", target, "--format", "json", "--select", "PKG019,CHK,EVT", "--waivers", str(waivers))
    assert after.code == 0
    by_rule = {f["rule"]: f for f in findings(after)}
    assert by_rule["PKG019"]["waived_by"] == "accepted by the review"
    assert "matches no finding" in by_rule["CHK002"]["message"] and "waivers.toml:3" in by_rule["CHK002"]["message"]
    assert "expired on 2024-01-01" in by_rule["CHK003"]["message"]
    assert json.loads(after.out)["summary"]["waived"] == 3  # two runs and the folder
    text = cli("check", target, "--select", "PKG019,EVT003", "--waivers", str(waivers)).out
    assert "error (waived)" in text and "waived: accepted by the review" in text
    sarif = json.loads(
        cli("check", target, "--select", "PKG019,EVT003", "--waivers", str(waivers), "--format", "sarif").out
    )
    waived = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "PKG019"]
    assert waived[0]["suppressions"][0]["justification"] == "accepted by the review"


@pytest.mark.parametrize(
    "content, message",
    [
        ("[[waiver]]\nrule = 'PKG019'\n", "needs a reason"),
        ("[[waiver]]\nreason = 'x'\n", "needs a rule"),
        ("[[waiver]]\nrule = 'X'\nreason = 'y'\nexpires = 'soon'\n", "expires must be a date"),
        ("[[waiver]]\nrule = 'X'\nreason = 'y'\nowner = 'me'\n", "unknown field(s) owner"),
    ],
)
def test_invalid_waivers_exit_2(cli, fixtures, tmp_path, content, message):
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(content)
    result = cli("check", str(fixtures / "demo"), "--waivers", str(waivers))
    assert result.code == 2 and message in result.err


def test_waivers_inside_the_package_are_refused(cli, fixtures, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "demo", tree)
    (tree / "waivers.toml").write_text(WAIVERS)
    result = cli("check", str(tree), "--waivers", str(tree / "waivers.toml"))
    assert result.code == 2 and "may not waive its own findings" in result.err


def test_baseline_shows_only_new_findings(cli, fixtures, tmp_path):
    baseline = tmp_path / "baseline.json"
    tree = tmp_path / "tree"
    shutil.copytree(fixtures / "broken" / "missing-run-stop", tree)
    assert cli("check", str(tree), "--write-baseline", str(baseline)).code == 0
    document = json.loads(baseline.read_text())
    assert document["schema_version"] == 1 and document["fingerprints"]
    same = cli("check", str(tree), "--baseline", str(baseline), "--format", "json")
    assert [f["rule"] for f in findings(same)] == ["CHK004"]
    # a new problem in another run, and the known one moved by a line: only the new one is reported
    run = tree / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_2.txt"
    run.write_text("+ shell output\n" + run.read_text())
    other = tree / "Fixture" / "results" / "fx_8xh100" / "ssd" / "result_4.txt"
    other.write_text(
        re.sub(
            r'"key": "eval_accuracy", "value": [0-9.]+',
            '"key": "eval_accuracy", "value": NaN',
            other.read_text(),
            count=1,
        )
    )
    new = cli("check", str(tree), "--baseline", str(baseline), "--format", "json")
    assert sorted(f["rule"] for f in findings(new)) == ["CHK004", "LOG009"]


def test_bad_baseline_exits_2(cli, fixtures, tmp_path):
    bad = tmp_path / "baseline.json"
    bad.write_text("{}")
    assert cli("check", str(fixtures / "demo"), "--baseline", str(bad)).code == 2
