"""The pluggy markers of the ``mlperf_audit`` project, apart from the hook specifications.

Plugins (the built-in formats and waivers included) import ``hookimpl`` from here, through
``mlperf_audit``; ``hookspecs`` uses ``hookspec`` and names the types each hook receives. Keeping
the markers alone is what lets ``hookspecs`` name those types without an import cycle.
"""

from __future__ import annotations

from typing import Callable, Protocol, TypeVar, overload

import pluggy

PROJECT = "mlperf_audit"
_F = TypeVar("_F", bound=Callable[..., object])


class _HookimplMarker(Protocol):
    """`pluggy.HookimplMarker`, typed so that a marked function keeps its signature: used bare
    (``@hookimpl``) or with options (``@hookimpl(trylast=True)``)."""

    @overload
    def __call__(self, function: _F) -> _F: ...

    @overload
    def __call__(
        self,
        function: None = None,
        *,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> Callable[[_F], _F]: ...


hookspec = pluggy.HookspecMarker(PROJECT)
#: Decorator that marks a plugin's hook implementation; keeps the function's signature for mypy.
hookimpl: _HookimplMarker = pluggy.HookimplMarker(PROJECT)
