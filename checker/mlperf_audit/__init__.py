"""mlperf-audit: checks MLPerf Training result packages the way a careful reviewer would.

This module is the public rule API: everything a rule pack or a plugin may use, the built-in
packs included (an import contract in `pyproject.toml` holds them to it). See docs/plugin-api.md.

- rules: `Rule`, `IssueRule`, `Scope`, `hookimpl`, and what `check` receives (`CheckContext`,
  `Channel`) and returns (`Finding`, `Severity`);
- the model rules read: `Tree`, `Submission`, `SystemDescription`, `BenchmarkFolder`,
  `BenchmarkResult`, `Run`, `LogEvent`, `Implementation`, `FileEntry`, `ArchiveMember`,
  `Problem` (what reading noticed), `TargetKind`, and `open_binary` / `read_at_most` / `natural_key`;
- scores: `BenchmarkScore`, `RunScore`, `Spread`, `Comparison`, `url_prefix`, and the two
  per-accelerator measures `accelerator_minutes_ratio` and `work_rate_ratio`; recipes: `Recipe`, `Quoted`;
- reference data: `reference` (each benchmark's and accelerator's facts, with sources), `rulesets`
  (rounds, benchmarks, run counts) and `hardware` (accelerators and work models); `visible`
  (package text made safe to show); the parser's limits;
- commands a plugin adds (`mlperf_audit_register_commands`): `Command`, and `reading_options`,
  the argparse parent parser of the options of a command that reads a PATH as `check` does.
"""

from . import hardware, reference, rulesets
from ._version import __version__
from .archives import ArchiveMember
from .commands import Command, reading_options
from .markers import hookimpl
from .model import (
    PARAMS_FILE,
    BenchmarkFolder,
    BenchmarkResult,
    CheckerParams,
    FileEntry,
    Finding,
    Implementation,
    Issue,
    Launch,
    LogEvent,
    Problem,
    Run,
    Severity,
    Submission,
    SystemDescription,
    TargetKind,
    Tree,
    natural_key,
    open_binary,
    read_at_most,
)
from .parser import MAX_FILE_BYTES, MAX_LINE_BYTES
from .power_log import (
    PowerLog,
    PowerLogError,
    PowerRecord,
    PowerSampling,
    benchmark_dir,
    listing_order,
    power_logs,
    read_power_log,
)
from .recipes import Quoted, Recipe
from .rule import ENGINE, Channel, CheckContext, IssueRule, Rule, Scope
from .safety import visible
from .scores import (
    BenchmarkScore,
    Comparison,
    RunScore,
    Spread,
    accelerator_minutes_ratio,
    best_of,
    url_prefix,
    work_rate_ratio,
)

__all__ = [
    "ENGINE",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "PARAMS_FILE",
    "ArchiveMember",
    "BenchmarkFolder",
    "BenchmarkResult",
    "BenchmarkScore",
    "Channel",
    "CheckContext",
    "CheckerParams",
    "Command",
    "Comparison",
    "FileEntry",
    "Finding",
    "Implementation",
    "Issue",
    "IssueRule",
    "Launch",
    "LogEvent",
    "PowerLog",
    "PowerLogError",
    "PowerRecord",
    "PowerSampling",
    "Problem",
    "Quoted",
    "Recipe",
    "Rule",
    "Run",
    "RunScore",
    "Scope",
    "Severity",
    "Spread",
    "Submission",
    "SystemDescription",
    "TargetKind",
    "Tree",
    "__version__",
    "accelerator_minutes_ratio",
    "benchmark_dir",
    "best_of",
    "hardware",
    "hookimpl",
    "listing_order",
    "natural_key",
    "open_binary",
    "power_logs",
    "read_at_most",
    "read_power_log",
    "reading_options",
    "reference",
    "rulesets",
    "url_prefix",
    "visible",
    "work_rate_ratio",
]
