"""Rule test cases as YAML, one file per rule: the helper the built-in rules and plugins share.

A case file::

    rule: EVT003
    cases:
      - name: run_stop_present
        events: [cache_clear, init_start, init_stop, run_start, {key: run_stop, meta: {status: success}}]
        expect: []
      - name: no_run_stop
        events: [cache_clear, init_start, init_stop, run_start]
        expect: [{line: null, message: "no run_stop"}]

A case gives one log, as ``events`` (shorthand, one MLLOG line each, in order) or ``log`` (raw
text, for exact physical lines), or a whole ``package`` (a mapping of relative paths to file
contents: text, or a list of events), optionally on top of a ``base`` folder (relative to the YAML
file) that is copied first; then the ``package`` files are written, the ``remove`` paths deleted,
and the ``edit`` substitutions made (``{files: GLOB, pattern: REGEX, replace: TEXT}``, regular
expressions in multi-line mode); ``target`` is the path to check (default: the package root). Only the case's
rule runs, unless ``settings`` says otherwise; ``settings: {plugins: {NAME: {SETTING: VALUE}}}`` sets
a plugin's settings as ``[tool.mlperf-audit.plugins.NAME]`` does. ``expect`` lists the findings
in order: each may give ``path``, ``line``, ``severity`` and ``message`` (a substring). An event is a key name,
or a mapping with ``key``, ``value``, ``meta``, ``t`` (time_ms), ``event_type``, or ``raw`` (a
line written as is). A case with any other key is refused, so that a misspelt one (``ruleset:``
for ``settings: {ruleset: ...}``) cannot silently test something else.

A plugin runs its case files with pytest and nothing else: mlperf-audit installs a pytest plugin
(`mlperf_audit.pytest_plugin`) that collects every ``<CODE>.yaml`` of the folders named by the ini
option ``mlperf_audit_rule_cases``, one test per case (see the example plugin's ``pyproject.toml``).
Or, from a test module::

    from mlperf_audit.testing import collect_case_files, load_cases, assert_case

    @pytest.mark.parametrize("case", load_cases(Path(__file__).with_name("EXA001.yaml")), ids=str)
    def test_rule(case, tmp_path):
        assert_case(case, tmp_path)
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .config import Config, plugin_tables
from .engine.api import check
from .engine.plugins import PluginHost
from .model import Finding
from .reading import yaml_input

START_TIME_MS = 1_727_000_000_000
STEP_MS = 1_000
EVENT_TYPES = {
    "init_start": "INTERVAL_START",
    "init_stop": "INTERVAL_END",
    "run_start": "INTERVAL_START",
    "run_stop": "INTERVAL_END",
    "block_start": "INTERVAL_START",
    "block_stop": "INTERVAL_END",
    "epoch_start": "INTERVAL_START",
    "epoch_stop": "INTERVAL_END",
    "eval_start": "INTERVAL_START",
    "eval_stop": "INTERVAL_END",
}


@dataclass
class RuleCase:
    rule: str
    name: str
    files: dict[str, str | bytes]
    target: str
    expect: list[dict[str, Any]]
    source: str = ""
    skip: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    base: Path | None = None
    remove: list[str] = field(default_factory=list)
    edits: list[dict[str, str]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.rule}_{self.name}"


def render_events(events: list[Any]) -> str:
    """MLLOG text for a shorthand event list, one record per line."""
    lines = []
    time_ms = START_TIME_MS
    for item in events:
        if isinstance(item, str):
            item = {"key": item}
        if "raw" in item:
            lines.append(str(item["raw"]))
            continue
        time_ms = item.get("t", time_ms + STEP_MS)
        record = {
            "namespace": "",
            "time_ms": time_ms,
            "event_type": item.get("event_type", EVENT_TYPES.get(item["key"], "POINT_IN_TIME")),
            "key": item["key"],
            "value": item.get("value"),
            "metadata": {"file": "train.py", "lineno": len(lines) + 1, **(item.get("meta") or {})},
        }
        lines.append(":::MLLOG " + json.dumps(record))
    return "\n".join(lines) + "\n"


def _content(value: Any) -> str | bytes:
    if isinstance(value, list):
        return render_events(value)
    if isinstance(value, (str, bytes)):
        return value
    raise ValueError(f"file content must be text or an event list, not {type(value).__name__}")


#: What a case may say (docs/plugin-api.md).
CASE_KEYS = {"name", "package", "base", "target", "log", "events", "expect", "skip", "settings", "remove", "edit"}


def load_cases(path: Path) -> list[RuleCase]:
    try:
        data = yaml_input.load(Path(path).read_text(encoding="utf-8"), aliases=True)  # expansion bounded
    except yaml_input.YamlInputError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None
    rule = data["rule"]
    cases = []
    for raw in data["cases"]:
        unknown = sorted(set(raw) - CASE_KEYS)
        if unknown:  # a misspelt key would silently test something else
            raise ValueError(f"{path}: case {raw.get('name')!r} has unknown key(s) {', '.join(unknown)}")
        if "package" in raw or "base" in raw:
            files = {name: _content(content) for name, content in (raw.get("package") or {}).items()}
            target = raw.get("target", ".")
        else:
            text = raw["log"] if "log" in raw else render_events(raw["events"])
            files = {"result_0.txt": text}
            target = "result_0.txt"
        cases.append(
            RuleCase(
                rule=rule,
                name=raw["name"],
                files=files,
                target=target,
                expect=list(raw.get("expect") or []),
                source=str(path),
                skip=raw.get("skip"),
                settings=dict(raw.get("settings") or {}),
                base=(Path(path).parent / raw["base"]).resolve() if "base" in raw else None,
                remove=list(raw.get("remove") or []),
                edits=list(raw.get("edit") or []),
            )
        )
    return cases


def collect_case_files(folder: Path) -> list[Path]:
    return sorted(Path(folder).glob("*.yaml"))


def run_case(case: RuleCase, workdir: Path, host: PluginHost | None = None) -> list[Finding]:
    if case.base is not None:
        shutil.copytree(case.base, workdir, dirs_exist_ok=True)
    for name, content in case.files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="\n")
    for name in case.remove:
        path = workdir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    for edit in case.edits:
        paths = sorted(workdir.glob(edit["files"]))
        if not paths:
            raise AssertionError(f"{case}: edit matches no file: {edit['files']}")
        for path in paths:
            text = path.read_text(encoding="utf-8")
            path.write_text(re.sub(edit["pattern"], edit["replace"], text, flags=re.MULTILINE), encoding="utf-8")
    settings = {"select": (case.rule,), **case.settings}
    settings = {key: tuple(value) if isinstance(value, list) else value for key, value in settings.items()}
    if "plugins" in settings:  # as a configuration file writes them: {plugin: {setting: value}}
        settings["plugins"] = plugin_tables(settings["plugins"], f"{case.source}: case {case.name}")
    config = Config(**settings)
    report = check(workdir / case.target, config, host or PluginHost())
    return [finding for finding in report.findings if finding.rule == case.rule]


def assert_case(case: RuleCase, workdir: Path, host: PluginHost | None = None) -> None:
    found = run_case(case, workdir, host)
    problems = []
    if len(found) != len(case.expect):
        problems.append(f"expected {len(case.expect)} finding(s), got {len(found)}")
    for index, (want, got) in enumerate(zip(case.expect, found)):
        if "line" in want and want["line"] != got.line:
            problems.append(f"finding {index}: expected line {want['line']}, got {got.line}")
        if "path" in want and want["path"] != got.path:
            problems.append(f"finding {index}: expected path {want['path']!r}, got {got.path!r}")
        if "severity" in want and want["severity"] != got.severity.value:
            problems.append(f"finding {index}: expected severity {want['severity']}, got {got.severity.value}")
        if "message" in want and str(want["message"]) not in got.message:
            problems.append(f"finding {index}: message {got.message!r} lacks {want['message']!r}")
    if problems:
        actual = yaml.safe_dump(
            [{"path": f.path, "line": f.line, "severity": f.severity.value, "message": f.message} for f in found],
            sort_keys=False,
        )
        raise AssertionError(f"{case} ({case.source}):\n  " + "\n  ".join(problems) + f"\nActual findings:\n{actual}")
