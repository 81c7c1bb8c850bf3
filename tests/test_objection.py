"""`--format objection`: per submitter, an objection as the submission rules ask for one (the
offending lines quoted, the rule each breaks), rendered from the report like every format."""

from __future__ import annotations

import dataclasses
import shutil
import tarfile
from pathlib import Path

import pytest

from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit.formats.objection import render_objection
from mlperf_audit.model import Severity
from mlperf_audit.reading.discovery import discover
from mlperf_audit.reading.evidence import MAX_QUOTE, quotes

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "packages"
TIME_BACKWARDS = FIXTURES / "forged" / "time-backwards"
LOG = "Fixture/results/fx_8xh100/ssd/result_3.txt"


def test_each_finding_cites_its_line_quoted_and_the_rule_it_breaks(cli):
    result = cli("check", str(TIME_BACKWARDS), "--format", "objection", "--no-cache")
    assert result.code == 1, result.err
    text = result.out
    assert text.startswith("## Objection against Fixture\n")
    assert "<code>against Fixture</code>" in text and "submission&#95;rules.adoc" in text
    assert "### 1. FOR001 " in text
    # the finding, where it is, and the record it points at, as the log holds it
    record = (TIME_BACKWARDS / LOG).read_text().splitlines()[27]
    assert '"key": "eval_accuracy"' in record
    assert f"<code>{LOG.replace('_', '&#95;')}:28</code>: <code>" in text
    assert record.replace("_", "&#95;") in text
    # the rule's own documentation, and where it is kept
    assert "> What it checks:" in text and "> Why it matters:" in text
    assert "<code>mlperf-audit explain FOR001</code>" in text
    # infos are no objection
    assert "FOR" in text and "REP001" not in text


def test_one_objection_per_submitter_errors_first(tmp_path):
    root = tmp_path / "round"
    shutil.copytree(TIME_BACKWARDS / "Fixture", root / "Fixture")
    shutil.copytree(TIME_BACKWARDS / "Fixture", root / "Other")
    report = check(root, Config(cache_dir=None), quotes=True)
    text = render_objection(report)
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        "## Objection against Fixture",
        "## Objection against Other",
    ]
    assert text.count("\n---\n") == 1
    # without quotes asked for, the same findings are cited without their records
    plain = render_objection(check(root, Config(cache_dir=None)))
    assert "<code>Fixture/results/fx&#95;8xh100/ssd/result&#95;3.txt:28</code>\n" in plain


def test_waived_and_info_findings_make_no_objection():
    report = check(FIXTURES / "clean", Config(cache_dir=None), quotes=True)
    assert all(f.severity.value == "info" for f in report.findings)
    assert render_objection(report).startswith("No objection: no error in ")
    backwards = check(TIME_BACKWARDS, Config(cache_dir=None), quotes=True)
    waived = dataclasses.replace(
        backwards, findings=tuple(dataclasses.replace(f, waived_by="accepted") for f in backwards.findings)
    )
    assert render_objection(waived).startswith("No objection")


def test_quotes_come_from_archive_members_and_long_lines_are_cut(tmp_path):
    root = tmp_path / "round"
    shutil.copytree(TIME_BACKWARDS / "Fixture", root / "Fixture")
    log = root / LOG
    lines = log.read_text().splitlines(keepends=True)
    lines[27] = lines[27].rstrip("\n") + " " + "x" * 5000 + "\n"  # the record FOR001 cites, long (now LOG005's)
    log.write_text("".join(lines))
    report = check(root, Config(cache_dir=None), quotes=True)
    [quote] = [q for q in report.evidence if q.path == LOG]
    assert quote.line == 28 and len(quote.text) == MAX_QUOTE + 1 and quote.text.endswith("…")
    # the unchanged submission as an archive: the member's line is quoted
    archive = tmp_path / "Fixture.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        out.add(TIME_BACKWARDS / "Fixture", arcname="Fixture")
    archived = check(archive, Config(cache_dir=None), quotes=True)
    cited = [f for f in archived.findings if f.rule == "FOR001"]
    assert cited and all(archived.quote(f.path, f.line) for f in cited), [f.path for f in cited]


def test_a_system_description_is_quoted_unless_it_links_out_of_the_checked_folder(tmp_path):
    root = tmp_path / "round"
    shutil.copytree(TIME_BACKWARDS / "Fixture", root / "Fixture")
    finding = next(f for f in check(root, Config(cache_dir=None)).findings if f.severity.value != "info")
    cited = dataclasses.replace(finding, path="Fixture/systems/fx_8xh100.json", line=2)
    system = root / "Fixture" / "systems" / "fx_8xh100.json"
    [quote] = quotes(discover(root), [cited])
    assert quote.text == system.read_text().splitlines()[1]
    outside = tmp_path / "secret.json"
    outside.write_text(system.read_text().replace('"division"', '"SECRET"'))
    system.unlink()
    system.symlink_to(outside)
    assert quotes(discover(root), [cited]) == ()
    assert all("SECRET" not in q.text for q in check(root, Config(cache_dir=None), quotes=True).evidence)


@pytest.mark.sample
def test_the_real_sample_has_only_warnings_and_no_objection_unless_asked(cli, sample):
    """The published v4.1 sample has no error: seven warnings (Google's FOR006, tinycorp's bert
    folders), guesses, not objections; the text says how many are left out and how to file them."""
    result = cli("check", str(sample), "--format", "objection", "--no-cache")
    assert result.code == 0, result.err
    assert result.out.startswith(f"No objection: no error in <code>{sample}</code>".replace("_", "&#95;"))
    warnings = sum(1 for f in check(sample, Config(cache_dir=None)).findings if f.severity.value == "warning")
    assert warnings == 7
    assert f"{warnings} warning(s) are not filed" in result.out and "<code>--fail-on warning</code>" in result.out
    assert "## Objection" not in result.out


@pytest.mark.sample
def test_the_real_sample_objects_to_google_and_tinycorp_quoting_the_logs(cli, sample):
    """On the published v4.1 sample, warnings filed as asked (`--fail-on warning`): Google's gpt3 logs
    name a TPU v5p in a Trillium system (FOR006); the objection quotes that record from the log itself."""
    result = cli("check", str(sample), "--format", "objection", "--no-cache", "--fail-on", "warning")
    assert result.code == 1, result.err  # the warnings fail the check as asked
    text = result.out
    assert "not filed" not in text
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        "## Objection against Google",
        "## Objection against tinycorp",
    ]
    log = "Google/results/cloud-tpu-trillium-512-maxtext/gpt3/result_0.txt"
    record = (sample / log).read_text().splitlines()[3]
    assert '"key": "submission_platform", "value": "tpu-v5p"' in record
    cited = f"  - <code>{log.replace('_', '&#95;')}:4</code>: <code>{record.replace('_', '&#95;')}</code>"
    assert cited in text.splitlines()
    # an official check's doc lists each round's condition: the objection cites the round checked
    (cmp003,) = [line for line in text.splitlines() if line.startswith("> What it checks: at least one 'eval")]
    assert "training 4.1.0:" in cmp003 and "training 4.0.0:" not in cmp003 and "training 5.1.0:" not in cmp003


def test_an_objection_written_besides_the_text_report_quotes_too(cli, tmp_path):
    out = tmp_path / "objection.md"
    result = cli("check", str(TIME_BACKWARDS), "--report", f"objection:{out}", "--no-cache", "-q")
    assert result.code == 1 and "1 error(s)" in result.out
    assert out.read_text().count("</code>: <code>:::MLLOG ") == 1


def test_an_error_is_filed_and_the_warnings_beside_it_are_counted(tmp_path):
    """Errors only by default: a submitter with an error and a warning is objected to for the error,
    and its warning is counted as not filed; `--fail-on warning` files both; a submitter with only
    a warning gets no objection unless asked."""
    root = tmp_path / "round"
    shutil.copytree(TIME_BACKWARDS / "Fixture", root / "Fixture")
    shutil.copytree(TIME_BACKWARDS / "Fixture", root / "Warned")
    report = check(root, Config(cache_dir=None))
    error = next(f for f in report.findings if f.submitter == "Warned" and f.severity.value == "error")
    warning = dataclasses.replace(error, severity=Severity.WARNING, rule="FOR006", name="platform-not-described")
    # Fixture: its error and a warning; Warned: only a warning
    findings = [f for f in report.findings if f.submitter != "Warned" and f.severity.value != "warning"]
    findings += [dataclasses.replace(warning, submitter="Fixture"), warning]
    mixed = dataclasses.replace(report, findings=tuple(findings))
    text = render_objection(mixed)
    assert [line for line in text.splitlines() if line.startswith("## ")] == ["## Objection against Fixture"]
    assert "1 warning(s) of this submitter are not filed (<code>--fail-on warning</code> files them)" in text
    assert "FOR006" not in text and "- **warning**" not in text
    asked = render_objection(dataclasses.replace(mixed, config=dataclasses.replace(mixed.config, fail_on="warning")))
    assert [line for line in asked.splitlines() if line.startswith("## ")] == [
        "## Objection against Fixture",
        "## Objection against Warned",
    ]
    assert asked.count("- **warning**") == 2 and "not filed" not in asked
    # an info is never filed, whatever --fail-on says
    infos = render_objection(dataclasses.replace(report, config=dataclasses.replace(report.config, fail_on="info")))
    assert "- **info**" not in infos
