"""Values of the wrong type or of absurd size, in every field a command reads, are findings or
usage errors: never an internal error (exit 2, "please report") nor a traceback.

Each test is an attack that ended in an internal error: a description's `division` written as a
number beside another's string (the CSV table sorted mixed types), counts of hundreds or thousands
of digits (a rate divided by one overflowed a float; their product passed the int-to-str limit),
`"number_of_nodes": "1²"` (`isdigit()` is true for '²', `int()` refuses it), names holding '²' or
thousands of digits (the natural sort order called `int()` on them), a log value nested 990 deep
(its members were counted recursively before the depth bound, on Python 3.12 and 3.13), claims
files with fields of unexpected types or a YAML alias bomb (read after the whole check), and
Dockerfiles and logs whose lines end in CR alone or in a backslash and spaces. The last test is
the property: any value in any field of a description or a claims file, through every command
and every format.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mlperf_audit import natural_key
from mlperf_audit.cli import main

#: A fixed set of examples, so that CI is repeatable; `MLPERF_AUDIT_EXPLORE=N` hunts with N random ones.
EXPLORE = int(os.environ.get("MLPERF_AUDIT_EXPLORE", "0"))

CLEAN = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "clean" / "Fixture"
SYSTEM = "fx_8xh100"
OTHER_SYSTEM = "fx_64xh100"


def run_cli(*argv: str) -> tuple[int, str, str]:
    """The command line in-process: exit code, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def assert_no_crash(result: tuple[int, str, str], what: str) -> None:
    code, _, err = result
    assert code in (0, 1), f"{what}: exit {code}: {err}"
    assert "internal error" not in err and "Traceback" not in err, f"{what}: {err}"


def findings_of(target: Path) -> list[dict]:
    code, out, err = run_cli("check", str(target), "--format", "json", "--no-cache")
    assert_no_crash((code, out, err), "check")
    findings = json.loads(out)["findings"]
    assert not [f["message"] for f in findings if f["rule"] == "CHK001"]  # no rule crashed
    return findings


def every_command(target: Path, tmp_path: Path) -> None:
    """Every command that reads a package's descriptions and scores, in each of its formats."""
    runs = [
        ("check", str(target), "--score"),
        ("check", str(target), "--format", "json"),
        ("score", str(target)),
        ("score", str(target), "--format", "json"),
        ("score", str(target), "--format", "csv"),
        ("audit", str(target)),
        ("audit", str(target), "--format", "json"),
        ("compare", str(target), str(CLEAN)),
        ("compare", str(CLEAN), str(target), "--format", "json"),
        ("report", str(target), "-o", str(tmp_path / "report.html")),
    ]
    for argv in runs:
        assert_no_crash(run_cli(*argv, "--no-cache"), " ".join(argv[:1] + argv[2:]))


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg" / "Fixture"
    shutil.copytree(CLEAN, root)
    return root


def edit_description(package: Path, system: str, replace: dict[str, str]) -> Path:
    """Rewrites fields of a description as raw JSON text (a number of 5,000 digits is valid JSON
    that Python's `json.dumps` cannot write)."""
    description = package / "systems" / f"{system}.json"
    text = description.read_text()
    for field, raw in replace.items():
        text, done = re.subn(rf'("{field}": )("[^"]*"|[^,\n]+)', lambda m, raw=raw: m.group(1) + raw, text)
        assert done == 1, field
    description.write_text(text)
    return description


# ---------------------------------------------------------------------------------------------
# Sorting values of mixed types
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("division", ["5", "null", "true", "[]", '{"a": 1}', "1e400", "NaN", "9" * 400])
def test_score_csv_sorts_descriptions_of_mixed_types(package, division):
    """The attack: one description's `division` a number, another's a string: `score --format csv`
    sorted the systems by their columns and ended in TypeError ('<' between str and int)."""
    edit_description(package, SYSTEM, {"division": division})
    code, out, err = run_cli("score", str(package), "--format", "csv", "--no-cache")
    assert_no_crash((code, out, err), "score --format csv")
    rows = out.split("\n\n")[0].splitlines()[1:]
    assert {row.split(",")[3] for row in rows} == {SYSTEM, OTHER_SYSTEM}  # both systems, in one table
    assert any(f["rule"] == "SYS002" and "division" in f["message"] for f in findings_of(package))


# ---------------------------------------------------------------------------------------------
# Counts that are not counts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, rule, message",
    [
        # hundreds of digits: a rate divided by the count overflowed a float in audit and compare
        ({"accelerators_per_node": "9" * 400}, "SYS002", "accelerators_per_node: 99999"),
        ({"accelerators_per_node": '"' + "9" * 400 + '"'}, "SYS002", "accelerators_per_node: '99999"),
        # two counts of 3,000 digits: their product (6,000 digits) passed the int-to-str limit
        ({"accelerators_per_node": '"' + "9" * 3000 + '"', "number_of_nodes": '"' + "9" * 3000 + '"'}, "SYS002", ""),
        ({"host_processors_per_node": '"' + "7" * 3000 + '"', "number_of_nodes": "8" * 3000}, "SYS002", ""),
        # past the int-to-str limit: no JSON reader of Python reads the file
        ({"accelerators_per_node": "9" * 5000}, "SYS001", "a number of 5,000 digits"),
        # one more than the bound of a count
        ({"number_of_nodes": "1000000"}, "SYS002", "number_of_nodes: 1000000 is not a positive integer up to 999999"),
        ({"accelerators_per_node": "1e400"}, "SYS002", "accelerators_per_node: inf"),
        ({"number_of_nodes": '"1\u00b2"'}, "SYS002", "number_of_nodes: '1²'"),
    ],
)
def test_absurd_counts_are_findings_on_the_description(package, tmp_path, fields, rule, message):
    """The attack: an accelerator count of hundreds of digits made `audit` and `compare` end in
    OverflowError, and counts whose product has over 4,300 digits made `score`, `check --score`
    and `report` end in ValueError. The count is a finding on the description, at its line, and
    no command computes with it."""
    description = edit_description(package, SYSTEM, fields)
    found = [f for f in findings_of(package) if f["rule"] == rule and f["path"].endswith(f"{SYSTEM}.json")]
    assert found and message in found[0]["message"], found
    lines = description.read_text().splitlines()
    assert any(name in lines[found[0]["line"] - 1] for name in fields)  # the line of the count
    every_command(package, tmp_path)
    code, out, _ = run_cli("score", str(package), "--format", "json", "--no-cache")
    counts = {r["accelerators"] for r in json.loads(out)["results"] if r["system"] == SYSTEM}
    assert counts == {None}  # no table shows, nor computes with, such a count


def test_number_of_nodes_with_a_superscript_digit(package):
    """The attack: `"number_of_nodes": "1²"` crashed SYS005 (CHK001): `"1²".isdigit()` is true,
    `int("1²")` raises. SYS002 names the field; SYS005 has no node count to compare."""
    edit_description(package, SYSTEM, {"number_of_nodes": '"1\u00b2"'})
    for log in (package / "results" / SYSTEM / "bert").glob("result_*.txt"):
        log.write_text(re.sub(r'("key": "submission_platform", "value": )"[^"]*"', r'\1"2xDGX H100"', log.read_text()))
    findings = findings_of(package)
    assert any(f["rule"] == "SYS002" and f["message"].startswith("number_of_nodes: '1²'") for f in findings)
    assert not [f for f in findings if f["rule"] == "SYS005"]


def test_a_count_written_with_other_digits_is_not_read_as_one(package):
    """'８' (a fullwidth eight) and '٨' (an Arabic-Indic eight) are digits to `int()` and `isdigit()`,
    not to the official summarizer's readers of the tables: not a count."""
    edit_description(package, SYSTEM, {"accelerators_per_node": '"\u0668"'})
    findings = findings_of(package)
    assert any(f["rule"] == "SYS002" and f["message"].startswith("accelerators_per_node:") for f in findings)
    code, out, _ = run_cli("score", str(package), "--format", "json", "--no-cache")
    assert {r["accelerators"] for r in json.loads(out)["results"] if r["system"] == SYSTEM} == {None}


# ---------------------------------------------------------------------------------------------
# Names: the natural sort order
# ---------------------------------------------------------------------------------------------


def test_a_file_named_with_a_superscript_digit(package, tmp_path):
    """The attack: a file `notes_v1²` beside the logs: the natural sort of the folder's names
    called `int('²')` (ValueError), an internal error of every command."""
    (package / "results" / SYSTEM / "bert" / "notes_v1\u00b2").write_text("notes\n")
    (package / "results" / SYSTEM / "bert" / "notes_v\u0663").write_text("notes\n")  # Arabic-Indic three
    assert findings_of(package)
    every_command(package, tmp_path)


def test_archive_members_named_with_thousands_of_digits(package, tmp_path):
    """The attack: archive members named with 5,000 digits: the natural sort converted them to
    int (past the int-to-str limit: ValueError). Names that long are now refused by the archive
    reader's bound on a member's path (4,096 bytes); what fits under it, 4,000 digits or a '²',
    sorts without `int()`."""
    archive = tmp_path / "upload.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(package, arcname="Fixture")
        for name in ("9" * 4000, "8" * 4000, "v1\u00b2", "v\u0663"):
            info = tarfile.TarInfo(f"Fixture/results/{SYSTEM}/bert/notes_{name}.txt")
            info.size = 5
            tar.addfile(info, io.BytesIO(b"notes"))
    code, out, err = run_cli("check", str(archive), "--format", "json", "--no-cache")
    assert_no_crash((code, out, err), "check archive")
    assert json.loads(out)["findings"]


@settings(max_examples=EXPLORE or 200, derandomize=not EXPLORE, deadline=None, database=None)
@given(st.lists(st.text(alphabet="0123456789ab_\u00b2\u0663", max_size=12), min_size=2, max_size=6))
def test_natural_order_is_the_order_of_the_numbers(names):
    """The natural order compares ASCII digit runs as the numbers they write (without `int`, so
    any length sorts) and everything else as text: the order of `int()` on every ASCII run."""

    def by_int(text: str) -> tuple:
        return tuple(int(part) if i % 2 else part for i, part in enumerate(re.split(r"([0-9]+)", text)))

    assert sorted(names, key=natural_key) == sorted(names, key=by_int)
    assert natural_key("result_2.txt") < natural_key("result_10.txt")
    assert natural_key("n_" + "9" * 5000) > natural_key("n_" + "1" + "0" * 4999) > natural_key("n_" + "9" * 4999)


# ---------------------------------------------------------------------------------------------
# A log value nested deeper than the decoder reaches
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [100, 990, 5000])
def test_a_log_value_nested_990_deep_is_a_finding_on_every_python(package, depth):
    """The attack: a value nested 990 deep. The parser counted the record's members recursively
    before its depth bound: RecursionError (CHK001 or an internal error) on Python 3.12 and 3.13,
    LOG011 on 3.11. Now LOG011 on all three, in the same words whichever bound stops the record
    (the decoder's recursion or the parser's 64 levels; 3.13's decoder goes deeper than 3.11's), so
    the finding's fingerprint, and a baseline holding it, is the same on every Python."""
    nested = "[" * depth + "1" + "]" * depth
    bert = package / "results" / SYSTEM / "bert"
    for log in bert.glob("result_*.txt"):
        log.write_text(re.sub(r'("key": "global_batch_size", "value": )[0-9]+', rf"\g<1>{nested}", log.read_text()))
    deep = [f for f in findings_of(bert) if f["rule"] == "LOG011"]
    assert len(deep) == len(list(bert.glob("result_*.txt"))), deep
    assert {f["message"] for f in deep} == {"record nests JSON too deeply (over 64 levels); not parsed"}
    assert_no_crash(run_cli("score", str(bert), "--format", "json", "--no-cache"), "score")


@pytest.mark.parametrize("depth", [100, 990, 5000])
def test_a_description_nested_deep_is_one_finding_on_every_python(package, depth):
    """The same for a system description: one message, at line 1, whichever bound stops it."""
    edit_description(package, SYSTEM, {"hw_notes": "[" * depth + "]" * depth})
    sys001 = [f for f in findings_of(package) if f["rule"] == "SYS001"]
    assert [(f["message"], f["line"]) for f in sys001] == [
        ("system description nests JSON too deeply (over 64 levels); not read", 1)
    ]


# ---------------------------------------------------------------------------------------------
# Claims files (audit --claims): validated by type, before the check
# ---------------------------------------------------------------------------------------------

RESULT = "{submitter: Fixture, system: fx_8xh100}"
BERT = "benchmark: bert, result: " + RESULT


def audit_claims(tmp_path: Path, text: str) -> tuple[int, str, str]:
    claims = tmp_path / "claims.yaml"
    claims.write_text(text, encoding="utf-8")
    return run_cli("audit", str(CLEAN / "results" / SYSTEM / "ssd"), "--claims", str(claims), "--no-cache")


@pytest.mark.parametrize(
    "claim, message",
    [
        # the four internal errors reported: ValueError, AttributeError, OverflowError, TypeError
        (f"{{id: a, {BERT}, minutes: abc}}", "claim 1 ('a'): minutes must be a number of minutes above 0"),
        ("{id: a, benchmark: bert, result: x, minutes: 1}", "claim 1 ('a'): result must be a mapping of submitter"),
        (f"{{id: a, {BERT}, minutes: 1, accelerators: .inf}}", "accelerators must be a whole number from 1"),
        (f"{{id: a, {BERT}, minutes: [1]}}", "minutes must be a number of minutes above 0 (at most 1e9), not [1]"),
        # and the other wrong types and values of each field
        (f"{{id: a, {BERT}, minutes: .nan}}", "minutes must be a number of minutes above 0"),
        (f"{{id: a, {BERT}, minutes: {'9' * 400}}}", "not a number of 400 digits"),
        (f"{{id: a, {BERT}, minutes: true}}", "minutes must be a number"),
        (f"{{id: a, {BERT}, minutes: -3}}", "minutes must be a number of minutes above 0"),
        (f"{{id: 2024-06-01, {BERT}, minutes: 3}}", "id must be a string, not the date 2024-06-01"),
        (f"{{id: [a], {BERT}, minutes: 3}}", "id must be a string, not ['a']"),
        (f"{{{BERT}, minutes: 3}}", "claim 1: id is missing"),
        (f"{{id: a, {BERT}, minutes: 3, statement: {{a: 1}}}}", "statement must be a string"),
        ("{id: a, benchmark: bert, result: {submitter: Fixture}, minutes: 3}", "result.system is missing"),
        ("{id: a, benchmark: bert, result: {submitter: Fixture, system: 8}, minutes: 3}", "result.system must be a"),
        (f"{{id: a, benchmark: bert, faster: {RESULT}, than: {RESULT}, speedup: '5%'}}", "speedup must be a number"),
        (f"{{id: a, benchmark: bert, faster: {RESULT}, than: {RESULT}, speedup: 2, per_accelerator: 1}}", "true or"),
        (f"{{id: a, {BERT}, minutes: 3, speedup: 2}}", "gives minutes and speedup: a claim is a time or a speedup"),
        ("3", "expected a mapping with a list 'claims'"),
        ("{id: a}", "expected a mapping with a list 'claims'"),
        ("claims: {a: 1}", "expected a mapping with a list 'claims', not claims: {'a': 1}"),
        ("claims: [3]", "claim 1 must be a mapping of the claim's fields, not 3"),
    ],
)
def test_claims_of_the_wrong_type_are_usage_errors(tmp_path, claim, message):
    """The attack: claims with fields of unexpected types ended in ValueError, AttributeError,
    OverflowError or TypeError (internal errors), after the whole check. Each is now exit 2 with
    one line naming the file, the claim, the field, what it must be and what it is."""
    text = claim if claim in ("3", "{id: a}") or claim.startswith("claims:") else f"claims: [{claim}]\n"
    code, out, err = audit_claims(tmp_path, text)
    assert code == 2 and not out, err
    assert err.startswith("mlperf-audit: error: ") and err.count("\n") == 1, err
    assert str(tmp_path / "claims.yaml") in err and message in err, err


@pytest.mark.parametrize(
    "claim, message",
    [
        (
            f"{{id: a, {BERT}, minutes: 3, speedup_pct: 5}}",
            "unknown key 'speedup_pct'; did you mean 'speedup_percent'?",
        ),
        ("{id: a, benchmark: bert, result: {submitter: Fixture, systen: x}, minutes: 3}", "did you mean 'system'?"),
        (
            "{id: a, benchmark: bret, minutes: 3}",
            "benchmark 'bret' is no MLPerf Training benchmark; did you mean 'bert'?",
        ),
        ("{id: a, benchmark: bert, minutes: 3, zzz: 1}", "unknown key 'zzz' (known: id, benchmark, statement"),
    ],
)
def test_a_misspelt_claim_names_the_closest_known_key(tmp_path, claim, message):
    """A misspelt key used to leave the claim without its number ("not checkable") without a word."""
    code, _, err = audit_claims(tmp_path, f"claims: [{claim}]\n")
    assert code == 2 and message in err, err


def test_a_claim_about_a_result_not_in_path_names_the_closest_one(tmp_path):
    code, out, err = audit_claims(
        tmp_path, "claims: [{id: a, benchmark: ssd, result: {submitter: Fixture, system: fx_8xh10}, minutes: 40}]\n"
    )
    assert_no_crash((code, out, err), "audit")
    assert "not checkable" in out and "no system 'fx_8xh10' of Fixture in PATH; did you mean 'fx_8xh100'?" in out


@pytest.mark.parametrize(
    "text, message",
    [
        ("claims: [{id: a, minutes: 'x\n", "not valid YAML: line 2, column 1: found unexpected end of stream"),
        ("claims:\n  - id: a\n\tbenchmark: b\n", "not valid YAML: line 3, column 1: found character '\\t'"),
        ("claims: [{id: a, benchmark: bert, minutes: 3, minutes: 4}]\n", "line 1, column 47: the key 'minutes'"),
        ("claims: " + "[" * 100 + "]" * 100 + "\n", "nested deeper than 64 levels"),
        ("claims: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested deeper than 64 levels"),
        (b"claims: [{id: '\xff'}]\n", "the claims file is not UTF-8 text (byte 15)"),
        # values no Python object holds: an integer past the int-to-str limit, a lone surrogate
        ("claims: [{id: a, minutes: " + "9" * 5000 + "}]\n", "(5,000 characters) cannot be read: more digits"),
        ('claims: [{id: "\\ud8df", benchmark: bert}]\n', "an escaped half of a character"),
        ('claims: "\\ud8df\\udd7a"\n', "expected a mapping with a list 'claims', not claims: '\\U00047d7a'"),
    ],
)
def test_a_yaml_error_is_one_readable_line(tmp_path, text, message):
    """The attack: a YAML syntax error was shown as one line of literal '\\x0a' (its newlines,
    escaped); a key given twice kept the last value silently; nesting 50,000 deep ended in
    RecursionError."""
    claims = tmp_path / "claims.yaml"
    claims.write_bytes(text) if isinstance(text, bytes) else claims.write_text(text)
    code, _, err = run_cli("audit", str(CLEAN / "results" / SYSTEM / "ssd"), "--claims", str(claims))
    assert code == 2 and err.count("\n") == 1 and "\\x0a" not in err and message in err, err


def alias_bomb(levels: int) -> str:
    """`levels` anchors, each a list of nine aliases to the one before: 9**levels values."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + f"\nclaims: [{{id: bomb, benchmark: bert, statement: *l{levels - 1}, minutes: 1}}]\n"


def test_a_yaml_alias_bomb_in_a_claims_file_is_refused_in_bounded_memory(tmp_path):
    """The attack: a 538-byte claims file of nine levels of nine aliases took 1.6 GB and ended in
    MemoryError. Aliases are refused where they are read; the peak is the same for a bomb of 7
    levels (4.8 million values when expanded) and of 9 (387 million): the expansion never happens."""
    import tracemalloc

    audit_claims(tmp_path, "claims: 3\n")  # the plugins loaded and the modules imported, outside the measure
    peaks = []
    for levels in (7, 9):
        tracemalloc.start()
        code, _, err = audit_claims(tmp_path, alias_bomb(levels))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert code == 2 and "line 2, column" in err and "an alias (*name) repeats an anchored value" in err, err
    assert len(alias_bomb(9)) < 600
    assert max(peaks) < 8 << 20 and peaks[1] < 2 * peaks[0], peaks


def test_a_rule_case_file_may_use_aliases_but_not_expand_without_bound(tmp_path):
    """Rule cases reuse a package through an alias (PWR001.yaml); a bomb among them is refused as
    it is read, with the expansion counted, never performed."""
    import tracemalloc

    from mlperf_audit.testing import load_cases

    cases = tmp_path / "XYZ001.yaml"
    cases.write_text("rule: XYZ001\n" + alias_bomb(9).replace("claims:", "cases:"))
    tracemalloc.start()
    with pytest.raises(ValueError, match="the document expands to more than 100,000 values"):
        load_cases(cases)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20, peak
    cases.write_text("rule: XYZ001\nshared: &events [{key: seed, t: 1}]\ncases:\n  - {name: a, events: *events}\n")
    (case,) = load_cases(cases)
    assert case.name == "a"


def test_the_claims_file_is_read_before_the_check(tmp_path, monkeypatch):
    """A bad claims file used to be read after the whole check (minutes on a whole round):
    it fails at once, and no check runs."""
    from mlperf_audit.engine import api

    def no_check(*args, **kwargs):
        raise AssertionError("the check ran before the claims file was read")

    monkeypatch.setattr(api, "review", no_check)
    code, _, err = audit_claims(tmp_path, "claims: [{id: a, benchmark: bert, minutes: abc}]\n")
    assert code == 2 and "minutes must be a number" in err, err


# ---------------------------------------------------------------------------------------------
# Line endings: LF, CRLF and CR alone, in every text the tool reads
# ---------------------------------------------------------------------------------------------

DOCKERFILE = "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:24.09-py3\nFROM ${FROM_IMAGE_NAME}\nWORKDIR /workspace/bert\n"


@pytest.mark.parametrize(
    "dockerfile, line",
    [
        # a continuation backslash followed by spaces (Docker continues the line)
        ("FROM \\   \n  nvcr.io/nvidia/pytorch:latest\nRUN a \\ \t\n  b\nFROM \\  ", 1),
        ("ARG X=1\nRUN apt-get install \\  \n  curl\nFROM nvcr.io/nvidia/pytorch:latest\n", 4),
        # CR alone (classic Mac OS), with a continuation
        ("ARG X=1\rRUN a \\\r b\rFROM nvcr.io/nvidia/pytorch:latest\r", 4),
        ("ARG X=1\r\nRUN a \\\r\n b\r\nFROM nvcr.io/nvidia/pytorch:latest\r\n", 4),
    ],
)
def test_dockerfile_line_ends_of_every_kind(package, tmp_path, dockerfile, line):
    """The attack: a Dockerfile line ending in a backslash followed by spaces, or a Dockerfile with
    CR-only line ends: the continuation lines and their numbers were counted two ways, an
    IndexError in REP007/REP008 (CHK001) and in `reproduce` (an internal error). Each instruction
    is read once, with the line it starts on, and REP007 names the `latest` tag at that line."""
    (package / "benchmarks" / "bert" / "implementations" / "pytorch" / "Dockerfile").write_bytes(dockerfile.encode())
    findings = findings_of(package)
    rep007 = [f for f in findings if f["rule"] == "REP007" and f["path"].endswith("Dockerfile")]
    assert rep007 and rep007[0]["line"] == line and "latest" in rep007[0]["message"], rep007
    for fmt in ("text", "json", "markdown"):
        result = run_cli("reproduce", str(package / "results" / SYSTEM / "bert"), "--format", fmt, "--no-cache")
        assert_no_crash(result, f"reproduce --format {fmt}")
        assert "nvcr.io/nvidia/pytorch:latest" in result[1]


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"])
def test_result_logs_and_descriptions_with_cr_line_ends(package, ending):
    """A result log whose lines end in CR alone was one line of 400 records, every one but the
    last lost ("several records on one line"); the official parser reads it line by line, and so
    does this one now, with the same findings as its LF copy. A description with CR line ends
    keeps the line of each field."""
    bert = package / "results" / SYSTEM / "bert"
    before = {(f["rule"], f["path"], f["line"]) for f in findings_of(bert)}
    for log in bert.glob("result_*.txt"):
        log.write_bytes(log.read_bytes().replace(b"\n", ending))
    assert {(f["rule"], f["path"], f["line"]) for f in findings_of(bert)} == before
    description = edit_description(package, SYSTEM, {"number_of_nodes": '"1\u00b2"'})
    description.write_bytes(description.read_bytes().replace(b"\n", ending))
    sys002 = [f for f in findings_of(package) if f["rule"] == "SYS002"]
    assert sys002 and sys002[0]["line"] == 6, sys002


# ---------------------------------------------------------------------------------------------
# The property: any value in any field of a description or a claims file, through every command
# and every format
# ---------------------------------------------------------------------------------------------


class Digits(str):
    """A JSON integer of more digits than Python converts (`json.dumps` cannot write one)."""


def to_text(value: object, yaml_floats: bool = False) -> str:
    """JSON text for any generated value: integers of any length, NaN and the infinities (JSON's
    `NaN`/`Infinity` as Python reads them; YAML's `.nan`/`.inf` in a claims file)."""
    if isinstance(value, Digits):
        return str.__str__(value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        if yaml_floats:
            return ".nan" if value != value else (".inf" if value > 0 else "-.inf")
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list):
        return "[" + ", ".join(to_text(item, yaml_floats) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_text(v, yaml_floats)}" for k, v in value.items()) + "}"
    return json.dumps(value)


big_integers = (
    st.sampled_from([Digits("9" * 300), Digits("1" + "0" * 4999), Digits("-" + "7" * 5000)])
    | st.integers(-(10**400), 10**400)
    | st.integers(-(2**64), 2**64)
)
odd_floats = st.sampled_from([1e308, -1e308, float("inf"), float("-inf"), float("nan"), 5e-324, -0.0]) | st.floats()
odd_strings = st.sampled_from(["", "1\u00b2", "\u0663", "8", "0", "-1", "1.0", "NaN", "closed", "open", "x" * 300])
scalars = st.none() | st.booleans() | big_integers | odd_floats | odd_strings | st.text(max_size=8)
hostile_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)
DESCRIPTION = json.loads((CLEAN / "systems" / f"{SYSTEM}.json").read_text())
CLAIMS = {
    "claims": [
        {"id": "time", "benchmark": "ssd", "result": {"submitter": "Fixture", "system": SYSTEM}, "minutes": 44.5},
        {
            "id": "speedup",
            "statement": "faster",
            "benchmark": "ssd",
            "faster": {"submitter": "Fixture", "system": SYSTEM},
            "than": {"submitter": "Fixture", "system": SYSTEM},
            "speedup_percent": 0,
            "per_accelerator": True,
        },
    ]
}
#: Where a value goes in the claims file: a path of keys and indexes from the document.
CLAIM_PLACES = (
    [("claims",)]
    + [
        ("claims", index, *path)
        for index, claim in enumerate(CLAIMS["claims"])
        for key, value in claim.items()
        for path in ([(key, inner) for inner in value] if isinstance(value, dict) else [(key,)])
    ]
    + [("claims", 0, "accelerators"), ("claims", 1, "speedup"), ("claims", 0)]
)


def _set(document: dict, path: tuple, value: object) -> dict:
    document = json.loads(json.dumps(document))
    *parents, last = path
    holder = document
    for step in parents:
        holder = holder[step]
    holder[last] = value
    return document


def package_commands(host) -> dict[str, list[str | None]]:
    """The commands the CLI lists that read a package, each with the formats it offers (None: its
    one output); `check` offers every format `mlperf-audit formats` lists."""
    import argparse

    from mlperf_audit.cli import build_parser
    from mlperf_audit.formats import formats_of

    parser = build_parser(host)
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    found: dict[str, list[str | None]] = {}
    for name, command in commands.choices.items():
        if name in ("rules", "explain", "plugins", "formats", "cache"):  # read no package
            continue
        (fmt,) = [action for action in command._actions if "--format" in action.option_strings] or [None]
        found[name] = [None] if fmt is None else sorted(fmt.choices or formats_of(host.formats, "check"))
    return found


def run_every_command(host, package: Path, pristine: Path, claims: Path, root: Path, turn: int) -> None:
    """Every command that reads a package, each in the `turn`-th of its formats (round the list):
    the six turns 0 to 5 run every format of every command."""
    commands = package_commands(host)
    assert set(commands) == {"check", "score", "compare", "audit", "report", "reproduce", "export"}, (
        "a new command to cover"
    )
    argvs = {
        "check": [str(package), "--score"],
        "score": [str(package)],
        "compare": [str(package), str(pristine)],
        "audit": [str(package), "--claims", str(claims), "--baseline", str(pristine)],
        "report": [str(package), "-o", str(root / "report.html")],
        "reproduce": [str(package / "results" / SYSTEM / "ssd")],
        "export": [str(package), str(pristine), *(["--runs"] if turn % 2 else [])],
    }
    for command, formats in commands.items():
        fmt = formats[turn % len(formats)]
        # one cache for the example: the first command checks, the others reuse what it kept
        # (and the cache's encoding of every value is exercised)
        argv = [command, *argvs[command], *(["--format", fmt] if fmt else []), "--cache-dir", str(root / "cache")]
        code, out, err = run_cli(*argv)
        what = f"{command} --format {fmt}"
        assert "internal error" not in err and "Traceback" not in err, f"{what}: {err}"
        assert code in (0, 1) or (code == 2 and command == "audit"), f"{what}: exit {code}: {err}"
        if code == 2:  # the claims file, refused: one line, naming it
            assert err.startswith("mlperf-audit: error: ") and str(claims) in err and err.count("\n") == 1, err


@settings(
    max_examples=int(os.environ.get("MLPERF_AUDIT_EXPLORE", "0")) or 4, derandomize=True, deadline=None, database=None
)
@given(
    st.dictionaries(st.sampled_from(sorted(DESCRIPTION)), hostile_values, min_size=1, max_size=3),
    st.sampled_from(CLAIM_PLACES),
    hostile_values,
    st.integers(0, 5),
)
# the attacks of the issue, in turns 0 to 5: every format of every command
@example({"division": 5}, ("claims", 0, "minutes"), "abc", 0)
@example({"accelerators_per_node": Digits("9" * 5000)}, ("claims", 0, "accelerators"), float("inf"), 1)
@example({"number_of_nodes": "1\u00b2", "accelerators_per_node": Digits("9" * 400)}, ("claims", 0, "result"), "x", 2)
@example({"division": 7, "status": [1, {"a": None}]}, ("claims", 1, "speedup_percent"), Digits("9" * 5000), 3)
@example({"host_processors_per_node": Digits("8" * 3000), "division": 1e308}, ("claims",), {"a": [float("nan")]}, 4)
@example({"division": None, "system_name": Digits("7" * 300)}, ("claims", 1, "faster", "system"), [], 5)
def test_any_value_in_a_description_or_a_claim_through_every_command(host, fields, place, claim_value, turn):
    """Big integers (hundreds and 5,000 digits), 1e308, infinities and NaN, and values of every
    JSON type where a string or a count is expected, in 1 to 3 fields of a system description and
    in one field of a claims file, through every command that reads a package, in every format it
    offers over the six turns: findings, or a usage error naming the claims file; never an
    internal error. MLPERF_AUDIT_EXPLORE=N explores N examples."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        package, pristine = root / "pkg" / "Fixture", root / "pristine" / "Fixture"
        for target in (package, pristine):
            shutil.copytree(CLEAN / "results" / SYSTEM / "ssd", target / "results" / SYSTEM / "ssd")
            shutil.copytree(CLEAN / "systems", target / "systems")
        description = {**DESCRIPTION, **fields}
        (package / "systems" / f"{SYSTEM}.json").write_text(to_text(description))
        claims = root / "claims.yaml"
        claims.write_text(to_text(_set(CLAIMS, place, claim_value), yaml_floats=True))
        run_every_command(host, package, pristine, claims, root, turn)


@pytest.mark.parametrize("rate, expected", [("3", 3.0), ("9" * 400, None), ("\u0663", 2.0)])
def test_a_packing_rate_of_hundreds_of_digits_is_no_rate(rate, expected):
    """`--average_packing_rate 999...` (400 digits) in a configuration's EXTRA_PARAMS was read as
    a float's infinity, and every batch size traced from it was infinite; an Arabic-Indic digit
    was read as a number that no shell passes to the script. Now no rate, and the default."""
    from mlperf_audit import FileEntry
    from mlperf_audit_rules.support.shell import Assignment, LaunchConfig

    params = Assignment(f"--packed_samples --average_packing_rate {rate}", "config_x.sh", 3)
    config = LaunchConfig(FileEntry("config_x.sh", Path("config_x.sh")), {"EXTRA_PARAMS": params})
    assert config.packing_rate() == expected
