"""`export` writes text from the packages into a table a spreadsheet opens: no cell may be a
formula, add a line or hide a character, in CSV or JSON, whatever a system description holds."""

from __future__ import annotations

import csv
import io
import json

from .test_output import formula_cells, package
from .test_output_injection import FORMULAS


def test_a_system_description_cannot_put_a_formula_into_the_export_csv(cli, tmp_path):
    root = package(tmp_path / "p", description={field: value for field, (_, value) in FORMULAS.items()})
    for extra in ((), ("--runs",)):
        result = cli("export", str(root), "--no-progress", *extra)
        assert result.code == 0, result.err
        assert formula_cells(result.out) == []
        (row,) = list(csv.DictReader(io.StringIO(result.out)))[:1]
        for column, value in FORMULAS.values():
            assert row[column] == "'" + value, column  # shown whole, as text
        # the counts the tool computes stay numbers, a negative one included (-1 node x 8)
        assert row["accelerators_count"] == row["accelerators"] == "-8"
        assert row["accelerator_minutes"] == ""  # no accelerator time from a negative count
        assert float(row["score_minutes"]) > 0


def test_a_hostile_name_cannot_add_a_line_or_hide_a_character_in_the_export(cli, tmp_path):
    hostile = "sys\u202etem\r\n=1+1\x1b[31m"
    root = package(tmp_path / "p", description={"system_name": hostile, "submitter": "Fixture\u200b"})
    text = cli("export", str(root), "--no-progress").out
    assert len(text.splitlines()) == 2  # the header and one result: no line added
    (row,) = csv.DictReader(io.StringIO(text))
    assert "\u202e" not in text and "\x1b" not in text and "\u200b" not in text and "\r" not in text
    assert row["system"].startswith("sys\\u202etem") and row["submitter"] == "Fixture\\u200b"
    document = json.loads(cli("export", str(root), "--format", "json", "--no-progress").out)
    assert document["rows"][0]["system"] == row["system"]
    summary = json.loads(cli("export", str(root), "--format", "summary-json", "--no-progress").out)
    assert summary[0]["system"] == row["system"] and summary[0]["submitter"] == "Fixture\\u200b"
