"""The `mlperf-audit` command line.

Exit codes: 0 no finding at or above --fail-on; 1 some; 2 usage, configuration, internal or
plugin error, or a PATH that does not exist or cannot be read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

from tabulate import tabulate

from . import __version__, compare, scores, waivers
from .api import check, score, scored
from .cache import ParseCache, default_directory
from .config import FAIL_ON_CHOICES, KNOWN_RULESETS, Config, load_config
from .errors import AuditError, PluginError, TargetError
from .plugins import PluginHost
from .report import mlperf_logging_version
from .safety import no_workflow_commands, output_path, visible, write_text

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DEBUG_ENV = "MLPERF_AUDIT_DEBUG"


class UsageError(AuditError):
    """The command line asks for something impossible."""


def _split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def build_parser(host: PluginHost | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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

    check_cmd = commands.add_parser("check", help="check a results repository, submission, folder or log file")
    check_cmd.add_argument("path", metavar="PATH", help="results repository root, submitter folder, "
                           "results/<system> or results/<system>/<benchmark> folder, or one result file")
    check_cmd.add_argument("--format", default="text", help="output format (default: text; see `mlperf-audit formats`)")
    check_cmd.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output")
    check_cmd.add_argument("--report", action="append", default=[], metavar="FORMAT:FILE",
                           help="also write the report in FORMAT to FILE (repeatable), e.g. sarif:audit.sarif")
    check_cmd.add_argument("--select", action="append", metavar="CODES",
                           help="only these rule codes, prefixes or names (comma-separated; repeatable; ALL = every rule)")
    check_cmd.add_argument("--ignore", action="append", metavar="CODES",
                           help="skip these rule codes, prefixes or names (comma-separated; repeatable)")
    check_cmd.add_argument("--fail-on", choices=FAIL_ON_CHOICES, help="lowest severity that makes the exit code 1 "
                           "(default: error)")
    check_cmd.add_argument("--ruleset", metavar="RULESET",
                           help=f"rules of the round to apply: {', '.join(KNOWN_RULESETS)} (default: auto, the round the package fits)")
    check_cmd.add_argument("--config", metavar="FILE", help="read settings from FILE (a .mlperf-audit.toml or a "
                           "pyproject.toml with [tool.mlperf-audit])")
    check_cmd.add_argument("--no-progress", action="store_true", help="no progress line on a terminal's stderr")
    check_cmd.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                           help="check benchmark folders in N processes (default: the number of cores); "
                           "the report is the same whatever N is")
    check_cmd.add_argument("--waivers", metavar="FILE", help="accept the findings this TOML file waives (with reasons)")
    check_cmd.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline")
    check_cmd.add_argument("--write-baseline", metavar="FILE", help="write the findings' fingerprints to FILE")
    check_cmd.add_argument("--partial", action="store_true",
                           help="a submitter's what-if: runs still missing are pending, not failures")
    check_cmd.add_argument("--trust-tree-config", action="store_true",
                           help="obey a configuration file that lies inside PATH")
    _add_cache_options(check_cmd)

    score_cmd = commands.add_parser("score", help="time-to-train and score of every benchmark folder under PATH")
    score_cmd.add_argument("path", metavar="PATH", help="any PATH that `check` accepts")
    score_cmd.add_argument("--format", default="text", choices=("text", "json", "csv"),
                           help="text (default), json, or csv: the official summarizer's two tables")
    score_cmd.add_argument("-o", "--output", metavar="FILE", help="write to FILE (csv: FILE and FILE_detailed.csv)")
    add_reading_options(score_cmd, jobs="score benchmark folders")

    compare_cmd = commands.add_parser("compare", help="per benchmark: the scores of A and B, speedup, per accelerator")
    compare_cmd.add_argument("a", metavar="A", help="a PATH that `check` accepts (the baseline)")
    compare_cmd.add_argument("b", metavar="B", help="a PATH that `check` accepts (compared with A)")
    compare_cmd.add_argument("--format", default="text", choices=("text", "json"))
    compare_cmd.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    compare_cmd.add_argument("--ruleset-b", metavar="RULESET", help="the round of B, when it differs from A's")
    add_reading_options(compare_cmd)

    rules_cmd = commands.add_parser("rules", help="list every rule with its plugin")
    rules_cmd.add_argument("--json", action="store_true", help="print the rules as JSON")

    explain_cmd = commands.add_parser("explain", help="print the documentation of a rule")
    explain_cmd.add_argument("rule", metavar="CODE", help="a rule code (e.g. LOG005) or name")

    plugins_cmd = commands.add_parser("plugins", help="list the loaded plugins")
    plugins_cmd.add_argument("--json", action="store_true", help="print the plugins as JSON")

    commands.add_parser("formats", help="list the output formats")

    cache_cmd = commands.add_parser("cache", help="show or clear the cache of parsed files")
    cache_cmd.add_argument("action", nargs="?", choices=("info", "prune", "clear"), default="info",
                           help="info (default): where the cache is and what it holds; prune: remove what no "
                           "check used for --days days; clear: empty it")
    cache_cmd.add_argument("--days", type=float, default=30.0, metavar="N", help="for prune (default: 30)")
    cache_cmd.add_argument("--cache-dir", metavar="DIR", help="the cache directory (default: see `check --help`)")
    if host is not None:
        host.hook.mlperf_audit_add_commands(commands=commands)
    return parser


def add_reading_options(command: argparse.ArgumentParser, *, partial: bool = True, jobs: str | None = None) -> None:
    """The options of a command that reads a PATH as `check` does (for plugins' commands too):
    --ruleset, --partial (unless `partial` is False), --config, --trust-tree-config, the cache
    options and, when `jobs` says what runs in parallel, --jobs."""
    command.add_argument("--ruleset", metavar="RULESET",
                         help=f"rules of the round: {', '.join(KNOWN_RULESETS)} (default: auto, the round the package fits)")
    if partial:
        command.add_argument("--partial", action="store_true", help="missing runs are pending, not failures")
    command.add_argument("--config", metavar="FILE", help="read settings from FILE")
    command.add_argument("--trust-tree-config", action="store_true",
                         help="obey a configuration file that lies inside PATH")
    _add_cache_options(command)
    if jobs:
        command.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                             help=f"{jobs} in N processes (default: the number of cores)")


def _add_cache_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--cache-dir", metavar="DIR",
                         help="keep parsed files in DIR, never inside PATH (default: $MLPERF_AUDIT_CACHE_DIR, "
                         "else $XDG_CACHE_HOME/mlperf-audit or ~/.cache/mlperf-audit)")
    command.add_argument("--no-cache", action="store_true", help="parse every file, read and write no cache")


def _round_config(args: argparse.Namespace, target: Path, ruleset: str | None = None) -> Config:
    if not os.path.lexists(target):
        raise TargetError(f"{target}: no such file or folder")
    return load_config(target=target, config_file=args.config, trust_tree_config=args.trust_tree_config,
                       ruleset=ruleset or args.ruleset, partial=args.partial, cache_dir=args.cache_dir,
                       use_cache=not args.no_cache)


def _progress(args: argparse.Namespace) -> Any:
    """A progress line on standard error, only on a terminal: never mixed into reports or pipes."""
    if args.no_progress or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rmlperf-audit: {done}/{total} result files checked{end}")
        sys.stderr.flush()

    return show


def _write(text: str, output: str | None, checked: Sequence[Path] = (), append: bool = False) -> None:
    """Standard output, or the file `output`, which `safety.output_path` allows (never inside a checked PATH)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_text(output, text, checked, append=append)


def _cmd_check(args: argparse.Namespace, host: PluginHost) -> int:
    target = Path(args.path)
    if not os.path.lexists(target):
        raise TargetError(f"{args.path}: no such file or folder")
    for output in (args.output, args.write_baseline):
        if output:
            output_path(output, [target])  # refused before the check runs, not after
    config = load_config(
        target=target,
        config_file=args.config,
        trust_tree_config=args.trust_tree_config,
        select=_split(args.select),
        ignore=_split(args.ignore),
        fail_on=args.fail_on,
        ruleset=args.ruleset,
        partial=args.partial,
        waivers=args.waivers,
        baseline=args.baseline,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    fmt = host.formats.get(args.format)
    if fmt is None:
        raise UsageError(f"unknown format {args.format!r}; available: {', '.join(sorted(host.formats))}")
    extra = []
    for spec in args.report:
        name, _, path = spec.partition(":")
        if not path or name not in host.formats:
            raise UsageError(f"--report {spec!r}: expected FORMAT:FILE with FORMAT one of {', '.join(sorted(host.formats))}")
        output_path(path, [target])
        extra.append((host.formats[name], path))
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    report = check(target, config, host, progress=_progress(args), jobs=args.jobs)
    _write(fmt.render(report), args.output, [target])
    if args.write_baseline:
        _write(waivers.baseline_document(report.findings), args.write_baseline, [target])
    for extra_format, path in extra:
        _write(extra_format.render(report), path, [target], append=path == os.environ.get("GITHUB_STEP_SUMMARY"))
    return report.exit_code


def _cmd_score(args: argparse.Namespace, host: PluginHost) -> int:
    target = Path(args.path)
    config = _round_config(args, target)
    outputs = [args.output] if args.output else []
    if args.output and args.format == "csv":
        if not args.output.endswith(".csv"):
            raise UsageError("--format csv writes FILE.csv and FILE_detailed.csv: give a FILE ending in .csv")
        outputs.append(args.output[: -len(".csv")] + "_detailed.csv")
    for output in outputs:
        output_path(output, [target])  # both files of a CSV pair, before the scores are computed
    config, results = scored(target, config, host, jobs=max(1, args.jobs))
    for note in config.notes:
        print(no_workflow_commands(f"note: {visible(note)}"), file=sys.stderr)
    if args.format == "json":
        _write(scores.render_json(results, config.ruleset, {"target": str(args.path), "notes": list(config.notes)}),
               args.output, [target])
    elif args.format == "csv":
        wide, detailed = scores.csv_tables(results, config.ruleset)
        if args.output:
            _write(wide, outputs[0], [target])
            _write(detailed, outputs[1], [target])
        else:
            _write(wide + "\n" + detailed, None)
    else:
        _write(scores.render_text(results), args.output, [target])
    return EXIT_OK


def _cmd_compare(args: argparse.Namespace, host: PluginHost) -> int:
    side_a, side_b = Path(args.a), Path(args.b)
    if args.output:
        output_path(args.output, [side_a, side_b])
    config_a = _round_config(args, side_a)
    config_b = _round_config(args, side_b, args.ruleset_b)
    rows = compare.compare(score(side_a, config_a, host), score(side_b, config_b, host))
    text = compare.render_json(rows, str(args.a), str(args.b)) if args.format == "json" else compare.render_text(rows)
    _write(text, args.output, [side_a, side_b])
    return EXIT_OK


def _cmd_rules(args: argparse.Namespace, host: PluginHost) -> int:
    if args.json:
        _write(json.dumps([rule.describe() for rule in host.rules], indent=2) + "\n", None)
        return EXIT_OK
    rows = [(r.code, r.name, r.severity.value, r.scope, r.plugin, r.summary) for r in host.rules]
    _write(tabulate(rows, headers=("code", "name", "severity", "scope", "plugin", "summary")) + "\n", None)
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace, host: PluginHost) -> int:
    rule = host.rule(args.rule)
    if rule is None:
        raise UsageError(f"no rule {args.rule!r}; `mlperf-audit rules` lists them")
    rulesets = ", ".join(sorted(rule.rulesets)) if rule.rulesets is not None else "every ruleset"
    header = (
        f"{rule.code} {rule.name}\n"
        f"severity: {rule.severity.value} · scope: {rule.scope} · plugin: {rule.plugin} · applies to: {rulesets}\n\n"
    )
    _write(header + rule.doc() + "\n", None)
    return EXIT_OK


def _cmd_plugins(args: argparse.Namespace, host: PluginHost) -> int:
    if args.json:
        _write(json.dumps([p.to_dict() for p in host.plugins], indent=2) + "\n", None)
        return EXIT_OK
    counts = {p.name: 0 for p in host.plugins}
    for rule in host.rules:
        counts[rule.plugin] = counts.get(rule.plugin, 0) + 1
    rows = [(p.name, p.module, p.distribution, p.version, "yes" if p.builtin else "no", counts[p.name])
            for p in host.plugins]
    _write(tabulate(rows, headers=("plugin", "module", "distribution", "version", "built-in", "rules")) + "\n", None)
    _write(f"mlperf-logging {mlperf_logging_version()}\n", None)
    return EXIT_OK


def _cmd_formats(args: argparse.Namespace, host: PluginHost) -> int:
    rows = [(f.name, f.description) for f in sorted(host.formats.values(), key=lambda f: f.name)]
    _write(tabulate(rows, headers=("format", "description")) + "\n", None)
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
        _write(f"cleared {shown}\n", None)
        return EXIT_OK
    if args.action == "prune":
        if args.days < 0:
            raise UsageError("--days must be 0 or more")
        count, freed = cache.prune(args.days)
        _write(f"{shown}: removed {count} entries unused for {args.days:g} days ({freed / 2**20:.1f} MiB)\n", None)
        return EXIT_OK
    count, size = cache.size()
    unusable = f"; checks do not use it: {visible(problem)}" if problem else ""
    _write(f"{shown}: {count} parsed file(s), {size / 2**20:.1f} MiB{unusable}\n", None)
    return EXIT_OK


COMMANDS = {
    "check": _cmd_check,
    "score": _cmd_score,
    "compare": _cmd_compare,
    "rules": _cmd_rules,
    "explain": _cmd_explain,
    "plugins": _cmd_plugins,
    "formats": _cmd_formats,
    "cache": _cmd_cache,
}


def _disabled_plugins(argv: Sequence[str] | None) -> list[str]:
    """--disable-plugin is needed before the full parser exists (plugins add commands to it)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--disable-plugin", action="append", default=[])
    known, _ = early.parse_known_args(argv)
    return list(known.disable_plugin)


def _say(message: str) -> None:
    print(no_workflow_commands(f"mlperf-audit: {message}"), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
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
