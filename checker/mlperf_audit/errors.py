"""The errors that end a run with exit code 2; anything wrong inside the package is a finding."""


class AuditError(Exception):
    """Base of every error that stops a check before or while it runs."""


class TargetError(AuditError):
    """PATH itself cannot be checked: missing, unreadable, or holding no results."""


class ConfigError(AuditError):
    """Invalid configuration or usage."""


class SelectionError(ConfigError):
    """A selector names no known rule."""


class PluginError(AuditError):
    """A plugin could not be loaded, or misbehaved."""
