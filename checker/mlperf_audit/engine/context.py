"""What one check runs in: the plugin host the engine needs, and the context rules receive."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping, Protocol, Sequence

from ..config import Config
from ..model import (
    Tree,
)
from ..rule import SCOPES, EngineContext, Rule


class Host(Protocol):
    """What the engine needs of the plugin host (`mlperf_audit.plugins.PluginHost`, which loads the
    plugins and registers the engine's own `RuleRunner`): the hook caller and the registered rules."""

    @property
    def hook(self) -> Any: ...

    @property
    def rules(self) -> list[type[Rule]]: ...

    def plugin_settings(self, config: Config) -> dict[str, Mapping[str, Any]]: ...


def new_context(tree: Tree, host: Host, config: Config, selected: Sequence[type[Rule]] = ()) -> EngineContext:
    """The context of one check (the `selected` rules instantiated by scope), or of scoring alone.
    Raises ConfigError when the configuration sets a plugin setting that no plugin declares."""
    context = EngineContext(
        config,
        tree,
        MappingProxyType({rule.code: rule for rule in host.rules}),
        frozenset(rule.code for rule in selected),
        host.plugin_settings(config),
        rules={scope: [] for scope in SCOPES},
    )
    for rule_class in selected:
        if rule_class.produced_by is None:
            context.rules[rule_class.scope].append(rule_class())
    return context
