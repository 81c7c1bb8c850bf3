#!/usr/bin/env python3
"""Build the rules in force per round: the training_policies commit and the text each citation quotes.

For each round, the commit of mlcommons/training_policies in force at the round's submission
deadline: the last commit of the main branch (`master`, first parents only: a pull request counts
from its merge, not from its author date) dated before the deadline day. The deadlines are data
with their sources (`DEADLINES`); where no document names a round's deadline, a window is used:
the documented deadlines fall 26 (v2.1), 33 (v4.0, v5.1) and 40 (v1.0, v2.0) days before their
round's publication (`mlperf_audit.reference.rulesets.PUBLISHED`), and submission_rules.adoc's round
schedule puts the submission in week 0 and the publication in week 4, so the deadline is taken to
lie 26 days to six weeks before the publication; the round then records the commits at both ends
(`earliest_commit` where they differ), and a text that changed in between is "uncertain".

Each citation (`CITATIONS`) is a file of the policies and the words it quotes. Per round, the data
holds the lines that contain the words at the round's commit (numbered as they are at that commit,
with the text, for the pinned URL and for a test without the repository), and whether the text was
in force: "yes" (in the text at the earliest possible deadline), "uncertain" (only at the latest),
"no" (not in the text at the round's commit). The merge that brought the words in is recorded too.

    python bench/policies.py --policies /work/.mirror/mlcommons+training_policies/repo           # check
    python bench/policies.py --policies /work/.mirror/mlcommons+training_policies/repo --write   # regenerate
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "rules" / "mlperf_audit_rules" / "data" / "policies.json"
REPOSITORY = "mlcommons/training_policies"
BRANCH = "master"
#: The documented deadlines lie this many days before their round's publication (see the module doc).
WINDOW_DAYS = (42, 26)
_POLICIES = "mlcommons/policies submission_rules.adoc"
#: version -> (the submission deadline, YYYY-MM-DD, or None for a window, and where it comes from).
DEADLINES: dict[str, tuple[str | None, str]] = {
    "1.0.0": (
        "2021-05-21",
        "mlcommons/training_policies issue 380, 'Choose Timeline for v1.0' (2021-03-25): "
        "'Official dates for Training v1.0 are: ... 5/21: submission, 6/23: publication'",
    ),
    "1.1.0": (None, "no document found names it"),
    "2.0.0": ("2022-05-20", f"{_POLICIES} at 2966051 (2021-12-21), schedule table: 'Training v2.0 | May 20, 2022'"),
    "2.1.0": ("2022-10-14", f"{_POLICIES} at 1588fb2 (2022-07-01), schedule table: 'Training v2.1 | October 14, 2022'"),
    "3.0.0": (None, "no document found names it"),
    "3.1.0": (None, "no document found names it"),
    "4.0.0": (
        "2024-05-10",
        "tinygrad/tinygrad issue 3756 (2024-03-15), a submitter's: 'training submission deadline is 5/10', "
        "and its upload receipt 'Your submission was succesfully uploaded at 2024-05-10 11:01:43'",
    ),
    "4.1.0": (None, "no document found names it"),
    "5.0.0": (None, "no document found names it"),
    "5.1.0": ("2025-10-10", f"{_POLICIES} at 6620709 (2025-05-27), schedule table: 'Training v5.1 | October 10, 2025'"),
    "6.0.0": ("2026-05-15", f"{_POLICIES} at 523d489 (2025-12-09), schedule table: 'Training v6.0 | May 15, 2026'"),
    "6.1.0": (None, "not yet published: no deadline known"),
}
#: id -> (file, the words quoted, a word that must be on the same line, or ""): what the rules cite.
CITATIONS: dict[str, tuple[str, str, str]] = {
    "results-resubmission": (
        "training_rules.adoc",
        "Log resubmission is permitted only if the system.json matches exactly between both rounds",
        "",
    ),
    "seeds-logged": ("training_rules.adoc", "We expect all runs to log at least one seed", ""),
    "power-once-a-second": (
        "power_measurement.adoc",
        "Power measurement must be at least once every second distributed evenly throughout the timed portion of a run",
        "",
    ),
    "power-60-samples": ("power_measurement.adoc", "Measure max(a run, 60 power samples)", ""),
    "eval-frequency": (
        "training_rules.adoc",
        "The quality measure must be evaluated at the same frequency (in terms of number of training items "
        "between test sets)",
        "",
    ),
    "eval-frequency-flux1": ("training_rules.adoc", "Every 262144 training samples", "Flux.1"),
    "eval-frequency-gpt_oss_20b": ("training_rules.adoc", "Every 12288 sequences", "GPT_OSS_20B"),
    "eval-frequency-llama31_8b": ("training_rules.adoc", "Every 12288 sequences", "Llama31_8b"),
    "eval-frequency-llama31_405b": ("training_rules.adoc", "Every 18432 sequences", "Llama31_405B"),
    "eval-frequency-llama31_405b-v5.0": ("training_rules.adoc", "Every 46080 sequences", "Llama31_405B"),
    "eval-frequency-llama2_70b_lora": ("training_rules.adoc", "Every 384 sequences", "Llama2_70B_LoRA"),
    "eval-frequency-gpt3": ("training_rules.adoc", "Every 24576 sequences", "GPT3"),
    "eval-frequency-stable_diffusion": ("training_rules.adoc", "Checkpoint must be collected every 512,000 images", ""),
}
NOTE = (
    "The MLPerf Training rules in force per round: the mlcommons/training_policies commit of the master branch "
    "at each round's submission deadline (with the deadline's source), and, per citation, the lines that hold "
    "the quoted words at that commit. Generated by bench/policies.py from a training_policies git directory; "
    "do not edit by hand."
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], check=True, capture_output=True, text=True, encoding="utf-8"
    ).stdout


def history(repo: Path) -> list[tuple[str, datetime.datetime, str]]:
    """The first-parent commits of the main branch, oldest first: (hash, committer date in UTC, subject)."""
    out = git(repo, "log", "--first-parent", "--format=%H %cI %s", BRANCH)
    commits = []
    for line in out.splitlines():
        sha, when, subject = (line.split(" ", 2) + [""])[:3]
        commits.append((sha, datetime.datetime.fromisoformat(when).astimezone(datetime.UTC), subject))
    return commits[::-1]


def before(commits: list[tuple[str, datetime.datetime, str]], day: datetime.date) -> tuple[str, datetime.datetime, str]:
    """The last commit dated (UTC) before `day`: merged by the end of the day before the deadline's."""
    earlier = [commit for commit in commits if commit[1].date() < day]
    return earlier[-1]


def publication(version: str) -> datetime.date:
    from mlperf_audit.reference import rulesets

    return datetime.date.fromisoformat(rulesets.PUBLISHED[version].lstrip("~"))


def round_commits(repo: Path) -> dict[str, dict[str, Any]]:
    commits = history(repo)
    rounds: dict[str, dict[str, Any]] = {}
    for version, (deadline, source) in DEADLINES.items():
        entry: dict[str, Any] = {"deadline_source": source}
        if deadline is not None:
            entry["deadline"] = deadline
            low = high = datetime.date.fromisoformat(deadline)
        elif version == "6.1.0":
            entry["deadline"] = None
            entry["provisional"] = "the newest commit of the branch when the data was generated"
            low = high = commits[-1][1].date() + datetime.timedelta(days=1)
        else:
            published = publication(version)
            low = published - datetime.timedelta(days=WINDOW_DAYS[0])
            high = published - datetime.timedelta(days=WINDOW_DAYS[1])
            entry["deadline"] = None
            entry["deadline_window"] = [low.isoformat(), high.isoformat()]
            entry["deadline_source"] = (
                f"{source}; taken to lie {WINDOW_DAYS[1]} to {WINDOW_DAYS[0]} days before the publication "
                f"({published.isoformat()}), as the documented deadlines do"
            )
        latest, earliest = before(commits, high), before(commits, low)
        entry["commit"], entry["commit_date"], entry["commit_subject"] = (
            latest[0],
            latest[1].date().isoformat(),
            latest[2],
        )
        if earliest[0] != latest[0]:
            entry["earliest_commit"] = earliest[0]
            entry["earliest_commit_date"] = earliest[1].date().isoformat()
        rounds[version] = entry
    return rounds


def normalized(text: str) -> str:
    return " ".join(text.split())


def lines_of(text: str, quote: str, anchor: str) -> tuple[int, int] | None:
    """The first line (1-based) holding the quote and the anchor, whitespace normalized; else None."""
    wanted = normalized(quote)
    for number, line in enumerate(text.splitlines(), 1):
        if wanted in normalized(line) and anchor in line:
            return number, number
    return None


def file_at(repo: Path, commit: str, path: str, cache: dict[tuple[str, str], str | None]) -> str | None:
    if (commit, path) not in cache:
        try:
            cache[(commit, path)] = git(repo, "show", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            cache[(commit, path)] = None
    return cache[(commit, path)]


_PR = re.compile(r"(?:pull request #|\(#)(\d+)")


def citations(repo: Path, rounds: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    commits = history(repo)
    cache: dict[tuple[str, str], str | None] = {}
    table: dict[str, dict[str, Any]] = {}
    for name, (path, quote, anchor) in CITATIONS.items():
        entry: dict[str, Any] = {"file": path, "quote": quote, "rounds": {}}
        if anchor:
            entry["anchor"] = anchor
        # the merge that brought the words in: the first commit of the branch whose file holds them
        for sha, when, subject in commits:
            text = file_at(repo, sha, path, cache)
            if text is not None and lines_of(text, quote, anchor):
                pr = _PR.search(subject)
                entry["merged"] = {"commit": sha, "date": when.date().isoformat(), "subject": subject}
                if pr:
                    entry["merged"]["pr"] = int(pr.group(1))
                break
        for version, info in rounds.items():
            text = file_at(repo, info["commit"], path, cache)
            found = lines_of(text, quote, anchor) if text is not None else None
            if found is None:
                entry["rounds"][version] = {"in_force": "no"}
                continue
            early = file_at(repo, info.get("earliest_commit", info["commit"]), path, cache)
            certain = early is not None and lines_of(early, quote, anchor) is not None
            first, last = found
            entry["rounds"][version] = {
                "in_force": "yes" if certain else "uncertain",
                "lines": [first, last],
                "text": "\n".join(text.splitlines()[first - 1 : last]),
            }
        table[name] = entry
    return table


def build(repo: Path) -> dict[str, Any]:
    rounds = round_commits(repo)
    return {
        "note": NOTE,
        "repository": REPOSITORY,
        "branch": BRANCH,
        "rounds": rounds,
        "citations": citations(repo, rounds),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policies", type=Path, required=True, help="a training_policies git directory (bare)")
    parser.add_argument("--write", action="store_true", help=f"write {DATA.name}")
    args = parser.parse_args(argv)
    text = json.dumps(build(args.policies), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.write:
        DATA.write_text(text, encoding="utf-8")
        print(f"wrote {DATA}")
        return 0
    if not DATA.is_file() or DATA.read_text(encoding="utf-8") != text:
        print(f"{DATA.name} differs from what {args.policies} gives (--write to regenerate)")
        return 1
    print(f"{DATA.name} is what {args.policies} gives")
    return 0


if __name__ == "__main__":
    sys.exit(main())
