"""mlperf-audit: checks MLPerf Training result packages the way a careful reviewer would.

This module is the public rule API: everything a rule pack or a plugin may use, the built-in
packs included (an import contract in `pyproject.toml` holds them to it). See docs/plugin-api.md.

- rules: `Rule` and the base of each scope (`RunRule`, `BenchmarkRule`, `SystemRule`,
  `SubmissionRule`, `TreeRule`, `ComparisonRule`), `IssueRule`, `Scope`, `hookimpl`, and what
  `check` receives (`CheckContext`, `Channel`) and returns (`Finding`, `Severity`);
- plugins: `Setting` (a plugin's declared setting), `Config` (the configuration in force),
  `Format` and `Report` (an output format and what it renders);
- the model rules read: `Tree`, `Submission`, `SystemDescription`, `BenchmarkFolder`,
  `BenchmarkResult`, `Run`, `LogEvent`, `Implementation`, `FileEntry`, `ArchiveMember`,
  `Problem` (what reading noticed), `TargetKind`, and `open_binary` / `natural_key`;
- scores: `BenchmarkScore`, `RunScore`, `Spread`, `Comparison`, `url_prefix`, and the two
  per-accelerator measures `accelerator_minutes_ratio` and `work_rate_ratio`; recipes: `Recipe`, `Quoted`;
- reference data: `reference` (each benchmark's and accelerator's facts, with sources), `rulesets`
  (rounds, benchmarks, run counts) and `hardware` (accelerators and work models); `visible`
  (package text made safe to show); `limits` (the parser's limits and `read_at_most`, for a rule
  that reads a file itself); `suggest` (the "did you mean" of the command line, for a finding that
  names a mistyped folder or system);
- commands a plugin adds (`mlperf_audit_register_commands`): `Command`, and `reading_options`,
  the argparse parent parser of the options of a command that reads a PATH as `check` does.
"""

from . import limits, reference, suggest
from ._version import __version__
from .archives import ArchiveMember
from .command import Command, reading_options
from .config import Config, Setting
from .formats import Format
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
)
from .reading.power_log import (
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
from .reference import hardware, rulesets
from .report import Report
from .rule import (
    ENGINE,
    BenchmarkRule,
    Channel,
    CheckContext,
    ComparisonRule,
    IssueRule,
    Rule,
    RunRule,
    Scope,
    SubmissionRule,
    SystemRule,
    TreeRule,
)
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
    "PARAMS_FILE",
    "ArchiveMember",
    "BenchmarkFolder",
    "BenchmarkResult",
    "BenchmarkRule",
    "BenchmarkScore",
    "Channel",
    "CheckContext",
    "CheckerParams",
    "Command",
    "Comparison",
    "ComparisonRule",
    "Config",
    "FileEntry",
    "Finding",
    "Format",
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
    "Report",
    "Rule",
    "Run",
    "RunRule",
    "RunScore",
    "Scope",
    "Setting",
    "Severity",
    "Spread",
    "Submission",
    "SubmissionRule",
    "SystemDescription",
    "SystemRule",
    "TargetKind",
    "Tree",
    "TreeRule",
    "__version__",
    "accelerator_minutes_ratio",
    "benchmark_dir",
    "best_of",
    "hardware",
    "hookimpl",
    "limits",
    "listing_order",
    "natural_key",
    "open_binary",
    "power_logs",
    "read_power_log",
    "reading_options",
    "reference",
    "rulesets",
    "suggest",
    "url_prefix",
    "visible",
    "work_rate_ratio",
]
