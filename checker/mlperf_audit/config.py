"""Configuration: defaults, then a file, then the command line (the command line wins).

The file is, in this order: ``--config FILE``; ``.mlperf-audit.toml`` in the current directory
(top-level keys); ``pyproject.toml`` in the current directory (table ``[tool.mlperf-audit]``).
A file inside the checked PATH is not obeyed unless ``--trust-tree-config`` is given: a
submission must not be able to switch off its own checks.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from .errors import ConfigError
from .cache import default_directory
from .model import Severity

from . import rulesets

DEFAULT_RULESET = rulesets.DEFAULT
KNOWN_RULESETS = rulesets.CHOICES
FAIL_ON_CHOICES = ("error", "warning", "info", "never")
KEYS = {"select", "ignore", "fail-on", "ruleset", "partial", "waivers", "baseline", "cache-dir"}


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    ruleset: str = DEFAULT_RULESET  # "auto" until the package is discovered (api.resolve_ruleset)
    ruleset_inferred: bool = False  # `auto` resolved from the package (api.resolve_ruleset), not named by the user
    partial: bool = False  # missing runs are pending, not failures (a submitter's what-if)
    waivers: str | None = None  # a waivers file (mlperf_audit.waivers)
    baseline: str | None = None  # a baseline file: only new findings are reported
    cache_dir: str | None = None  # where parsed files are cached (mlperf_audit.cache); None: no cache
    sources: tuple[str, ...] = ()  # configuration files obeyed
    notes: tuple[str, ...] = field(default=())  # what was read but not obeyed, and why

    def fails(self, severity: Severity) -> bool:
        if self.fail_on == "never":
            return False
        return severity.rank >= Severity.parse(self.fail_on).rank

    def to_dict(self) -> dict[str, Any]:
        return {
            "select": list(self.select),
            "ignore": list(self.ignore),
            "fail_on": self.fail_on,
            "ruleset": self.ruleset,
            "partial": self.partial,
            "waivers": self.waivers,
            "baseline": self.baseline,
            "sources": list(self.sources) or ["defaults"],
            "notes": list(self.notes),
        }

    def describe(self) -> str:
        ignore = ",".join(self.ignore) or "-"
        sources = ", ".join(self.sources) or "defaults"
        partial = " partial" if self.partial else ""
        return f"select={','.join(self.select)} ignore={ignore} fail-on={self.fail_on}{partial} (from {sources})"


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve() if root.is_dir() else root.resolve().parent)
    except ValueError:
        return False
    return True


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as stream:
            return tomllib.load(stream)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the configuration: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def _table(path: Path) -> dict[str, Any] | None:
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("mlperf-audit") if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.mlperf-audit] must be a table")
        return table
    return data


def _strings(value: Any, key: str, where: Path | str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of rule codes, prefixes or names")
    return tuple(item.strip() for item in value if item.strip())


def _apply(config: Config, table: dict[str, Any], where: Path | str) -> Config:
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")
    changes: dict[str, Any] = {}
    if "select" in table:
        changes["select"] = _strings(table["select"], "select", where)
    if "ignore" in table:
        changes["ignore"] = _strings(table["ignore"], "ignore", where)
    if "fail-on" in table:
        changes["fail_on"] = _fail_on(table["fail-on"], where)
    if "ruleset" in table:
        changes["ruleset"] = _ruleset(table["ruleset"], where)
    for key in ("waivers", "baseline", "cache-dir"):
        if key in table:
            if not isinstance(table[key], str):
                raise ConfigError(f"{where}: {key} must be a {'folder' if key == 'cache-dir' else 'file'} name")
            changes[key.replace("-", "_")] = table[key]
    if "partial" in table:
        if not isinstance(table["partial"], bool):
            raise ConfigError(f"{where}: partial must be true or false")
        changes["partial"] = table["partial"]
    return replace(config, **changes)


def _fail_on(value: Any, where: Path | str) -> str:
    if not isinstance(value, str) or value.lower() not in FAIL_ON_CHOICES:
        raise ConfigError(f"{where}: fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {value!r}")
    return value.lower()


def _ruleset(value: Any, where: Path | str) -> str:
    if value not in KNOWN_RULESETS:
        raise ConfigError(f"{where}: unsupported ruleset {value!r}; supported: {', '.join(KNOWN_RULESETS)}")
    return str(value)


def load_config(
    *,
    target: Path,
    cwd: Path | None = None,
    config_file: str | None = None,
    trust_tree_config: bool = False,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    fail_on: str | None = None,
    ruleset: str | None = None,
    partial: bool | None = None,
    waivers: str | None = None,
    baseline: str | None = None,
    cache_dir: str | None = None,
    use_cache: bool = True,
) -> Config:
    """Builds the configuration in force; raises ConfigError for anything invalid."""
    config = Config()
    cwd = cwd or Path(os.getcwd())
    notes: list[str] = []
    if config_file is not None:
        path = Path(config_file)
        if _inside(path, target) and not trust_tree_config:
            raise ConfigError(
                f"{config_file}: the configuration file is inside the checked PATH; a package may not "
                "configure its own checks (pass --trust-tree-config if you trust it)"
            )
        table = _table(path)
        if table is None:
            raise ConfigError(f"{config_file}: no [tool.mlperf-audit] table")
        config = replace(_apply(config, table, path), sources=(str(path),))
    else:
        for name in (".mlperf-audit.toml", "pyproject.toml"):
            path = cwd / name
            if not path.is_file():
                continue
            table = _table(path)
            if table is None:
                continue
            if _inside(path, target) and not trust_tree_config:
                notes.append(
                    f"{name} in the current directory is inside the checked PATH and was not obeyed "
                    "(pass --trust-tree-config to use it)"
                )
                break
            config = replace(_apply(config, table, path), sources=(str(path),))
            break
    cli: dict[str, Any] = {}
    if select is not None:
        cli["select"] = list(select)
    if ignore is not None:
        cli["ignore"] = list(ignore)
    if fail_on is not None:
        cli["fail-on"] = fail_on
    if ruleset is not None:
        cli["ruleset"] = ruleset
    if partial:
        cli["partial"] = True
    if waivers is not None:
        cli["waivers"] = waivers
    if baseline is not None:
        cli["baseline"] = baseline
    if cli:
        config = _apply(config, cli, "command line")
        config = replace(config, sources=config.sources + ("command line",))
    if config.waivers and _inside(Path(config.waivers), target) and not trust_tree_config:
        raise ConfigError(f"{config.waivers}: the waivers file is inside the checked PATH; a package may not waive "
                          "its own findings (pass --trust-tree-config if you trust it)")
    if not use_cache:
        config = replace(config, cache_dir=None)
    else:
        if cache_dir is not None:  # where to keep a cache changes no result: not a source of the configuration
            config = replace(config, cache_dir=cache_dir)
        elif config.cache_dir is None:
            config = replace(config, cache_dir=str(default_directory()))
        # The tool never writes into the package it checks (a file or an archive holds no cache).
        if target.is_dir() and _inside(Path(config.cache_dir), target):
            notes.append(f"the cache directory {config.cache_dir} is inside the checked PATH; no cache was used")
            config = replace(config, cache_dir=None)
    return replace(config, notes=tuple(notes))
