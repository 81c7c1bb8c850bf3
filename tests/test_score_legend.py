"""`score`'s text table explains its columns (issue 26, item 13: "RCP factor" and "scaling" were
not explained): a legend under the table, and the same in `score --help`."""

from __future__ import annotations

import re
import subprocess
import sys


def _score(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", "score", *args], capture_output=True, text=True, timeout=300
    )


def _legend(text: str) -> dict[str, str]:
    """Legend entries: a line `name: meaning` at the margin (or indented, in --help), continued by
    lines indented four more."""
    entries: dict[str, str] = {}
    for match in re.finditer(r"^( *)([A-Za-z][A-Za-z ()]*): (.+(?:\n\1    .+)*)", text, re.M):
        entries[match.group(2)] = " ".join(part.strip() for part in match.group(3).splitlines())
    return entries


def test_every_numeric_column_of_the_table_is_explained_under_it(fixtures):
    result = _score(str(fixtures / "clean"), "--no-cache")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line) <= {"-", " "} and line)
    headers = [h for h in re.split(r" {2,}", lines[rule - 1].strip()) if h]
    body_end = lines.index("", rule)
    legend = _legend("\n".join(lines[body_end + 1 :]))
    explained = {"runs", "RCP factor", "scaling", "score (min)", "spread"}
    assert explained <= set(headers), headers
    assert explained <= legend.keys(), legend
    assert "RCP" in legend["RCP factor"] and "at least 1" in legend["RCP factor"]
    assert "scaling.json" in legend["scaling"] and "RCP factor" in legend["scaling"]
    assert "x scaling" in legend["score (min)"]


def test_the_help_explains_the_same_columns():
    result = _score("--help")
    assert result.returncode == 0
    after = result.stdout.split("columns of the text table:", 1)
    assert len(after) == 2, result.stdout
    legend = _legend(after[1])
    assert {"runs", "RCP factor", "scaling", "score (min)", "spread"} <= legend.keys(), legend
