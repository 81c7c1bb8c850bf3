"""The plugin host: loads every plugin of the ``mlperf_audit`` entry-point group, built-in or not.

Each entry point is loaded on its own; a plugin that fails to import, implements a hook that does
not exist, or registers a broken or duplicate rule is a `PluginError` (exit code 2), never
silently dropped. The engine (`RuleRunner`) is essential and cannot be disabled; every other
plugin, including the built-in rule packs, can be (`--disable-plugin NAME`).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
from typing import Any, Iterable, Iterator, Mapping

import pluggy

from ..config import Config, Setting, resolve_plugin_settings
from ..errors import PluginError
from ..report import PluginInfo
from ..rule import Rule, RuleDefinitionError, validate_rule_class
from . import hookspecs
from .runner import RuleRunner

ENTRY_POINT_GROUP = "mlperf_audit"
DISTRIBUTION = "mlperf-audit"
#: Set to a non-empty value to load only the plugins that ship with mlperf-audit.
DISABLE_AUTOLOAD_ENV = "MLPERF_AUDIT_DISABLE_PLUGIN_AUTOLOAD"
ESSENTIAL = "engine"


class PluginHost:
    """Loads plugins, collects their rules and formats, and exposes the hook caller."""

    def __init__(
        self,
        *,
        disabled: Iterable[str] = (),
        autoload_third_party: bool | None = None,
        plugins: Iterable[tuple[str, object]] = (),
    ) -> None:
        """`plugins`: extra (name, plugin) pairs registered after the entry points (tests, library use)."""
        self.disabled = set(disabled)
        if ESSENTIAL in self.disabled:
            raise PluginError(f"the plugin {ESSENTIAL!r} is essential and cannot be disabled")
        if autoload_third_party is None:
            autoload_third_party = not os.environ.get(DISABLE_AUTOLOAD_ENV)
        self.manager = pluggy.PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        #: Entry points found but not loaded (disabled, or third-party with autoload off): their
        #: settings tables are not errors.
        self.skipped: set[str] = set()
        self.errors: list[str] = []
        self._register(RuleRunner(), PluginInfo(ESSENTIAL, "mlperf_audit.engine", DISTRIBUTION, _version(), True))
        self._load_entry_points(autoload_third_party)
        for name, plugin in plugins:
            self._register(plugin, PluginInfo(name, type(plugin).__module__, "(registered in-process)", "-", False))
        try:
            self.manager.check_pending()
        except pluggy.PluginValidationError as error:
            self.errors.append(f"plugin {self.manager.get_name(error.plugin)!r}: {error}")
        self.rules: list[type[Rule]] = self._collect_rules()
        self.formats = self._collect_formats()
        self.settings: dict[str, tuple[Setting, ...]] = self._collect_settings()
        if self.errors:
            raise PluginError("\n".join(self.errors))

    @property
    def hook(self) -> Any:
        return self.manager.hook

    def _register(self, plugin: object, info: PluginInfo) -> None:
        try:
            self.manager.register(plugin, name=info.name)
        except (ValueError, pluggy.PluginValidationError) as error:
            self.errors.append(
                f"plugin {info.name!r} ({info.distribution} {info.version}) cannot be registered: {error}"
            )
            return
        self.plugins.append(info)

    def _load_entry_points(self, autoload_third_party: bool) -> None:
        seen: set[str] = set()
        # each `name` or `version` of a distribution parses its whole METADATA again: once per distribution
        described: dict[Any, tuple[str, str]] = {}
        for entry_point in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            distribution, version = "?", "?"
            if entry_point.dist is not None:
                where = getattr(entry_point.dist, "_path", None) or id(entry_point.dist)
                if where not in described:
                    header = entry_point.dist.metadata
                    described[where] = (header["Name"], header["Version"])
                distribution, version = described[where]
            builtin = distribution == DISTRIBUTION
            if entry_point.name in self.disabled or (not builtin and not autoload_third_party):
                self.skipped.add(entry_point.name)
                continue
            if entry_point.name in seen:
                self.errors.append(
                    f"two plugins are named {entry_point.name!r} (one from {distribution} {version}); "
                    "uninstall one of them"
                )
                continue
            seen.add(entry_point.name)
            try:
                plugin = entry_point.load()
            except Exception as error:  # any import-time failure of a plugin is reported, not raised
                self.errors.append(
                    f"failed to load plugin {entry_point.name!r} ({entry_point.value}) from {distribution} "
                    f"{version}: {type(error).__name__}: {error}"
                )
                continue
            self._register(plugin, PluginInfo(entry_point.name, entry_point.value, distribution, version, builtin))

    def _contributions(self, hook_name: str, what: str) -> Iterator[tuple[str, Any]]:
        """Calls one registration hook plugin by plugin, so each item is attributed to its plugin."""
        for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
            try:
                contributed = list(impl.function() or ())
            except Exception as error:  # a plugin's failure is reported with its name, not raised
                self.errors.append(
                    f"plugin {impl.plugin_name!r} failed to register its {what}: {type(error).__name__}: {error}"
                )
                continue
            for item in contributed:
                yield impl.plugin_name, item

    def _collect_rules(self) -> list[type[Rule]]:
        rules: dict[str, type[Rule]] = {}
        names: dict[str, type[Rule]] = {}
        for plugin, rule in self._contributions("mlperf_audit_register_rules", "rules"):
            try:
                validate_rule_class(rule)
            except RuleDefinitionError as error:
                self.errors.append(f"plugin {plugin!r}: {error}")
                continue
            if rule.code in rules and rules[rule.code] is not rule:
                self.errors.append(
                    f"rule code {rule.code} is registered twice: by {rules[rule.code].plugin!r} and {plugin!r}"
                )
                continue
            if rule.name in names and names[rule.name] is not rule:
                self.errors.append(f"rule name {rule.name!r} is used by {names[rule.name].code} and {rule.code}")
                continue
            rule.plugin = plugin
            rules[rule.code] = rule
            names[rule.name] = rule
        return sorted(rules.values(), key=lambda r: r.code)

    def _collect_formats(self) -> dict[str, Any]:
        formats: dict[str, Any] = {}
        for plugin, fmt in self._contributions("mlperf_audit_register_formats", "formats"):
            if fmt.name in formats:
                self.errors.append(f"output format {fmt.name!r} is registered twice (again by {plugin!r})")
                continue
            formats[fmt.name] = fmt
        return formats

    def _collect_settings(self) -> dict[str, tuple[Setting, ...]]:
        declared: dict[str, list[Setting]] = {}
        for plugin, setting in self._contributions("mlperf_audit_plugin_settings", "settings"):
            problem = (
                setting.problem() if isinstance(setting, Setting) else f"{setting!r} is not a mlperf_audit.Setting"
            )
            if problem is None and any(s.name == setting.name for s in declared.get(plugin, ())):
                problem = f"setting {setting.name!r} is declared twice"
            if problem is not None:
                self.errors.append(f"plugin {plugin!r}: {problem}")
                continue
            declared.setdefault(plugin, []).append(setting)
        return {plugin: tuple(settings) for plugin, settings in declared.items()}

    def plugin_settings(self, config: Config) -> dict[str, Mapping[str, Any]]:
        """The settings in force of every plugin that declares some (ConfigError for an unknown one)."""
        return resolve_plugin_settings(config, self.settings, self.skipped | self.disabled)

    def rule(self, selector: str) -> type[Rule] | None:
        wanted = selector.strip()
        for rule in self.rules:
            if rule.code == wanted.upper() or rule.name == wanted:
                return rule
        return None


def _version() -> str:
    from .._version import __version__

    return __version__
