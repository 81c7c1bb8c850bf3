"""Configuration: defaults, then a file, then the command line (the command line wins).

The file is ``--config FILE``, else the nearest one found walking up from the current directory to
the filesystem root, as ruff finds its own: in each folder, ``.mlperf-audit.toml`` (top-level
keys), then ``pyproject.toml`` if it has a ``[tool.mlperf-audit]`` table (one without the table
does not end the walk). A relative ``waivers``, ``baseline`` or ``cache-dir`` in a file is read
from the folder that holds the file. A table or key that is almost the right one
(``[tool.mlperf_audit]``, ``fail_on``) is a configuration error naming the right one.

Where a file may come from is a security decision, because a package must not be able to switch
off its own checks. A file inside the checked PATH, or inside the git repository that holds PATH
(a pull request can edit both), is *tree configuration*: it is obeyed only where it makes the
checks stricter (``select`` may add rules, never remove them; ``fail-on`` may only go lower), and
the report names every key it dropped. It may name the round (``ruleset``): that is the
submitter's own repository saying which round its package is for; the report's header says the
file named it, PKG020 still compares the logs' dates with it, and a folder above the submissions
that names another round wins over it. ``--trust-tree-config`` obeys it whole. ``cache-dir`` is
never taken from tree configuration, trusted or not: where the tool keeps its cache is the
user's, and a cache folder is used only if the user owns it and nobody else can write to it
(`mlperf_audit.reading.cache.secure_directory`).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable

from . import archives, suggest
from .errors import ConfigError
from .model import Severity
from .reading import cache
from .reading.cache import default_directory
from .reference import rulesets
from .suggest import did_you_mean

DEFAULT_RULESET = rulesets.DEFAULT
KNOWN_RULESETS = rulesets.CHOICES
FAIL_ON_CHOICES = ("error", "warning", "info", "never")
KEYS = {"select", "ignore", "fail-on", "ruleset", "partial", "waivers", "baseline", "cache-dir", "plugins"}
#: The files looked for in each folder, walking up from the current one, nearest first.
FILE_NAMES = (".mlperf-audit.toml", "pyproject.toml")
TABLE = "mlperf-audit"
#: Settings that name a file or folder: relative ones are read from the configuration file's folder.
PATH_KEYS = ("waivers", "baseline", "cache-dir")


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    ruleset: str = DEFAULT_RULESET  # "auto" until the package is discovered (api.resolve_ruleset)
    ruleset_inferred: bool = False  # `auto` resolved from the package (api.resolve_ruleset), not named by the user
    #: What named the round in force ("option", "configuration", "tree configuration" or "folder"),
    #: and which file or folder did: said in every report's header and metadata (`ruleset_named_by`).
    #: Empty: nothing named it (`auto` took the newest round allowing every benchmark).
    ruleset_from: str = ""
    ruleset_where: str = ""
    #: When nothing named the round: the round the logs' dates fit instead of the one taken, if they
    #: fit another (`rulesets.dates_fit_another`; PKG024 reports it). Empty otherwise.
    ruleset_dates_fit: str = ""
    partial: bool = False  # missing runs are pending, not failures (a submitter's what-if)
    waivers: str | None = None  # a waivers file (mlperf_audit.waivers)
    baseline: str | None = None  # a baseline file: only new findings are reported
    cache_dir: str | None = None  # where parsed files are cached (mlperf_audit.reading.cache); None: no cache
    sources: tuple[str, ...] = ()  # configuration files obeyed
    notes: tuple[str, ...] = field(default=())  # what was read but not obeyed, and why
    #: The `plugins` table as written ((plugin, ((setting, value), ...)), ...), checked against what each
    #: plugin declares when a check starts (`resolve_plugin_settings`): no plugin is loaded here.
    plugins: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()

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
            "ruleset_from": {
                "kind": self.ruleset_kind,
                "where": self.ruleset_where or None,
                "text": self.ruleset_named_by(),
            },
            "partial": self.partial,
            "waivers": self.waivers,
            "baseline": self.baseline,
            "sources": list(self.sources) or ["defaults"],
            "notes": list(self.notes),
            # only when set, so that a report without plugin settings reads as it did before they existed
            **({"plugins": {name: dict(values) for name, values in self.plugins}} if self.plugins else {}),
        }

    @property
    def ruleset_kind(self) -> str:
        """What named the round: "option", "configuration", "tree configuration", "folder" or "none"
        (a `Config` built with a named ruleset, as the API allows, counts as configuration)."""
        if self.ruleset_from:
            return self.ruleset_from
        return "none" if self.ruleset_inferred or self.ruleset == DEFAULT_RULESET else "configuration"

    @property
    def round_guessed(self) -> bool:
        """Nothing named the round, and the logs' dates fit another than the one taken (PKG024)."""
        return bool(self.ruleset_dates_fit) and not self.ruleset_from

    def ruleset_named_by(self) -> str:
        """Where the round in force comes from, as the report's header says it."""
        where = self.ruleset_where
        if self.ruleset_kind == "configuration" and not where:
            return "named by the configuration"
        if self.ruleset_from == "option":
            return "named by --ruleset"
        if self.ruleset_from == "configuration":
            return f"named by {where}"
        if self.ruleset_from == "tree configuration":
            return f"named by {where}, inside the checked tree"
        if self.ruleset_from == "folder":
            return f"named by the folder '{where}'"
        return "not named: the newest round allowing every benchmark"

    def describe(self) -> str:
        ignore = ",".join(self.ignore) or "-"
        sources = ", ".join(self.sources) or "defaults"
        partial = " partial" if self.partial else ""
        return f"select={','.join(self.select)} ignore={ignore} fail-on={self.fail_on}{partial} (from {sources})"


def _is_archive(target: Path) -> bool:
    """An archive PATH is one file: nothing beside it is the package's (the user's configuration
    and waivers may sit next to it), so the folder that holds it is not the checked tree."""
    return archives.is_archive(target)


def _inside(path: Path, root: Path) -> bool:
    if _is_archive(root):
        return path.resolve() == root.resolve()
    try:
        path.resolve().relative_to(root.resolve() if root.is_dir() else root.resolve().parent)
    except ValueError:
        return False
    return True


def repository_root(target: Path) -> Path | None:
    """The work tree of the git repository holding `target`: the nearest folder *above* it with a
    `.git` folder or file (a `.git` inside the checked tree is the package's own: it cannot say
    where the repository that holds the package ends)."""
    folder = target.resolve()
    for candidate in folder.parents:
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def in_tree(path: Path, target: Path) -> str | None:
    """Why `path` is tree configuration for a check of `target` (None: it is not). A linked file
    counts where it lies as well as where it points: the tree chose both."""
    if _lies_in(path, target):
        return "inside the checked PATH"
    if _is_archive(target):
        return None  # the repository around an archive is whoever keeps it, not the package
    repository = repository_root(target)
    if repository is not None and _lies_in(path, repository):
        return "inside the repository that holds the checked PATH"
    return None


def _lies_in(path: Path, root: Path) -> bool:
    """`path` under `root` (a file root: its folder; an archive: itself), each taken as written or
    through its links."""
    if _is_archive(root):
        return any(place == root.resolve() for place in (Path(os.path.abspath(path)), path.resolve()))
    base = root if root.is_dir() else root.parent
    folders = {Path(os.path.abspath(base)), base.resolve()}
    return any(
        place.is_relative_to(folder) for place in (Path(os.path.abspath(path)), path.resolve()) for folder in folders
    )


#: What tree configuration may do: make checks stricter, never relax or redirect them.
STRICTER_ONLY = ("select", "fail-on")
#: What tree configuration may also do: name the round its package belongs to (a submitter's own
#: repository checked by its owner, on the command line or in pre-commit). The logs' dates still
#: guard it (PKG020), a folder above the submissions that names another round wins over it
#: (`api.resolve_ruleset`), and the Action never reads the checked tree's configuration at all.
TREE_NAMES = ("ruleset",)


def _stricter_only(config: Config, table: dict[str, Any], where: Path) -> tuple[Config, list[str]]:
    """Applies the keys of an untrusted `table` that make checks stricter; returns the keys dropped."""
    _apply(config, table, where)  # invalid values are errors whoever wrote them
    dropped = sorted(key for key in table if key not in STRICTER_ONLY + TREE_NAMES)
    changes: dict[str, Any] = {}
    if "ruleset" in table:
        changes["ruleset"] = _ruleset(table["ruleset"], where)
    if "select" in table and "ALL" not in config.select:
        added = tuple(code for code in _strings(table["select"], "select", where) if code not in config.select)
        changes["select"] = config.select + added
    if "fail-on" in table:
        wanted = _fail_on(table["fail-on"], where)
        if _fail_rank(wanted) < _fail_rank(config.fail_on):
            changes["fail_on"] = wanted
        elif _fail_rank(wanted) > _fail_rank(config.fail_on):
            dropped.append("fail-on")
    return replace(config, **changes), sorted(dropped)


def _fail_rank(value: str) -> int:
    """Lower is stricter: `info` fails on the most findings, `never` on none."""
    return len(Severity) + 1 if value == "never" else Severity.parse(value).rank


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as stream:
            return tomllib.load(stream)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the configuration: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib recurses into each array and inline table
        raise ConfigError(f"{path}: arrays or tables nest too deeply to read") from None


def _squashed(name: str) -> str:
    return re.sub(r"[-_. ]", "", name.lower())


def _near_miss(names: Iterable[object]) -> str | None:
    """Among table names, one that was meant as `mlperf-audit` (`mlperf_audit`, `MLPerf-Audit`,
    `mlperf-audti`): such a table is never read, and saying nothing would let it look obeyed."""
    tables = [name for name in names if isinstance(name, str) and name != TABLE]
    for name in tables:
        if _squashed(name) == _squashed(TABLE):
            return name
    # similar names only: `suggest.closest` would also offer a stem or an extension of ours, and
    # `[tool.mlperf]` or a plugin's `[tool.mlperf-audit-example]` is another tool's table, no typo
    by_folded = {name.casefold(): name for name in tables}
    close = difflib.get_close_matches(TABLE, list(by_folded), n=1, cutoff=0.8)
    return by_folded[close[0]] if close else None


def _table(path: Path) -> dict[str, Any] | None:
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get(TABLE) if isinstance(tool, dict) else None
        if table is None:
            meant = _near_miss(tool) if isinstance(tool, dict) else None
            if meant is not None:
                raise ConfigError(f"{path}: [tool.{meant}] is not read; the table is [tool.{TABLE}]")
            meant = TABLE if TABLE in data else _near_miss(data)
            if meant is not None:
                raise ConfigError(f"{path}: [{meant}] is not read; the table is [tool.{TABLE}]")
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.{TABLE}] must be a table")
        return table
    tool = data.get("tool")
    if isinstance(tool, dict) and (TABLE in tool or _near_miss(tool)):
        raise ConfigError(
            f"{path}: settings of {path.name} are top-level keys (select = [...]), not a "
            f"[tool.{TABLE}] table, which belongs in pyproject.toml"
        )
    return data


def find_config(cwd: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest configuration file from `cwd` up to the filesystem root, and its table, as ruff
    finds its own (`find_settings_toml`): a folder's `.mlperf-audit.toml` before its
    `pyproject.toml`; a `pyproject.toml` without `[tool.mlperf-audit]` is passed over. The walk does
    not stop at a repository's root, nor does ruff's."""
    for folder in (cwd, *cwd.parents):
        for name in FILE_NAMES:
            candidate = folder / name
            if candidate.is_file():
                table = _table(candidate)
                if table is not None:
                    return candidate, table
    return None


def _relative_to_file(table: dict[str, Any], path: Path) -> dict[str, Any]:
    """The table with its relative file and folder names read from `path`'s folder (as written
    when that is where they are read from anyway), so that a file found above the current folder
    names the same files wherever it is found from."""
    folder = path.parent
    if Path(os.path.abspath(folder)) == Path(os.path.abspath(os.getcwd())):  # where a relative name is read anyway
        return table
    return {
        key: str(folder / value) if key in PATH_KEYS and isinstance(value, str) and not os.path.isabs(value) else value
        for key, value in table.items()
    }


def _shown(path: Path, cwd: Path, named: bool) -> str:
    """How a note names the configuration file: as given, or where it was found from `cwd`."""
    if named:
        return str(path)
    if path.parent == cwd:
        return f"{path.name} in the current directory"
    return f"{os.path.relpath(path, cwd)} (found above the current directory)"


def _strings(value: Any, key: str, where: Path | str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of rule codes, prefixes or names")
    return tuple(item.strip() for item in value if item.strip())


def _apply(config: Config, table: dict[str, Any], where: Path | str) -> Config:
    unknown = sorted(set(table) - KEYS)
    if unknown:
        guesses = [
            f"{name!r}: did you mean {close[0]!r}?"
            for name in unknown
            if not isinstance(table[name], dict)  # a sub-table is no misspelt setting
            for close in [suggest.closest(name.replace("_", "-"), sorted(KEYS), count=1, stems_first=False)]
            if close
        ]
        raise ConfigError(
            f"{where}: unknown setting(s) {', '.join(unknown)}"
            + (f" ({'; '.join(guesses)})" if guesses else "")
            + f"; known: {', '.join(sorted(KEYS))}"
        )
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
    if "plugins" in table:
        changes["plugins"] = plugin_tables(table["plugins"], where)
    return replace(config, **changes)


def plugin_tables(value: Any, where: Path | str) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    if not isinstance(value, dict) or not all(isinstance(table, dict) for table in value.values()):
        raise ConfigError(f"{where}: plugins must hold one table per plugin ([tool.{TABLE}.plugins.NAME])")
    return tuple(
        (name, tuple((key, _frozen(item)) for key, item in sorted(table.items())))
        for name, table in sorted(value.items())
    )


def _frozen(value: Any) -> Any:
    """A TOML value that cannot change under the frozen `Config` (an array becomes a tuple)."""
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, _frozen(item)) for key, item in sorted(value.items()))
    return value


#: The types a plugin setting may have: what TOML writes without a table.
SETTING_TYPES: tuple[type, ...] = (bool, int, float, str, tuple)


@dataclass(frozen=True)
class Setting:
    """One setting a plugin declares (hook `mlperf_audit_plugin_settings`), read from
    `[tool.mlperf-audit.plugins.<plugin>]` (`[plugins.<plugin>]` in `.mlperf-audit.toml`).

    `type` is `bool`, `int`, `float`, `str` or `tuple` (a TOML array, of strings); an `int` is
    accepted where a `float` is declared. A rule reads the value in force with
    `context.settings_of(self.plugin)[name]`. Like every setting but `select` and `fail-on`, a plugin
    setting in tree configuration (inside the checked PATH or its repository) is not obeyed unless
    `--trust-tree-config` is given.
    """

    name: str
    type: type
    default: Any
    help: str

    def problem(self) -> str | None:
        """What is wrong with the declaration itself, or None."""
        if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", self.name):
            return f"setting name {self.name!r} is not kebab-case"
        if self.type not in SETTING_TYPES:
            return f"setting {self.name!r}: type {self.type!r} is not one of bool, int, float, str, tuple"
        if not self.help.strip():
            return f"setting {self.name!r} has no help"
        return self.invalid(self.default)

    def invalid(self, value: Any) -> str | None:
        """Why `value` cannot be this setting's, or None."""
        if isinstance(value, bool) and self.type is not bool:
            return f"{self.name} must be {self._kind()}, not {value!r}"
        if self.type is float and isinstance(value, int):
            return None
        if not isinstance(value, self.type) or (
            isinstance(value, tuple) and not all(isinstance(item, str) for item in value)
        ):
            return f"{self.name} must be {self._kind()}, not {value!r}"
        return None

    def _kind(self) -> str:
        kinds = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
        return kinds.get(self.type, "a list of strings")


def resolve_plugin_settings(
    config: Config, declared: dict[str, tuple[Setting, ...]], skipped: Iterable[str] = ()
) -> dict[str, Any]:
    """Each declaring plugin's settings in force (read-only mappings): its defaults, overridden by the
    configuration's `plugins` table. Raises ConfigError, with a did-you-mean, for a table naming no
    loaded plugin (unless it is one of the `skipped` ones: disabled or not autoloaded) or a key that
    its plugin does not declare, and for a value of the wrong type."""
    where = ", ".join(config.sources) or "the configuration"
    resolved = {name: {s.name: s.default for s in settings} for name, settings in declared.items()}
    skipped = set(skipped)
    for plugin, values in config.plugins:
        if plugin not in declared:
            if plugin in skipped:
                continue
            hint = did_you_mean(plugin, sorted(declared)) if declared else ""
            known = (
                f"; plugins with settings: {', '.join(sorted(declared))}" if declared else "; no plugin has settings"
            )
            raise ConfigError(
                f"{where}: [plugins.{plugin}]: no loaded plugin {plugin!r} declares settings{hint}{known}"
            )
        by_name = {setting.name: setting for setting in declared[plugin]}
        for key, value in values:
            setting = by_name.get(key)
            if setting is None:
                hint = did_you_mean(key.replace("_", "-"), sorted(by_name))
                raise ConfigError(
                    f"{where}: [plugins.{plugin}]: unknown setting {key!r}{hint}; known: {', '.join(sorted(by_name))}"
                )
            problem = setting.invalid(value)
            if problem:
                raise ConfigError(f"{where}: [plugins.{plugin}]: {problem}")
            resolved[plugin][key] = value
    return {name: MappingProxyType(values) for name, values in resolved.items()}


def _fail_on(value: Any, where: Path | str) -> str:
    if not isinstance(value, str) or value.lower() not in FAIL_ON_CHOICES:
        raise ConfigError(f"{where}: fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {value!r}")
    return value.lower()


def _ruleset(value: Any, where: Path | str) -> str:
    if value not in KNOWN_RULESETS:
        hint = did_you_mean(value, KNOWN_RULESETS) if isinstance(value, str) else ""
        raise ConfigError(f"{where}: unsupported ruleset {value!r}{hint}; supported: {', '.join(KNOWN_RULESETS)}")
    return str(value)


def _from_file(
    config: Config, path: Path, table: dict[str, Any], shown: str, target: Path, trusted: bool, notes: list[str]
) -> Config:
    """`config` with the file `path`'s `table` applied (tree configuration only where it makes the
    checks stricter or names the round, unless `trusted`); what is not obeyed is added to `notes`."""
    table = _relative_to_file(table, path)
    where_from = in_tree(path, target)
    file_cache_dir = table.get("cache-dir")
    table = {key: value for key, value in table.items() if key != "cache-dir"}
    if where_from and not trusted:
        config, dropped = _stricter_only(config, table, path)
        if dropped:
            notes.append(
                f"{shown} is {where_from}: obeyed only where it makes the checks stricter or names the round; "
                f"not obeyed: {', '.join(dropped)} (pass --trust-tree-config to obey them)"
            )
    else:
        config = _apply(config, table, path)
    config = replace(config, sources=(str(path),))
    if "ruleset" in table and config.ruleset != rulesets.AUTO:
        kind = "tree configuration" if where_from else "configuration"
        config = replace(config, ruleset_from=kind, ruleset_where=shown)
    if file_cache_dir is not None:
        _apply(Config(), {"cache-dir": file_cache_dir}, path)
        if where_from:
            notes.append(
                f"{shown} is {where_from}: its cache-dir is never obeyed (a checked tree does not "
                "choose where the cache is; use --cache-dir or $MLPERF_AUDIT_CACHE_DIR)"
            )
        else:
            config = replace(config, cache_dir=file_cache_dir)
    return config


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
    discover: bool = True,
    config_label: str | None = None,
) -> Config:
    """Builds the configuration in force; raises ConfigError for anything invalid. Without
    `config_file`, the file is the nearest one above `cwd` (`find_config`), unless `discover` is
    False (the GitHub Action: a base commit without configuration means the defaults). The report
    names the file as `config_label` says, if given (the Action's copy of the base commit's file)."""
    config = Config()
    cwd = cwd or Path(os.getcwd())
    notes: list[str] = []
    path: Path | None = None
    table: dict[str, Any] | None = None
    if config_file is not None:
        path = Path(config_file)
        table = _table(path)
        if table is None:
            raise ConfigError(f"{config_file}: no [tool.{TABLE}] table")
    elif discover:
        found = find_config(cwd)
        if found is not None:
            path, table = found
    if path is not None and table is not None:
        shown = config_label or _shown(path, cwd, named=config_file is not None)
        config = _from_file(config, path, table, shown, target, trust_tree_config, notes)
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
        if "ruleset" in cli:  # `--ruleset auto` leaves the round to be taken from the package
            by_option = "option" if config.ruleset != rulesets.AUTO else ""
            config = replace(config, ruleset_from=by_option, ruleset_where="")
        config = replace(config, sources=config.sources + ("command line",))
    for key, named in (("waivers", config.waivers), ("baseline", config.baseline)):
        if named and _inside(Path(named), target) and not trust_tree_config:
            raise ConfigError(
                f"{named}: the {key} file is inside the checked PATH; a package may not "
                f"{'waive' if key == 'waivers' else 'choose the baseline of'} its own findings "
                "(pass --trust-tree-config if you trust it)"
            )
    if not use_cache:
        config = replace(config, cache_dir=None)
    else:
        if cache_dir is not None:  # where to keep a cache changes no result: not a source of the configuration
            config = replace(config, cache_dir=cache_dir)
        elif config.cache_dir is None:
            config = replace(config, cache_dir=str(default_directory()))
        assert config.cache_dir is not None
        cache_directory = Path(config.cache_dir)
        # The tool never writes into the package it checks (a file or an archive holds no cache).
        if target.is_dir() and _inside(cache_directory, target):
            notes.append(f"the cache directory {config.cache_dir} is inside the checked PATH; no cache was used")
            config = replace(config, cache_dir=None)
        else:
            refused = cache.secure_directory(cache_directory)
            if refused:
                notes.append(f"the cache directory {config.cache_dir} was not used: {refused}")
                config = replace(config, cache_dir=None)
    return replace(config, notes=tuple(notes))  # shown visibly where they are printed (report, cli)
