"""Documentation as a contract: rule docs, hook docs, README commands."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from mlperf_audit import hookspecs

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
