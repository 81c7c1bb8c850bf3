"""What other rules' findings follow from (`Rule.follows_from`), shared by the packs."""

from __future__ import annotations

#: The log_syntax errors that lose records of a log: a rule that then finds a record missing, a
#: value absent or a run failed reports what follows from them.
DAMAGED_LOG = frozenset(
    {"LOG001", "LOG002", "LOG003", "LOG005", "LOG006", "LOG007", "LOG010", "LOG011", "LOG013", "LOG014", "LOG016"}
)
