"""The GitHub Action's script (`action.yml` runs `python -I -m mlperf_audit.github_action` from its own
virtual environment, outside the workspace: no file of the checkout can shadow a module).

Inputs arrive as environment variables (never interpolated into a shell script):
`INPUT_PATH` (the results repository root in the workspace, default `.`), `INPUT_RULESET`,
`INPUT_FAIL_ON`, `INPUT_CHANGED_ONLY` (`true`: on a pull request, check only the submitters whose
files the PR changes), `INPUT_SARIF_FILE` (where to write SARIF; empty: none), `INPUT_SELECT` and
`INPUT_IGNORE` (rule codes, prefixes or names, comma-separated), `INPUT_ANNOTATE_INFO` (`true`:
info findings are annotated too, within GitHub's limits) and `INPUT_ARGS`: more options of
`mlperf-audit check`, split as a shell would split them (`shlex`) but never given to one. They are
read after the other inputs (a `--fail-on` or `--ruleset` there wins, a `--select` or `--ignore`
adds to the input's), and only the options that choose what is checked are taken (`ARGS_TAKEN`):
an option that would read or write a file the workflow or a pull request chooses is refused with
the reason (`ARGS_REFUSED`), and so is anything else, as a usage error (exit code 2).

A pull request must not be able to switch off the gate that checks it. On a pull request the base
commit comes from the event payload (`GITHUB_EVENT_PATH`; the checkout must include it:
`actions/checkout` with `fetch-depth: 0`), and the configuration (`.mlperf-audit.toml`, or
`[tool.mlperf-audit]` in `pyproject.toml`), the waivers file *and* the baseline it names are read
from the base commit only, never from the PR's head; a base without configuration means the
defaults, never the head's file. On other events they come from the checked commit itself. Changed
submitters are read from NUL-separated git output, so a name git would quote still counts. The
script writes annotations to standard output, the Markdown summary to `GITHUB_STEP_SUMMARY`, the
SARIF file (never through a link), and `errors`, `warnings`, `infos`, `checked` and `exit-code` to
`GITHUB_OUTPUT`; it exits with the checker's exit code. Annotations stay within what GitHub shows
(`formats.ci.annotate`: errors first, then warnings, 10 of each; infos only when asked), and the
job summary counts every finding they leave out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn, cast

from . import suggest
from .config import FAIL_ON_CHOICES, KNOWN_RULESETS, load_config
from .engine.api import check
from .engine.plugins import PluginHost
from .errors import AuditError
from .formats.ci import (
    STEP_SUMMARY_LIMIT,
    Annotations,
    annotate,
    markdown_text,
    render_markdown,
    render_sarif,
    workflow_data,
    workflow_property,
)
from .reading.discovery import hidden_submission, holds_submission
from .report import Report
from .safety import visible


class ActionError(AuditError):
    """Bad input or an unusable checkout: exit code 2."""


_CONFIGURATION = (
    "the Action reads its configuration, and the waivers and baseline files it names, from the base "
    "commit of a pull request (from the checked commit otherwise), never from a work tree a pull request "
    "writes: set it in .mlperf-audit.toml or [tool.mlperf-audit] there"
)
_WRITES = (
    "the Action writes only its annotations, the job summary and the sarif-file input's SARIF file "
    "(upload that, or the summary, as an artifact)"
)
#: Options of `mlperf-audit check` that the `args` input refuses, and why: each would have the
#: check read or write a file that whoever writes `args` (or a pull request, where the workflow
#: puts its data there) chooses, or is another input's.
ARGS_REFUSED = {
    "--config": _CONFIGURATION,
    "--trust-tree-config": _CONFIGURATION,
    "--waivers": _CONFIGURATION,
    "--baseline": _CONFIGURATION,
    "-o": _WRITES,
    "--output": _WRITES,
    "--report": _WRITES,
    "--write-baseline": _WRITES,
    "--format": _WRITES,
    "--cache-dir": "the cache input keeps the cache under runner.temp, outside the workspace",
}


class _ArgsParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ActionError(f"args: {message}")


def _args_parser() -> _ArgsParser:
    """The options of `mlperf-audit check` that only choose what is checked and how strictly."""
    parser = _ArgsParser(prog="args", add_help=False, allow_abbrev=False)
    parser.add_argument("--select", action="append")
    parser.add_argument("--ignore", action="append")
    parser.add_argument("--fail-on", choices=FAIL_ON_CHOICES)
    parser.add_argument("--ruleset")
    parser.add_argument("--partial", action="store_true")
    parser.add_argument("-j", "--jobs", type=int)
    parser.add_argument("--no-cache", action="store_true")
    return parser


#: The options `args` takes that are followed by a value, and all it takes (`action.yml` lists them).
ARGS_WITH_VALUE = ("--select", "--ignore", "--fail-on", "--ruleset", "-j", "--jobs")
ARGS_TAKEN = (*ARGS_WITH_VALUE, "--partial", "--no-cache")


@dataclass(frozen=True)
class CheckOptions:
    """What the inputs ask of the check."""

    select: list[str] | None
    ignore: list[str] | None
    fail_on: str
    ruleset: str | None
    partial: bool
    jobs: int
    use_cache: bool


def _codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def check_options(fail_on: str, ruleset: str | None, select: str, ignore: str, args: str) -> CheckOptions:
    """The inputs as one command line, `args` last; refuses what `ARGS_REFUSED` names and anything
    that is not an option `ARGS_TAKEN` lists."""
    try:
        extra = shlex.split(args)
    except ValueError as error:
        raise ActionError(f"args: cannot split {args!r}: {error}") from None
    for index, token in enumerate(extra):
        if token == "--" or not token.startswith("-"):
            if token == "--" or index == 0 or extra[index - 1] not in ARGS_WITH_VALUE:
                raise ActionError(
                    f"args: {token!r} is not an option of mlperf-audit check; the path input names the folder to check"
                )
            continue
        name = token.split("=", 1)[0] if token.startswith("--") else token[:2]
        if name in ARGS_REFUSED:
            raise ActionError(f"args: {name} is not taken: {ARGS_REFUSED[name]}")
        if name not in ARGS_TAKEN:
            close = suggest.closest(name, [*ARGS_TAKEN, *ARGS_REFUSED], count=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ActionError(
                f"args: {token!r} is not an option the Action takes{hint}; it takes {', '.join(ARGS_TAKEN)}"
            )
    given = [f"--fail-on={fail_on}"]
    if ruleset is not None:
        given.append(f"--ruleset={ruleset}")
    if select.strip():
        given.append(f"--select={select}")
    if ignore.strip():
        given.append(f"--ignore={ignore}")
    options = _args_parser().parse_args(given + extra)
    if options.ruleset is not None and options.ruleset not in KNOWN_RULESETS:
        close = suggest.closest(options.ruleset, KNOWN_RULESETS, count=1)
        raise ActionError(
            f"unsupported ruleset {options.ruleset!r}"
            + (f" (did you mean {close[0]}?)" if close else "")
            + f"; supported: {', '.join(KNOWN_RULESETS)}"
        )
    if options.jobs is not None and options.jobs < 1:
        raise ActionError("args: --jobs must be at least 1")
    return CheckOptions(
        select=_codes(options.select),
        ignore=_codes(options.ignore),
        fail_on=options.fail_on,
        ruleset=options.ruleset,
        partial=options.partial,
        jobs=options.jobs or os.cpu_count() or 1,
        use_cache=not options.no_cache,
    )


def _git(*args: str, cwd: Path) -> bytes:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if result.returncode != 0:
        raise ActionError(f"git {' '.join(args)} failed: {result.stderr.decode('utf-8', 'replace').strip()}")
    return result.stdout


def _event() -> dict[str, Any]:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    return cast("dict[str, Any]", json.loads(Path(path).read_text(encoding="utf-8")))  # GitHub writes an object


@dataclass(frozen=True)
class Changes:
    """What a pull request changes under the checked folder."""

    folders: list[str]  # top-level folders under the root with changed files, present in the head
    links: list[str]  # paths the head records as symbolic links or submodules (git modes 120000, 160000)


#: git's modes of a symbolic link and a submodule: what a work tree shows as something other than
#: files that were committed.
LINK_MODES = frozenset({"120000", "160000"})


def changes(workspace: Path, root: str, base: str, head: str) -> Changes:
    """The top-level folders under `root` that have files changed between base and head, from
    NUL-separated git output (names git would quote, with non-ASCII bytes, quotes or backslashes,
    count too), and every changed path the head records as a link or a submodule."""
    output = _git("diff", "-z", "--raw", "--no-renames", "--no-abbrev", f"{base}...{head}", "--", root, cwd=workspace)
    fields = output.split(b"\0")
    prefix = "" if root in (".", "") else root.rstrip("/") + "/"
    found: set[str] = set()
    links: list[str] = []
    for meta, raw in zip(fields[0::2], fields[1::2]):  # ":old new old-sha new-sha status" then the path
        name = os.fsdecode(raw)
        new_mode = meta.decode("ascii", "replace").lstrip(":").split(" ")[1:2]
        if new_mode and new_mode[0] in LINK_MODES:
            links.append(name)
        relative = name[len(prefix) :] if name.startswith(prefix) else None
        if relative and "/" in relative:
            found.add(relative.split("/", 1)[0])
    folders = sorted(name for name in found if (workspace / prefix / name).is_dir())
    return Changes(folders, sorted(links))


def _repository_file(value: Any, key: str) -> str:
    """A file named by the configuration, as a path inside the repository (what `git show` takes)."""
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"the base configuration's {key} must be a file name")
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        raise ActionError(f"the base configuration's {key} must be a file inside the repository, not {value!r}")
    return str(path).removeprefix("./")


def trusted_configuration(workspace: Path, commit: str, folder: Path) -> str | None:
    """Writes the configuration of `commit` (and the waivers and baseline files it names, from the
    same commit) into `folder`, outside the workspace; returns its path, or None for the defaults."""
    for name in (".mlperf-audit.toml", "pyproject.toml"):
        shown = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=workspace, capture_output=True)
        if shown.returncode != 0:
            continue
        try:
            data = tomllib.loads(shown.stdout.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ActionError(f"{name} at {commit[:12]}: not valid TOML: {error}") from None
        table: Any = data
        if name == "pyproject.toml":
            tool = data.get("tool")
            table = tool.get("mlperf-audit") if isinstance(tool, dict) else None
        if not isinstance(table, dict):
            continue
        table = dict(table)
        for key in ("waivers", "baseline"):
            if key in table:
                named = _repository_file(table[key], key)
                copy = folder / f"{key}-{commit[:12]}{Path(named).suffix}"
                copy.write_bytes(_git("show", f"{commit}:{named}", cwd=workspace))
                table[key] = str(copy)
        lines = [f"{_toml(key)} = {_toml(value)}" for key, value in table.items()]
        # named after the file and commit it was read from: the report says what named the round
        written = folder / f"{name} at {commit[:12]}"
        written.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(written)
    return None


def _toml(value: Any) -> str:
    """`value`, as `tomllib` read it, written back as TOML (tables inline): what the command reads
    is what the base commit said. JSON is not TOML for a table (`{"a": 1}`), an infinite float or
    a date, all of which a base configuration may hold (`[plugins.NAME]`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return json.dumps(value, ensure_ascii=False)  # a JSON string or integer is a TOML one
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml(str(key))} = {_toml(item)}" for key, item in value.items()) + "}"
    raise ActionError(f"the base configuration holds a value TOML cannot hold: {type(value).__name__}")


def _output(name: str, value: Any) -> None:
    """One `name=value` line; the value is shown visibly, so a submitter named with a newline
    cannot add an output line of its own."""
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(f"{name}={visible(str(value))}\n")


def _write_sarif(path: str, text: str) -> None:
    """Writes the SARIF file where the workflow says, but never through a link a pull request
    planted, whether the file or any folder on the way to it is the link."""
    linked = _linked_component(Path(os.getcwd()), Path(path).parent)
    if linked is not None:
        raise ActionError(f"cannot write the SARIF file {visible(path)}: a folder on its path is a link")
    try:
        handle = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644
        )
    except OSError as error:
        raise ActionError(
            f"cannot write the SARIF file {visible(path)}: {error.strerror or error}"
            + (" (it is a link)" if os.path.islink(path) else "")
        ) from None
    with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
        stream.write(text)


def _summary(text: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(text + "\n")


def run() -> int:
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    root = os.environ.get("INPUT_PATH", ".").strip() or "."
    ruleset = os.environ.get("INPUT_RULESET", "").strip() or None
    fail_on = os.environ.get("INPUT_FAIL_ON", "error").strip() or "error"
    changed_only = os.environ.get("INPUT_CHANGED_ONLY", "true").strip().lower() == "true"
    sarif_file = os.environ.get("INPUT_SARIF_FILE", "").strip()
    annotate_info = os.environ.get("INPUT_ANNOTATE_INFO", "false").strip().lower() or "false"
    if fail_on not in FAIL_ON_CHOICES:
        raise ActionError(f"fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {fail_on!r}")
    if ruleset is not None and ruleset not in KNOWN_RULESETS:
        raise ActionError(f"unsupported ruleset {ruleset!r}; supported: {', '.join(KNOWN_RULESETS)}")
    if annotate_info not in ("true", "false"):
        raise ActionError(f"annotate-info must be true or false, not {annotate_info!r}")
    options = check_options(
        fail_on,
        ruleset,
        os.environ.get("INPUT_SELECT", ""),
        os.environ.get("INPUT_IGNORE", ""),
        os.environ.get("INPUT_ARGS", ""),
    )
    if root.startswith("/") or ".." in Path(root).parts or not re.fullmatch(r"[\w./ -]+", root):
        raise ActionError(f"path must be a folder inside the workspace, not {root!r}")
    root = str(PurePosixPath(root))  # `./submissions` and `submissions/.` are git's `submissions`
    _refuse_links(workspace, root)
    event = _event()
    pull_request = (
        event.get("pull_request") if os.environ.get("GITHUB_EVENT_NAME", "").startswith("pull_request") else None
    )
    base = pull_request["base"]["sha"] if pull_request else None
    head = (pull_request["head"]["sha"] if pull_request else None) or os.environ.get("GITHUB_SHA", "HEAD")
    submitters: list[str] | None = None
    strays: list[str] = []
    linked: list[str] = []
    if base and changed_only:
        changed = changes(workspace, root, base, head)
        # what the gate cannot check fails it: a changed folder that is not a submitter's (hidden
        # ones too; .github only where it hides a submission), and a link or submodule, whose
        # content the checkout does not hold
        submitters = [name for name in changed.folders if _is_submitter(workspace / root / name)]
        strays = [
            name
            for name in changed.folders
            if name not in submitters and (name != ".github" or hidden_submission(workspace / root / name))
        ]
        linked = changed.links
        if not changed.folders and not linked:
            _summary("### mlperf-audit: no submission changed in this pull request")
            for name in ("errors", "warnings", "infos", "exit-code"):
                _output(name, 0)
            _output("checked", "")
            return 0
    host = PluginHost()
    with tempfile.TemporaryDirectory(prefix="mlperf-audit-action-") as temp:
        # the base commit's configuration on a pull request, the checked commit's otherwise; read
        # from git into `temp`, so that no file of the checked work tree is ever obeyed
        trusted = base or head
        config_file = trusted_configuration(workspace, trusted, Path(temp)) if _is_repository(workspace) else None
        config = load_config(
            target=workspace / root,
            cwd=Path(temp),
            config_file=config_file,
            select=options.select,
            ignore=options.ignore,
            fail_on=options.fail_on,
            ruleset=options.ruleset,
            partial=options.partial,
            use_cache=options.use_cache,
            discover=False,  # nothing found around the runner's temp folder is the base commit's
            config_label=Path(config_file).name if config_file else None,  # ".mlperf-audit.toml at <commit>"
        )
        previous = os.getcwd()
        os.chdir(workspace)  # paths in annotations and SARIF are relative to the repository root
        try:
            # one parse for the findings and the summary's scores, in a process per core
            report: Report = check(root, config, host, submitters=submitters, jobs=options.jobs, score=True)
            refused = [_stray(workspace, root, name) for name in strays] + [_linked(path) for path in linked]
            annotations = annotate(report, annotate_info=annotate_info == "true", gate_errors=refused)
            sys.stdout.write(_log(report, annotations))
            header = ""
            if strays or linked:
                header = (
                    "### ❌ mlperf-audit: the pull request changes what the gate cannot check: "
                    + ", ".join(f"<code>{markdown_text(name)}</code>" for name in strays + linked)
                    + "\n"
                )
            room = STEP_SUMMARY_LIMIT - len(header.encode()) - 1  # the runner drops a whole summary over 1 MiB
            _summary(
                header + render_markdown(report, annotations=annotations, sarif_file=sarif_file or None, limit=room)
            )
            if sarif_file:
                _write_sarif(sarif_file, render_sarif(report))
        finally:
            os.chdir(previous)
    exit_code = max(report.exit_code, 1) if strays or linked else report.exit_code
    _output("errors", report.summary["error"] + len(strays) + len(linked))
    _output("warnings", report.summary["warning"])
    _output("infos", report.summary["info"])
    _output("checked", " ".join(submitters) if submitters is not None else root)
    _output("exit-code", exit_code)
    return exit_code


def _stray(workspace: Path, root: str, name: str) -> str:
    """The error command for a changed folder that is not a submitter's."""
    folder = visible(name if root == "." else f"{root}/{name}")
    hidden = hidden_submission(workspace / root / name) if name.startswith(".") else None
    why = (
        f"a hidden folder holding a submission ({workflow_data(visible(str(hidden.relative_to(workspace))))}), "
        "which is not checked%0AMove the submitter's folder to the root, beside the others."
        if hidden is not None
        else "which holds no results/ or systems/ folder: it is not a submission and was not "
        "checked%0AMove the files into a submitter's folder."
    )
    return (
        f"::error file={workflow_property(folder)},title=mlperf-audit::the pull request changes "
        f"{workflow_data(folder)}, {why}"
    )


def _linked(path: str) -> str:
    """The error command for a changed path that is a symbolic link or a submodule."""
    return (
        f"::error file={workflow_property(visible(path))},title=mlperf-audit::the pull "
        f"request adds {workflow_data(visible(path))} as a symbolic link or a submodule, "
        "which the gate does not follow%0ACommit the files themselves."
    )


def _log(report: Report, annotations: Annotations) -> str:
    """The annotations, then the counts, and what was not annotated, in the step's log."""
    summary = report.summary
    lines = [
        *annotations.commands,
        f"mlperf-audit: {summary['error']} error(s), {summary['warning']} warning(s), {summary['info']} info",
    ]
    if any(annotations.left.values()):
        lines.append(f"mlperf-audit: not annotated: {annotations.describe_left()}; the job summary lists them")
    return "\n".join(lines) + "\n"


def _is_submitter(folder: Path) -> bool:
    """A real (not linked) folder holding a real results/ or systems/ folder."""
    return folder.is_dir() and not folder.is_symlink() and holds_submission(folder)


def _linked_component(workspace: Path, path: Path) -> Path | None:
    """The first folder or file of `path` below the workspace that is a symbolic link, if any
    (a path outside the workspace is the workflow's to choose: None)."""
    base = Path(os.path.abspath(workspace))
    try:
        relative = Path(os.path.abspath(workspace / path)).relative_to(base)
    except ValueError:
        return None
    current = base
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def _refuse_links(workspace: Path, root: str) -> None:
    """The checked folder, and every folder on the way to it, must be a real folder of the
    workspace: a pull request that turns it into a link would have the gate check (and print)
    whatever the link points to."""
    if _linked_component(workspace, Path(root)) is not None:
        raise ActionError(f"path {root!r} is, or lies under, a symbolic link; refusing to check it")


def _is_repository(workspace: Path) -> bool:
    return subprocess.run(["git", "rev-parse", "--git-dir"], cwd=workspace, capture_output=True).returncode == 0


def refuse_code_from_the_workspace(workspace: Path) -> None:
    """The gate must run only installed code: a folder of the checked-out workspace on `sys.path`
    (the working folder of `python -m` without `-I`, a PYTHONPATH, a virtual environment made inside
    the checkout) lets a pull request replace any module the check imports later with its own."""
    top = Path(os.path.realpath(workspace))
    for entry in sys.path:
        place = Path(os.path.realpath(entry or os.getcwd()))
        if place == top or top in place.parents:
            raise ActionError(
                f"{visible(entry or '.')} is on the module search path and lies in the checked-out workspace, "
                "which a pull request controls: run the script as `python -I -m mlperf_audit.github_action` "
                "from an environment outside the workspace"
            )


def main() -> int:
    try:
        refuse_code_from_the_workspace(Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd()))
        return run()
    except AuditError as error:
        print(f"::error title=mlperf-audit::{workflow_data(visible(str(error)))}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
