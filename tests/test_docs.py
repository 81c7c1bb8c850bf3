"""Documentation as a contract: rule docs, hook docs, README commands."""

from __future__ import annotations

import inspect
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


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_and_tested(hook):
    function = getattr(hookspecs, hook)
    assert inspect.getdoc(function), hook
    assert f"``{hook}``" in hookspecs.__doc__, f"{hook} is missing from the phase list"
    tests = "".join(path.read_text() for path in Path(__file__).parent.glob("test_*.py"))
    called_by_engine = (REPO / "checker" / "mlperf_audit").rglob("*.py")
    assert any(hook in path.read_text() for path in called_by_engine), f"{hook} is never called"
    assert hook in tests or hook.replace("mlperf_audit_", "") in tests, f"{hook} has no test"


def test_readme_keeps_the_two_commands():
    readme = (REPO / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
