"""Output injected into the reader's tool (issue 25, item 7): a formula into a spreadsheet, a live
link into code scanning or a job summary, an invisible character into a name, and names that print
alike. Each test is the attack as it worked on the main of the time."""

from __future__ import annotations

import csv
import html
import json
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from .test_output import FIXTURE, UNESCAPED_BRACKET, formula_cells, live_links, package, sarif_messages

SARIF_SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "reference" / "schemas" / "sarif-schema-2.1.0.json"

# ---------------------------------------------------------------- 1. formulas in CSV cells

#: System description fields, each with the CSV column that shows it.
FORMULAS = {
    "submitter": ("submitter", '=HYPERLINK("https://evil.example/x","Fixture")'),
    "system_name": ("system", "+SUM(1,1)"),
    "host_processor_model_name": ("host_processor_model_name", "@SUM(A1)"),
    "framework": ("framework", "-2+3"),
    "hw_notes": ("notes", "\uff1d1+1"),
    "status": ("availability", "=1"),
    "number_of_nodes": ("number_of_nodes", "-1"),  # text that looks like a number is still the package's text
}


def test_a_system_description_cannot_put_a_formula_into_the_score_csv(cli, tmp_path):
    root = package(tmp_path / "p", description={field: value for field, (_, value) in FORMULAS.items()})
    out = tmp_path / "scores.csv"
    result = cli("score", str(root), "--format", "csv", "-o", str(out))
    assert result.code == 0, result.err
    for file in (out, tmp_path / "scores_detailed.csv"):
        text = file.read_text(encoding="utf-8")
        assert formula_cells(text) == [], file.name
        (row,) = csv.DictReader(text.splitlines())
        for column, value in FORMULAS.values():
            assert row[column] == "'" + value, column  # shown whole, as text
        # numbers the tool computes from them stay numbers, a negative one included (-1 node x 8)
        assert row["accelerators_count"] == "-8" and row["host_processors_count"] == "-2"
        assert float(row["gnn"] if "gnn" in row else row["gnn:time_to_train"]) > 0
    assert formula_cells(cli("score", str(root), "--format", "csv").out) == []


# ---------------------------------------------------------------- 2. links in SARIF messages


def test_a_log_value_cannot_put_a_live_link_into_a_sarif_message(cli, tmp_path):
    link = "[see the review decision](https://evil.example/approved)"
    root = package(tmp_path / "p", division=link, extra="[x]")
    sarif = tmp_path / "out.sarif"
    result = cli("check", str(root), "--report", f"sarif:{sarif}")
    assert result.code in (0, 1), result.err
    document = json.loads(sarif.read_text(encoding="utf-8"))
    messages = sarif_messages(document)
    assert any("\\[see the review decision\\](https://evil.example/approved)" in m for m in messages)
    assert [m for m in messages if UNESCAPED_BRACKET.search(m)] == []


def test_sarif_escapes_stay_valid_and_escape_a_bracket_behind_backslashes(cli, tmp_path):
    """A backslash in front of a bracket cannot cancel its escape, and the document stays valid
    SARIF 2.1.0."""
    root = package(tmp_path / "p", division="\\](https://evil.example) \\\\[a]")
    sarif = tmp_path / "out.sarif"
    assert cli("check", str(root), "--report", f"sarif:{sarif}").code in (0, 1)
    document = json.loads(sarif.read_text(encoding="utf-8"))
    assert [m for m in sarif_messages(document) if UNESCAPED_BRACKET.search(m)] == []
    if not SARIF_SCHEMA.is_file():
        pytest.skip("the SARIF schema of ../shared/reference is not here")
    jsonschema.validate(document, json.loads(SARIF_SCHEMA.read_text()))


# ---------------------------------------------------------------- 3. links in Markdown

LINKS = " see https://evil.example/approved, www.evil.example or mail admin@evil.example "


def test_data_cannot_put_a_live_link_into_the_markdown_summary(cli, tmp_path):
    root = package(
        tmp_path / "p",
        system="www.evil.example",
        division=LINKS,
        extra="ops@evil.example",
        description={"accelerator_model_name": "ftp://evil.example"},
    )
    for argv in (("check", str(root), "--format", "markdown"), ("check", str(root), "--score", "--format", "markdown")):
        text = cli(*argv).out
        assert live_links(text) == [], argv
        assert "https&#91;:&#93;//evil.example/approved" in text  # still readable
        assert "www&#91;.&#93;evil.example" in text and "admin&#91;@&#93;evil.example" in text


def test_data_cannot_put_a_live_link_into_a_recipe(cli, tmp_path):
    root = package(tmp_path / "p", system="www.evil.example", division=LINKS)
    folder = next(root.rglob("results/*/gnn"))
    text = cli("reproduce", str(folder), "--format", "markdown").out
    assert "evil.example" in text and live_links(text) == []


def test_a_stray_folder_name_cannot_put_a_link_into_the_job_summary(pr):
    """Run by the installed Action, as `action.yml` runs it (tests/security/conftest.py)."""
    pr.base()
    stray = pr.submissions / "[approved](evil.example)"
    stray.mkdir()
    (stray / "README").write_text("x\n")
    result, _, summary = pr.run()
    assert result.returncode == 1, result.stderr
    assert "approved" in summary and live_links(summary) == []


# ---------------------------------------------------------------- 4. default-ignorable characters

#: One of each range the brief listed, and the ends of the property's larger ranges.
IGNORABLES = [
    "\u034f",
    "\ufe00",
    "\ufe0f",
    "\u180b",
    "\u180f",
    "\u17b4",
    "\u17b5",
    "\U0001d173",
    "\U0001d17a",
    "\U000e0100",
    "\U000e01ef",
    "\U0001bca0",
    "\U0001bca3",
    "\ufff0",
    "\U000e0fff",
]


def test_every_default_ignorable_code_point_is_shown_as_an_escape():
    """The property as Unicode defines it, from the data file the tool ships: every code point,
    not a hand-picked list."""
    from mlperf_audit.safety import visible

    table = (Path(__import__("mlperf_audit").__file__).parent / "data" / "default_ignorable.txt").read_text()
    points = []
    for line in table.splitlines():
        field = line.partition("#")[0].partition(";")[0].strip()
        if field:
            first, _, last = field.partition("..")
            points += range(int(first, 16), int(last or first, 16) + 1)
    assert len(points) == 4174  # Unicode 17.0's Default_Ignorable_Code_Point
    assert {ord(c) for c in IGNORABLES} <= set(points)
    shown = [chr(point) for point in points if visible(chr(point)) == chr(point)]
    assert shown == []


def test_an_invisible_character_in_a_name_is_shown_in_every_format(cli, host, tmp_path):
    root = package(tmp_path / "p", system="tinycorp" + "".join(IGNORABLES), extra="\u034f")
    from mlperf_audit.formats import formats_of

    for name in sorted(formats_of(host.formats, "check")):
        # --fail-on warning: the objection files the package's warnings too (it has no error)
        text = cli("check", str(root), "--format", name, "--no-cache", "--fail-on", "warning").out
        raw = [c for c in IGNORABLES if c in text]
        assert raw == [], name
        decoded = json.loads(text) if name in ("json", "sarif") else None
        assert decoded is None or not any(c in json.dumps(decoded, ensure_ascii=False) for c in IGNORABLES)
        assert "tinycorp\\u034f" in html.unescape(text).replace("\\\\", "\\"), name  # shown, visibly
    assert "\u034f" not in cli("score", str(root)).out + cli("score", str(root), "--format", "csv").out


# ---------------------------------------------------------------- 5. names that print alike

CYRILLIC_IE = "\u0435"  # looks like e


def _rename_system(root: Path, old: str, new: str) -> None:
    (root / "Fixture" / "results" / old).rename(root / "Fixture" / "results" / new)
    (root / "Fixture" / "systems" / f"{old}.json").rename(root / "Fixture" / "systems" / f"{new}.json")


def findings(cli: Any, root: Path, *extra: str) -> list[dict[str, Any]]:
    result = cli("check", str(root), "--format", "json", "--no-cache", "--select", "PKG030", *extra)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)["findings"]


def test_two_systems_that_differ_by_a_confusable_letter_are_an_error(cli, tmp_path):
    root = tmp_path / "p"
    shutil.copytree(FIXTURE, root)
    _rename_system(root, "fx_8xh100", "tinybox_red")
    shutil.copytree(
        root / "Fixture" / "results" / "tinybox_red", root / "Fixture" / "results" / f"tinybox_r{CYRILLIC_IE}d"
    )
    shutil.copy(
        root / "Fixture" / "systems" / "tinybox_red.json",
        root / "Fixture" / "systems" / f"tinybox_r{CYRILLIC_IE}d.json",
    )
    (found,) = findings(cli, root)
    assert found["severity"] == "error" and found["path"] == f"Fixture/results/tinybox_r{CYRILLIC_IE}d"
    assert "U+0435 CYRILLIC SMALL LETTER IE" in found["message"]


def test_two_submitters_that_differ_only_by_normalisation_are_an_error(cli, tmp_path):
    root = tmp_path / "repo"
    for form in ("NFC", "NFD"):
        shutil.copytree(FIXTURE / "Fixture", root / unicodedata.normalize(form, "Ünicorn"))
    (found,) = findings(cli, root)
    assert found["severity"] == "error" and "normalisation" in found["message"]
    assert "U+0308 COMBINING DIAERESIS" in found["message"] and "U+00DC" in found["message"]


def test_a_benchmark_folder_confusable_with_a_benchmark_is_an_error(cli, tmp_path):
    root = tmp_path / "p"
    shutil.copytree(FIXTURE, root)
    benchmark = root / "Fixture" / "results" / "fx_8xh100" / "gnn"
    benchmark.rename(benchmark.with_name("gn\u0578"))  # an Armenian vo, which looks like n
    (found,) = findings(cli, root)
    assert found["severity"] == "error" and "looks like the benchmark 'gnn'" in found["message"]


def test_a_name_that_mixes_scripts_is_a_warning(cli, tmp_path):
    root = tmp_path / "p"
    shutil.copytree(FIXTURE, root)
    _rename_system(root, "fx_8xh100", f"tinybox_r{CYRILLIC_IE}d")
    (found,) = findings(cli, root)
    assert found["severity"] == "warning" and "mixes scripts" in found["message"]
    assert "looks like 'e'" in found["message"]


def test_honest_names_in_other_scripts_and_with_accents_are_not_reported(cli, tmp_path):
    root = tmp_path / "repo"
    for name in ("Ünicorn", "Éclair", "Сбер", "華為"):
        shutil.copytree(FIXTURE / "Fixture", root / name)
    assert findings(cli, root) == []


# ---------------------------------------------------------------- 6. records quoted into an objection


def test_a_quoted_record_cannot_close_its_code_or_link_in_an_objection(cli, tmp_path):
    """`--format objection` quotes the log line a finding points at: whatever the line holds is shown
    as written, never markup, a link or a command."""
    hostile = "</code><script>x</script> [ok](https://evil.example) ``` ::error::x ##[add-mask]y"
    root = package(tmp_path / "p", division=hostile)
    result = cli("check", str(root), "--format", "objection", "--no-cache")
    assert result.code in (0, 1), result.err
    text = result.out
    quoted = [line for line in text.splitlines() if "<code>" in line and "evil" in line]
    assert quoted, text  # the record is quoted
    assert live_links(text) == [] and "<script" not in text and "##[" not in text
    assert all(not line.lstrip().startswith("::") for line in text.splitlines())
    assert "&#60;/code&#62;&#60;script&#62;" in quoted[0]  # shown, as written
