"""Every hook a plugin can implement, grouped by the phase in which the engine calls it.

A plugin is a module (or object) registered through the ``mlperf_audit`` entry-point group; the
built-in rule packs are registered the same way. Implement a hook with the ``hookimpl`` marker::

    from mlperf_audit import hookimpl

    @hookimpl
    def mlperf_audit_register_rules():
        from .my_rules import MyRule
        return [MyRule]

Phases, in the order one ``check`` goes through them:

1. registration: ``mlperf_audit_register_rules``, ``mlperf_audit_register_formats``,
   ``mlperf_audit_register_commands``, ``mlperf_audit_plugin_settings`` (and
   ``mlperf_audit_add_commands``, deprecated)
2. configuration: ``mlperf_audit_configure``
3. checking: ``mlperf_audit_check_run``, ``mlperf_audit_check_benchmark``,
   ``mlperf_audit_check_system``, ``mlperf_audit_check_submission``, ``mlperf_audit_check_tree``
4. filtering: ``mlperf_audit_modify_findings``

``score``, ``compare``, ``audit`` and ``report`` call one more hook per benchmark folder, in the
same pass that checks it: ``mlperf_audit_score_benchmark``; ``audit --baseline`` then calls
``mlperf_audit_check_comparison`` once with both trees' scores. ``reproduce`` calls
``mlperf_audit_reproduce`` for the one result folder it is given.

The built-in engine plugin implements the checking hooks by running the selected rules of each
scope, so most plugins only register rules. A plugin may also implement a checking hook
directly; every finding it returns must carry the code of a registered rule.

Each hook's docstring says, with ``.. versionadded::``, the release that brought it, and with
``.. deprecated::`` when it is on its way out: pluggy then warns (``warn_on_impl``) when a plugin
implementing it is registered. ``docs/plugin-api.md`` lists them, generated from this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..config import Config, Setting
from ..formats import Format
from ..markers import PROJECT, hookimpl, hookspec
from ..model import BenchmarkResult, Finding, Run, Submission, SystemDescription, Tree
from ..recipes import Recipe
from ..rule import CheckContext, Rule
from ..scores import BenchmarkScore, Comparison

if TYPE_CHECKING:
    import argparse

__all__ = ["PROJECT", "hookimpl", "hookspec"]


# ---------------------------------------------------------------------------------------------
# Registration: called once per process, before any configuration is read.
# ---------------------------------------------------------------------------------------------


@hookspec
def mlperf_audit_register_rules() -> list[type[Rule]]:
    """Return the rule classes this plugin contributes.

    Import the rule modules inside the function, so that loading a plugin stays cheap. Each
    class must subclass the base of its scope (``mlperf_audit.RunRule``, ``BenchmarkRule``, ...,
    or ``Rule`` with a ``scope``) and carry a unique ``code`` (a prefix of 2 to 5 capitals and 3 or
    4 digits), a kebab-case ``name``, a one-line ``summary``, a ``severity`` and a docstring; a
    missing field or a duplicate code is a plugin error (exit 2).

    :return: the rule classes (not instances).

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_register_formats() -> list[Format]:
    """Return output formats (``mlperf_audit.Format``) this plugin contributes.

    A format has a unique ``name`` (the value of ``--format``), a one-line ``description``, a
    ``render(report) -> str`` function that turns a ``mlperf_audit.Report`` into text (or None),
    and ``documents``: for each further kind of document it renders
    (``mlperf_audit.formats.documents``: scores, comparison, audit, recipe, html-report, export), a
    function that turns that document into text; the command of that kind then offers it.
    With ``quotes=True`` the check quotes the lines its findings at warning or above point at into
    the report (``Report.evidence``, ``Report.quote(path, line)``), as ``--format objection`` needs.

    :return: the formats.

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_register_commands() -> list[Any]:
    """Return subcommands (``mlperf_audit.Command`` instances) this plugin adds to the command line.

    A command has a ``name``, a ``help``, ``add_arguments(parser)`` and ``run(args, host)``, which
    returns the exit code; ``parents()`` may return ``mlperf_audit.reading_options()`` for the
    options of a command that reads a PATH as ``check`` does, and a command that writes a document
    of a kind (``document``) gets ``--format`` among the formats that render it.

    :return: the commands.

    .. versionadded:: 0.1.0
    """


@hookspec(
    warn_on_impl=DeprecationWarning(
        "mlperf_audit_add_commands is deprecated: return mlperf_audit.Command instances from "
        "mlperf_audit_register_commands instead"
    )
)
def mlperf_audit_add_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add subcommands to the command line (``commands.add_parser(...)``).

    Give each a handler with ``parser.set_defaults(handler=function)``; the handler receives the
    parsed arguments and the plugin host and returns the exit code.

    :param commands: the command line's subcommands, to add parsers to.

    .. versionadded:: 0.1.0
    .. deprecated:: 0.1.0
       Return ``mlperf_audit.Command`` instances from ``mlperf_audit_register_commands``: a
       command then shares the reading options and gets the formats of its document.
    """


@hookspec
def mlperf_audit_plugin_settings() -> list[Setting]:
    """Declare this plugin's settings (``mlperf_audit.Setting``: name, type, default, help).

    They are read from ``[tool.mlperf-audit.plugins.<plugin>]`` in ``pyproject.toml`` (or
    ``[plugins.<plugin>]`` in ``.mlperf-audit.toml``), where ``<plugin>`` is the plugin's
    entry-point name; a key the plugin does not declare, or a value of the wrong type, is a
    configuration error (exit 2) that suggests the closest declared name. A rule reads the values
    in force with ``context.settings_of(self.plugin)``. Tree configuration (inside the checked
    PATH or its repository) sets none of them without ``--trust-tree-config``.

    :return: the settings, each name once.

    .. versionadded:: 0.1.0
    """


# ---------------------------------------------------------------------------------------------
# Configuration: called once the configuration in force is known.
# ---------------------------------------------------------------------------------------------


@hookspec(
    historic=True,
    warn_on_impl=DeprecationWarning(
        "mlperf_audit_configure is deprecated: read the configuration of each check from "
        "context.config in the check hooks, and declare settings with mlperf_audit_plugin_settings"
    ),
)
def mlperf_audit_configure(config: Config) -> None:
    """Receive the configuration in force (selection, ``fail-on``, ruleset, its sources).

    Historic: a plugin registered later still receives the call, and a process that checks twice
    (a library caller, ``audit``) calls it once per check, so a plugin that keeps the value may
    apply one check's configuration to another.

    :param config: the configuration in force, its ruleset resolved.

    .. versionadded:: 0.1.0
    .. deprecated:: 0.1.0
       Read ``context.config`` in the check hooks, and declare settings with
       ``mlperf_audit_plugin_settings``; a plugin implementing this hook gets a
       ``DeprecationWarning`` when it is registered.
    """


# ---------------------------------------------------------------------------------------------
# Checking: called for every target found under the checked PATH. Each returns a list of
# findings (or None). ``context`` is a ``mlperf_audit.CheckContext``: the configuration,
# the ruleset, the tree being checked and the selected rules.
# ---------------------------------------------------------------------------------------------


@hookspec
def mlperf_audit_check_run(run: Run, context: CheckContext) -> list[Finding] | None:
    """Check one result file (one training run): its events and the issues met reading it.

    :param run: the parsed result file.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: findings, each with the code of a registered rule, or None.

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_check_benchmark(result: BenchmarkResult, context: CheckContext) -> list[Finding] | None:
    """Check one ``results/<system>/<benchmark>/`` folder with all its parsed runs.

    Called after ``mlperf_audit_check_run`` for each of the folder's runs.

    :param result: the benchmark folder and its parsed runs.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: findings, each with the code of a registered rule, or None.

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_check_system(system: SystemDescription, context: CheckContext) -> list[Finding] | None:
    """Check one ``systems/<system>.json`` description.

    :param system: the parsed system description.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: findings, each with the code of a registered rule, or None.

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_check_submission(submission: Submission, context: CheckContext) -> list[Finding] | None:
    """Check one submitter's folder: its layout, systems and benchmark folders (not their logs).

    :param submission: the submitter's folder as discovered.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: findings, each with the code of a registered rule, or None.

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_check_tree(tree: Tree, context: CheckContext) -> list[Finding] | None:
    """Check the whole PATH at once; called last, after every other target was checked.

    :param tree: everything PATH holds, as discovered.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: findings, each with the code of a registered rule, or None.

    .. versionadded:: 0.1.0
    """


@hookspec
def mlperf_audit_check_comparison(comparison: Comparison, context: CheckContext) -> list[Finding] | None:
    """Check the scores of PATH against a baseline's (``audit --baseline``): rules of scope
    ``comparison``. ``context.tree`` is PATH's tree.

    :param comparison: both trees' scores, matched.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: findings, each with the code of a registered rule, or None.

    .. versionadded:: 0.1.0
    """


# ---------------------------------------------------------------------------------------------
# Scoring: called by `score` and `compare` for every benchmark folder.
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def mlperf_audit_score_benchmark(result: BenchmarkResult, context: CheckContext) -> BenchmarkScore | None:
    """Compute the score of one benchmark folder (``mlperf_audit.BenchmarkScore``).

    First result wins: a plugin for another round or scoring scheme can replace the built-in one
    (``mlperf_audit_rules.summarizer``) by answering first. ``check`` scores too when its outcome
    is kept, for a later ``score``: a scorer that raises there leaves the check as it is (and its
    outcome unkept). What a scorer publishes on a channel is never part of the check.

    :param result: the benchmark folder and its parsed runs.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: the score, or None to let the next plugin answer.

    .. versionadded:: 0.1.0
    """


@hookspec(firstresult=True)
def mlperf_audit_reproduce(result: BenchmarkResult, context: CheckContext) -> Recipe | None:
    """The recipe to rerun one result folder (``mlperf_audit.Recipe``): ``reproduce``.

    First result wins; the built-in one is the reproducibility pack's.

    :param result: the benchmark folder and its parsed runs.
    :param context: the check's context (``mlperf_audit.CheckContext``).
    :return: the recipe, or None to let the next plugin answer.

    .. versionadded:: 0.1.0
    """


# ---------------------------------------------------------------------------------------------
# Filtering: called once with every finding, before the report is made.
# ---------------------------------------------------------------------------------------------


@hookspec
def mlperf_audit_modify_findings(findings: list[Finding], context: CheckContext) -> None:
    """Filter, re-order or replace findings in place (waivers, baselines, severity overrides).

    Findings are immutable: replace an element (``findings[i] = dataclasses.replace(...)``) or
    delete it; do not add findings with codes that no plugin registered.

    :param findings: every finding of the check, to change in place.
    :param context: the check's context (``mlperf_audit.CheckContext``).

    .. versionadded:: 0.1.0
    """
