"""The static gates, run by `make test` like every other test: mypy over checker/ and rules/ with zero
errors, ruff's lint and format check over the code, and the import contracts that keep the layers (pyproject.toml:
[tool.mypy], [tool.ruff], [tool.importlinter])."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_reports_no_error() -> None:
    result = _run("mypy")  # the files and options come from [tool.mypy]
    assert result.returncode == 0, f"mypy failed (exit {result.returncode}):\n{result.stdout}{result.stderr}"


def test_ruff_lint_reports_nothing() -> None:
    result = _run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, f"ruff check failed (exit {result.returncode}):\n{result.stdout}{result.stderr}"


def test_ruff_format_changes_nothing() -> None:
    result = _run("ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, (
        f"ruff format would change files (run `ruff format .`):\n{result.stdout}{result.stderr}"
    )


def test_import_contracts_are_kept() -> None:
    """[tool.importlinter]: rule packs never import the engine, the host, the CLI or the commands, nor
    each other, and what they share (`support`) imports none of them; the core never imports a pack;
    the core's modules form layers without a cycle."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"import contracts broken:\n{result.stdout}{result.stderr}"
    assert f"{len(_contracts())} kept, 0 broken" in result.stdout


def _contracts() -> list[dict[str, object]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = project["tool"]["importlinter"]["contracts"]
    return contracts


def test_every_folder_of_the_core_is_a_layer_with_a_contract_of_its_own() -> None:
    """The core's top-level layers name each of its folders, and each folder's modules are held by a contract
    of their own (layers, or independence when no module may import another): a new folder, or a module
    added to one, is placed in the layers before it can import anything."""
    core = ROOT / "checker" / "mlperf_audit"
    folders = {path.parent.name for path in core.glob("*/__init__.py")}
    contracts = _contracts()
    (top,) = [c for c in contracts if c.get("containers") == ["mlperf_audit"]]
    top_layers = {name.strip() for layer in top["layers"] for name in str(layer).split("|")}  # type: ignore[attr-defined]
    assert folders - top_layers == set(), "folders of the core missing from its top-level layers"
    for folder in sorted(folders):
        modules = {path.stem for path in (core / folder).glob("*.py") if path.stem != "__init__"}
        modules |= {path.parent.name for path in (core / folder).glob("*/__init__.py")}
        held: set[str] = set()
        for contract in contracts:
            if contract.get("containers") == [f"mlperf_audit.{folder}"]:
                held |= {name.strip() for layer in contract["layers"] for name in str(layer).split("|")}  # type: ignore[attr-defined]
            prefix = f"mlperf_audit.{folder}."
            held |= {str(m)[len(prefix) :] for m in contract.get("modules", ()) if str(m).startswith(prefix)}  # type: ignore[attr-defined]
        assert modules <= held, f"modules of {folder}/ in no contract of the folder: {sorted(modules - held)}"


def test_every_built_in_pack_is_held_independent() -> None:
    """The independence contract and the forbidden one from `support` name every built-in pack that
    pyproject.toml registers, so that a new pack cannot import another unnoticed."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packs = {
        module
        for module in project["project"]["entry-points"]["mlperf_audit"].values()
        if module.startswith("mlperf_audit_rules.")
    }
    contracts = project["tool"]["importlinter"]["contracts"]
    independent = [
        set(c["modules"])
        for c in contracts
        if c["type"] == "independence" and all(m.startswith("mlperf_audit_rules.") for m in c["modules"])
    ]
    from_support = [
        set(c["forbidden_modules"])
        for c in contracts
        if c["type"] == "forbidden" and c["source_modules"] == ["mlperf_audit_rules.support"]
    ]
    assert independent == [packs]
    assert from_support == [packs]


PUBLIC_API_USERS = [ROOT / "rules" / "mlperf_audit_rules", ROOT / "plugins" / "mlperf-audit-example"]


def _core_imports(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) of every import of the core (`mlperf_audit...`) in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and (node.module == "mlperf_audit" or node.module.startswith("mlperf_audit."))
        ):
            found.append((node.lineno, node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name, ())
                for alias in node.names
                if alias.name == "mlperf_audit" or alias.name.startswith("mlperf_audit.")
            ]
    return found


def test_rule_packs_import_only_the_public_rule_api() -> None:
    """Built-in packs use exactly what a third-party plugin may: `from mlperf_audit import <name in __all__>`."""
    import mlperf_audit

    public = set(mlperf_audit.__all__)
    wrong = []
    for folder in PUBLIC_API_USERS:
        for path in sorted(folder.rglob("*.py")):
            for line, module, names in _core_imports(path):
                if module != "mlperf_audit" or not names or not set(names) <= public:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: {module} {', '.join(names)}")
    assert not wrong, "imports beyond the public rule API:\n" + "\n".join(wrong)


def test_no_core_module_imports_the_package_that_re_exports_it() -> None:
    """`mlperf_audit/__init__.py` is the public API and imports the core's modules: a module importing
    it back would close a cycle the layers contract cannot see (it only orders the package's children)."""
    import grimp

    graph = grimp.build_graph("mlperf_audit", include_external_packages=False)
    back = sorted(
        module
        for module in graph.find_modules_that_directly_import("mlperf_audit")
        if module.startswith("mlperf_audit.")
    )
    assert not back, f"these modules import mlperf_audit's __init__: {back}"


FIRST_PARTY = {"mlperf_audit", "mlperf_audit_rules"}


#: Entry-point groups whose modules only their host loads: a pytest plugin runs inside pytest, which is there.
HOSTED_ENTRY_POINTS = {"pytest11": "pytest"}


def _imported_top_level_modules(folders: list[Path], hosted: dict[Path, str]) -> dict[str, str]:
    """Every module outside the standard library and the project that the code imports, by any `import`
    statement (inside functions too: rcp.py imports scipy only when it interpolates), with one place that
    imports it; less the host of a file that only its host loads (`hosted`)."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top not in sys.stdlib_module_names and top not in FIRST_PARTY and hosted.get(path) != top:
                        found.setdefault(top, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _undeclared(imported: dict[str, str], declared: set[str]) -> list[str]:
    """The imports that no declared distribution provides (the installed distributions say which modules
    each provides: `yaml` is PyYAML's)."""
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    providers = packages_distributions()
    wrong = []
    for module, where in sorted(imported.items()):
        distributions = {canonicalize_name(name) for name in providers.get(module, [])}
        if not distributions & declared:
            shown = ", ".join(sorted(distributions)) or "no installed distribution"
            wrong.append(f"{where}: imports {module} ({shown}), not in [project] dependencies")
    return wrong


def test_every_imported_package_is_declared() -> None:
    """What checker/ and rules/ import is in [project] dependencies, not merely installed because a
    dependency (or the test tools) brought it: scipy came with mlperf-logging before it was declared."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {canonicalize_name(Requirement(line).name) for line in project["dependencies"]}
    hosted = {
        ROOT / ("checker" if module.startswith("mlperf_audit.") else "rules") / f"{module.replace('.', '/')}.py": host
        for group, host in HOSTED_ENTRY_POINTS.items()
        for module in project["entry-points"].get(group, {}).values()
    }
    assert all(path.is_file() for path in hosted), hosted
    folders = [ROOT / "checker" / "mlperf_audit", ROOT / "rules" / "mlperf_audit_rules"]
    imported = _imported_top_level_modules(folders, hosted)
    assert {"yaml", "scipy", "numpy", "mlperf_logging"} <= imported.keys()  # the scan sees aliases and lazy imports
    assert not _undeclared(imported, declared), "\n".join(_undeclared(imported, declared))
    # and it would say so: without scipy declared, rcp.py's import is reported
    assert [line for line in _undeclared(imported, declared - {"scipy"}) if "imports scipy (scipy)" in line]
