"""PKG: what a package's folders and files must be so that every file can be read.

Discovery reports these problems while it lists PATH; it never follows a symlinked folder, never
reads a linked file that lies outside PATH, and never opens anything but a regular file, so loops
and FIFOs cannot hang a check and nothing outside PATH is read.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any, Iterable

from mlperf_audit import (
    PARAMS_FILE,
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    IssueRule,
    Problem,
    Rule,
    Run,
    RunRule,
    Severity,
    Submission,
    SubmissionRule,
    TargetKind,
    Tree,
    TreeRule,
    hookimpl,
    natural_key,
    rulesets,
    suggest,
    visible,
)
from mlperf_audit_rules.support import confusables, schemas
from mlperf_audit_rules.support.causes import DAMAGED_LOG, ROUND_NOT_NAMED
from mlperf_audit_rules.support.directives import bypasses, known_directives
from mlperf_audit_rules.support.history import later_check


class UnreadableFolder(IssueRule):
    """A folder (or an entry in it) cannot be listed or inspected.

    What it checks: that every folder of the package can be listed.

    Why it matters: results in a folder nobody can list are results nobody checked; the official
    tools crash on it.

    Example: `results/sysA/bert/` without read or execute permission.

    How to fix: make the folder readable (`chmod a+rx`).
    """

    code = "PKG001"
    problem = Problem.UNREADABLE_FOLDER
    name = "unreadable-folder"
    summary = "A folder cannot be listed."
    severity = Severity.ERROR
    scope = "tree"


class SpecialFile(IssueRule):
    """An entry is a FIFO, a socket or a device, not a regular file.

    What it checks: that the package holds only regular files and folders.

    Why it matters: reading a FIFO blocks forever; such an entry is never part of a result. It is
    not opened.

    Example: `results/sysA/bert/result_0.txt` created with `mkfifo`.

    How to fix: replace it with the regular file it stands for.
    """

    code = "PKG002"
    problem = Problem.SPECIAL_FILE
    name = "special-file"
    summary = "An entry is a FIFO, socket or device."
    severity = Severity.ERROR
    scope = "tree"


class BrokenLink(IssueRule):
    """A symbolic link points nowhere, or into a loop.

    What it checks: that every symbolic link in the package resolves to an existing file. The
    official repository checker makes the same check, but resolves relative links from the
    current folder instead of the link's own, so it flags correct links and misses broken ones.

    Why it matters: a broken link is a missing file; a published repository must be complete.

    Example: `result_0.txt -> /scratch/run17/log.txt` committed from a cluster.

    How to fix: replace the link with the file itself.
    """

    code = "PKG003"
    problem = Problem.BROKEN_LINK
    name = "broken-symlink"
    summary = "A symbolic link is broken or loops."
    severity = Severity.ERROR
    scope = "tree"


class LinkedFolder(IssueRule):
    """A symbolic link to a folder is not followed.

    What it checks: that folders in the package are real folders.

    Why it matters: following folder links can loop forever or leave the package; what lies
    behind the link is not checked, so say so instead of silently skipping it.

    Example: `results/sysB -> sysA`.

    How to fix: copy the folder in place of the link (results repositories hold real folders).
    """

    code = "PKG004"
    problem = Problem.LINKED_FOLDER
    name = "symlinked-folder"
    summary = "A symbolic link to a folder is not followed."
    severity = Severity.WARNING
    scope = "tree"


class LinkOutsidePath(IssueRule):
    """A symbolic link to a file leads outside the checked PATH; the file is not read.

    What it checks: that every linked file of the package, resolved through every link, lies inside
    the checked PATH (for a system or benchmark folder checked alone, its system description may
    link anywhere inside the submitter's folder). Such a link is listed but never opened, so
    nothing outside PATH reaches a report.

    Why it matters: a package must hold its own files: behind a link to `/scratch` or to another
    submitter's folder is a file that is not published with the results, or one that is not the
    submitter's to show. Reading it would check (and print) a file nobody submitted.

    Example: `results/sysA/bert/result_3.txt -> /scratch/run17/log.txt`, or
    `systems/sysA.json -> ../../../other/systems/sysB.json`.

    How to fix: copy the file in place of the link; inside the package, link only to files that
    are themselves inside it (or check the folder that holds both).
    """

    code = "PKG021"
    problem = Problem.LINK_OUTSIDE
    name = "link-outside-path"
    summary = "A linked file lies outside the checked PATH and is not read."
    severity = Severity.WARNING
    scope = "tree"


class NotASubmission(IssueRule):
    """A folder at the root of a results repository is not a submission; nothing in it is checked.

    What it checks: that every folder at the root of a results repository (one folder per
    submitter) holds a `results/` or `systems/` folder. Hidden folders (`.git`, `.github`) are
    the repository's own and are not reported, unless one holds a submission itself or one folder
    down (`.github/Acme/results/`): hidden folders are never checked.

    Why it matters: results placed anywhere else are never checked, scored or published; and a
    stray `results/` or `systems/` at the root must not turn the whole repository into one
    submission whose submitters go unchecked (a repository is read as a repository whenever a
    folder at its root is a submitter's).

    Example: `README/notes.txt` or a `results/` folder beside `Acme/` and `Beta/`.

    How to fix: move the files into the submitter's folder they belong to, or remove the folder.
    """

    code = "PKG022"
    problem = Problem.NOT_A_SUBMISSION
    name = "not-a-submission"
    summary = "A folder at the root of a results repository is not a submission and is not checked."
    severity = Severity.WARNING
    scope = "tree"


class SubmissionFolderAtRoot(IssueRule):
    """A `results/`, `systems/` or `benchmarks/` folder lies at the root of a results repository.

    What it checks: that the root of a results repository (one folder per submitter) holds no
    folder of a submission's own layout. A PATH with both is read as a repository, so that its
    submitters are checked; what the root's own `results/` holds is then not checked at all.

    Why it matters: such a layout is either a submission copied into the wrong place or a decoy:
    a folder beside an unchecked submission that turns it into a "repository" whose only
    submitter holds nothing. Either way a result is published that no check has read.

    Example: `results/`, `systems/` and `Decoy/systems/README` at the top of an upload.

    How to fix: move the folder into the submitter's folder it belongs to (or, for a single
    submission, remove the other folders and check it alone).
    """

    code = "PKG023"
    problem = Problem.SUBMISSION_AT_ROOT
    name = "submission-folder-at-root"
    summary = "A results/, systems/ or benchmarks/ folder at the root of a repository is not checked."
    severity = Severity.ERROR
    scope = "tree"


class ScalingJsonInvalid(IssueRule):
    """`scaling.json` in a benchmark folder is unreadable or holds no numeric `scaling_factor`.

    What it checks: that a `scaling.json` is a JSON object with one field, a number
    `scaling_factor` of at least 1 (`schemas/scaling.schema.json`).

    Why it matters: the official summarizer multiplies the score by this factor; a broken file
    makes it crash or publish an unscaled score.

    Example: `{"scaling_factor": "1.02"}` or a truncated file.

    How to fix: delete the file; it is recomputed from the RCPs (mlperf-audit recomputes it in
    memory and never needs the file).
    """

    code = "PKG005"
    problem = Problem.SCALING_JSON_INVALID
    name = "scaling-json-invalid"
    summary = "scaling.json is unreadable or has no numeric scaling_factor."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        yield from super().check(result, context)
        if result.scaling is not None:
            for error in schemas.errors("scaling.schema.json", result.scaling):
                yield self.finding(
                    f"scaling.json: {schemas.field_of(error)}: {schemas.describe(error)}",
                    path=f"{result.path}/scaling.json",
                )


class BadName(IssueRule):
    """A file or folder name starts with a dot or contains a space.

    What it checks: every name under a submission, as the official repository checker does. A
    PATH that is itself one submission on disk (the folder a submitter commits from, where a
    pre-commit hook runs `mlperf-audit check .`) may hold version-control and tooling entries at
    its root (`.git`, `.github`, `.gitignore`, `.gitattributes`, `.pre-commit-config.yaml`,
    `.mlperf-audit.toml` and the like): they are not package content and are not checked, as a
    results repository's own are not; the same names inside the package, in a submitter's folder
    of a results repository or in an archive are reported.

    Why it matters: the official `repo_checker` rejects such names (they break scripts and hide
    files); a results repository will not take them.

    Example: `.DS_Store`, `results/sysA/bert/result 0.txt`.

    The repository checker entered the official tools on 2022-04-12 (mlperf-logging 95a5da0): for
    rounds published before it (1.0, 1.1) a bad name is information naming that later rule. Until
    2022-10-19 (f7a9454, "Update repository checks", in force from 3.0) it read file names only: a
    folder such as `.github` passed (its files were judged by their own names), so for 2.0 and 2.1
    a bad folder name is information naming that later rule too.

    How to fix: rename the entry without the dot or space, or delete it.
    """

    code = "PKG015"
    follows_from = ROUND_NOT_NAMED  # checked from a later round on
    problem = Problem.BAD_NAME
    name = "hidden-or-space-name"
    summary = "A name starts with a dot or contains a space."
    severity = Severity.ERROR
    scope = "tree"

    def check(self, target: Any, context: CheckContext) -> Iterable[Finding]:
        files_later = later_check("file-names-checked", context.ruleset)
        folders_later = later_check("folder-names-checked", context.ruleset)
        for finding in super().check(target, context):
            # discovery words a folder's bad name "folder name '...' ..." (mlperf_audit.reading.discovery.FOLDER_NAME)
            later = files_later or (folders_later if finding.message.startswith("folder name ") else None)
            yield (
                finding
                if later is None
                else dataclasses.replace(
                    finding, severity=Severity.INFO, message=f"{finding.message}; {later.note(context.ruleset)}"
                )
            )


class FileTooBig(IssueRule):
    """A file is larger than 50 MB.

    What it checks: the size of every file under a submission, as the official repository checker does.

    Why it matters: the official `repo_checker` rejects files over 50 MB; GitHub refuses files
    over 100 MB.

    Example: a result log with the full stdout of every rank.

    How to fix: keep only what the result needs; move large artefacts elsewhere.
    """

    code = "PKG016"
    problem = Problem.FILE_TOO_BIG
    name = "file-too-big"
    summary = "A file is larger than the 50 MB the repository allows."
    severity = Severity.ERROR
    scope = "tree"


def _closest(name: str, known: Iterable[str]) -> str | None:
    """The known name that `name` most probably misspells (`gnn` for `GNN`, `bert` for `bert_large`),
    or None when none is close."""
    close = suggest.closest(name, sorted(known), count=1)
    return close[0] if close else None


def _round(context: CheckContext) -> rulesets.Round:
    return rulesets.get(context.ruleset)


class UnknownBenchmarkFolder(BenchmarkRule):
    """A benchmark folder's name is not a benchmark of the round.

    What it checks: that each `results/<system>/<benchmark>/` is named after a benchmark of the
    ruleset (for training 4.1.0: bert, dlrm_dcnv2, gnn, gpt3, llama2_70b_lora, ssd,
    stable_diffusion).

    Why it matters: the official package checker skips such a folder with only a warning, so its
    results are never checked, yet they would be published.

    Example: `results/sysA/resnet/` in a 4.1 submission, or `results/sysA/llama2/`; a folder
    `GNN/` or `bert_large/` is named with the closest benchmark (`gnn`, `bert`) to rename it to.

    How to fix: rename the folder to the benchmark's official name, or remove results of benchmarks
    that are not part of the round.
    """

    code = "PKG010"
    name = "unknown-benchmark-folder"
    summary = "A benchmark folder is not named after a benchmark of the round."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        round_ = _round(context)
        if result.folder.system is not None and result.benchmark not in round_.benchmarks:
            closest = _closest(result.benchmark, round_.benchmarks)
            guess = f"; did you mean {closest!r}?" if closest else ""
            yield self.finding(
                f"{result.benchmark!r} is not a benchmark of {round_.name}{guess} "
                f"({', '.join(sorted(round_.benchmarks))}); the official checker skips this folder",
                path=result.path,
                hint=f"Rename the folder to {closest!r}, the benchmark's official name." if closest else None,
            )


class RulesetMismatch(TreeRule):
    """The round in force does not fit the package.

    What it checks: that the round in force (named by `--ruleset` or the configuration, or taken
    by `--ruleset auto`) allows every benchmark folder of the package, and that the package's
    newest run was logged before that round's publication and after the previous round's (see the
    README, "Which round": the logs' own dates never choose the rules, they are checked here). A
    round the checked repository's own configuration names is an error when the newest run was
    logged after that round's publication (such runs cannot be its results: a package naming an
    older, laxer round for itself); named by `--ruleset`, it is a warning (runs may be reused, a
    clock may be wrong). When nothing named the round, PKG024 says what the dates fit instead.

    Why it matters: the wrong round's rules give hundreds of false errors (a v3.1 package checked
    with the 4.0 rules) or none where there should be some, without a word that the rules do not
    fit the package. This is the report's first finding.

    Example: `--ruleset training-4.1.0` on a package with `resnet` and `unet3d` folders (v4.0).

    How to fix: pass the ruleset the finding names, or `--ruleset auto`.
    """

    code = "PKG020"
    name = "ruleset-mismatch"
    summary = "The ruleset named does not fit the package."
    severity = Severity.ERROR
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        if not tree.benchmark_folders and not tree.loose_logs:
            return
        inference = rulesets.infer_tree(tree)
        named = context.ruleset
        if inference.ruleset == named or _guessed_round(context, inference) is not None:
            return  # PKG024 says it, and the findings of the round's rules follow from it
        if named not in inference.fits:
            unknown = sorted({f.benchmark for f in tree.benchmark_folders} - set(rulesets.get(named).benchmarks))
            yield self.finding(
                f"{named} does not allow the package's benchmark folder(s) {', '.join(unknown)}; "
                f"{inference.ruleset} fits: {inference.reason}",
                hint=f"Check with --ruleset {inference.ruleset}, or --ruleset auto.",
            )
        elif inference.dated is not None and _after(inference.dated, named) and _named_by_tree(context):
            yield self.finding(
                f"the newest run was logged on {inference.dated}, after {named}'s publication "
                f"({rulesets.window_text(named)}), and the round is {visible(context.config.ruleset_named_by())}: "
                f"runs logged after a round was published cannot be its results; {inference.ruleset} fits: "
                f"{inference.reason}",
                hint=f'Name the round the package is for (ruleset = "{inference.ruleset}"), or check with '
                f"--ruleset {inference.ruleset}.",
            )
        elif inference.dated is not None and not rulesets.within(inference.dated, named):
            yield self.finding(
                f"the newest run was logged on {inference.dated}, outside {named}'s window "
                f"({rulesets.window_text(named)}); {inference.ruleset} fits: {inference.reason}",
                severity=Severity.WARNING,
                hint=f"If the package belongs to {inference.ruleset}, check with --ruleset {inference.ruleset}; "
                "if it belongs to this round, its runs' clocks are wrong or the runs are reused.",
            )


def _named_by_tree(context: CheckContext) -> bool:
    """Whether the checked repository's own configuration named the round in force."""
    return context.config.ruleset_from == "tree configuration"


def _after(day: str, ruleset: str) -> bool:
    """Whether a run logged on `day` was logged after `ruleset`'s publication (an estimated one: never)."""
    version = ruleset.split("-", 1)[1]
    if version not in rulesets.PUBLISHED or rulesets.PUBLISHED[version].startswith("~"):
        return False
    return day > rulesets.PUBLISHED[version]


def _guessed_round(context: CheckContext, inference: rulesets.Inference) -> str | None:
    """The round the logs' dates fit, when nothing named the round in force (no option, no
    configuration, no folder above the submissions), the dates fall outside its window and inside
    the window of another round that allows every benchmark; else None."""
    if context.config.ruleset_from or not context.config.ruleset_inferred:
        return None
    return rulesets.dates_fit_another(context.ruleset, inference)


class RoundNotNamed(TreeRule):
    """Nothing names the round, and the logs' dates fit another round than the one taken.

    What it checks: when neither `--ruleset`, a configuration (`ruleset = "training-X.Y.Z"`) nor a
    folder above the submissions (`training_results_v5.1/`) names the round, the check takes the
    newest round that allows every benchmark folder, never the one the logs' dates suggest (a package
    that moved its clock back would choose older, laxer rules). This rule says when the package's
    newest run was logged outside that round's window and inside another round's: the package is
    most likely that round's, and every finding of a rule whose verdict depends on the round
    (compliance, RCPs, seeds, the runs olympic scoring tolerates, the checker's options, the system
    description's schema) follows from the choice, folded under this finding in the text output
    (`caused_by` in the JSON).

    Why it matters: a v5.1 package copied out of its results repository and checked with the 6.1
    rules gets hundreds of errors that do not apply (AMD v5.1: 546 errors, `CMP1010 exactly one
    'config_filename' record is required`). Leading with the round and its one-line fix turns a
    flood into one screen.

    Example: a copy of `training_results_v5.1/AMD` checked as `~/work/AMD`: training-6.1.0 is taken,
    the runs were logged in October 2025, inside training-5.1.0's window.

    How to fix: name the round the package is for: `--ruleset training-5.1.0`, or
    `ruleset = "training-5.1.0"` in the repository's `.mlperf-audit.toml` (or
    `[tool.mlperf-audit]` in `pyproject.toml`), or the `ruleset` input of the Action.
    """

    code = "PKG024"
    name = "round-not-named"
    summary = "Nothing names the round, and the logs' dates fit another round than the one taken."
    severity = Severity.WARNING
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        if not tree.benchmark_folders and not tree.loose_logs:
            return
        inference = rulesets.infer_tree(tree)
        fits = _guessed_round(context, inference)
        if fits is None:
            return
        taken = context.ruleset
        benchmarks = ", ".join(sorted({f.benchmark for f in tree.benchmark_folders})) or "the logs'"
        yield self.finding(
            f"nothing names the round: {taken} was taken, the newest allowing {benchmarks}; but the newest "
            f"run was logged on {inference.dated}, inside {fits}'s window ({rulesets.window_text(fits)}): "
            f"what the round's rules find (compliance, RCPs, seeds) follows from this choice",
            hint=f"If the package is for {fits}, check with --ruleset {fits}, or name it in the repository's "
            f'.mlperf-audit.toml: ruleset = "{fits}". If it is for {taken}, name that round the same way.',
        )


class BenchmarkNameMismatch(RunRule):
    """The log's `submission_benchmark` is not the name of the folder it is in.

    What it checks: that `submission_benchmark` in each result file equals its benchmark folder's name.

    Why it matters: the folder decides how the result is scored and published, the log decides which
    rules the official compliance checker applies; a mismatch means the run is checked against one
    benchmark's rules and published as another.

    Example: `results/sysA/gpt3/result_0.txt` logging `submission_benchmark: "llama2_70b_lora"`.

    How to fix: move the file to the folder of the benchmark it ran, or correct the folder name.
    """

    code = "PKG011"
    follows_from = frozenset({"PKG010"})  # a folder named after no benchmark names none of its logs
    name = "benchmark-name-mismatch"
    summary = "submission_benchmark differs from the benchmark folder's name."
    severity = Severity.ERROR
    scope = "run"  # not tolerated as one failed run: the official RCP check fails the whole folder on it

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        event = run.first("submission_benchmark")
        if event is None or run.benchmark is None or run.system is None:
            return
        if event.value != run.benchmark:
            yield self.finding(
                f"submission_benchmark is {event.value!r}, but the file is in the folder {run.benchmark!r}",
                path=run.path,
                line=event.line,
            )


class RunCount(BenchmarkRule):
    """A benchmark folder does not hold the number of runs the round requires.

    What it checks: the number of `result_*.txt` files against the round's table (training 4.1.0:
    bert, dlrm_dcnv2, gnn, llama2_70b_lora and stable_diffusion 10; ssd 5; gpt3 3). With
    `--partial`, fewer runs are pending (info), not an error.

    Why it matters: the score is an olympic mean over exactly that many runs; the official package
    checker fails a folder with any other count.

    Example: `results/sysA/bert/` with `result_0.txt` ... `result_8.txt` (9 runs).

    How to fix: add the missing runs (or remove extra ones) so that the folder holds exactly the
    required number, named `result_0.txt` onwards.
    """

    code = "PKG012"
    name = "run-count"
    summary = "A benchmark folder holds the wrong number of runs."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        required = _round(context).required_runs(result.benchmark)
        found = len(result.folder.result_files)
        if required is None or found == required:
            return
        if context.config.partial and found < required:
            yield self.finding(
                f"{found} of {required} runs present; {required - found} still required (--partial: pending)",
                path=result.path,
                severity=Severity.INFO,
            )
            return
        yield self.finding(f"{found} result_*.txt file(s), the rules require {required}", path=result.path)


KNOWN_FILES = {"scaling.json", PARAMS_FILE}


class UnknownFile(BenchmarkRule):
    """A benchmark folder holds a file that is neither a result nor a known companion.

    What it checks: that a benchmark folder holds only `result_*.txt`, `scaling.json`,
    `package_checker_params` and a `power/` folder.

    Why it matters: a misnamed log (`result0.txt`, `log_1.txt`) is silently not scored; the official
    package checker only warns.

    Example: `results/sysA/bert/result-3.txt`.

    How to fix: rename result logs to `result_<n>.txt`; move anything else out of the results tree.
    """

    code = "PKG013"
    name = "unknown-file"
    summary = "A benchmark folder holds an unexpected file."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        for entry in result.folder.other_files:
            name = entry.path.rstrip("/").rsplit("/", 1)[-1]
            if name in KNOWN_FILES or (name == "power" and entry.path.endswith("/")):
                continue
            kind = "folder" if entry.path.endswith("/") else "file"
            yield self.finding(f"unexpected {kind} {name!r} in a benchmark folder", path=entry.path.rstrip("/"))


class SystemDescriptionMissing(SubmissionRule):
    """A `results/<system>/` folder has no `systems/<system>.json`.

    What it checks: that every system with results is described.

    Why it matters: the division, availability and hardware of the results come from the
    description; the official package checker crashes without it.

    Example: `results/dgx_h100_n8/` with no `systems/dgx_h100_n8.json`; when a description's name
    is close (`systems/dgx_h100_n_8.json`), it is named as the one probably meant.

    How to fix: add the system description, named exactly as the results folder.
    """

    code = "PKG014"
    name = "system-description-missing"
    summary = "A system with results has no system description."
    severity = Severity.ERROR
    scope = "submission"

    def check(self, submission: Submission, context: CheckContext) -> Iterable[Finding]:
        if context.tree.kind in (TargetKind.BENCHMARK, TargetKind.LOG_FILE) and not submission.name:
            return
        described = {system.name for system in submission.systems}
        for name in submission.system_dirs:
            if name not in described:
                closest = _closest(name, described - set(submission.system_dirs))
                guess = f"; the closest description is systems/{closest}.json" if closest else ""
                yield self.finding(
                    f"no systems/{name}.json describes the system of results/{name}/{guess}",
                    path=submission.path_of(f"results/{name}")
                    if context.tree.kind is not TargetKind.SYSTEM
                    else submission.path,
                    hint=f"Rename systems/{closest}.json or results/{name}/ so that both have the same name."
                    if closest
                    else None,
                )


def _names(tree: Any) -> dict[str, dict[str, str]]:
    """Each kind of name the package gives (submitter, system, benchmark), every distinct name of
    that kind with the path of its first folder or file."""
    names: dict[str, dict[str, str]] = {"submitter": {}, "system": {}, "benchmark": {}}
    for submission in tree.submissions:
        if submission.name:
            names["submitter"].setdefault(submission.name, submission.path)
        for system in submission.system_dirs:
            names["system"].setdefault(system, submission.path_of(f"results/{system}"))
        for description in submission.systems:
            names["system"].setdefault(description.name, description.path)
    for folder in tree.benchmark_folders:
        if folder.system is not None:
            names["benchmark"].setdefault(folder.benchmark, folder.path)
    return names


def _plainness(name: str) -> tuple[bool, bool, str]:
    return (not name.isascii(), unicodedata.normalize("NFC", name) != name, name)


def _difference(first: str, second: str) -> str:
    """How two names with one skeleton differ, by the code points a reader cannot see."""
    if first.isascii() and second.isascii():
        return "both are ASCII, with letters or digits that look alike (such as 1 and l, 0 and O, rn and m)"
    spelled = " against ".join(
        f"{visible(name)!r} holds {confusables.spelled(name) or 'only ASCII'}" for name in (first, second)
    )
    if unicodedata.normalize("NFC", first) == unicodedata.normalize("NFC", second):
        return f"they differ only in Unicode normalisation (composed and decomposed letters): {spelled}"
    if unicodedata.normalize("NFKC", first) == unicodedata.normalize("NFKC", second):
        return f"they differ only in compatibility forms (NFKC): {spelled}"
    return f"they differ in confusable characters: {spelled}"


class ConfusableNames(TreeRule):
    """Two names of the package look the same, or one name mixes scripts to look like another.

    What it checks: that no two submitter, system or benchmark names of the checked tree are
    equal once brought to NFKC and to their skeleton of Unicode Technical Standard #39 (each
    character replaced by the character it is confusable with, from Unicode's confusables
    table); that no benchmark folder is confusable with a benchmark name of any round without
    being it; and that no name mixes ASCII letters with letters of another script that look like
    ASCII ones (the Cyrillic `е` of `tinybox_rеd`).

    Why it matters: every report shows such names alike, so a second submitter, system or
    benchmark can pass for the first: `Ünicorn` composed and decomposed are two folders that print
    the same, and `tinybox_rеd` reads as `tinybox_red` in every table, score and summary. Names
    that Unicode's own data says look the same are an error; names that differ only by ASCII
    look-alikes (`1` and `l`, `0` and `O`, `rn` and `m`) depend on the font, and a single name
    mixing scripts may be honest, so those are warnings.

    Example: `results/tinybox_red/` and `results/tinybox_rеd/`, or a benchmark folder `ѕsd`
    (a Cyrillic `ѕ`).

    How to fix: rename the folders and files so that each name is written in one script and in
    composed form (NFC), and no two names look alike.
    """

    code = "PKG030"
    name = "confusable-names"
    summary = "Two names of the package look the same, or a name mixes scripts to look like another."
    severity = Severity.ERROR
    scope = "tree"

    def check(self, tree: Tree, context: CheckContext) -> Iterable[Finding]:
        known = {
            confusables.comparison_key(benchmark): benchmark
            for ruleset in rulesets.SUPPORTED
            for benchmark in rulesets.get(ruleset).benchmarks
        }
        for kind, names in _names(tree).items():
            compared = dict(names)
            if kind == "submitter":  # a pull request's submitters, against the repository's others too
                for other in getattr(tree, "others", ()):
                    compared.setdefault(other, other)
            groups: dict[str, list[str]] = {}
            for name in compared:
                groups.setdefault(confusables.comparison_key(name), []).append(name)
            alike: set[str] = set()
            for key, group in groups.items():
                if not any(name in names for name in group):
                    continue  # only submitters this check leaves out: theirs to report
                group.sort(key=_plainness)  # the plainest name first: a finding points at the odd one
                first = group[0]
                for other in group[1:]:
                    alike.update((first, other))
                    yield self.finding(
                        f"the {kind} names {visible(first)!r} and {visible(other)!r} look the same: "
                        f"{_difference(first, other)}",
                        path=compared[other],
                        related=[(compared[first], None)],
                        severity=Severity.WARNING if first.isascii() and other.isascii() else None,
                    )
                if kind == "benchmark" and key in known and known[key] not in group:
                    for name in group:
                        alike.add(name)
                        yield self.finding(
                            f"the benchmark folder {visible(name)!r} looks like the benchmark "
                            f"{known[key]!r} but is not it: {confusables.spelled(name) or 'ASCII look-alikes'}",
                            path=names[name],
                            severity=Severity.WARNING if name.isascii() else None,
                        )
            for name in names:
                lookalikes = confusables.latin_lookalikes(name)
                if lookalikes and name not in alike:
                    letters = ", ".join(
                        f"{confusables.spelled(char)} looks like {looks!r}" for char, looks in lookalikes
                    )
                    yield self.finding(
                        f"the {kind} name {visible(name)!r} mixes scripts: {letters}",
                        path=names[name],
                        severity=Severity.WARNING,
                    )


class BypassInForce(BenchmarkRule):
    """A `package_checker_params` file switches a check off for this benchmark.

    What it checks: the directives of `results/<system>/package_checker_params` and
    `results/<system>/<benchmark>/package_checker_params`, read one per line (blank lines and
    `#` comments ignored): `rcp-bypass` and `seed-checker-bypass`; and the submitter's own
    `<submitter>/package_checker_params`, whose newline-terminated lines the round's verify script
    passes to the package checker as options for every folder (`rcp_bypass` until 4.0,
    `rcp-bypass` and `seed-checker-bypass` from 4.1).

    Why it matters: a bypass must be approved by the submission committee, so every report lists
    each one in force. The official package checker compares each line *with its newline* to the
    directive, so it honours only a last line without a newline; the finding says when the
    official checker would ignore a directive that mlperf-audit honours.

    Example: `rcp-bypass` in `results/sysA/gpt3/package_checker_params`.

    How to fix: nothing, if the committee approved it; otherwise remove the file.
    """

    code = "PKG017"
    follows_from = ROUND_NOT_NAMED  # each round has its own options
    name = "bypass-in-force"
    summary = "A package_checker_params bypass is in force."
    severity = Severity.INFO
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        for params in result.folder.params:
            for _, directive in params.lines:
                if directive not in bypasses(params.level, context.ruleset):
                    continue
                official = (
                    ""
                    if directive in params.official
                    else (" (the official checker ignores it: it compares lines with their newline)")
                )
                yield self.finding(
                    f"{directive} in force for {result.benchmark} ({params.level} level){official}", path=params.path
                )


class UnknownDirective(BenchmarkRule):
    """A `package_checker_params` line is not a known directive.

    What it checks: that each non-blank, non-comment line is `rcp-bypass` or `seed-checker-bypass`
    (in a submitter's own file: one of the package checker's options as the round spells them,
    `rcp_bypass` and `rcp_bert_train_samples` until 4.0, `rcp-bypass`, `rcp-bert-train-samples` and
    `seed-checker-bypass` from 4.1; any other line makes the verify script's package checker stop).

    Why it matters: a misspelt bypass (`rcp_bypass`) silently does nothing in the official checker.

    Example: `rcp_bypass` or `--rcp-bypass`.

    How to fix: write the directive exactly, one per line.
    """

    code = "PKG018"
    follows_from = ROUND_NOT_NAMED  # each round has its own options
    name = "unknown-checker-directive"
    summary = "package_checker_params holds an unknown directive."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        for params in result.folder.params:  # a system-level file repeats per folder; the engine drops repeats
            for number, directive in params.lines:
                known = known_directives(params.level, context.ruleset)
                if directive not in known:
                    yield self.finding(
                        f"unknown directive {directive!r}; known at {params.level} level: {', '.join(sorted(known))}",
                        path=params.path,
                        line=number,
                    )


class TooManyFailedRuns(BenchmarkRule):
    """More runs of a benchmark fail than olympic scoring tolerates.

    What it checks: the number of non-compliant runs in a benchmark folder (runs with an error
    from a rule that makes a run non-compliant: log syntax, log structure, the official compliance
    rules, the power files). One is tolerated (four for unet3d): its findings are reported as
    warnings that say so, or as information when the run ended without converging (its run_stop
    status is not success): olympic scoring exists for such runs. A run is any `result_*.txt`, the official checker's glob
    (`result_221014xxxx_01.txt` and `result_run2.txt` included, not only `result_<n>.txt`), and
    the failures of its `power/result_*/` folder count with its log's, in the same benchmark
    folder, as the official checker joins the two by result name.

    Why it matters: the official package checker accepts a folder with one failed run ("accepting
    this under olympic scoring") and rejects it with more.

    Example: two runs without `run_stop`.

    How to fix: replace the failed runs with compliant ones.
    """

    code = "PKG019"
    follows_from = DAMAGED_LOG | ROUND_NOT_NAMED
    name = "too-many-failed-runs"
    summary = "More runs fail than olympic scoring tolerates."
    severity = Severity.ERROR
    scope = "benchmark"
    # decided once every run's findings are known, with the olympic tolerance (`apply_olympic_tolerance`)
    produced_by = "mlperf_audit_modify_findings"


TOLERATED = " [tolerated: the only non-compliant run of this benchmark; olympic scoring drops it]"
TOLERATED_UNFINISHED = (
    " [tolerated: the run did not converge, the only failed run of this benchmark; olympic scoring drops it]"
)
#: Findings that say a run ended without converging: its run_stop status is not success (EVT007). A
#: log without run_stop (EVT003) may be a crash or a truncated file: that stays a warning.
UNFINISHED = {"EVT007"}


#: A run is any `result_*.txt`, the official package checker's glob (`result_221014xxxx_01.txt`,
#: `result_run2.txt`, ...): the log itself, or its power folder `power/result_*/` and what it holds.
_RUN_PATH = re.compile(r"^(?P<folder>.*)/(?P<run>result_[^/]*)\.txt$")
_POWER_PATH = re.compile(r"^(?P<folder>.*?)/power/(?P<run>result_[^/]*)(?:/.*)?$")


def _run_of(path: str) -> tuple[str, str] | None:
    """(benchmark folder, result file) a finding's path belongs to: the log, or its power folder."""
    match = _POWER_PATH.match(path) or _RUN_PATH.match(path)
    if match is None:
        return None
    folder = match.group("folder")
    return folder, f"{folder}/{match.group('run')}.txt"


def apply_olympic_tolerance(findings: list[Finding], context: CheckContext) -> None:
    """Downgrades the findings of a lone failed run to warnings; reports folders with too many."""
    fails = {code for code, rule in context.catalogue.items() if rule.fails_run and context.is_selected(code)}
    failed: dict[str, dict[str, list[int]]] = {}
    for index, finding in enumerate(findings):
        if finding.rule in fails and finding.severity is Severity.ERROR and finding.path and finding.benchmark:
            run = _run_of(finding.path)
            if run is not None:
                failed.setdefault(run[0], {}).setdefault(run[1], []).append(index)
    report_too_many = context.is_selected(TooManyFailedRuns.code)
    rule = TooManyFailedRuns()
    for folder, runs in sorted(failed.items()):
        sample = findings[next(iter(runs.values()))[0]]
        if len(runs) <= rulesets.get(context.ruleset).olympic_drop(sample.benchmark or ""):
            for indexes in runs.values():
                # a run that ended without converging (status aborted) is what olympic scoring is for:
                # information; a tolerated run with a defect of another kind stays a warning
                unfinished = any(findings[index].rule in UNFINISHED for index in indexes)
                for index in indexes:
                    findings[index] = dataclasses.replace(
                        findings[index],
                        severity=Severity.INFO if unfinished else Severity.WARNING,
                        message=findings[index].message + (TOLERATED_UNFINISHED if unfinished else TOLERATED),
                    )
        elif report_too_many:
            names = ", ".join(path.rsplit("/", 1)[-1] for path in sorted(runs, key=natural_key))
            findings.append(
                dataclasses.replace(
                    rule.finding(
                        f"{len(runs)} runs do not comply ({names}); olympic scoring tolerates "
                        f"{rulesets.get(context.ruleset).olympic_drop(sample.benchmark or '')}",
                        path=folder,
                    ),
                    submitter=sample.submitter,
                    system=sample.system,
                    benchmark=sample.benchmark,
                )
            )


RULES: list[type[Rule]] = [
    RulesetMismatch,
    RoundNotNamed,
    UnreadableFolder,
    SpecialFile,
    BrokenLink,
    LinkedFolder,
    LinkOutsidePath,
    NotASubmission,
    SubmissionFolderAtRoot,
    ScalingJsonInvalid,
    UnknownBenchmarkFolder,
    BenchmarkNameMismatch,
    RunCount,
    UnknownFile,
    SystemDescriptionMissing,
    BadName,
    FileTooBig,
    BypassInForce,
    UnknownDirective,
    TooManyFailedRuns,
    ConfusableNames,
]


@hookimpl
def mlperf_audit_modify_findings(findings: list[Finding], context: CheckContext) -> None:
    apply_olympic_tolerance(findings, context)


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
