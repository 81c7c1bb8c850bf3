"""An example rule pack: how a third party adds a rule, and a setting, to mlperf-audit."""

from __future__ import annotations

from typing import Iterable

from mlperf_audit import (
    CheckContext,
    Finding,
    Rule,
    Run,
    RunRule,
    Setting,
    Severity,
    hookimpl,
)

#: The share of non-MLLOG lines above which a log is reported, unless configured otherwise:
#: [tool.mlperf-audit.plugins.example] noise-share = 0.8
NOISE_SHARE = Setting(
    name="noise-share",
    type=float,
    default=0.5,
    help="Share of a result file's lines that are not MLLOG records above which EXA001 reports it.",
)


class ShellNoise(RunRule):
    """Most lines of the result file are not MLLOG records.

    What it checks: the share of a result file's lines that are not `:::MLLOG` records.

    Why it matters: launchers that trace every shell command (`set -x`) bury the log; that is
    legal, but reviewers read these files, and a lean log is faster to review.

    Example: a log whose first 900 lines are `+ srun ...` traces before the first record.

    How to fix: capture the benchmark's output without the launcher's shell trace.
    """

    code = "EXA001"
    name = "shell-noise"
    summary = "Most lines of a result file are not MLLOG records."
    severity = Severity.INFO
    scope = "run"

    def check(self, run: Run, context: CheckContext) -> Iterable[Finding]:
        if run.line_count == 0 or not run.events:
            return
        noise = 1 - len(run.events) / run.line_count
        if noise > context.settings_of(self.plugin)[NOISE_SHARE.name]:
            yield self.finding(
                f"{noise:.0%} of the file's {run.line_count} lines are not MLLOG records",
                path=run.path,
                line=1,
            )


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return [ShellNoise]


@hookimpl
def mlperf_audit_plugin_settings() -> list[Setting]:
    return [NOISE_SHARE]
