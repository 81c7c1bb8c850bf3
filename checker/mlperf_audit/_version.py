"""The version of mlperf-audit (one place, imported by the package and by whoever reports it)."""

__version__ = "0.1.0"
