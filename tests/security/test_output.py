"""Output that cannot be forged (issue 13, attack 4) and `audit`/`report` writing only where asked
(attack 5): each test is an attack on current main, then fuzzing of names and values through
every output format and every command that writes a file."""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import html
import io
import json
import math
import os
import re
import shutil
import tarfile
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlperf_audit.cli import build_parser, main
from mlperf_audit.engine.plugins import PluginHost
from mlperf_audit.formats import formats_of

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "clean"
FORGED = "\n::error file=x::forged"
TITLE, CLEAR = "\x1b]0;title\x07", "\x1b[2J"

#: Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties-17.0.0.txt), written out
#: here rather than read from the tool's own data, so that the tests hold the tool to Unicode.
DEFAULT_IGNORABLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
#: What no output may hold as it is: controls other than newline and tab, line and paragraph
#: separators, every default-ignorable code point (invisible, bidirectional and formatting
#: characters, variation selectors, the byte-order mark, tags), and lone surrogates.
HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{DEFAULT_IGNORABLE}]")
COMMAND = ("::", "##[")


# ---------------------------------------------------------------- packages that carry the attack


def package(
    root: Path,
    *,
    system: str = "fx_8xh100",
    extra: str | None = None,
    division: str | None = None,
    key: str | None = None,
    description: dict[str, Any] | None = None,
) -> Path:
    """A one-benchmark copy of the clean fixture: the system folder (and its description's file)
    named `system`, an `extra` file in the benchmark folder, one log's division value and one of its
    keys replaced, and fields of the system description overwritten."""
    submitter = root / "Fixture"
    folder = submitter / "results" / system / "gnn"
    shutil.copytree(FIXTURE / "Fixture" / "results" / "fx_8xh100" / "gnn", folder)
    (submitter / "systems").mkdir()
    data = json.loads((FIXTURE / "Fixture" / "systems" / "fx_8xh100.json").read_text())
    data.update(description or {})
    (submitter / "systems" / f"{system}.json").write_text(json.dumps(data))  # ASCII: \u escapes for anything else
    log = folder / "result_1.txt"
    text = log.read_text()
    if division is not None:
        text = text.replace('"value": "closed"', f'"value": {json.dumps("closed" + division)}')
    if key is not None:
        text = text.replace('"key": "cache_clear"', f'"key": {json.dumps("cache" + key)}')
    log.write_text(text)
    if extra is not None:
        (folder / f"extra{extra}.txt").write_text("x")
    return root


# ---------------------------------------------------------------- what every output must satisfy


def assert_plain(text: str, what: str, *, commands: bool = False) -> None:
    """No hidden character, valid UTF-8, and (unless the output is workflow commands) no line that
    a CI runner would read as a command once it trimmed leading blanks."""
    hidden = HIDDEN.search(text)
    assert hidden is None, f"{what}: {hidden.group()!r} in {text[max(0, hidden.start() - 60) : hidden.end() + 20]!r}"
    text.encode("utf-8")
    # the runner's legacy parser finds `##[` anywhere in a line, whatever the format
    assert "##[" not in text, f"{what}: {text[max(0, text.find('##[') - 60) : text.find('##[') + 20]!r}"
    if not commands:
        for line in text.splitlines():
            assert not line.lstrip().startswith(COMMAND), f"{what}: {line!r}"


def assert_json(raw: bytes | str, what: str) -> Any:
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    assert_plain(text, what)
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"{what}: {name} is not JSON"))

    def strings(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                strings(key)
                strings(value)
        elif isinstance(node, list):
            for item in node:
                strings(item)
        elif isinstance(node, str):
            hidden = HIDDEN.search(node)  # a \u001b or \ud800 escape decodes to what the raw text lacks
            assert hidden is None, f"{what}: {node!r}"

    strings(document)
    return document


#: What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection"), full-width forms included.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _finite_number(cell: str) -> bool:
    try:
        return math.isfinite(float(cell)) and cell.strip() == cell
    except ValueError:
        return False


def formula_cells(text: str) -> list[str]:
    """The cells of every CSV table in `text` (tables a blank line apart) that a spreadsheet would
    read as a formula: any that starts like one and is not a plain number."""
    cells = [cell for table in text.split("\n\n") for row in csv.reader(table.splitlines()) for cell in row]
    return [cell for cell in cells if cell.startswith(FORMULA_START) and not _finite_number(cell)]


#: What GitHub Flavored Markdown's autolink extension makes a link of, searched in the text as
#: written and as a renderer sees it (character references decoded): a URL with a scheme, `www.`,
#: an e-mail address.
AUTOLINK = re.compile(r"(?i)(?:https?|ftp)://|\bwww\.|[\w.+-]@[\w-]+\.\w")
#: A Markdown link or image (`[text](target)`, `[text][ref]`) or an autolink (`<scheme:...>`).
MARKDOWN_LINK = re.compile(r"\]\(|\]\[|<[A-Za-z][\w+.-]*:")


def live_links(markdown: str) -> list[str]:
    found = [m.group() for text in (markdown, html.unescape(markdown)) for m in AUTOLINK.finditer(text)]
    return found + [m.group() for m in MARKDOWN_LINK.finditer(markdown)]


#: A square bracket that a SARIF viewer reads as part of an embedded link (SARIF 2.1.0 §3.11.6):
#: one behind an even number of backslashes, none included.
UNESCAPED_BRACKET = re.compile(r"(?<!\\)(?:\\\\)*[\[\]]")


def sarif_messages(document: Any) -> list[str]:
    """Every plain-text message string of a SARIF document (the `text` of each message object)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(document)
    return found


def assert_sarif(text: str, what: str) -> None:
    live = [m for m in sarif_messages(assert_json(text, what)) if UNESCAPED_BRACKET.search(m)]
    assert live == [], f"{what}: {live[:3]}"


def assert_xml(text: str, what: str) -> None:
    assert_plain(text, what)
    ElementTree.fromstring(text.encode("utf-8"))


def assert_csv(text: str, what: str) -> None:
    """Every table (standard output holds two, a blank line apart) as wide in each row as its header."""
    assert_plain(text, what)
    for table in text.split("\n\n"):
        rows = list(csv.reader(io.StringIO(table)))
        assert rows and all(len(row) == len(rows[0]) for row in rows), what
    assert formula_cells(text) == [], f"{what}: {formula_cells(text)[:3]}"


_GITHUB_LINE = re.compile(r"::(error|warning|notice) ((file=[^,:]*,(line=\d+,)?)?title=[^,:]*)::[^\r\n]*")


def assert_github(text: str, what: str, annotations: int) -> None:
    """One command per finding, whose properties the data cannot end or extend, then the summary."""
    assert_plain(text, what, commands=True)
    lines = text.splitlines()
    assert len(lines) == annotations + 1 and lines[-1].startswith("mlperf-audit: "), what
    for line in lines[:-1]:
        assert _GITHUB_LINE.fullmatch(line), f"{what}: {line!r}"


#: The tags the tool writes in the Markdown summary; data may add none.
MARKDOWN_TAGS = {"details", "summary", "b", "code"}


def assert_markdown(text: str, what: str, *, tables: bool = True) -> None:
    assert_plain(text, what)
    assert live_links(text) == [], f"{what}: {live_links(text)[:3]}"
    tags = re.findall(r"</?([A-Za-z][\w-]*)", text)
    assert set(tags) <= MARKDOWN_TAGS, f"{what}: {sorted(set(tags) - MARKDOWN_TAGS)}"
    assert text.count("<details") == text.count("</details>"), what
    if tables:  # a report of `check`: one status heading, then tables of four columns
        assert sum(1 for line in text.splitlines() if line.startswith("#")) == 1, what
        widths = {line.count("|") for line in text.splitlines() if line.startswith("|")}
        assert widths <= {5}, f"{what}: a data pipe split a table cell"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


HTML_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "h3",
    "p",
    "span",
    "b",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "div",
    "svg",
    "rect",
    "text",
    "line",
    "polyline",
    "circle",
    "label",
    "select",
    "option",
    "input",
    "script",
    # the report's static frame (no value of a package in it: they are all in its JSON block)
    "a",
    "nav",
    "main",
    "section",
    "details",
    "summary",
    "pre",
    "noscript",
}


def assert_html(text: str, what: str) -> None:
    assert_plain(text, what)
    parser = _Tags()
    parser.feed(text)
    names = [tag for tag, _ in parser.tags]
    assert set(names) <= HTML_TAGS, f"{what}: {sorted(set(names) - HTML_TAGS)}"
    # the report's data block, then d3, Plot and its own script, each allowed by its hash in the policy
    scripts = [attributes for tag, attributes in parser.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "report-data"}, {}, {}, {}], what
    for tag, attributes in parser.tags:
        for name, value in attributes.items():
            if tag == "a" and name == "href" and value is not None and value.startswith("#"):
                continue  # the frame's links within the page
            assert not name.startswith("on") and name not in ("href", "src", "xlink:href", "action"), (what, tag, name)
    assert 'http-equiv="Content-Security-Policy"' in text and "default-src 'none'" in text, what


def run(*argv: str) -> tuple[int, str, str]:
    """The command line in-process; outside pytest's capture, so that hypothesis may call it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def annotations(report_json: Any) -> int:
    return sum(1 for finding in report_json["findings"] if not finding["waived_by"])


# ---------------------------------------------------------------- the attacks, one by one


def test_a_file_name_cannot_forge_a_workflow_command_in_the_text_output(cli, tmp_path):
    root = package(tmp_path / "p", extra=FORGED)
    result = cli("check", str(root))
    assert result.code in (0, 1)
    assert_plain(result.out, "check text")
    assert "extra\\x0a::error file=x::forged.txt" in result.out  # still shown, visibly


def test_a_wrapped_message_cannot_start_a_command(cli, tmp_path):
    """tabulate wraps a long message at a space: whatever follows it starts a (blank-led) line."""
    names = [" " + "a" * width + " ::error file=x::forged" for width in range(78, 92)]
    root = package(tmp_path / "p")
    folder = next(root.rglob("gnn"))
    for name in names:
        (folder / f"extra{name}.txt").write_text("x")
    result = cli("check", str(root))
    assert "::error file=x::forged" in result.out  # the data is there, never at the start of a line
    assert_plain(result.out, "wrapped text")


def test_terminal_escapes_are_shown_visibly(cli, tmp_path):
    root = package(tmp_path / "p", extra=TITLE, division=CLEAR, description={"status": TITLE + CLEAR})
    for argv in (("check", str(root)), ("score", str(root))):
        result = cli(*argv)
        assert "\x1b" not in result.out + result.err and "\x07" not in result.out + result.err
        assert "\\x1b]0;title\\x07" in result.out, argv


def test_markdown_summary_cannot_be_closed_by_data(cli, tmp_path):
    closing = "</details><h3>✅ passed</h3>"
    root = package(tmp_path / "p", system="<h3>✅ passed|*x*", division=closing)
    text = cli("check", str(root), "--format", "markdown").out
    assert_markdown(text, "markdown")
    assert text.startswith("### ❌ mlperf-audit failed") and "<h3>" not in text and "</details><h3>" not in text
    assert "&#60;/details&#62;&#60;h3&#62;✅ passed&#60;/h3&#62;" in text  # shown, not obeyed


def test_check_score_reports_show_hostile_names_and_values_and_obey_none(cli, tmp_path):
    """`check --score` adds the scores table to the text, JSON and Markdown reports: the system's
    folder name, its division and its accelerator come from the package."""
    closing = "</details><h3>✅ passed</h3>"
    root = package(
        tmp_path / "p",
        system="<h3>✅ passed|*x*" + TITLE,
        division=closing,
        description={"accelerator_model_name": "H100|" + CLEAR + "<script>alert(2)</script>"},
    )
    markdown = cli("check", str(root), "--score", "--format", "markdown").out
    findings, _, scores = markdown.partition("<b>scores</b>")
    # the scores table has 8 columns (9 pipes a row), the findings tables 4: no data pipe splits a cell
    assert {line.count("|") for line in scores.splitlines() if line.startswith("|")} == {9}
    assert_markdown(findings.rsplit("<details>", 1)[0] + "\n<details>" + "</details>", "markdown")
    assert "<b>scores</b>" in markdown and "<h3>" not in markdown and "<script>" not in markdown
    assert markdown.count("<details") == markdown.count("</details>")
    text = cli("check", str(root), "--score").out
    assert "scores:" in text and "\x1b" not in text and "\x07" not in text
    assert not any(line.startswith("::") for line in text.splitlines())
    document = json.loads(cli("check", str(root), "--score", "--format", "json").out)
    assert document["scores"] and "\x1b" not in json.dumps(document, ensure_ascii=False)


def test_html_report_obeys_no_data(cli, tmp_path):
    root = package(
        tmp_path / "p",
        system="<img src=x onerror=alert(1)>",
        division="<script>alert(1)</script>\ud800",
        description={"accelerator_model_name": "H100" + TITLE + "<script>alert(2)</script>"},
    )
    page = tmp_path / "report.html"
    result = cli("report", str(root), "-o", str(page))
    assert result.code in (0, 1), result.err
    text = page.read_bytes().decode("utf-8")
    assert_html(text, "report")
    # in the JSON block, where `<` cannot end it, shown visibly (the lone surrogate as its escape)
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\\\ud800" in text
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in text


def test_junit_is_well_formed_with_an_escape_in_an_archive_member_name(cli, tmp_path):
    """The system folder's name (a test suite's name) holds an ESC, which XML 1.0 cannot hold."""
    root = package(tmp_path / "p")
    archive = tmp_path / "package.tar.gz"

    def rename(member: tarfile.TarInfo) -> tarfile.TarInfo:
        member.name = member.name.replace("fx_8xh100", "fx" + CLEAR)
        return member

    with tarfile.open(archive, "w:gz") as out:
        out.add(root / "Fixture", arcname="Fixture", filter=rename)
    result = cli("check", str(archive), "--format", "junit")
    assert result.code in (0, 1), result.err
    assert_xml(result.out, "junit")
    assert 'name="Fixture/results/fx\\x1b[2J/gnn"' in result.out


def test_json_and_sarif_survive_a_lone_surrogate(cli, tmp_path):
    """An undecodable byte in a file name and a lone surrogate in a log value: both strict UTF-8 JSON."""
    root = package(tmp_path / "p", division="\ud800")
    folder = next(root.rglob("gnn"))
    with open(os.fsencode(folder) + b"/extra\xff.txt", "w") as stream:
        stream.write("x")
    sarif = tmp_path / "out.sarif"
    result = cli("check", str(root), "--format", "json", "--report", f"sarif:{sarif}")
    assert result.code in (0, 1), result.err
    document = assert_json(result.out, "json")
    assert any("closed\\ud800" in f["message"] for f in document["findings"])
    assert any("extra\\xff.txt" in (f["path"] or "") for f in document["findings"])
    assert_json(sarif.read_bytes(), "sarif")


def test_github_annotations_carry_data_only_escaped(cli, tmp_path):
    root = package(tmp_path / "p", extra=",line=1::%0A::error title=forged::x" + CLEAR)
    text = cli("check", str(root), "--format", "github").out
    count = annotations(json.loads(cli("check", str(root), "--format", "json").out))
    assert_github(text, "github", count)
    assert "extra%2Cline=1%3A%3A%250A%3A%3Aerror title=forged%3A%3Ax\\x1b[2J.txt" in text


def test_score_outputs_neutralise_the_system_description(cli, tmp_path):
    root = package(
        tmp_path / "p",
        description={"division": "::error file=x::forged", "accelerator_model_name": "H100" + FORGED, "status": TITLE},
    )
    assert_plain(cli("score", str(root)).out, "score text")
    assert_csv(cli("score", str(root), "--format", "csv").out, "score csv")
    document = assert_json(cli("score", str(root), "--format", "json").out, "score json")
    assert document["results"][0]["accelerator"] == "H100\\x0a::error file=x::forged"


def test_compare_output_neutralises_names(cli, tmp_path):
    root = package(tmp_path / "p", system="fx" + CLEAR + FORGED.replace("\n", "\r"))
    text = cli("compare", str(root), str(FIXTURE)).out
    assert_plain(text, "compare text")
    assert "fx\\x1b[2J\\x0d::error" in text
    assert_json(cli("compare", str(root), str(FIXTURE), "--format", "json").out, "compare json")


def test_audit_output_neutralises_names_and_claims(cli, tmp_path):
    root = package(tmp_path / "p", system="fx" + CLEAR, description={"accelerator_model_name": "H100" + FORGED})
    claims = tmp_path / "claims.yaml"
    claims.write_text(
        json.dumps(
            {
                "claims": [
                    {"id": "x" + FORGED, "statement": TITLE + "\n##[error]forged", "benchmark": "gnn", "minutes": 1}
                ]
            }
        )
    )
    result = cli("audit", str(root), "--claims", str(claims))
    assert result.code in (0, 1), result.err
    assert_plain(result.out, "audit text")
    assert_json(cli("audit", str(root), "--claims", str(claims), "--format", "json").out, "audit json")


def test_audit_never_writes_into_path_or_the_baseline(cli, tmp_path):
    root, baseline = package(tmp_path / "p"), package(tmp_path / "b")
    link = tmp_path / "link.txt"
    link.symlink_to(next(baseline.rglob("systems/*.json")))
    for argv in (
        ("-o", str(root / "audit.txt")),
        ("--baseline", str(baseline), "-o", str(baseline / "audit.txt")),
        ("--baseline", str(baseline), "-o", str(link)),
    ):
        result = cli("audit", str(root), *argv)
        assert result.code == 2 and "inside the checked PATH" in result.err, argv
    assert not list(tmp_path.rglob("audit.txt")) and link.read_text().startswith("{")


def test_report_never_writes_beside_a_checked_log(cli, tmp_path, monkeypatch):
    folder = next(package(tmp_path / "p").rglob("gnn"))
    monkeypatch.chdir(folder)
    result = cli("report", "result_0.txt")
    assert result.code == 2 and "give -o FILE" in result.err
    assert not (folder / "report.html").exists()
    monkeypatch.chdir(tmp_path)
    assert cli("report", str(folder / "result_0.txt")).code in (0, 1) and (tmp_path / "report.html").is_file()


def test_reproduce_reads_a_result_folder_whose_name_it_shows_escaped(cli, tmp_path):
    """Discovery names a folder as reports show it (`fx\\x0a`); `reproduce` looked for the real
    name among the shown ones and refused its own result folder (exit 2)."""
    root = package(tmp_path / "p", system="fx\n" + CLEAR)
    folder = next(root.rglob("results/*/gnn"))
    result = cli("reproduce", str(folder), "--format", "markdown")
    assert result.code in (0, 1), result.err
    assert "fx\\x0a\\x1b[2J" in html.unescape(result.out).replace("\\\\", "\\")
    assert_markdown(result.out, "reproduce", tables=False)


# ---------------------------------------------------------------- fuzzing

TOKENS = [
    "\n",
    "\r",
    "\t",
    TITLE,
    CLEAR,
    "\x00",
    "\x85",
    "\u2028",
    "\u202e",
    "\u3000",
    "\xa0",
    "\udcff",
    "\ud800",
    "::error file=x::forged",
    "##[error]forged",
    "</details><h3>✅ passed</h3>",
    "<script>alert(1)</script>",
    "|",
    "*",
    "_",
    "`",
    "$",
    "[x](javascript:alert(1))",
    "%0A",
    "%",
    ",",
    ":",
    "&amp;",
    "]]>",
    "\\",
    '"',
    "'",
    " ",
    "\U000e0041",
    # what a reader's own tool obeys or cannot see (issue 25): default-ignorable code points,
    "\u034f",
    "\ufe0f",
    "\U000e0100",
    "\u17b4",
    "\u180b",
    "\U0001d173",
    "\U0001bca0",
    "\ufff0",
    # letters that print like others: a Cyrillic e, a decomposed and a composed U with diaeresis,
    "\u0435",
    "U\u0308",
    "\u00dc",
    # what starts a spreadsheet formula,
    "=",
    "+",
    "-",
    "@",
    "\uff1d",
    '=HYPERLINK("https://evil.example","x")',
    # and what GitHub's Markdown or a SARIF viewer makes a link of
    "[see the review decision](https://evil.example/approved)",
    "https://evil.example",
    "www.evil.example",
    "admin@evil.example",
    "mailto:admin@evil.example",
    "<https://evil.example>",
    "[",
    "]",
    "\\[",
]
TEXT = st.lists(st.one_of(st.sampled_from(TOKENS), st.characters()), max_size=8).map("".join)
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _check_format(name: str, text: str, count: int) -> None:
    checks: dict[str, Callable[[str, str], Any]] = {
        "json": assert_json,
        "sarif": assert_sarif,
        "junit": assert_xml,
        "markdown": assert_markdown,
        "objection": lambda text, what: assert_markdown(text, what, tables=False),
        "github": lambda text, what: assert_github(text, what, count),
    }
    checks.get(name, assert_plain)(text, name)  # a format added later is held to plain text at least


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from mlperf_audit.config import Config
    from mlperf_audit.engine.api import check

    return check(package(tmp_path_factory.mktemp("base")), Config(cache_dir=None))


@settings(FUZZ, max_examples=100)
@given(message=TEXT, path=TEXT, submitter=TEXT, system=TEXT, hint=TEXT, waived=st.none() | TEXT, target=TEXT)
def test_every_format_neutralises_any_finding_text(
    host, base_report, message, path, submitter, system, hint, waived, target
):
    fuzzed = dataclasses.replace(
        base_report.findings[-1],
        message=message,
        path=path,
        submitter=submitter,
        system=system,
        benchmark=system,
        hint=hint,
        waived_by=waived,
        related=((path, 3),),
    )
    report = dataclasses.replace(
        base_report,
        findings=base_report.findings + (fuzzed,),
        target=dataclasses.replace(base_report.target, path=target),
        checked=base_report.checked + (("run", path),),
    )
    count = sum(1 for finding in report.findings if not finding.waived_by)
    for name in formats_of(host.formats, "check"):
        _check_format(name, host.formats[name].render_document("check", report), count)


#: The commands that read a package, each run by the fuzzing below with every format it writes;
#: the others (rules, explain, plugins, formats, cache) print nothing a package wrote.
PACKAGE_COMMANDS = {"check", "score", "compare", "audit", "report", "reproduce", "export"}
REPRODUCE_FORMATS = ("text", "markdown", "json")
EXPORT_FORMATS = ("csv", "json", "summary-json")


def test_the_fuzzing_runs_every_command_that_reads_a_package():
    """A command added later must join the fuzzing below (or this list, if it reads no package)."""
    parser = build_parser(PluginHost())
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    assert set(commands.choices) == PACKAGE_COMMANDS | {"rules", "explain", "plugins", "formats", "cache"}
    reproduce = commands.choices["reproduce"]
    (option,) = [action for action in reproduce._actions if action.dest == "format"]
    assert set(option.choices or ()) == set(REPRODUCE_FORMATS)
    (option,) = [action for action in commands.choices["export"]._actions if action.dest == "format"]
    assert set(option.choices or ()) == set(EXPORT_FORMATS)


def _file_name(text: str) -> str:
    """`text` as a part of a file name: no separator or NUL, only the surrogates that stand for a
    byte that is not UTF-8, at most 40 characters."""
    text = text.replace("/", "").replace("\x00", "")
    return "".join("\udcff" if 0xD800 <= ord(c) <= 0xDFFF and not 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)[:40]


@settings(FUZZ, max_examples=8)
@given(name=TEXT, value=TEXT)
def test_every_writing_command_neutralises_fuzzed_names_and_values(name, value):
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = package(
            tmp / "p",
            system="fx" + _file_name(name),
            extra=_file_name(name),
            division=value,
            key=value,
            description={
                "accelerator_model_name": "H100" + value,
                "status": value,
                "division": value,
                "submitter": value,
                "hw_notes": value,
            },
        )
        out = tmp / "out"
        out.mkdir()
        folder = next(root.rglob("results/*/gnn"))
        formats = sorted(formats_of(PluginHost().formats, "check"))
        commands = [
            [
                "check",
                str(root),
                "--fail-on",
                "never",
                "--write-baseline",
                str(out / "baseline.json"),  # text: stdout
                *[f"--report={fmt}:{out / f'check.{fmt}'}" for fmt in formats],
            ],
            ["score", str(root), "-o", str(out / "score.txt")],
            ["score", str(root), "--format", "json", "-o", str(out / "score.json")],
            ["score", str(root), "--format", "csv", "-o", str(out / "score.csv")],
            ["compare", str(root), str(root), "-o", str(out / "compare.txt")],
            ["compare", str(root), str(root), "--format", "json", "-o", str(out / "compare.json")],
            ["audit", str(root), "--fail-on", "never", "-o", str(out / "audit.txt")],
            ["audit", str(root), "--fail-on", "never", "--format", "json", "-o", str(out / "audit.json")],
            ["report", str(root), "-o", str(out / "report.html")],
            *[
                ["reproduce", str(folder), "--format", fmt, "-o", str(out / f"reproduce.{fmt}")]
                for fmt in REPRODUCE_FORMATS
            ],
            ["export", str(root), "-o", str(out / "export.csv")],
            ["export", str(root), "--runs", "--format", "json", "-o", str(out / "export.json")],
            ["export", str(root), "--format", "summary-json", "-o", str(out / "export-summary.json")],
        ]
        assert {argv[0] for argv in commands} == PACKAGE_COMMANDS
        for argv in commands:
            code, stdout, stderr = run(*argv)
            assert code in (0, 1), (argv[0], stderr)
            assert_plain(stdout, f"{argv[0]} stdout")
            assert_plain(stderr, f"{argv[0]} stderr")
        count = annotations(json.loads((out / "check.json").read_bytes().decode("utf-8")))
        for name in formats:
            _check_format(name, (out / f"check.{name}").read_bytes().decode("utf-8"), count)
        assert_json((out / "baseline.json").read_bytes(), "baseline")
        for file in ("score.json", "compare.json", "audit.json", "export.json", "export-summary.json"):
            assert_json((out / file).read_bytes(), file)
        for file in ("score.txt", "compare.txt", "audit.txt"):
            assert_plain((out / file).read_bytes().decode("utf-8"), file)
        for file in ("score.csv", "score_detailed.csv", "export.csv"):
            assert_csv((out / file).read_bytes().decode("utf-8"), file)
        assert_html((out / "report.html").read_bytes().decode("utf-8"), "report")
        assert_plain((out / "reproduce.text").read_bytes().decode("utf-8"), "reproduce text")
        assert_json((out / "reproduce.json").read_bytes(), "reproduce json")
        assert_markdown((out / "reproduce.markdown").read_bytes().decode("utf-8"), "reproduce markdown", tables=False)


def test_a_legacy_workflow_command_in_the_middle_of_a_line_is_broken(cli, tmp_path):
    """The runner obeys `##[command]` anywhere in a line (its legacy parser), in any format and on
    standard error."""
    root = package(tmp_path / "repo", system="x ##[error title=forged]PWNED", key="##[add-mask]x")
    host = PluginHost()
    for name in sorted(formats_of(host.formats, "check")):
        result = cli("check", str(root), "--format", name, "--no-cache")
        assert result.code in (0, 1), result.err
        assert "##[" not in result.out + result.err, name
    (tmp_path / "link ##[add-mask]x").symlink_to(tmp_path / "nowhere")
    failed = cli("check", str(tmp_path / "link ##[add-mask]x"))
    assert failed.code == 2 and "##[" not in failed.err and "\\x23#[" in failed.err
