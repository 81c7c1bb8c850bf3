"""Documentation as a contract: rule docs, hook docs, the README's commands and its quick start."""

from __future__ import annotations

import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import published_rounds
from mlperf_audit.engine import hookspecs

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ("What it checks:", "Why it matters:", "Example:", "How to fix:")
HOOKS = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("mlperf_audit_")]


def test_every_rule_is_documented(host):
    for rule in host.rules:
        doc = rule.doc()
        missing = [section for section in SECTIONS if section not in doc]
        assert not missing, f"{rule.code} lacks {missing}"
        assert rule.fix_hint(), rule.code


def test_no_rule_doc_or_summary_holds_an_unfilled_template_or_a_cut(host):
    """Generated docs are filled before they are used (`explain CMP001` once began "{key!r}") and
    summaries are whole sentences, never cut with an ellipsis."""
    placeholder = re.compile(r"\{[a-z_]+(![rs])?(:[^}]*)?\}")
    for rule in host.rules:
        for text in (re.sub(r"`[^`]*`", "", rule.doc()), rule.summary):  # code spans may show braces
            assert not placeholder.search(text), f"{rule.code}: {placeholder.search(text).group()} in {text[:80]!r}"
        assert not rule.summary.rstrip().endswith(("...", "…")), f"{rule.code}: {rule.summary!r}"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_and_tested(hook):
    function = getattr(hookspecs, hook)
    assert inspect.getdoc(function), hook
    assert f"``{hook}``" in hookspecs.__doc__, f"{hook} is missing from the phase list"
    tests = "".join(path.read_text() for path in Path(__file__).parent.rglob("test_*.py"))
    # called: `hook.<name>(` or the name handed to the plugin host; hookspecs.py only declares it
    core = [path for path in (REPO / "checker" / "mlperf_audit").rglob("*.py") if path.name != "hookspecs.py"]
    call = re.compile(rf"hook\.{hook}\b|[\"']{hook}[\"']")
    assert any(call.search(path.read_text()) for path in core), f"{hook} is never called"
    assert re.search(rf"\b{hook}\b", tests), f"{hook} has no test naming it"


def test_readme_keeps_the_two_commands():
    readme = (REPO / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme


def _readme_console_block() -> tuple[str, list[str]]:
    """The quick start's command (after `$ cd <round> && `) and the output the README shows for it."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```console\n\$ cd \S+ && ([^\n]+)\n(.*?)```", readme, re.DOTALL)
    assert block, "the README lost its quick start"
    return block.group(1), block.group(2).rstrip("\n").split("\n")


@pytest.mark.skipif("4.1" not in published_rounds(), reason="the v4.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_readme_quick_start_shows_what_the_command_prints(tmp_path):
    """The quick start is real output: the same command, from the folder above the submitter, in a pipe (80
    columns, no colour), with the plugins a user's install has (not the tests' example plugin), prints
    exactly the lines the README shows (it once showed 53 infos where the check gave 57). The round's
    folder is named as the README's is (the header names it)."""
    command, shown = _readme_console_block()
    folder = tmp_path / re.search(r"\$ cd (\S+) &&", (REPO / "README.md").read_text()).group(1)
    shutil.copytree(published_rounds()["4.1"] / "Dell", folder / "Dell")
    executable = Path(sys.executable).with_name("mlperf-audit")
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    environ["MLPERF_AUDIT_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    result = subprocess.run(
        [str(executable), *shlex.split(command)[1:]],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout.rstrip("\n").split("\n") == shown
