"""PKG: what a package's folders and files must be so that every file can be read.

Discovery reports these problems while it lists PATH; it never follows a symlinked folder and
never opens anything but a regular file, so loops and FIFOs cannot hang a check.
"""

from __future__ import annotations

from mlperf_audit import IssueRule, Rule, Severity, hookimpl
from mlperf_audit.discovery import Code
from mlperf_audit.engine import SCALING_JSON_INVALID


class UnreadableFolder(IssueRule):
    """A folder (or an entry in it) cannot be listed or inspected.

    What it checks: that every folder of the package can be listed.

    Why it matters: results in a folder nobody can list are results nobody checked; the official
    tools crash on it.

    Example: `results/sysA/bert/` without read or execute permission.

    How to fix: make the folder readable (`chmod a+rx`).
    """

    code = Code.UNREADABLE_FOLDER
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

    code = Code.SPECIAL_FILE
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

    code = Code.BROKEN_LINK
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

    code = Code.LINKED_FOLDER
    name = "symlinked-folder"
    summary = "A symbolic link to a folder is not followed."
    severity = Severity.WARNING
    scope = "tree"


class ScalingJsonInvalid(IssueRule):
    """`scaling.json` in a benchmark folder is unreadable or holds no numeric `scaling_factor`.

    What it checks: that a `scaling.json` is a JSON object with a number `scaling_factor`.

    Why it matters: the official summarizer multiplies the score by this factor; a broken file
    makes it crash or publish an unscaled score.

    Example: `{"scaling_factor": "1.02"}` or a truncated file.

    How to fix: delete the file; it is recomputed from the RCPs (mlperf-audit recomputes it in
    memory and never needs the file).
    """

    code = SCALING_JSON_INVALID
    name = "scaling-json-invalid"
    summary = "scaling.json is unreadable or has no numeric scaling_factor."
    severity = Severity.ERROR
    scope = "benchmark"


RULES: list[type[Rule]] = [UnreadableFolder, SpecialFile, BrokenLink, LinkedFolder, ScalingJsonInvalid]


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return RULES
