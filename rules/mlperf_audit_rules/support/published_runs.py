"""Fingerprints of runs, and the index of every run of the published rounds, to find runs published twice.

A run's fingerprint has three parts:

- `records`: a digest of its normalised records: every MLLOG record in file order (key, value,
  metadata without the code place `file`/`lineno`, as FOR004 compares evaluations), timed relative
  to `run_start`, leaving out the lines a copier edits (the seed and the `submission_*` lines). Two independent runs never
  share it: every record's millisecond would have to repeat. Times are relative so that a copy whose
  clock was shifted still matches; the lines left out are those that name who ran it and the seed,
  which the seed checker wants different (what the published copies of v1.0-v5.1 changed:
  `bench/published_runs.py` lists them);
- `start_ms`: the `run_start` time, which a copy that was not shifted keeps;
- `trace`: a digest of the evaluation trace (each `eval_accuracy`'s epoch or sample point and value),
  without any time: what a copy with rescaled times still shares.

`data/published_runs.json.gz` holds the fingerprint of every run of the published MLPerf Training
rounds v1.0-v5.1 with its round, submitter, system and benchmark folder, and a digest of the system
description of each system (the resubmission rule of 5.1 asks for the same system.json), generated
by `bench/published_runs.py`; `index()` reads it once per process, when a rule first asks.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from mlperf_audit import LogEvent, Run
from mlperf_audit_rules.support import policies
from mlperf_audit_rules.support.envelope import round_of

#: Lines a copier edits: the seed, and every `submission_*` line (who ran it and on what, and how it is
#: filed). The published copies edit `submission_org` and `submission_platform` (Azure's v2.1 rnnt, copied
#: from NVIDIA-run logs of v2.0), `submission_status` (the same, onprem to cloud) and `submission_benchmark`
#: (Dell's v4.1 gnn runs published again as v5.0 rgat).
EDITED_PREFIX = "submission_"
EDITED_KEYS = frozenset({"seed"})
#: Metadata naming the line of code that logged a record, not what the run did.
CODE_PLACE = frozenset({"file", "lineno"})
#: Bytes of each digest: 64 bits, no collision among the ~20,000 published runs (2^-33 for a pair).
DIGEST_BYTES = 8
#: Points of an evaluation: epochs, samples (the samples-based benchmarks) or both.
EVAL_POINTS = ("epoch_num", "samples_count")
DATA = "published_runs.json.gz"


@dataclass(frozen=True)
class Fingerprint:
    records: str
    start_ms: int | None
    trace: str | None  # None without evaluations
    evaluations: int

    def comparable(self) -> bool:
        """Whether equal digests can only mean a copy: the run started and evaluated (a log of headers only,
        a run that crashed at once, repeats by chance)."""
        return self.start_ms is not None and self.evaluations > 0


def digest(parts: Iterable[str]) -> str:
    """blake2b of the parts, each ended by a record separator (one update: the log's records are many)."""
    text = "".join(f"{part}\x1e" for part in parts)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES).hexdigest()


def metadata_of(event: LogEvent) -> tuple[tuple[str, str], ...]:
    """A record's metadata without the code place, as text whatever the log holds (a list, a dict)."""
    if event.metadata.keys() <= CODE_PLACE:  # most records: nothing but the code place
        return ()
    return tuple(sorted((str(k), repr(v)) for k, v in event.metadata.items() if k not in CODE_PLACE))


def relative_ms(event: LogEvent, start_ms: float) -> int | str:
    offset = event.time_ms - start_ms if isinstance(event.time_ms, (int, float)) else math.nan
    return round(offset) if math.isfinite(offset) else repr(event.time_ms)


def fingerprint(run: Run) -> Fingerprint | None:
    """The run's fingerprint (computed once per run); None for a run without records."""
    return run.cached("published_runs.fingerprint", lambda: _fingerprint(run.events, run.first("run_start")))


def _fingerprint(events: tuple[LogEvent, ...], start: LogEvent | None) -> Fingerprint | None:
    if not events:
        return None
    start_ms = start.time_ms if start is not None and isinstance(start.time_ms, (int, float)) else None
    origin = start_ms if start_ms is not None and math.isfinite(start_ms) else 0.0
    records = digest(
        f"{e.key}\x1f{e.value!r}\x1f{metadata_of(e)!r}\x1f{relative_ms(e, origin)}"
        for e in events
        if e.key not in EDITED_KEYS and not e.key.startswith(EDITED_PREFIX)
    )
    evaluations = [e for e in events if e.key == "eval_accuracy"]
    return Fingerprint(
        records,
        round(start_ms) if start_ms is not None and math.isfinite(start_ms) else None,
        _trace(evaluations),
        len(evaluations),
    )


def _trace(evaluations: Iterable[LogEvent]) -> str | None:
    parts = [f"{[e.meta(point) for point in EVAL_POINTS]!r}\x1f{e.value!r}" for e in evaluations]
    return digest(parts) if parts else None


def trace_of(run: Run) -> str | None:
    """The digest of the run's evaluation trace alone (cheap: a few records). Runs with the same records
    have the same trace, so a trace found nowhere rules a copy out before the records are digested."""
    return run.cached("published_runs.trace", lambda: _trace(run.all("eval_accuracy")))


def system_digest(data: Mapping[str, Any] | None) -> str | None:
    """A system description's content (key order and spacing aside), for "the system.json matches exactly"."""
    if data is None:
        return None
    return digest([json.dumps(data, sort_keys=True, ensure_ascii=False, default=repr)])


class Published(NamedTuple):
    """One run of a published round (a tuple: the index makes 20,000 of them at start)."""

    round: str  # "4.1"
    submitter: str
    system: str
    benchmark: str
    file: str
    start_ms: int | None
    system_digest: str | None

    @property
    def folder(self) -> str:
        return f"{self.submitter}/results/{self.system}/{self.benchmark}"

    def describe(self) -> str:
        return f"v{self.round} {self.folder}/{self.file}"


@dataclass(frozen=True)
class Index:
    by_records: Mapping[str, Sequence[Published]]
    #: (run_start ms, trace digest) -> the runs with their records digests: the same run whatever else was
    #: edited in it
    by_start: Mapping[tuple[int, str], Sequence[tuple[Published, str]]]
    #: trace digest -> the earliest round that published it ((4, 1)): no run of the checked round's
    #: predecessors has a trace missing here
    first_round_of_trace: Mapping[str, tuple[int, int]]
    rounds: tuple[str, ...]


def entries(document: Mapping[str, Any]) -> Iterable[tuple[Published, str, str | None]]:
    """Every run of an index document, with its records and trace digests."""
    for round_name, submitters in document["rounds"].items():
        for submitter, systems in submitters.items():
            for system, described in systems.items():
                for benchmark, runs in described["runs"].items():
                    for file, start_ms, records, trace in runs:
                        yield (
                            Published(round_name, submitter, system, benchmark, file, start_ms, described["system"]),
                            records,
                            trace,
                        )


@cache
def index() -> Index:
    """The shipped index, read once per process."""
    raw = resources.files("mlperf_audit_rules").joinpath("data", DATA).read_bytes()
    return index_of(json.loads(gzip.decompress(raw)))


def index_of(document: Mapping[str, Any]) -> Index:
    by_records: dict[str, list[Published]] = {}
    by_start: dict[tuple[int, str], list[tuple[Published, str]]] = {}
    first_round: dict[str, tuple[int, int]] = {}
    rounds = {name: round_of(name) for name in document["rounds"]}
    for published, records, trace in entries(document):
        by_records.setdefault(records, []).append(published)
        if trace is not None:
            first_round[trace] = min(first_round.get(trace, rounds[published.round]), rounds[published.round])
            if published.start_ms is not None:
                by_start.setdefault((published.start_ms, trace), []).append((published, records))
    return Index(by_records, by_start, first_round, tuple(rounds))


def same_submitter(one: str, other: str) -> bool:
    """Whether two submitter folders are one submitter: the same name in any case (`Krai`, v5.0's `krai`),
    one name a whole part of the other (a joint submission, v3.0's `NVIDIA_CoreWeave`), or names that
    begin with the same part (power results filed as submitters of their own: v4.0's `smc-ac-power` and
    `smc-dc-power` beside `smc`)."""
    a, b = _parts(one), _parts(other)
    return bool(a and b) and (a == b or a[0] == b[0] or "".join(a) in b or "".join(b) in a)


def _parts(name: str) -> list[str]:
    return [part for part in re.split(r"[^0-9a-z]+", name.casefold()) if part]


#: The citation of `data/policies.json` that quotes training_rules.adoc, section "Results Resubmission": merged
#: into the main branch of mlcommons/training_policies on 2025-07-10 (PR 559, b70a878; its commit c492947 is
#: dated 2025-06-13, the day it was written), after v5.0's deadline and before v5.1's.
RESUBMISSION_CITATION = "results-resubmission"
#: The first round whose rules at its submission deadline hold it (5.1).
RESUBMISSION_SINCE = policies.first_round(RESUBMISSION_CITATION) or (5, 1)
#: The rule FOR009 applies, as a message cites it where no round's text is at hand (the rule's doc quotes it whole).
RESUBMISSION_RULE = f'training_rules.adoc, "Results Resubmission" ({policies.merged_text(RESUBMISSION_CITATION)})'


def resubmission_rule(checked: tuple[int, int]) -> str:
    """The Results Resubmission rule as a message cites it for round `checked`: the text in force at its deadline,
    with a link pinned to that commit."""
    cited = policies.cite(RESUBMISSION_CITATION, f"{checked[0]}.{checked[1]}.0")
    if cited is None:
        return RESUBMISSION_RULE
    return f'"Results Resubmission" ({cited.short}; {policies.merged_text(cited.name)}: {cited.url})'
