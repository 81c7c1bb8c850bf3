"""The `mlperf-audit` command line.

Exit codes: 0 no finding at or above --fail-on; 1 some; 2 usage, configuration, internal or
plugin error, or a PATH that does not exist or cannot be read.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
import traceback
from typing import Any, Callable, NoReturn, Sequence

from ._version import __version__
from .commands import (
    EXIT_ERROR,
    EXIT_OK,
    Command,
    add_command,
    audit,
    cache,
    check,
    compare,
    explain,
    export,
    formats,
    plugins,
    report,
    reproduce,
    rules,
    score,
)
from .engine.plugins import PluginHost
from .errors import AuditError, PluginError
from .formats import builtin_formats
from .safety import no_workflow_commands, visible
from .suggest import did_you_mean

#: The built-in commands, in the order `mlperf-audit --help` lists them.
BUILTIN: tuple[Command, ...] = (
    check.Check(),
    score.Score(),
    compare.Compare(),
    audit.Audit(),
    report.HtmlReport(),
    export.Export(),
    reproduce.Reproduce(),
    rules.Rules(),
    explain.Explain(),
    plugins.Plugins(),
    formats.Formats(),
    cache.Cache(),
)

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

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
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

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
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
    known_formats = host.formats if host is not None else builtin_formats()
    for command in BUILTIN + (plugin_commands(host) if host is not None else ()):
        add_command(commands, command, known_formats)

    if host is not None:  # the deprecated form: a plugin adds its parsers itself
        host.hook.mlperf_audit_add_commands(commands=commands)
    return parser


def plugin_commands(host: PluginHost) -> tuple[Command, ...]:
    """The commands plugins return from `mlperf_audit_register_commands`; a `PluginError` naming
    every one that is not a `Command`."""
    found: list[Command] = []
    wrong: list[str] = []
    for returned in host.hook.mlperf_audit_register_commands():
        for command in returned or ():
            if isinstance(command, Command):
                found.append(command)
            else:
                wrong.append(f"{command!r} is not a mlperf_audit.Command")
    if wrong:
        raise PluginError("mlperf_audit_register_commands: " + "; ".join(wrong))
    return tuple(found)


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
    try:
        parser = build_parser(host)
    except PluginError as error:
        print(f"mlperf-audit: plugin error:\n{error}", file=sys.stderr)
        return EXIT_ERROR
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
        return int(args.handler(args, host))
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
