"""The generated documentation is current (`docs/generate.py --check`, `make docs` rewrites it), and rule
texts hold no unfilled printf-style template.

Braced templates (`{name}`, `{key!r}`) and summaries cut with an ellipsis are tested in tests/test_docs.py.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mlperf_audit.plugins import PluginHost

REPO = Path(__file__).resolve().parent.parent


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while the module runs
    spec.loader.exec_module(module)
    return module


generate = _load_generator()


@pytest.fixture(scope="module")
def builtin_host() -> PluginHost:
    """The plugins shipped in this distribution only, as docs/generate.py sees them."""
    return PluginHost(autoload_third_party=False)


def test_readme_rule_table_is_current(builtin_host):
    current = (REPO / "README.md").read_text(encoding="utf-8")
    expected = generate.expected_readme(current, REPO, builtin_host)
    assert current == expected, "README.md's rule table is stale: run `make docs` (python docs/generate.py)"


def test_compliance_rules_doc_is_current():
    current = (REPO / "docs" / "compliance-rules.md").read_text(encoding="utf-8")
    assert current == generate.expected_compliance_rules(), (
        "docs/compliance-rules.md is stale: run `make docs` (or python -m mlperf_audit_rules.compliance --update)"
    )


def test_readme_table_lists_every_builtin_prefix_once(builtin_host):
    table = generate.rules_table(REPO, builtin_host)
    builtin = {plugin.name for plugin in builtin_host.plugins if plugin.builtin}
    prefixes = {generate.prefix_of(rule.code) for rule in builtin_host.rules if rule.plugin in builtin}
    listed = re.findall(r"^\| `([A-Z]+)` \|", table, re.MULTILINE)
    assert sorted(listed) == sorted(prefixes) == listed


def test_check_fails_with_a_diff_on_a_hand_edited_table(tmp_path, capsys):
    for name in ("pyproject.toml", "README.md", "docs/compliance-rules.md", "docs/plugin-api.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copyfile(REPO / name, tmp_path / name)
    for folder in ("checker", "rules"):  # the table links the modules' files, so they must exist
        (tmp_path / folder).symlink_to(REPO / folder, target_is_directory=True)
    assert generate.main([], root=tmp_path) == 0  # current whatever the repository's copies are
    assert generate.main(["--check"], root=tmp_path) == 0
    readme = tmp_path / "README.md"
    readme.write_text(re.sub(r"^\| `LOG` \|.*\n", "", readme.read_text(encoding="utf-8"), flags=re.MULTILINE))
    capsys.readouterr()
    assert generate.main(["--check"], root=tmp_path) == 1
    diff = capsys.readouterr().out
    assert diff.startswith("--- a/README.md") and "\n+| `LOG` |" in diff
    assert generate.main([], root=tmp_path) == 0  # rewrites it
    assert generate.main(["--check"], root=tmp_path) == 0


#: printf-style templates left unfilled: %s, %r, %d, %(name)s.
PRINTF_PLACEHOLDER = re.compile(r"%[srd]\b|%\(")


def test_no_rule_doc_or_summary_holds_a_printf_template(builtin_host):
    for rule in builtin_host.rules:
        for text in (re.sub(r"`[^`]*`", "", rule.doc()), rule.summary):  # code spans may show templates
            found = PRINTF_PLACEHOLDER.search(text)
            assert found is None, f"{rule.code}: {found.group()!r} in {text[max(0, found.start() - 40) :][:80]!r}"


def test_plugin_api_hook_reference_is_current():
    current = (REPO / "docs" / "plugin-api.md").read_text(encoding="utf-8")
    assert current == generate.expected_plugin_api(current), (
        "docs/plugin-api.md's hook reference is stale: run `make docs` (python docs/generate.py)"
    )


def test_every_hookspec_documents_each_parameter_and_the_release_that_brought_it():
    import inspect

    from mlperf_audit import hookspecs

    hooks = {name: f for name, f in vars(hookspecs).items() if hasattr(f, "mlperf_audit_spec")}
    assert len(hooks) >= 14
    for name, function in hooks.items():
        doc = inspect.getdoc(function) or ""
        for parameter in inspect.signature(function).parameters:
            assert f":param {parameter}:" in doc, f"{name} does not document {parameter}"
        assert ".. versionadded:: " in doc, name
        deprecated = function.mlperf_audit_spec["warn_on_impl"] is not None
        assert deprecated == (".. deprecated:: " in doc), f"{name}: warn_on_impl and `.. deprecated::` disagree"
