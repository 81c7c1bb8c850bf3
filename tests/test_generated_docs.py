"""The generated documentation is current (`docs/generate.py --check`, `make docs` rewrites it): the rule
index, one page per rule (none missing, none extra) and the compliance table; and rule texts hold no
unfilled printf-style template.

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

from mlperf_audit.engine.plugins import PluginHost

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


def test_every_generated_doc_is_current(builtin_host):
    stale = [
        name for name, (current, expected) in generate.expected_files(REPO, builtin_host).items() if current != expected
    ]
    assert not stale, f"stale, missing or extra: {stale[:10]}: run `make docs` (python docs/generate.py)"


def test_compliance_rules_doc_is_current():
    current = (REPO / "docs" / "compliance-rules.md").read_text(encoding="utf-8")
    assert current == generate.expected_compliance_rules(), (
        "docs/compliance-rules.md is stale: run `make docs` (or python -m mlperf_audit_rules.compliance --update)"
    )


def test_rule_index_lists_every_builtin_prefix_once(builtin_host):
    table = generate.rules_table(REPO, builtin_host)
    builtin = {plugin.name for plugin in builtin_host.plugins if plugin.builtin}
    prefixes = {generate.prefix_of(rule.code) for rule in builtin_host.rules if rule.plugin in builtin}
    listed = re.findall(r"^\| `([A-Z]+)` \|", table, re.MULTILINE)
    assert sorted(listed) == sorted(prefixes) == listed


def test_every_builtin_rule_has_a_page_or_a_table(builtin_host):
    """A page per rule, as ruff has; the compliance rules, made by the hundred, are rows of their own table."""
    builtin = {plugin.name for plugin in builtin_host.plugins if plugin.builtin}
    pages = {path.stem for path in (REPO / "docs" / "rules").glob("*.md")} - {"README"}
    compliance = (REPO / "docs" / "compliance-rules.md").read_text(encoding="utf-8")
    index = (REPO / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    for rule in builtin_host.rules:
        if rule.plugin not in builtin:
            continue
        if generate.prefix_of(rule.code) in generate.RULE_TABLES and f"| {rule.code} |" in compliance:
            assert rule.code not in pages, rule.code
        else:
            assert rule.code in pages, f"docs/rules/{rule.code}.md is missing"
            assert f"[`{rule.code}`]({rule.code}.md)" in index, rule.code
    assert len(pages) == len(generate.paged_rules(builtin_host))


def test_a_rule_page_holds_the_rules_facts_doc_and_hint(builtin_host):
    (rule,) = [rule for rule in builtin_host.rules if rule.code == "RCP004"]
    page = (REPO / "docs" / "rules" / "RCP004.md").read_text(encoding="utf-8")
    assert page.startswith(generate.GENERATED) and "# RCP004: missing-rcp" in page
    for fact in (
        "| plugin | [`rcp`](../../rules/mlperf_audit_rules/rcp.py) |",
        "| severity | error |",
        "| scope | benchmark |",
    ):
        assert fact in page
    assert rule.doc() in page and f"## Hint\n\n{rule.fix_hint()}\n" in page
    assert "| rulesets | every |" in page

    class OnlySomeRounds(rule):  # type: ignore[misc,valid-type]  # no shipped rule limits its rounds yet
        rulesets = frozenset({"training-5.0.0", "training-4.1.0"})

    limited = generate.expected_page(OnlySomeRounds, builtin_host, REPO)
    assert "| rulesets | `training-4.1.0`, `training-5.0.0` |" in limited


def _copy_for_generation(tmp_path: Path) -> None:
    for name in ("pyproject.toml", "docs/compliance-rules.md", "docs/plugin-api.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copyfile(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "docs" / "rules", tmp_path / "docs" / "rules")
    for folder in ("checker", "rules"):  # the pages link the modules' files, so they must exist
        (tmp_path / folder).symlink_to(REPO / folder, target_is_directory=True)


def test_check_fails_with_a_diff_on_a_hand_edited_index(tmp_path, capsys):
    _copy_for_generation(tmp_path)
    assert generate.main([], root=tmp_path) == 0  # current whatever the repository's copies are
    assert generate.main(["--check"], root=tmp_path) == 0
    index = tmp_path / generate.RULE_INDEX
    index.write_text(re.sub(r"^\| `LOG` \|.*\n", "", index.read_text(encoding="utf-8"), flags=re.MULTILINE))
    capsys.readouterr()
    assert generate.main(["--check"], root=tmp_path) == 1
    diff = capsys.readouterr().out
    assert diff.startswith("--- a/docs/rules/README.md") and "\n+| `LOG` |" in diff
    assert generate.main([], root=tmp_path) == 0  # rewrites it
    assert generate.main(["--check"], root=tmp_path) == 0


def test_check_fails_on_a_missing_or_an_extra_page_and_writing_mends_both(tmp_path, capsys):
    _copy_for_generation(tmp_path)
    pages = tmp_path / generate.RULE_PAGES
    (pages / "LOG005.md").unlink()
    (pages / "LOG999.md").write_text("a rule that is gone\n")
    capsys.readouterr()
    assert generate.main(["--check"], root=tmp_path) == 1
    diff = capsys.readouterr().out
    assert "+++ b/docs/rules/LOG005.md" in diff and "--- a/docs/rules/LOG999.md" in diff
    assert generate.main([], root=tmp_path) == 0
    assert (pages / "LOG005.md").is_file() and not (pages / "LOG999.md").exists()
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

    from mlperf_audit.engine import hookspecs

    hooks = {name: f for name, f in vars(hookspecs).items() if hasattr(f, "mlperf_audit_spec")}
    assert len(hooks) >= 14
    for name, function in hooks.items():
        doc = inspect.getdoc(function) or ""
        for parameter in inspect.signature(function).parameters:
            assert f":param {parameter}:" in doc, f"{name} does not document {parameter}"
        assert ".. versionadded:: " in doc, name
        deprecated = function.mlperf_audit_spec["warn_on_impl"] is not None
        assert deprecated == (".. deprecated:: " in doc), f"{name}: warn_on_impl and `.. deprecated::` disagree"
