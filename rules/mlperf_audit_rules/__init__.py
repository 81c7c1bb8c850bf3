"""The built-in rule packs of mlperf-audit, one family per module.

Each module registers its rules through the ``mlperf_audit`` entry-point group, exactly as a
third-party plugin does (see ``pyproject.toml``).
"""
