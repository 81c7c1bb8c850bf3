"""Finds what a PATH holds: a results repository, a submission, a system or benchmark folder, or a log.

Discovery reads folder listings and the small system descriptions; result logs are parsed later,
one benchmark folder at a time, so memory stays bounded by the largest folder. Nothing here follows
a symlinked folder (no loops, no escape from PATH), lists a linked file whose target lies outside
PATH (its content is never read), or opens anything but a regular file (no FIFO hangs), and nothing
is ever written.

Every name is hostile: a display path (`FileEntry.path`, a submitter, system or benchmark name)
shows control and undecodable characters as escapes (`safety.visible`), so that every report can
print and encode it; `FileEntry.fs_path` keeps the real path, the only one ever opened.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator

from ..archives import Archive, is_archive
from ..errors import TargetError
from ..model import (
    PARAMS_FILE,
    BenchmarkFolder,
    CheckerParams,
    FileEntry,
    Implementation,
    Issue,
    Problem,
    Submission,
    SystemDescription,
    TargetKind,
    Tree,
    natural_key,
    open_binary,
)
from ..safety import visible
from .parser import MAX_JSON_DEPTH, json_depth

#: How deep into an implementation folder discovery lists files (launch configurations sit at
#: its top or in a `configs/` folder), and how many it lists at most (some hold whole frameworks).
IMPLEMENTATION_DEPTH = 2
MAX_IMPLEMENTATION_FILES = 5000

#: A system description larger than this is not read (real ones are under 4 KiB).
MAX_SYSTEM_JSON_BYTES = 1 << 20


#: The official repository checker rejects files larger than this.
MAX_REPO_FILE_BYTES = 50 * 1000 * 1000
MAX_PARAMS_BYTES = 1 << 16


def is_result_name(name: str) -> bool:
    return name.startswith("result_") and name.endswith(".txt")


@dataclass
class _Listing:
    dirs: list[tuple[str, Path]]
    files: list[FileEntry]


#: How a bad name of a folder is introduced (the official repository checker read only file names
#: before 3.0.0: PKG015 tells the two apart by it).
FOLDER_NAME = "folder name"


def _is_bad_name(name: str) -> bool:
    """A name the official repository checker rejects: hidden, or holding a space."""
    return name.startswith(".") or " " in name


def _quoted_link(path: Path) -> str:
    """A link's target as written in the link, quoted and shown visibly (it is hostile text)."""
    return "'" + visible(os.readlink(path)) + "'"


def _inside(path: Path | str, folder: str) -> bool:
    """Whether `path`, resolved through every link, lies in the resolved `folder`."""
    return Path(os.path.realpath(path)).is_relative_to(folder)


class _Walker:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._prefix = os.fspath(root).rstrip(os.sep) + os.sep if os.fspath(root) not in ("", ".") else "\0"
        # links are judged against the real PATH: PATH itself may be a link the user named
        self.real_root = os.path.realpath(root)
        self.issues: list[Issue] = []
        self.links_seen: set[Path] = set()
        self.linked_folders_reported: set[str] = set()  # display paths: a probe may report one first

    def restart(self) -> None:
        """Forgets what was found: the folders are listed again."""
        self.issues.clear()
        self.links_seen.clear()
        self.linked_folders_reported.clear()

    def join(self, folder: Any, name: str) -> Any:
        return folder / name

    def is_dir(self, folder: Any) -> bool:
        """A real folder; a link to one is reported (once) and never followed."""
        try:
            info = os.lstat(folder)
        except OSError:
            return False
        if stat.S_ISLNK(info.st_mode) and os.path.isdir(folder):
            self._linked_folder(Path(folder))
        return stat.S_ISDIR(info.st_mode)

    def display(self, path: Path | str) -> str:
        text = os.fspath(path)
        # a path listed under the root is the root's text and more (relpath, 50 us, for the others)
        if text.startswith(self._prefix) and "/." not in text and "//" not in text:
            relative = text[len(self._prefix) :]
        else:
            relative = os.path.relpath(path, self.root)
        return "." if relative == "." else visible(relative.replace(os.sep, "/"))

    def list(self, folder: Path) -> _Listing:
        listing = _Listing([], [])
        try:
            with os.scandir(folder) as entries:
                items = sorted(entries, key=lambda e: natural_key(e.name))
        except OSError as error:
            self.issues.append(
                Issue(
                    Problem.UNREADABLE_FOLDER,
                    f"cannot list the folder: {error.strerror or error}",
                    self.display(folder),
                    hint="Check the folder's permissions.",
                )
            )
            return listing
        for entry in items:
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    self._symlink(path, listing)
                elif entry.is_dir(follow_symlinks=False):
                    listing.dirs.append((visible(entry.name), path))
                elif entry.is_file(follow_symlinks=False):
                    listing.files.append(FileEntry(self.display(path), path, entry.stat(follow_symlinks=False).st_size))
                else:
                    self._special(path, entry.stat(follow_symlinks=False).st_mode)
            except OSError as error:
                self.issues.append(
                    Issue(
                        Problem.UNREADABLE_FOLDER,
                        f"cannot inspect the entry: {error.strerror or error}",
                        self.display(path),
                    )
                )
        return listing

    def _check_name(self, name: str, shown: str, folder: bool = False) -> None:
        if _is_bad_name(name):
            self.issues.append(
                Issue(
                    Problem.BAD_NAME,
                    f"{FOLDER_NAME if folder else 'name'} '{visible(name)}' "
                    f"{'starts with a dot' if name.startswith('.') else 'contains a space'}",
                    shown,
                    hint="The official repository checker rejects hidden files and names with spaces; rename "
                    "or remove it.",
                )
            )

    def _check_size(self, size: int, shown: str) -> None:
        if size > MAX_REPO_FILE_BYTES:
            self.issues.append(
                Issue(
                    Problem.FILE_TOO_BIG,
                    f"file is {size / 1e6:.1f} MB; the official repository checker allows 50 MB",
                    shown,
                    hint="Results repositories do not take files over 50 MB; trim or compress what is not "
                    "part of the result.",
                )
            )

    def hygiene(self, folder: Path, skipped: frozenset[str] = frozenset()) -> None:
        """The official repository checks over a whole folder: names and sizes (links are checked
        where the folders are listed, and again here for folders discovery does not list).
        `skipped`: names at the folder's top that are not walked at all (`REPOSITORY_ENTRIES`)."""
        # plain strings, not Paths: a code tree holds tens of thousands of files, and a path is
        # shown only in a finding
        top = os.fspath(folder)
        for root, dirs, files in _walk(top):
            if skipped and root == top:
                dirs[:] = [name for name in dirs if name not in skipped]
                files = [name for name in files if name not in skipped]
            dirs.sort()
            for name in dirs:
                if _is_bad_name(name):
                    self._check_name(name, self.display(Path(root, name)), folder=True)
            for name in sorted(files):
                if _is_bad_name(name):
                    self._check_name(name, self.display(Path(root, name)))
                try:
                    info = os.lstat(os.path.join(root, name))
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    if info.st_size > MAX_REPO_FILE_BYTES:
                        self._check_size(info.st_size, self.display(Path(root, name)))
                elif stat.S_ISLNK(info.st_mode):
                    path = Path(root, name)
                    if not os.path.exists(path) and path not in self.links_seen:
                        self.links_seen.add(path)
                        self.issues.append(
                            Issue(
                                Problem.BROKEN_LINK,
                                f"symbolic link to {_quoted_link(path)} leads nowhere",
                                self.display(path),
                                hint="Replace the link with the file it should point to, or remove it.",
                            )
                        )

    def _symlink(self, path: Path, listing: _Listing) -> None:
        """A link in a listed folder: a folder link is never followed, a file link is listed only
        when its target lies inside PATH. A folder listed twice reports its links once."""
        first = path not in self.links_seen
        self.links_seen.add(path)
        try:
            target = os.stat(path)
        except OSError as error:
            if first:
                self.issues.append(
                    Issue(
                        Problem.BROKEN_LINK,
                        f"symbolic link to {_quoted_link(path)} leads nowhere ({error.strerror or error})",
                        self.display(path),
                        hint="Replace the link with the file it should point to, or remove it.",
                    )
                )
            return
        if stat.S_ISDIR(target.st_mode):
            self._linked_folder(path)
        elif not _inside(path, self.real_root):
            if first:
                self.issues.append(self.outside_issue(path))
        elif stat.S_ISREG(target.st_mode):
            listing.files.append(FileEntry(self.display(path), path, target.st_size))
        elif first:
            self._special(path, target.st_mode)

    def _linked_folder(self, path: Path) -> None:
        shown = self.display(path)
        self.links_seen.add(path)
        if shown in self.linked_folders_reported:
            return  # a probe found it first (a search of the issues made 4,000 links cost 8x 1,000)
        self.linked_folders_reported.add(shown)
        self.issues.append(
            Issue(
                Problem.LINKED_FOLDER,
                f"symbolic link to the folder {_quoted_link(path)} is not followed",
                shown,
                hint="Results repositories hold real folders; copy the folder in place of the link.",
            )
        )

    def outside_issue(self, path: Path, where: str = "the checked PATH") -> Issue:
        return Issue(
            Problem.LINK_OUTSIDE,
            f"symbolic link to {_quoted_link(path)} leads outside {where}; the file is not read",
            self.display(path),
            hint="A package holds its own files: copy the file in place of the link, or link only to "
            "files inside the package.",
        )

    def skipped_links(self) -> builtins.list[str]:  # `list` in this class is the method above
        """Display paths of the links found and not followed (folders, files leading out of PATH)."""
        return [issue.path for issue in self.issues if issue.problem in (Problem.LINKED_FOLDER, Problem.LINK_OUTSIDE)]

    def _special(self, path: Path, mode: int) -> None:
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file"
        )
        self.issues.append(
            Issue(
                Problem.SPECIAL_FILE,
                f"entry is {kind}; it is not read",
                self.display(path),
                hint="A result package holds only regular files and folders.",
            )
        )


def _walk(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """What `os.walk(top)` yields, top-down, without following links and skipping what cannot be
    listed, but as a loop: `os.walk` recurses before Python 3.12, and a package may nest folders
    deeper than the interpreter's recursion limit."""
    pending = [top]
    while pending:
        folder = pending.pop()
        dirs: list[str] = []
        files: list[str] = []
        linked: set[str] = set()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    try:
                        is_dir = entry.is_dir()
                        if is_dir and entry.is_symlink():
                            linked.add(entry.name)
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else files).append(entry.name)
        except OSError:
            continue
        yield folder, dirs, files  # the caller may sort or prune `dirs`, as with os.walk
        pending.extend(os.path.join(folder, name) for name in reversed(dirs) if name not in linked)


class _ArchiveWalker(_Walker):
    """The same walk over an archive's members: folders are member paths ("" for the top)."""

    def __init__(self, archive: Archive) -> None:
        super().__init__(archive.path)
        self.archive = archive

    def join(self, folder: Any, name: str) -> Any:
        return f"{folder}/{name}" if folder else name

    def is_dir(self, folder: Any) -> bool:
        return folder in self.archive.dirs

    def display(self, path: Any) -> str:
        return visible(str(path)) or "."

    def list(self, folder: Any) -> _Listing:
        dirs, files = self.archive.children(folder)
        listing = _Listing([], [])
        for name in sorted(dirs, key=natural_key):
            listing.dirs.append((visible(name), self.join(folder, name)))
        for name in sorted(files, key=natural_key):
            member = self.archive.member(self.join(folder, name))
            listing.files.append(FileEntry(visible(member.name), member, member.size))
        return listing

    def hygiene(self, folder: Any, skipped: frozenset[str] = frozenset()) -> None:
        names, special = self.archive.below(folder)  # not a scan of every member per submission
        if skipped:
            start = len(folder) + 1 if folder else 0
            names = [name for name in names if name[start:].split("/", 1)[0] not in skipped]
            special = [name for name in special if name[start:].split("/", 1)[0] not in skipped]
        for name in names:  # shown only when reported: a name may take kilobytes, and an archive thousands of them
            base = name.rsplit("/", 1)[-1]
            if _is_bad_name(base):
                self._check_name(base, visible(name))
            size = self.archive.files.get(name, 0)
            if size > MAX_REPO_FILE_BYTES:
                self._check_size(size, visible(name))
        for name in special:
            self.issues.append(
                Issue(
                    Problem.SPECIAL_FILE,
                    "archive member is a link, a FIFO or a device; it is not read",
                    visible(name),
                    hint="A result package holds only regular files and folders.",
                )
            )


def _discover_archive(path: Path) -> Tree:
    archive = Archive(path)
    walker = _ArchiveWalker(archive)
    dirs, files = archive.children("")
    submitters = [name for name in dirs if walker.is_dir(f"{name}/results") or walker.is_dir(f"{name}/systems")]
    beside = [name for name in submitters if name not in SUBMISSION_FOLDERS and not name.startswith(".")]
    if ("results" in dirs or "systems" in dirs) and not beside:
        submission = _submission(walker, "", visible(path.name.split(".")[0]))
        return Tree(path, TargetKind.SUBMISSION, (submission,), (), tuple(walker.issues))
    if not submitters:
        raise TargetError(f"{path}: the archive holds no submission (no results/ or systems/ folder)")
    _not_submissions(walker, [(visible(name), name) for name in dirs if name not in submitters])
    submissions = tuple(_submission(walker, name, visible(name)) for name in submitters)
    return Tree(path, TargetKind.REPOSITORY, submissions, (), tuple(walker.issues))


def discover(path: str | Path) -> Tree:
    """Builds the layout `Tree` for PATH; raises `TargetError` when PATH cannot be checked."""
    target = Path(path)
    shown = visible(os.fspath(path))
    try:
        mode = os.stat(target).st_mode  # PATH itself is the user's to name, through a link or not
    except OSError as error:
        raise TargetError(f"{shown}: {error.strerror or error}") from None
    if stat.S_ISREG(mode) and is_archive(target):
        return _discover_archive(target)
    if stat.S_ISREG(mode):
        if not os.access(target, os.R_OK):
            raise TargetError(f"{shown}: permission denied")
        refused = not_a_log(target)
        if refused:
            raise TargetError(f"{shown} {refused}")
        entry = FileEntry(visible(target.name), target, os.stat(target).st_size)
        return Tree(target, TargetKind.LOG_FILE, (), (entry,), ())
    if not stat.S_ISDIR(mode):
        raise TargetError(f"{shown}: not a file or folder")
    walker = _Walker(target)
    try:
        with os.scandir(target) as entries:
            # a linked results/ or systems/ is not a submission's: it is reported when listed below
            names = {entry.name: entry.is_dir(follow_symlinks=False) for entry in entries}
    except OSError as error:
        raise TargetError(f"{shown}: cannot list the folder: {error.strerror or error}") from None

    # a folder beside results/ or systems/ that is itself a submitter's makes PATH a repository: a
    # stray `results/` at a repository's root must not turn every submitter into unchecked content
    beside = [
        name
        for name, is_dir in names.items()
        if is_dir and not name.startswith(".") and name not in SUBMISSION_FOLDERS and holds_submission(target / name)
    ]
    if (names.get("results") or names.get("systems")) and not beside:
        submission = _submission(walker, target, visible(target.resolve().name), checkout=True)
        return Tree(target, TargetKind.SUBMISSION, (submission,), (), tuple(walker.issues))

    listing = walker.list(target)
    submitters = [
        (name, folder)
        for name, folder in listing.dirs
        if walker.is_dir(folder / "results") | walker.is_dir(folder / "systems")  # both probed: links reported
    ]
    if submitters:
        _not_submissions(walker, [(name, folder) for name, folder in listing.dirs if (name, folder) not in submitters])
        submissions = tuple(_submission(walker, folder, name) for name, folder in submitters)
        return Tree(target, TargetKind.REPOSITORY, submissions, (), tuple(walker.issues))

    resolved = target.resolve()
    if resolved.parent.name == "results" or any(
        any(is_result_name(f.path.rsplit("/", 1)[-1]) for f in walker.list(folder).files) for _, folder in listing.dirs
    ):
        walker.restart()  # the probe above listed folders that are listed again below
        submission = _system_folder(walker, target, resolved)
        walker.hygiene(target)
        return Tree(target, TargetKind.SYSTEM, (submission,), (), tuple(walker.issues))
    if resolved.parent.parent.name == "results" or any(is_result_name(f.path) for f in listing.files):
        walker.restart()
        submission = _benchmark_only(walker, target, resolved)
        walker.hygiene(target)
        return Tree(target, TargetKind.BENCHMARK, (submission,), (), tuple(walker.issues))
    skipped = walker.skipped_links()
    if skipped:
        links = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        raise TargetError(
            f"{shown}: no MLPerf results here: {len(skipped)} symbolic link(s) were not followed ({links}); "
            "mlperf-audit never follows a linked folder, nor a linked file out of PATH: check the folder the "
            "links point to, or copy it in place of the links"
        )
    around = submission_of_part(target)
    if around is not None:  # the command line checks the submission instead (commands.checked_target)
        raise TargetError(
            f"{shown}: the {Path(os.path.abspath(target)).name}/ folder of a submission, not one by itself; "
            f"check the submission folder that holds it: {visible(str(around))}"
        )
    raise TargetError(
        f"{shown}: no MLPerf results here (expected results/ and systems/, submitter folders, "
        "results/<system>/<benchmark>/ folders or result_*.txt files)"
    )


#: The folders of one submission: a PATH holding one of the first two is a submission.
SUBMISSION_FOLDERS = ("results", "systems", "benchmarks")

#: How much of a file given as PATH is searched for an MLLOG record before it is refused as not a
#: log (real logs can open with megabytes of container and launcher output).
LOG_SNIFF_BYTES = 64 << 20
_SNIFF_CHUNK = 1 << 20


def not_a_log(path: Path) -> str | None:
    """Why the regular file `path`, given as PATH, is not a result log, with what to check
    instead; None when it may be one. A `result_*.txt` is a log however broken (its findings say
    what is wrong), and so is a link to one; any other file is one when it holds an MLLOG record
    (`:::MLL`)."""
    if is_result_name(path.name) or is_result_name(os.path.basename(os.path.realpath(path))):
        return None
    try:
        with open_binary(path) as stream:
            head = stream.read(_SNIFF_CHUNK)
            if b"\0" in head[:8192]:
                return "is a binary file, not a result log" + _instead(path)
            chunk, tail = head, b""
            for _ in range(LOG_SNIFF_BYTES // _SNIFF_CHUNK):
                if b":::MLL" in tail + chunk:
                    return None
                tail, chunk = chunk[-8:], stream.read(_SNIFF_CHUNK)
                if not chunk:
                    break
    except OSError:
        return None  # unreadable: the check says so as it would for a log
    lowered = path.name.lower()
    if lowered.endswith(".json"):
        return f"is {_json_kind(path, head)}, not a result log" + _instead(path)
    if lowered.startswith("readme") or lowered.endswith((".md", ".rst")):
        return "is a document, not a result log" + _instead(path)
    return "holds no MLLOG record (:::MLLOG), so it is not a result log" + _instead(path)


def _json_kind(path: Path, head: bytes) -> str:
    if Path(os.path.abspath(path)).parent.name == "systems":
        return "a system description"
    try:
        document = json.loads(head)
    except (ValueError, RecursionError):
        return "a JSON file"
    if isinstance(document, dict) and {"system_name", "submitter", "division"} & set(document):
        return "a system description"
    return "a JSON file"


def _instead(path: Path) -> str:
    """What to check instead of the file `path`: the submission folder that holds it, if any."""
    for folder in list(Path(os.path.abspath(path)).parents)[:4]:
        if holds_submission(folder):
            return f"; check the submission folder that holds it: {visible(str(folder))}"
    return ""


def submission_of_part(path: Path) -> Path | None:
    """The submission folder when `path` is its `results/` or `systems/` folder, else None.

    A submitter who checks `Dell/results` means Dell's results, which are checked with Dell's
    system descriptions, and the other way round; not when the folder holds submissions itself,
    nor when the folder above is a results repository (a stray `results/` beside submitters)."""
    folder = Path(os.path.abspath(path))
    if folder.name not in ("results", "systems") or not os.path.isdir(folder) or holds_submission(folder):
        return None
    submission = folder.parent
    try:
        with os.scandir(submission) as entries:
            names = [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return None
    if any(name not in SUBMISSION_FOLDERS and holds_submission(submission / name) for name in names):
        return None
    try:
        with os.scandir(folder) as entries:
            if any(entry.is_dir(follow_symlinks=False) and holds_submission(Path(entry.path)) for entry in entries):
                return None  # submitter folders inside: a repository named `results`
    except OSError:
        return None
    return submission


def holds_submission(folder: Path) -> bool:
    """A real (not linked) results/ or systems/ folder inside `folder`."""
    for name in ("results", "systems"):
        try:
            if stat.S_ISDIR(os.lstat(folder / name).st_mode):
                return True
        except OSError:
            continue
    return False


#: Folders a hidden folder's search looks at, at most: past them, the folder counts as hiding one
#: (a gate fails what it cannot check; a repository's own `.github` holds a few dozen).
HIDDEN_SEARCH_FOLDERS = 10_000


def _hidden_submission(walker: _Walker, folder: Any) -> Any | None:
    """The submission a hidden folder holds, at any depth (`.github/Acme/results/`,
    `.github/ISSUE_TEMPLATE/Acme/systems/`), nearest first; the hidden folder itself when it holds more
    folders than the search looks at; else None. Links are never followed (`walker.is_dir`)."""
    queue, seen = [(folder, 0)], 0
    issues = getattr(walker, "issues", None)
    while queue:
        candidate, depth = queue.pop(0)
        seen += 1
        if seen > HIDDEN_SEARCH_FOLDERS:
            return folder
        if walker.is_dir(walker.join(candidate, "results")) or walker.is_dir(walker.join(candidate, "systems")):
            return candidate
        before = len(issues) if issues is not None else 0
        listing = walker.list(candidate)
        if issues is not None and depth > 0:
            del issues[before:]  # below its first level, a hidden folder is the repository's own: only searched
        queue.extend((inside, depth + 1) for _, inside in listing.dirs)
    return None


def hidden_submission(folder: Path) -> Path | None:
    """`_hidden_submission` for a folder on disk (the GitHub Action's changed hidden folders)."""
    found = _hidden_submission(_Walker(folder), folder)
    return None if found is None else Path(found)


def _not_submissions(walker: _Walker, folders: list[tuple[str, Any]]) -> None:
    """A folder at a repository's root that is no submitter's is not checked: say so."""
    for name, folder in folders:
        if name.startswith("."):
            # hidden folders (.git, .github) are the repository's own, unless one hides a submission
            hidden = None if name == ".git" else _hidden_submission(walker, folder)
            if hidden is None:
                continue
            searched = hidden != folder or any(walker.is_dir(walker.join(folder, n)) for n in ("results", "systems"))
            holds = (
                f"holds a submission ({walker.display(hidden)})"
                if searched
                else (f"holds more than {HIDDEN_SEARCH_FOLDERS} folders, too many to search for a submission")
            )
            code, message, hint = (
                Problem.NOT_A_SUBMISSION,
                f"hidden folder '{name}' {holds}: hidden folders are never checked, and nothing in it is",
                "A results repository holds one folder per submitter at its root; move the submitter's folder "
                "there, or remove it.",
            )
        elif name in SUBMISSION_FOLDERS:
            code, message, hint = (
                Problem.SUBMISSION_AT_ROOT,
                f"'{name}/' lies at the root of a results repository, beside submitter folders: the files of a "
                "submission at the root are not checked as one",
                "A results repository holds one folder per submitter, each with its own systems/, results/ and "
                "benchmarks/; move this folder into the submitter's folder it belongs to.",
            )
        else:
            code, message, hint = (
                Problem.NOT_A_SUBMISSION,
                f"folder '{name}' holds no results/ or systems/ folder: it is not a submission, and nothing in it "
                "is checked",
                "A results repository holds one folder per submitter, each with systems/ and results/; move the "
                "files into the submitter's folder they belong to, or remove the folder.",
            )
        walker.issues.append(Issue(code, message, walker.display(folder), hint=hint))


#: What a submitter's own repository holds at its root besides the package: version control, CI and
#: tooling configuration. When PATH is such a folder (a pre-commit hook runs `check .` there), these
#: are not package content and are not walked, as a results repository's own `.git` and `.github`
#: are not; anywhere else (inside a submitter's folder, a system or benchmark folder, an archive)
#: they are names the official repository checker rejects. A hidden folder among them that holds a
#: submission is still reported (PKG022).
REPOSITORY_ENTRIES = frozenset(
    {
        ".git",
        ".gitattributes",
        ".github",
        ".gitignore",
        ".gitlab",
        ".gitlab-ci.yml",
        ".gitmodules",
        ".hg",
        ".hgignore",
        ".svn",
        ".editorconfig",
        ".pre-commit-config.yaml",
        ".mlperf-audit.toml",
    }
)


def _submission(walker: _Walker, folder: Any, name: str, checkout: bool = False) -> Submission:
    """`folder`: a Path, or a folder's name inside an archive (`_ArchiveWalker`). `checkout`: the
    folder is PATH itself, on disk (a submitter's own repository), whose `REPOSITORY_ENTRIES` are
    not package content."""
    systems: list[SystemDescription] = []
    if walker.is_dir(walker.join(folder, "systems")):
        for entry in walker.list(walker.join(folder, "systems")).files:
            if entry.path.endswith(".json"):
                systems.append(_system_description(walker, entry, name))
    benchmarks: list[BenchmarkFolder] = []
    system_dirs: list[str] = []
    # the submitter's own file: its lines are the flags the round's verify script passes to the
    # package checker for every folder (rcp_bypass, rcp_bert_train_samples in rounds 2.0 to 3.0)
    top = walker.list(folder)
    flags = tuple(
        _params(f, "submitter", every_line=True) for f in top.files if f.path.rsplit("/", 1)[-1] == PARAMS_FILE
    )
    if walker.is_dir(walker.join(folder, "results")):
        for system_name, system_folder in walker.list(walker.join(folder, "results")).dirs:
            system_dirs.append(system_name)
            benchmarks.extend(_benchmarks(walker, system_folder, name, system_name, flags))
    source_dirs, implementations = _implementations(walker, walker.join(folder, "benchmarks"))
    if checkout:
        tooling = [(shown, path) for shown, path in top.dirs if path.name in REPOSITORY_ENTRIES]
        _not_submissions(walker, tooling)  # each is hidden: reported only where it holds a submission
        walker.hygiene(folder, REPOSITORY_ENTRIES)
    else:
        walker.hygiene(folder)
    return Submission(
        name,
        walker.display(folder),
        tuple(systems),
        tuple(benchmarks),
        tuple(system_dirs),
        source_dirs,
        implementations,
    )


def _implementations(walker: _Walker, folder: Any) -> tuple[tuple[str, ...], tuple[Implementation, ...]]:
    """The `benchmarks/<benchmark>` folders and each `implementations/<name>` folder in them (or the
    benchmark folder itself, when it holds code without `implementations/`)."""
    if not walker.is_dir(folder):
        return (), ()
    names: list[str] = []
    found: list[Implementation] = []
    unplaced: list[FileEntry]
    for benchmark, benchmark_folder in walker.list(folder).dirs:
        names.append(benchmark)
        implementations = walker.join(benchmark_folder, "implementations")
        if not walker.is_dir(implementations):
            # the code right in benchmarks/<benchmark>/ (v5.x submitters) or in named folders there
            # (Oracle's benchmarks/gpt3/DGXH100_384x8x.../): one implementation, not in its place
            listing = walker.list(benchmark_folder)
            if [f for f in listing.files if f.path.rsplit("/", 1)[-1] != "implementations"] or listing.dirs:
                unplaced = []
                cut = _collect(walker, benchmark_folder, IMPLEMENTATION_DEPTH, unplaced)
                display = walker.display(benchmark_folder)
                found.append(Implementation(benchmark, benchmark, display, tuple(unplaced), cut, placed=False))
            continue
        around = walker.list(benchmark_folder)
        beside = [f for f in around.files if f.path.rsplit("/", 1)[-1] != "implementations"]
        if any(_is_code(f) for f in beside):  # code beside implementations/ too (GigaComputing's AMD llama2_70b_lora)
            unplaced = list(beside)
            cut = False
            for sub_name, sub_folder in around.dirs:
                if sub_name != "implementations":
                    cut = _collect(walker, sub_folder, IMPLEMENTATION_DEPTH - 1, unplaced) or cut
            display = walker.display(benchmark_folder)
            found.append(Implementation(benchmark, benchmark, display, tuple(unplaced), cut, placed=False))
        listing = walker.list(implementations)
        if any(_is_code(f) for f in listing.files):  # code right in implementations/ (Oracle's resnet)
            unplaced = []
            cut = _collect(walker, implementations, IMPLEMENTATION_DEPTH, unplaced)
            display = walker.display(implementations)
            found.append(Implementation(benchmark, benchmark, display, tuple(unplaced), cut, placed=False))
            continue
        for name, implementation in listing.dirs:
            files: list[FileEntry] = []
            truncated = _collect(walker, implementation, IMPLEMENTATION_DEPTH, files)
            found.append(Implementation(benchmark, name, walker.display(implementation), tuple(files), truncated))
    return tuple(names), tuple(found)


def _is_code(entry: FileEntry) -> bool:
    """A file that makes a folder an implementation: a container file, Python, or a launch
    configuration (a README or a LICENSE beside the implementations does not)."""
    name = entry.path.rsplit("/", 1)[-1].lower()
    return (
        name.endswith(".py")
        or name.startswith(("dockerfile", "containerfile"))
        or (name.startswith("config") and name.endswith(".sh"))
    )


def _collect(walker: _Walker, folder: Any, depth: int, files: list[FileEntry]) -> bool:
    """Lists files breadth-first down to `depth` folders; True if it stopped at the cap."""
    level = [folder]
    for _ in range(depth + 1):
        following: list[Any] = []
        for current in level:
            listing = walker.list(current)
            files.extend(listing.files)
            if len(files) > MAX_IMPLEMENTATION_FILES:
                del files[MAX_IMPLEMENTATION_FILES:]
                return True
            following.extend(path for _, path in listing.dirs)
        level = following
    return False


def _benchmarks(
    walker: _Walker,
    system_folder: Path,
    submitter: str | None,
    system: str,
    submitter_params: tuple[CheckerParams, ...] = (),
) -> list[BenchmarkFolder]:
    listing = walker.list(system_folder)
    params = submitter_params + tuple(
        _params(f, "system") for f in listing.files if f.path.rsplit("/", 1)[-1] == PARAMS_FILE
    )
    return [
        _benchmark_folder(walker, bench_folder, submitter, system, bench_name, params)
        for bench_name, bench_folder in listing.dirs
    ]


def _benchmark_folder(
    walker: _Walker,
    folder: Path,
    submitter: str | None,
    system: str | None,
    benchmark: str,
    system_params: tuple[CheckerParams, ...] = (),
) -> BenchmarkFolder:
    listing = walker.list(folder)
    results: list[FileEntry] = []
    others: list[FileEntry] = []
    for entry in listing.files:  # one pass: a membership test in the results made 20,000 files take minutes
        (results if is_result_name(entry.path.rsplit("/", 1)[-1]) else others).append(entry)
    others.extend(FileEntry(walker.display(path) + "/", path) for _, path in listing.dirs)
    params = system_params + tuple(
        _params(f, "benchmark") for f in listing.files if f.path.rsplit("/", 1)[-1] == PARAMS_FILE
    )
    power = None
    for name, path in listing.dirs:
        if name == "power":
            power = tuple(
                (run, tuple(f.path.rsplit("/", 1)[-1] for f in walker.list(run_path).files))
                for run, run_path in walker.list(path).dirs
            )
    return BenchmarkFolder(
        submitter, system, benchmark, walker.display(folder), tuple(results), tuple(others), params, power
    )


def _params(entry: FileEntry, level: str, every_line: bool = False) -> CheckerParams:
    try:
        with open_binary(entry.fs_path) as stream:
            text = stream.read(MAX_PARAMS_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return CheckerParams(entry.path, level, ())
    lines = tuple(
        (number, line.split("#", 1)[0].strip())
        for number, line in enumerate(text.splitlines(), 1)
        if line.split("#", 1)[0].strip()
    )
    # the package checker reads its own file with a newline compared (only an unterminated last line counts);
    # the verify script reads the submitter's with `read`, which drops an unterminated last line
    official = (
        frozenset(line.strip() for line in text.splitlines(keepends=True) if line.endswith("\n"))
        if every_line
        else frozenset(line for line in text.splitlines(keepends=True) if not line.endswith(("\n", "\r")))
    )
    return CheckerParams(entry.path, level, lines, official)


def _system_folder(walker: _Walker, target: Path, resolved: Path) -> Submission:
    submitter, systems = _enclosing_submission(walker, resolved, resolved.name)
    system = visible(resolved.name)
    benchmarks = _benchmarks(walker, target, submitter, system)
    return Submission(submitter or "", walker.display(target), systems, tuple(benchmarks), (system,))


def _benchmark_only(walker: _Walker, target: Path, resolved: Path) -> Submission:
    in_layout = resolved.parent.parent.name == "results"
    system = visible(resolved.parent.name) if in_layout else None
    submitter, systems = (
        _enclosing_submission(walker, resolved.parent, resolved.parent.name) if in_layout else (None, ())
    )
    folder = _benchmark_folder(walker, target, submitter, system, visible(resolved.name))
    return Submission(submitter or "", walker.display(target), systems, (folder,), (system,) if system else ())


def _enclosing_submission(
    walker: _Walker, system_folder: Path, system: str
) -> tuple[str | None, tuple[SystemDescription, ...]]:
    """For a (resolved) folder inside `<submitter>/results/`, names the submitter and reads its
    system JSON: from a real `systems/` folder, and a linked description only if it stays inside
    the submitter's folder."""
    if system_folder.parent.name != "results":
        return None, ()
    submission_folder = system_folder.parent.parent
    submitter = visible(submission_folder.name)
    systems = submission_folder / "systems"
    if not walker.is_dir(systems):
        return submitter, ()
    description = systems / f"{system}.json"
    try:
        info = os.lstat(description)
    except OSError:
        return submitter, ()
    if stat.S_ISLNK(info.st_mode):
        if not _inside(description, os.path.realpath(submission_folder)):
            walker.issues.append(walker.outside_issue(description, "the submitter's folder"))
            return submitter, ()
        try:
            info = os.stat(description)
        except OSError:
            return submitter, ()  # a broken link: no description (PKG014 says which is missing)
    if not stat.S_ISREG(info.st_mode):
        return submitter, ()
    entry = FileEntry(walker.display(description), description, info.st_size)
    return submitter, (_system_description(walker, entry, submitter),)


def _system_description(walker: _Walker, entry: FileEntry, submitter: str | None) -> SystemDescription:
    name = entry.path.rsplit("/", 1)[-1][: -len(".json")]

    def invalid(message: str, line: int | None = None) -> SystemDescription:
        issue = Issue(
            Problem.SYSTEM_JSON_INVALID,
            message,
            entry.path,
            line,
            hint="A system description is one JSON object with the fields of the submission rules.",
        )
        return SystemDescription(name, entry.path, submitter, None, (issue,))

    try:
        with open_binary(entry.fs_path) as stream:
            raw = stream.read(MAX_SYSTEM_JSON_BYTES + 1)
    except OSError as error:
        return invalid(f"cannot read the system description: {error.strerror or error}")
    if len(raw) > MAX_SYSTEM_JSON_BYTES:
        return invalid(f"system description is larger than {MAX_SYSTEM_JSON_BYTES >> 20} MiB; not read")
    try:
        text = raw.decode("utf-8-sig")
        if "\r" in text:  # CR-only line ends are JSON whitespace, but neither a line to count nor one `^` starts
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        data = json.loads(text)
    except UnicodeDecodeError as error:
        return invalid(f"system description is not UTF-8 text (byte {error.start})")
    except RecursionError:
        # as the depth bound below says it: which one a description meets depends on the Python
        return invalid(f"system description nests JSON too deeply (over {MAX_JSON_DEPTH} levels); not read", 1)
    except json.JSONDecodeError as error:
        return invalid(f"system description is not valid JSON: {error.msg}", error.lineno)
    except ValueError:  # JSON numbers have any number of digits; Python reads at most 4,300 of them
        return _number_too_long(entry, name, submitter, text)
    if not isinstance(data, dict):
        return invalid(f"system description is a JSON {type(data).__name__}, not an object", 1)
    if json_depth(data) > MAX_JSON_DEPTH:  # real ones nest two levels; rules and reports walk the values
        return invalid(f"system description nests JSON too deeply (over {MAX_JSON_DEPTH} levels); not read", 1)
    return SystemDescription(name, entry.path, submitter, data, (), MappingProxyType(_field_lines(text)))


def _field_lines(text: str) -> dict[str, int]:
    """The line of each field's first appearance, counted on from the previous field's (matches come
    in order): counting from the top for each field made a 1 MB description take 20 s."""
    lines: dict[str, int] = {}
    line, counted_to = 1, 0
    for match in _FIELD.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        lines.setdefault(match.group(1), line)
    return lines


_FIELD = re.compile(r'^\s*"([^"\\]+)"\s*:', re.MULTILINE)


def _number_too_long(entry: FileEntry, name: str, submitter: str | None, text: str) -> SystemDescription:
    """SYS001 for a description holding an integer longer than `int` reads from text (the
    int-to-str limit, `sys.get_int_max_str_digits`): no tool reads the file, the official ones
    included, and no count is that long."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"[0-9]{{{limit + 1},}}", text) if limit else None
    line = text.count("\n", 0, found.start()) + 1 if found else None
    digits = f"{len(found.group(0)):,} digits" if found else "too many digits"
    issue = Issue(
        Problem.SYSTEM_JSON_INVALID,
        f"system description holds a number of {digits}, more than Python's JSON reader accepts "
        f"({limit:,}; the official checker fails on it too); not read",
        entry.path,
        line,
        hint='Write each count as the small whole number it is ("number_of_nodes": "1").',
    )
    return SystemDescription(name, entry.path, submitter, None, (issue,))
