"""The rounds mlperf-audit supports, described from the installed mlperf-logging's own data, and
which round a package belongs to.

A ruleset is named `training-X.Y.Z`. Its allowed benchmarks and required run counts come from
`mlperf_logging.benchmark_meta`, its compliance rules from `compliance_checker/training_X.Y.Z/`
and its reference convergence points from `rcp_checker/training_X.Y.Z/`; nothing is copied. Every
round whose rule files the installed mlperf-logging ships is supported, from 1.0.0 on (0.6 and 0.7
logs use another format).

`auto` (the default) takes the round a folder above the submissions names, else the newest round
that allows every benchmark folder: see `choose`. The logs' own dates never choose the rules (a
package that moved its clock back would be judged by an older, laxer round); `infer` says which
round they suggest, and PKG020 reports a package whose dates disagree with the round in force.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Iterator

from mlperf_logging import benchmark_meta

from .. import reference
from ..safety import visible

USAGE = "training"
AUTO = "auto"
DEFAULT = AUTO
#: What a benchmark name can look like (`llama2_70b_lora`); anything else names no rule or RCP file.
BENCHMARK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_RULES_FOLDER = re.compile(rf"{USAGE}_(\d+)\.(\d+)\.(\d+)")
#: The oldest round whose logs the MLLOG parser reads (0.6 and 0.7 logged another format).
OLDEST = (1, 0, 0)

#: The day each round's results were published (mlcommons.org announcements). A package's runs
#: were logged before its round's publication and after the previous one's, so the dates of its
#: logs tell rounds with the same benchmarks apart. Rounds not yet published here are estimated
#: (`~`): update them when the pin of mlperf-logging moves (docs/maintaining.md).
PUBLISHED = {
    "1.0.0": "2021-06-30",
    "1.1.0": "2021-12-01",
    "2.0.0": "2022-06-29",
    "2.1.0": "2022-11-09",
    "3.0.0": "2023-06-27",
    "3.1.0": "2023-11-08",
    "4.0.0": "2024-06-12",
    "4.1.0": "2024-11-13",
    "5.0.0": "2025-06-04",
    "5.1.0": "2025-11-12",
    "6.0.0": "~2026-06-03",
    "6.1.0": "~2026-11-11",
}


def _shipped() -> tuple[str, ...]:
    """Every `training-X.Y.Z` whose compliance rules the installed mlperf-logging ships, oldest first."""
    root = Path(str(resources.files("mlperf_logging.compliance_checker")))
    versions = []
    for folder in root.iterdir():
        match = _RULES_FOLDER.fullmatch(folder.name)
        if match and folder.is_dir() and tuple(map(int, match.groups())) >= OLDEST:
            versions.append(tuple(map(int, match.groups())))
    return tuple(f"{USAGE}-{'.'.join(map(str, v))}" for v in sorted(versions))


SUPPORTED = _shipped()
#: What --ruleset accepts.
CHOICES = (AUTO,) + SUPPORTED


#: The package checker's options that a submitter's own `package_checker_params` may name, one per line:
#: the round's verify script passes each newline-terminated line as `--<line>`. Spelled with underscores
#: until mlperf-logging 24bed7e (2024-09-19), with hyphens from 4.1 on; a seed bypass exists only since.
CHECKER_OPTIONS = ("rcp_bypass", "rcp_bert_train_samples", "seed_checker_bypass")


def checker_flag(option: str, ruleset: str) -> str | None:
    """How `option` is written in a submitter's package_checker_params for `ruleset`, or None where the
    round's package checker has no such option."""
    if tuple(int(p) for p in ruleset.split("-", 1)[1].split(".")) >= (4, 1, 0):
        return option.replace("_", "-")
    return None if option == "seed_checker_bypass" else option


def version_of(folder: str) -> str | None:
    """`training_3.1.0` -> "3.1.0" when that round is supported (an official rule file may enqueue
    another round's file), else None."""
    match = _RULES_FOLDER.fullmatch(folder)
    if not match:
        return None
    version = ".".join(match.groups())
    return version if f"{USAGE}-{version}" in SUPPORTED else None


@dataclass(frozen=True)
class Round:
    name: str  # e.g. "training-4.1.0"
    usage: str  # "training"
    version: str  # "4.1.0"
    benchmarks: tuple[str, ...]  # allowed benchmark folder names
    run_counts: dict[str, int]  # required result files per benchmark

    @property
    def compliance_dir(self) -> Path:
        return Path(str(resources.files("mlperf_logging.compliance_checker"))) / f"{self.usage}_{self.version}"

    @property
    def rcp_dir(self) -> Path:
        return Path(str(resources.files("mlperf_logging.rcp_checker"))) / f"{self.usage}_{self.version}"

    def required_runs(self, benchmark: str) -> int | None:
        return self.run_counts.get(benchmark)

    def olympic_drop(self, benchmark: str) -> int:
        """Runs dropped from each end by olympic scoring (and failures tolerated)."""
        return reference.facts(benchmark).olympic_drop

    def has_rcps(self, benchmark: str) -> bool:
        # The name comes from the logs: only a plain benchmark name can name an RCP file.
        if not BENCHMARK_NAME.fullmatch(benchmark):
            return False
        return (self.rcp_dir / f"rcps_{benchmark}.json").is_file()


@cache
def get(name: str) -> Round:
    """The round named `name`; raises ValueError for an unsupported one."""
    if name not in SUPPORTED:
        raise ValueError(f"unsupported ruleset {name!r}; supported: {AUTO}, {', '.join(SUPPORTED)}")
    usage, version = name.split("-", 1)
    benchmarks = tuple(dict.fromkeys(benchmark_meta.get_allowed_benchmarks(usage, version)))
    counts = benchmark_meta.get_result_file_counts(usage)
    return Round(name, usage, version, benchmarks, {b: counts[b] for b in benchmarks if b in counts})


# ----------------------------------------------------------------------------------------------
# Which round a package belongs to.
# ----------------------------------------------------------------------------------------------

#: How many result files `infer` reads the first record of (spread over the benchmark folders).
DATED_FILES = 64
_FIRST_BYTES = 1 << 16


@dataclass(frozen=True)
class Inference:
    """The round a package fits, and why: said in every report that used `auto`."""

    ruleset: str
    reason: str
    fits: tuple[str, ...]  # every supported round whose benchmarks include all of the package's
    unknown: tuple[str, ...] = ()  # benchmark folders no supported round knows
    dated: str | None = None  # the day the newest run was logged (YYYY-MM-DD), when logs carry times
    folder: str | None = None  # `choose`: the folder above the submissions that names the round, if one does


def published(version: str) -> datetime.date:
    return datetime.date.fromisoformat(PUBLISHED[version].lstrip("~"))


def window(ruleset: str) -> tuple[datetime.date | None, datetime.date]:
    """(previous round's publication, this round's publication]: when this round's runs were logged."""
    versions = [name.split("-", 1)[1] for name in SUPPORTED if name.split("-", 1)[1] in PUBLISHED]
    version = ruleset.split("-", 1)[1]
    index = versions.index(version)
    return (published(versions[index - 1]) if index else None), published(version)


def _head_records(source: Any) -> Iterator[dict[str, Any]]:
    """The MLLOG records of a result file's first bytes that decode to objects (bad input is the
    parser's finding, never an error here)."""
    from ..model import open_binary  # the model imports nothing from here; kept local to stay cycle-free

    try:
        with open_binary(source) as stream:
            head = stream.read(_FIRST_BYTES)
    except OSError:
        return
    for line in head.decode("utf-8", errors="replace").splitlines():
        _, marker, payload = line.partition(":::MLLOG ")
        if not marker:
            continue
        try:
            record = json.loads(payload)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            yield record


def _first_time_ms(source: Any) -> float | None:
    for record in _head_records(source):
        value = record.get("time_ms")
        if isinstance(value, (int, float)) and 1e12 < value < 1e14:  # 2001..5138: a plausible epoch in ms
            return float(value)
    return None


def _logged_benchmark(source: Any) -> str | None:
    """The `submission_benchmark` a lone log names in its first records (it has no benchmark folder)."""
    for record in _head_records(source):
        value = record.get("value")
        if record.get("key") == "submission_benchmark" and isinstance(value, str) and BENCHMARK_NAME.fullmatch(value):
            return value
    return None


def _dated(files: Iterable[Any]) -> datetime.date | None:
    """The day of the newest run: a package may reuse older runs (v4.1 NVIDIA results logged in
    April 2024), never newer ones; a clock set in the future is not believed."""
    now = datetime.datetime.now(datetime.UTC).timestamp() * 1000
    times = [t for t in map(_first_time_ms, files) if t is not None and t <= now]
    if not times:
        return None
    return datetime.datetime.fromtimestamp(max(times) / 1000, datetime.UTC).date()


def infer(benchmarks: Iterable[str], dated_files: Iterable[Any] = ()) -> Inference:
    """The round a package's contents suggest: what PKG020 compares with the round in force (never
    what chooses the rules: see `choose`).

    1. Its benchmark folders: a round fits when it allows every one of them. Rounds that drop or
       add benchmarks (v3.0 gpt3, v4.0 llama2_70b_lora and gnn, v5.0 retinanet, ...) tell most
       packages apart.
    2. The day its newest run was logged (the first record's `time_ms`, over up to `DATED_FILES`
       result files spread over the folders): among the rounds that fit, the one whose window (the previous
       round's publication, its own] holds that day. This separates rounds with the same
       benchmarks (1.0 to 2.1 allow the same eight).
    3. Otherwise, among the rounds that fit: the oldest round published after that day, else the
       newest; with no dates at all, the newest round that fits (a submitter preparing a package
       today wants the newest rules). When no round knows every benchmark, the rounds knowing the
       most of them compete the same way and the report names the unknown folders.
    """
    fits, candidates, unknown, fit_text = _fitting(benchmarks)
    day = _dated(dated_files)
    if day is not None:
        inside = [name for name in candidates if _within(day, name)]
        if inside:
            chosen = inside[-1]
            low, high = window(chosen)
            reason = (
                f"{fit_text}; the newest run was logged on {day}, after "
                f"{_published_text(low)} and before {chosen}'s publication ({PUBLISHED[chosen.split('-', 1)[1]]})"
            )
        else:
            later = [name for name in candidates if published(name.split("-", 1)[1]) >= day]
            chosen = later[0] if later else candidates[-1]
            reason = (
                f"{fit_text}; the newest run was logged on {day}, outside those rounds' windows, "
                f"so {'the first round published after that' if later else 'the newest of them'} was taken"
            )
    else:
        chosen = candidates[-1]
        reason = f"{fit_text}; no log gives a date, so the newest of them was taken"
    return Inference(chosen, reason, fits, unknown, day.isoformat() if day else None)


def _fitting(benchmarks: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str]:
    """(the rounds allowing every benchmark, the rounds to choose among, the benchmarks no round
    knows, what that says): when no round allows them all, the rounds allowing the most compete."""
    wanted = sorted({b for b in benchmarks if b})
    # a round without a publication day (a newer mlperf-logging than the pin) cannot be dated: not inferred
    dated_rounds = tuple(name for name in SUPPORTED if name.split("-", 1)[1] in PUBLISHED)
    rounds = {name: set(get(name).benchmarks) for name in dated_rounds}
    fits = tuple(name for name in dated_rounds if set(wanted) <= rounds[name])
    unknown: tuple[str, ...] = ()
    candidates = fits
    if not candidates:
        best = max(len(set(wanted) & known) for known in rounds.values())
        candidates = tuple(name for name in dated_rounds if len(set(wanted) & rounds[name]) == best)
        unknown = tuple(b for b in wanted if not any(b in known for known in rounds.values()))
    shown = ", ".join(wanted) or "no benchmark folders"
    fit_text = (
        f"the benchmarks ({shown}) fit {_span(fits)}"
        if fits
        else f"no round allows every benchmark ({shown}); {_span(candidates)} allow the most"
    )
    return fits, candidates, unknown, fit_text


def infer_tree(tree: Any) -> Inference:
    """`infer` on what discovery found (a `Tree`): its benchmark folder names and the first records of
    a spread of result files (an archive member the parser would refuse as too large is not read)."""
    from ..reading.parser import MAX_FILE_BYTES  # noqa: PLC0415 - the parser imports the model, not this module

    folders = tree.benchmark_folders
    per_folder = max(1, DATED_FILES // max(1, len(folders)))
    entries = [entry for folder in folders for entry in folder.result_files[:per_folder]] + list(tree.loose_logs)
    dated = [entry.fs_path for entry in entries if getattr(entry.fs_path, "size", 0) <= MAX_FILE_BYTES]
    return infer(_benchmarks(tree), dated[:DATED_FILES])


def _benchmarks(tree: Any) -> list[str]:
    """The package's benchmarks: its benchmark folders', and what a lone log names."""
    names = [folder.benchmark for folder in tree.benchmark_folders]
    return names + [name for entry in tree.loose_logs if (name := _logged_benchmark(entry.fs_path))]


#: A folder name that names a round: `training_results_v4.1`, `submissions_training_5.1`,
#: `mlperf-training-v4.1-sample`, `v4.1`, `training-4.1.0` (not `python3.11`).
_ROUND_IN_NAME = re.compile(r"(?:^|[^0-9A-Za-z])(?:v|training[_-]v?)(\d+)\.(\d+)(?:\.(\d+))?(?=$|[^0-9A-Za-z.])", re.I)
#: How many folders of its own layout lie between a checked PATH and the folder holding its
#: submitter: a submission's folder is the submitter's, `results/<system>/` and its benchmark
#: folders below it, each named inside the package.
_SUBMISSION_DEPTH = {"submission": 1, "system folder": 3, "benchmark folder": 4, "log file": 5}


def place_folders(root: Path, kind: str) -> list[Path]:
    """The folders above the submissions of a checked PATH, nearest first: named by whoever keeps
    the package (a results repository's checkout, a reviewer's folder), never by the package
    itself. An archive's own name is the sender's, and so are the folders of a submission: a
    system or benchmark folder's submitter, `results/` and the like are skipped."""
    here = Path(os.path.abspath(root))
    chain = [here, *here.parents]
    if here.is_file() and kind not in ("log file",):
        return chain[1:]  # an archive: its name is the sender's
    depth = _SUBMISSION_DEPTH.get(kind, 0)
    if kind in ("system folder", "benchmark folder", "log file") and "results" not in [f.name for f in chain[:depth]]:
        depth = 1  # not laid out as a submission: only PATH itself is the package's
    return chain[depth:]


def named_by_place(root: Path, kind: str) -> tuple[str, str] | None:
    """(ruleset, folder name) for the nearest folder above the submissions that names a supported round."""
    for folder in place_folders(root, kind):
        for match in _ROUND_IN_NAME.finditer(folder.name):
            major, minor, patch = match.groups()
            name = f"{USAGE}-{int(major)}.{int(minor)}.{int(patch or 0)}"
            if name in SUPPORTED:
                return name, folder.name
    return None


def choose(tree: Any) -> Inference:
    """The round `auto` takes for what discovery found (a `Tree`): the one a folder above its
    submissions names (`training_results_v4.1/`), else the newest round whose benchmarks include
    every benchmark folder of the package (a package being prepared today wants the newest rules).
    Its `dated` field is the day of the newest run: PKG020 compares it with the round's window."""
    contents = infer_tree(tree)
    place = named_by_place(tree.root, tree.kind.value)
    folder = None
    if place is not None:
        ruleset, folder = place
        reason = f"the folder '{visible(folder)}' above the submissions names it"
    else:
        _, candidates, _, fit_text = _fitting(_benchmarks(tree))
        ruleset = candidates[-1]
        reason = (
            f"{fit_text}; the newest of them was taken (the logs' own dates never choose the rules: name the "
            "round with --ruleset, or check from a folder named for it, such as training_results_vX.Y)"
        )
    return Inference(ruleset, reason, contents.fits, contents.unknown, contents.dated, folder)


def dates_fit_another(taken: str, contents: Inference) -> str | None:
    """The round the package's dates fit (`contents`: what `infer` says of it) when they fall outside
    the window of the round `taken` and inside the window of another round that, like `taken`,
    allows every benchmark of the package; else None. What PKG024 reports when nothing named the
    round, and why `audit` judges no claim under a round taken that way."""
    fits = contents.ruleset
    if contents.dated is None or fits == taken or fits not in contents.fits or taken not in contents.fits:
        return None
    if within(contents.dated, taken) or not within(contents.dated, fits):
        return None
    return fits


def _within(day: datetime.date, ruleset: str) -> bool:
    low, high = window(ruleset)
    return (low is None or day > low) and day <= high


def within(day: str, ruleset: str) -> bool:
    """Whether a run logged on `day` (YYYY-MM-DD) belongs in `ruleset`'s window (True for an undated round)."""
    if ruleset.split("-", 1)[1] not in PUBLISHED:
        return True
    return _within(datetime.date.fromisoformat(day), ruleset)


def window_text(ruleset: str) -> str:
    low, high = window(ruleset)
    return f"{'after ' + low.isoformat() + ', ' if low else ''}up to its publication on {high.isoformat()}"


def _published_text(day: datetime.date | None) -> str:
    return f"the previous round's publication ({day})" if day else "the first supported round"


def _span(names: Iterable[str]) -> str:
    names = [name.split("-", 1)[1] for name in names]
    if not names:
        return "no round"
    return names[0] if len(names) == 1 else f"{len(names)} rounds ({', '.join(names)})"
