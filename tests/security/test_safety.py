"""safety.py: what data may put into output, and where output may go."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mlperf_audit.safety import (
    OutputError,
    html_text,
    json_document,
    no_workflow_commands,
    output_path,
    visible,
    visible_data,
    write_text,
)


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("a\nb", "a\\x0ab"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("\x1b[2J", "\\x1b[2J"),
        ("\r\x00\x7f\x85\x9b", "\\x0d\\x00\\x7f\\x85\\x9b"),
        ("abc\u202etxt.exe", "abc\\u202etxt.exe"),  # right-to-left override
        ("\u061c\u2066\u2069\u200b\ufeff\u00ad", "\\u061c\\u2066\\u2069\\u200b\\ufeff\\xad"),
        ("line\u2028sep\u2029", "line\\u2028sep\\u2029"),
        ("not utf-8: \udcff", "not utf-8: \\xff"),  # an undecodable byte of a file name (surrogateescape)
        ("lone \ud800", "lone \\ud800"),
        ("tag \U000e0041", "tag \\U000e0041"),  # invisible ASCII smuggled in tag characters
        ("\ufffe\uffff", "\\ufffe\\uffff"),
        ("plain: ü ✅ 漢字 \u3000 | <b>", "plain: ü ✅ 漢字 \u3000 | <b>"),
    ],
)
def test_visible_escapes_what_cannot_be_shown(raw, shown):
    assert visible(raw) == shown
    assert visible(shown) == shown  # idempotent: a report's text may pass twice
    visible(raw).encode("utf-8")


def test_visible_keeps_the_tools_own_lines_only_when_asked():
    assert visible("a\n\tb\r") == "a\\x0a\\x09b\\x0d"
    assert visible("a\n\tb\r\x1b", keep_newlines=True) == "a\n\tb\\x0d\\x1b"


@pytest.mark.parametrize(
    "raw, guarded",
    [
        ("::error file=x::forged", "\\x3a:error file=x::forged"),
        ("ok\n  ::error::x", "ok\n  \\x3a:error::x"),
        ("ok\n\u3000\u00a0::warning::x", "ok\n\u3000\u00a0\\x3a:warning::x"),  # the runner trims Unicode spaces too
        ("ok\r::notice::x", "ok\r\\x3a:notice::x"),
        ("ok\u2028::x\x85::y", "ok\u2028\\x3a:x\x85\\x3a:y"),
        ("##[error]old form", "\\x23#[error]old form"),
        ("a ::b\n: :c\n#[x]\n", "a ::b\n: :c\n#[x]\n"),  # nothing to do
    ],
)
def test_no_line_starts_a_workflow_command(raw, guarded):
    assert no_workflow_commands(raw) == guarded
    for line in guarded.splitlines():
        assert not line.lstrip().startswith(("::", "##["))


def test_visible_data_and_json_document_are_strict_utf8_json():
    data = {"k\n\udcff": ["\x1b[2J", float("nan"), float("inf"), 1.5, 3, True, None, ("t",), Path("a\rb")]}
    assert visible_data(data) == {"k\\x0a\\xff": ["\\x1b[2J", None, None, 1.5, 3, True, None, ["t"], "a\\x0db"]}
    text = json_document(data)
    text.encode("utf-8")
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert json_document({"doc": "two\nlines"}, keep_newlines=True) == '{\n  "doc": "two\\nlines"\n}\n'


def test_html_text_leaves_no_tag_or_attribute():
    assert html_text("</details><script>alert('x')</script>\" onload=\"x\x1b") == (
        "&lt;/details&gt;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&quot; onload=&quot;x\\x1b"
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "result_0.txt").write_text("log")
    return root


def test_output_path_refuses_the_checked_tree(tree, tmp_path):
    outside = tmp_path / "out.json"
    assert output_path(outside, [tree]) == outside.resolve()
    for inside in (tree / "x.json", tree / "sub" / "x.json", tree / "missing" / ".." / "x.json"):
        with pytest.raises(OutputError, match="inside the checked PATH"):
            output_path(inside, [tree])
    log = tree / "sub" / "result_0.txt"
    with pytest.raises(OutputError, match="inside the checked PATH"):
        output_path(tree / "sub" / "report.html", [log])  # beside a single checked log
    archive = tmp_path / "pkg.tar.gz"
    archive.write_bytes(b"")
    assert output_path(tmp_path / "beside.json", [archive])
    with pytest.raises(OutputError):
        output_path(archive, [archive])


def test_output_path_resolves_links_into_the_tree(tree, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tree, target_is_directory=True)
    with pytest.raises(OutputError, match="inside the checked PATH"):
        output_path(link / "x.json", [tree])
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tree / "planted.json")
    with pytest.raises(OutputError, match="inside the checked PATH"):
        write_text(dangling, "x", [tree])
    assert not (tree / "planted.json").exists()


def test_output_path_refuses_folders_and_missing_parents_and_shows_names_visibly(tree, tmp_path):
    with pytest.raises(OutputError, match="is a folder"):
        output_path(tmp_path, [tree])
    with pytest.raises(OutputError, match="does not exist") as error:
        output_path(tmp_path / "no\x1b[2J" / "x.json", [tree])
    assert "\x1b" not in str(error.value) and "no\\x1b[2J" in str(error.value)


def test_write_text_writes_utf8_and_appends(tree, tmp_path):
    target = tmp_path / "out.txt"
    assert write_text(target, "a \udcff\n", [tree]) == target.resolve()
    write_text(target, "b\n", [tree], append=True)
    assert target.read_bytes() == b"a \\udcff\nb\n"  # never a UnicodeEncodeError
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(OutputError, match="cannot write"):
            write_text(locked / "x.txt", "x", [tree])


def test_visible_data_shows_subclasses_of_str_and_of_containers_visibly():
    """A plugin's details may hold str subclasses (enums), as keys too, at any depth."""
    import enum
    from collections import OrderedDict

    from mlperf_audit.safety import visible_data

    class Name(str):
        pass

    class Colour(enum.StrEnum):
        RED = "red\x1b[31m"

    document = {Name("a\x1b[31m"): 1, "b": {Name("c\n"): [Name("d\x85"), Colour.RED, (1.5, float("nan"))]}}
    document["o"] = OrderedDict({Name("e\u202e"): Name("f\x07")})
    assert visible_data(document) == {
        "a\\x1b[31m": 1,
        "b": {"c\\x0a": ["d\\x85", "red\\x1b[31m", [1.5, None]]},
        "o": {"e\\u202e": "f\\x07"},
    }
