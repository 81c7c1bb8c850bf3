"""How a finding about some runs of a folder names them: every one, folded when it is all of them.

A finding located at the first affected run alone reads as if that run were the problem: fixed, the
finding moves to the next one. The message names every affected run instead ("all 10 runs" when
every run of the folder is), and the others are the finding's related locations.
"""

from __future__ import annotations

from typing import Sequence

from mlperf_audit import LogEvent, Run

#: Related locations given with one finding, at most (the message names every run).
RELATED = 20
#: Runs named in a message, at most: a folder of thousands of hostile result files stays one line.
NAMED = 20


def which_runs(affected: Sequence[Run], runs: Sequence[Run]) -> str:
    """'all 10 runs' when every run of the folder is affected, else the runs by name, with how many of how
    many ('result_3.txt, result_7.txt (2 of 10 runs)'); a folder of one run: its name."""
    total = len(runs)
    if total > 1 and len(affected) == total:
        return f"all {total} runs"
    names = ", ".join(run.name for run in affected[:NAMED])
    if len(affected) > NAMED:
        names += f" and {len(affected) - NAMED} more"
    return names if total <= 1 else f"{names} ({len(affected)} of {total} runs)"


def related(pairs: Sequence[tuple[Run, LogEvent | None]]) -> list[tuple[str, int | None]]:
    """The locations of the affected runs after the first (the finding's own location)."""
    return [(run.path, event.line if event is not None else None) for run, event in pairs[1 : RELATED + 1]]
