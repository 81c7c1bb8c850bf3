"""SARIF, JUnit, GitHub workflow commands and Markdown: one findings model, several formats."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from mlperf_audit.formats.ci import MARKDOWN_LIMIT, render_github

SARIF_SCHEMA = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "schemas" / "sarif-schema-2.1.0.json"
)


def sarif_schema() -> dict:
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"the SARIF schema is not at {SARIF_SCHEMA}")
    return json.loads(SARIF_SCHEMA.read_text())


@pytest.mark.sample
def test_sarif_of_the_real_sample_validates(cli, sample):
    result = cli("check", str(sample), "--format", "sarif")
    document = json.loads(result.out)
    jsonschema.Draft4Validator(sarif_schema()).validate(document)
    (run,) = document["runs"]
    assert run["tool"]["driver"]["name"] == "mlperf-audit"
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for sarif_result in run["results"]:
        assert ids[sarif_result["ruleIndex"]] == sarif_result["ruleId"]
        uri = sarif_result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "\\" not in uri
        assert len(sarif_result["partialFingerprints"]["mlperfAudit/v1"]) == 32
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["FOR004"] == "warning" and levels["REP001"] == "note"


def test_sarif_of_fixtures_validates(cli, fixtures):
    for target in ("demo", "broken/invalid-system-json", "forged/compressed-timestamps"):
        document = json.loads(cli("check", str(fixtures / target), "--format", "sarif").out)
        jsonschema.Draft4Validator(sarif_schema()).validate(document)
        rules = document["runs"][0]["tool"]["driver"]["rules"]
        assert all(rule["shortDescription"]["text"] and rule["fullDescription"]["text"] for rule in rules)


def test_junit_has_a_case_per_run_and_fails_the_broken_folder(cli, fixtures):
    result = cli("check", str(fixtures / "demo"), "--format", "junit")
    root = ElementTree.fromstring(result.out)
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    ssd = suites["Fixture/results/fx_8xh100/ssd"]
    assert ssd.get("tests") == "6"  # the folder and its 5 runs
    failed = {case.get("name") for case in ssd.iter("testcase") if case.find("failure") is not None}
    assert failed == {"(folder)", "result_2.txt", "result_3.txt"}
    llama = suites["Fixture/results/fx_8xh100/llama2_70b_lora"]
    assert llama.get("failures") == "0"  # one tolerated failure: warnings only
    assert int(root.get("tests")) == 18


def test_github_commands_are_escaped(cli, fixtures, monkeypatch):
    import dataclasses

    from mlperf_audit.config import Config
    from mlperf_audit.engine.api import check

    report = check(fixtures / "broken" / "malformed-json", Config(select=("LOG005",)))
    finding = dataclasses.replace(report.findings[0], message="50% done,\nnext: line", path="a,b:c/result_0.txt")
    text = render_github(dataclasses.replace(report, findings=(finding,)))
    first = text.splitlines()[0]
    assert first.startswith("::warning file=") or first.startswith("::error file=")
    assert "a%2Cb%3Ac/result_0.txt" in first and ",line=" in first
    # a finding's own newline is shown (the Report makes it visible); only the tool's Hint line is a %0A
    assert first.split("::", 2)[2].startswith("50%25 done,\\x0anext: line%0AHint: ")
    assert "title=LOG005 malformed-json" in first


def test_markdown_summary_status_first_and_bounded(cli, fixtures):
    text = cli("check", str(fixtures / "demo"), "--format", "markdown").out
    assert text.startswith("### ❌ mlperf-audit failed")
    assert "<details open><summary><b>Fixture</b>" in text and "| severity " in text
    assert len(text.encode()) < MARKDOWN_LIMIT


def test_report_writes_several_formats(cli, fixtures, tmp_path):
    sarif, summary = tmp_path / "out.sarif", tmp_path / "summary.md"
    result = cli(
        "check",
        str(fixtures / "demo"),
        "--format",
        "github",
        "--report",
        f"sarif:{sarif}",
        "--report",
        f"markdown:{summary}",
    )
    assert result.code == 1 and result.out.startswith("::")
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert summary.read_text().startswith("### ")
    refused = cli("check", str(fixtures / "demo"), "--report", "yaml:x.yaml")
    assert refused.code == 2 and "expected FORMAT:FILE" in refused.err


def test_a_plugin_format_renders_any_kind_and_its_command_offers_it(fixtures, capsys):
    """A format declares the documents it renders: one that renders scores is a choice of `score
    --format` (and of no other command), fed the same document the built-in ones are."""
    from mlperf_audit import hookimpl
    from mlperf_audit.cli import build_parser
    from mlperf_audit.engine.plugins import PluginHost
    from mlperf_audit.formats import Format, formats_of
    from mlperf_audit.formats.documents import SCORES, ScoresDocument

    def minutes(document: ScoresDocument) -> str:
        return "".join(f"{s.benchmark} {s.score_minutes:.3f}\n" for s in document.results)

    class Minutes:
        @hookimpl
        def mlperf_audit_register_formats(self) -> list[Format]:
            return [Format("minutes", "one line per benchmark folder", documents={SCORES: minutes})]

    host = PluginHost(plugins=[("minutes", Minutes())])
    assert "minutes" in formats_of(host.formats, SCORES) and "minutes" not in formats_of(host.formats, "check")
    parser = build_parser(host)
    for name in ("minutes", "json"):
        args = parser.parse_args(["score", str(fixtures / "clean"), "--format", name, "--no-cache"])
        assert args.handler(args, host) == 0
        if name == "minutes":
            shown = capsys.readouterr().out
    scored = json.loads(capsys.readouterr().out)["results"]
    assert shown == "".join(f"{s['benchmark']} {s['score_minutes']:.3f}\n" for s in scored) and len(scored) >= 4
    with pytest.raises(SystemExit):  # compare renders no scores document: not its choice
        build_parser(host).parse_args(["compare", "a", "b", "--format", "minutes"])
