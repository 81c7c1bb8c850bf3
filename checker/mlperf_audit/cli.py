"""The `mlperf-audit` command line.

Exit codes: 0 no finding at or above --fail-on; 1 some; 2 usage, configuration, internal or
plugin error, or a PATH that does not exist or cannot be read.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import sys
import threading
import traceback
from typing import Any, Callable, NoReturn, Sequence

from tabulate import tabulate

from ._version import __version__
from .cache import CHECK_FOLDER, OLD_RCP_FOLDER, SUBFOLDER, ParseCache, default_directory
from .commands import EXIT_ERROR, EXIT_OK, UsageError, audit, check, compare, report, reproduce, score, write
from .engine import check_selectors, matches
from .errors import AuditError, PluginError
from .plugins import PluginHost
from .report import mlperf_logging_version
from .safety import no_workflow_commands, visible
from .suggest import did_you_mean, did_you_mean_rule
from .terminal import Screen, table

DEBUG_ENV = "MLPERF_AUDIT_DEBUG"


class GuidingParser(argparse.ArgumentParser):
    """An argument parser that never guesses and always guides: no abbreviated options (`--form`
    is not taken for `--format`), a "did you mean" for a mistyped command, choice or option (as
    Python 3.14's `suggest_on_error` does; we support 3.11 to 3.13), and a subcommand's own
    usage on its own errors. Every subparser, a plugin's included, is one (`add_subparsers`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", SubcommandParser)
        return super().add_subparsers(**kwargs)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices and isinstance(value, str):
            known = [str(choice) for choice in choices]
            raise argparse.ArgumentError(
                action,
                f"invalid choice: {value!r}{did_you_mean(value, known)}; choose from {', '.join(known)}",
            )
        super()._check_value(action, value)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras))
        return parsed

    def _unrecognized(self, extras: list[str]) -> str:
        options = [name for name in self._option_string_actions if name.startswith("--")]
        for extra in extras:
            if extra.startswith("--"):
                option = extra.partition("=")[0]
                suggestion = did_you_mean(option, options, count=1)
                if suggestion:
                    return f"unrecognized option {option}{suggestion}"
        return f"unrecognized arguments: {' '.join(extras)}"


class SubcommandParser(GuidingParser):
    """A subcommand's parser: what it does not recognise is its own error, shown with its own
    usage (`usage: mlperf-audit check ...`), not left to the top-level parser."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras))
        return parsed, extras


def build_parser(host: PluginHost | None = None) -> argparse.ArgumentParser:
    parser = GuidingParser(
        prog="mlperf-audit",
        description="Check MLPerf Training result packages the way a careful reviewer would.",
    )
    parser.add_argument("--version", action="version", version=f"mlperf-audit {__version__}")
    parser.add_argument(
        "--disable-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="do not load the plugin NAME (see `mlperf-audit plugins`); repeatable",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (check, score, compare, audit, report, reproduce):
        command.add_command(commands)

    rules_cmd = commands.add_parser("rules", help="list every rule with its plugin")
    rules_cmd.add_argument(
        "selectors",
        nargs="*",
        metavar="SELECTOR",
        help="only the rules these name, as --select does: a code, a prefix of codes (AUD) or a rule name; "
        "comma-separated or repeated",
    )
    rules_cmd.add_argument("--json", action="store_true", help="print the rules as JSON")

    explain_cmd = commands.add_parser("explain", help="print the documentation of a rule")
    explain_cmd.add_argument("rule", metavar="CODE", help="a rule code (e.g. LOG005) or name")

    plugins_cmd = commands.add_parser("plugins", help="list the loaded plugins")
    plugins_cmd.add_argument("--json", action="store_true", help="print the plugins as JSON")

    commands.add_parser("formats", help="list the output formats")

    cache_cmd = commands.add_parser("cache", help="show or clear the cache of parsed files")
    cache_cmd.add_argument(
        "action",
        nargs="?",
        choices=("info", "prune", "clear"),
        default="info",
        help="info (default): where the cache is and what it holds; prune: remove what no "
        "check used for --days days; clear: empty it",
    )
    cache_cmd.add_argument("--days", type=float, default=30.0, metavar="N", help="for prune (default: 30)")
    cache_cmd.add_argument("--cache-dir", metavar="DIR", help="the cache directory (default: see `check --help`)")
    if host is not None:
        host.hook.mlperf_audit_add_commands(commands=commands)
    return parser


def _cmd_rules(args: argparse.Namespace, host: PluginHost) -> int:
    selectors = [part.strip() for text in args.selectors for part in text.split(",") if part.strip()]
    check_selectors(host.rules, selectors)
    shown = [rule for rule in host.rules if not selectors or any(matches(rule, s) for s in selectors)]
    if args.json:
        write(json.dumps([rule.describe() for rule in shown], indent=2) + "\n", None)
        return EXIT_OK
    rows = [(r.code, r.name, r.severity.value, r.scope, r.plugin, r.summary) for r in shown]
    headers = ("code", "name", "severity", "scope", "plugin", "summary")
    write(table(rows, headers, Screen.of(sys.stdout)) + "\n", None)
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace, host: PluginHost) -> int:
    rule = host.rule(args.rule)
    if rule is None:
        hint = did_you_mean_rule(args.rule, [rule.code for rule in host.rules], [rule.name for rule in host.rules])
        raise UsageError(f"no rule {args.rule!r}{hint}; `mlperf-audit rules` lists them")
    rulesets = ", ".join(sorted(rule.rulesets)) if rule.rulesets is not None else "every ruleset"
    header = (
        f"{rule.code} {rule.name}\n"
        f"severity: {rule.severity.value} · scope: {rule.scope} · plugin: {rule.plugin} · applies to: {rulesets}\n\n"
    )
    write(header + rule.doc() + "\n", None)
    return EXIT_OK


def _cmd_plugins(args: argparse.Namespace, host: PluginHost) -> int:
    if args.json:
        write(json.dumps([p.to_dict() for p in host.plugins], indent=2) + "\n", None)
        return EXIT_OK
    counts = {p.name: 0 for p in host.plugins}
    for rule in host.rules:
        counts[rule.plugin] = counts.get(rule.plugin, 0) + 1
    rows = [
        (p.name, p.module, p.distribution, p.version, "yes" if p.builtin else "no", counts[p.name])
        for p in host.plugins
    ]
    write(tabulate(rows, headers=("plugin", "module", "distribution", "version", "built-in", "rules")) + "\n", None)
    write(f"mlperf-logging {mlperf_logging_version()}\n", None)
    return EXIT_OK


def _cmd_formats(args: argparse.Namespace, host: PluginHost) -> int:
    rows = [(f.name, f.description) for f in sorted(host.formats.values(), key=lambda f: f.name)]
    write(tabulate(rows, headers=("format", "description")) + "\n", None)
    return EXIT_OK


def _cmd_cache(args: argparse.Namespace, host: PluginHost) -> int:
    # None of these follows a link or creates the folder (mlperf_audit.cache).
    cache = ParseCache(args.cache_dir or default_directory())
    shown = visible(str(cache.directory))
    problem = cache.problem()
    if problem and args.action in ("clear", "prune"):
        # a folder that is a link, or that someone else owns or can write to, is not this tool's to empty
        raise UsageError(f"{shown}: nothing removed: {visible(problem)}")
    if args.action == "clear":
        cache.clear()
        write(f"cleared {shown}\n", None)
        return EXIT_OK
    if args.action == "prune":
        if args.days < 0:
            raise UsageError("--days must be 0 or more")
        count, freed = cache.prune(args.days)
        write(f"{shown}: removed {count} entries unused for {args.days:g} days ({freed / 2**20:.1f} MiB)\n", None)
        return EXIT_OK
    usage = cache.usage()

    def held(folder: str, what: str) -> str:
        return f"{usage[folder][0]} {what}, {usage[folder][1] / 2**20:.1f} MiB"

    total = sum(size for _, size in usage.values()) / 2**20
    summary = [held(SUBFOLDER, "parsed file(s)"), held(CHECK_FOLDER, "whole-check entries")]
    if usage[OLD_RCP_FOLDER][0]:
        summary.append(
            held(OLD_RCP_FOLDER, "RCP statistics file(s) of an earlier version (`cache clear` removes them)")
        )
    unusable = f"; checks do not use it: {visible(problem)}" if problem else ""
    lines = [
        f"{shown}: {'; '.join(summary)}; {total:.1f} MiB in all{unusable}",
        f"  {SUBFOLDER}/  parsed files: each result file's records (after an edit, only changed files are parsed)",
        f"  {CHECK_FOLDER}/  whole checks: each check's or score's outcome (for an unchanged tree) and marks of PATHs",
    ]
    write("\n".join(lines) + "\n", None)
    return EXIT_OK


COMMANDS = {
    "rules": _cmd_rules,
    "explain": _cmd_explain,
    "plugins": _cmd_plugins,
    "formats": _cmd_formats,
    "cache": _cmd_cache,
}


def _disabled_plugins(argv: Sequence[str] | None) -> list[str]:
    """--disable-plugin is needed before the full parser exists (plugins add commands to it)."""
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--disable-plugin", action="append", default=[])
    known, _ = early.parse_known_args(argv)
    return list(known.disable_plugin)


def _say(message: str) -> None:
    print(no_workflow_commands(f"mlperf-audit: {message}"), file=sys.stderr)


#: Exit codes of a command stopped by a signal, as a shell reports them (128 + the signal's number).
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so that it ends as Ctrl-C does: its worker processes
    stopped (mlperf_audit.engine), one line said, no traceback."""


#: The signals this command received. The exception a signal raises can be lost: raised while a
#: finalizer or a weak reference's callback runs, Python prints "Exception ignored" and goes on;
#: the command still ends as the signal asked.
_received: list[int] = []


def _interrupt(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def _terminate(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise Terminated


def _unless_a_signal(hook: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`hook`, but silent on the exception a signal raised inside a finalizer (which Python would
    print with a traceback and drop): the command ends as the signal asked all the same."""

    def unraisable(event: Any) -> None:
        if not issubclass(event.exc_type, (KeyboardInterrupt, Terminated)):
            hook(event)

    return unraisable


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: its exit code. Ctrl-C and SIGTERM end it with one line and 130 or 143,
    like any command a shell runs, and leave no worker process behind."""
    in_main_thread = threading.current_thread() is threading.main_thread()  # only it can take signals
    _received.clear()
    previous = {}
    if in_main_thread:
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _terminate)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where the caller ignores it
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupt)
    unraisable = sys.unraisablehook
    sys.unraisablehook = _unless_a_signal(unraisable)
    code = EXIT_ERROR
    try:
        code = _main(argv)
    except KeyboardInterrupt:
        _received.append(signal.SIGINT)
    except Terminated:
        _received.append(signal.SIGTERM)
    finally:
        sys.unraisablehook = unraisable
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if signal.SIGTERM in _received:
        _quietly_say("terminated")
        return EXIT_TERMINATED
    if signal.SIGINT in _received:
        _quietly_say("interrupted")
        return EXIT_INTERRUPTED
    return code


def _quietly_say(message: str) -> None:
    """The one line of an interrupted command, which a second Ctrl-C cannot turn into a traceback."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        _say(message)
    except OSError:  # standard error is gone with the terminal: nothing to say it to
        pass
    finally:
        # what arrived meanwhile is dropped: the command is ending already
        for pending in signal.sigpending() & {signal.SIGINT, signal.SIGTERM}:
            signal.sigwait({pending})
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _main(argv: Sequence[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character gets its escape
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        host = PluginHost(disabled=_disabled_plugins(argv))
    except PluginError as error:
        print(f"mlperf-audit: plugin error:\n{error}", file=sys.stderr)
        return EXIT_ERROR
    parser = build_parser(host)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits 2 on usage errors and 0 for --help/--version
        return int(exit_.code or 0)
    # What start-up built (modules, rule classes, the official rule files) lives until the end: kept
    # out of every collection, which would otherwise scan it again and again while the logs are
    # checked, and out of the forked workers' copy-on-write pages. Undone after the command, for a
    # caller that runs several in one process.
    gc.freeze()
    try:
        handler = COMMANDS.get(args.command) or args.handler
        return int(handler(args, host))
    except PluginError as error:
        _say(f"plugin error:\n{visible(str(error), keep_newlines=True)}")
        return EXIT_ERROR
    except AuditError as error:  # its message may quote the package (file names, values): shown visibly
        _say(f"error: {visible(str(error))}")
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # an internal error: say so plainly; the traceback only on request
        _say(f"internal error: {type(error).__name__}: {visible(str(error))}")
        if os.environ.get(DEBUG_ENV):
            traceback.print_exc()
        else:
            print(f"(set {DEBUG_ENV}=1 to see the traceback; please report it)", file=sys.stderr)
        return EXIT_ERROR
    finally:
        gc.unfreeze()


def run() -> NoReturn:
    """The `mlperf-audit` command: `main`, then out at once. Tearing the interpreter down frees every
    object the check built, one at a time (a quarter of a second after a whole round), and
    nothing is left to release: the output is flushed here, the worker processes have ended."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed (`>&-`): nothing was written to it
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader left (`| head`): nothing more to say
            pass
        except OSError as error:  # a full disk: the output is incomplete, which the exit code says
            code = EXIT_ERROR
            if stream is sys.stdout:
                _say(f"error: cannot write the output: {error.strerror or error}")
    os._exit(code)
