"""What other rules' findings follow from (`Rule.follows_from`), shared by the packs."""

from __future__ import annotations

#: The log_syntax errors that lose records of a log: a rule that then finds a record missing, a
#: value absent or a run failed reports what follows from them.
DAMAGED_LOG = frozenset(
    {"LOG001", "LOG002", "LOG003", "LOG005", "LOG006", "LOG007", "LOG010", "LOG011", "LOG013", "LOG014", "LOG016"}
)

#: PKG024: nothing named the round and the logs' dates fit another one. The rules whose verdict is
#: the round's own (its compliance rule files, RCPs, seed requirements, the runs olympic scoring
#: tolerates, the checker's options, the system description's schema, checks added in later rounds)
#: report what follows from that choice: on the v5.1 and v4.1 submitters copied out of their rounds'
#: folders, every error the wrong round added was one of these (CMP, PKG019).
ROUND_NOT_NAMED = frozenset({"PKG024"})
