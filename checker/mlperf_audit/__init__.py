"""mlperf-audit: checks MLPerf Training result packages the way a careful reviewer would.

Plugin authors need `hookimpl`, `Rule` (and `IssueRule`), `Severity` and the model classes.
"""

__version__ = "0.1.0"

from .hookspecs import hookimpl  # noqa: E402
from .model import (  # noqa: E402
    BenchmarkFolder,
    BenchmarkResult,
    Finding,
    LogEvent,
    Run,
    Severity,
    Submission,
    SystemDescription,
    Tree,
)
from .rule import IssueRule, Rule  # noqa: E402

__all__ = [
    "BenchmarkFolder",
    "BenchmarkResult",
    "Finding",
    "IssueRule",
    "LogEvent",
    "Rule",
    "Run",
    "Severity",
    "Submission",
    "SystemDescription",
    "Tree",
    "__version__",
    "hookimpl",
]
