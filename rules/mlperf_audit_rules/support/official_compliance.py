"""Support for rule packs: the official compliance rule files of mlperf-logging, run as the official checker runs them.

The rule files (`compliance_checker/training_X.Y.Z/*.yaml`) are trusted code from a pinned
dependency: their `CHECK`, `PRE`, `POST` and `BEGIN` fields are Python. This module compiles each
expression once and runs them with the official semantics (`mlp_compliance.configured_checks`):
configs chained from `common.yaml` through `enqueue_config`, a fresh state `s` per config, lines
in file order, `submission_*` keys checked on their first occurrence only, a later config's KEY
record replacing the earlier configs' messages about that key, and the requirement counts
(`EXACTLY_ONE`, `AT_LEAST_ONE`, `AT_LEAST(n)`, `AT_LEAST_ONE_OR(...)`) checked at the end.

Each check family -- a config, a key and a kind of check -- has a stable rule code, kept in
`data/compliance_codes.json` (append-only; `python -m mlperf_audit_rules.compliance --update`
adds new families and rewrites `docs/compliance-rules.md`). Where the official rule data is
defective, the message says so instead of failing the run (see `KNOWN_DEFECTS`), and where the
official checker would crash, a message explains why. The CMP pack turns the messages into
findings; the scoring, the forensic and the reproducibility packs read the same interpretation
and the same rule files.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mlperf_audit import Run, rulesets

CODES_FILE = "data/compliance_codes.json"
#: Every check family of every supported round with its expressions (`all_families`).
FAMILIES_FILE = "data/compliance_families.json"
KINDS = (
    "REQ",
    "REPEATED",
    "CHECK",
    "FIRST_CHECK",
    "ATLEAST_ONE_CHECK",
    "ALTERNATIVES",
    "CODE",
    "BEGIN",
    "END",
    "MISSING",
    "DEFECT",
)

#: Official rule data that contradicts the rules it implements: (round, config) -> what the rules intend.
KNOWN_DEFECTS = {
    ("4.0.0", "open_gpt3"): "open_gpt3.yaml is a verbatim copy of closed_gpt3.yaml, so the official checker holds "
    "open gpt3 runs to the closed hyperparameters; the open division allows any hyperparameters, so only the "
    "quality target is enforced here",
    ("4.1.0", "open_gpt3"): "open_gpt3.yaml is a verbatim copy of closed_gpt3.yaml, so the official checker holds "
    "open gpt3 runs to the closed hyperparameters; the open division allows any hyperparameters, so only the "
    "quality target is enforced here",
}
#: Keys of a defective config that keep their official verdict (the quality target).
DEFECT_KEEPS = {"eval_accuracy"}
#: (config, key) -> (metadata key the official check asks for, the one the rules mean, why).
METADATA_DEFECTS = {
    ("open_llama2_70b_lora", "eval_accuracy"): (
        "epoch_num",
        "samples_count",
        "open_llama2_70b_lora.yaml asks eval_accuracy for epoch_num, where the closed rules and the RCPs of "
        "llama2_70b_lora use samples_count",
    ),
}
#: Official checks that can never fail on a record mlperf-audit reads, with the reason (no code is given).
DEAD_CHECKS = {
    ("common", "cache_clear", "CHECK"): "`'value' in v` always holds: a record without value is rejected as LOG006 "
    "(the official parser crashes on it)",
}


# ----------------------------------------------------------------------------------------------
# The official interface seen by the YAML expressions.
# ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class LogLine:
    """What the YAML expressions call `ll` (official `mlp_parser.LogLine`); `lineno` is physical.
    The metadata in `value` is the event's read-only mapping: no official expression writes to it."""

    full_string: str
    timestamp: float
    key: str
    value: dict[str, Any]
    lineno: int


def is_integer(value: float) -> bool:
    return abs(round(value) - value) < 0.00001


@dataclass(frozen=True)
class Family:
    config: str  # e.g. "closed_bert"
    key: str  # an MLLOG key, a '|'-joined group, or '*'
    kind: str

    @property
    def id(self) -> str:
        return f"{self.config}:{self.key}:{self.kind}"


@dataclass
class KeyRecord:
    name: str
    req: str | None
    pre: Any = None
    checks: list[tuple[str, Any]] = field(default_factory=list)
    post: Any = None
    first_checks: list[tuple[str, Any]] = field(default_factory=list)
    at_least_one: tuple[str, Any] | None = None


@dataclass
class ConfigFile:
    name: str
    path: Path
    begin: Any
    end_pre: Any
    end_checks: list[tuple[str, Any]]
    keys: dict[str, KeyRecord]


@cache
def _compile(source: str, mode: str) -> Any:
    return compile(source.strip(), "<mlperf-logging rule>", mode)


def _expressions(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(item) for item in value]


#: The official checker reads its rules with yaml.BaseLoader (every scalar a string); libyaml's
#: CBaseLoader builds the same data several times faster (startup reads ~90 rule files).
_YAML_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


#: A rule file's name: the logs choose it (`closed_<submission_benchmark>`), so anything else (a
#: path, `..`, a name too long for the file system) is a file that does not exist.
_CONFIG_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


@cache
def load_config(version: str, name: str) -> ConfigFile | None:
    if not _CONFIG_NAME.fullmatch(name) or ".." in name:
        return None
    path = rulesets.get(f"{rulesets.USAGE}-{version}").compliance_dir / f"{name}.yaml"
    if not path.is_file():
        return None
    records = yaml.load(path.read_text(), Loader=_YAML_LOADER) or []
    begin = end_pre = None
    end_checks: list[tuple[str, Any]] = []
    keys: dict[str, KeyRecord] = {}
    for record in records:
        ((kind, body),) = record.items()
        if kind == "BEGIN":
            begin = _compile(body["CODE"], "exec")
        elif kind == "END":
            end_pre = _compile(body["PRE"], "exec") if "PRE" in body else None
            end_checks = [(e, _compile(e, "eval")) for e in _expressions(body.get("CHECK"))]
        elif kind == "KEY":
            keys[body["NAME"]] = KeyRecord(
                name=body["NAME"],
                req=body.get("REQ"),
                pre=_compile(body["PRE"], "exec") if "PRE" in body else None,
                checks=[(e, _compile(e, "eval")) for e in _expressions(body.get("CHECK"))],
                post=_compile(body["POST"], "exec") if "POST" in body else None,
                first_checks=[(e, _compile(e, "eval")) for e in _expressions(body.get("FIRST_CHECK"))],
                at_least_one=(body["ATLEAST_ONE_CHECK"], _compile(body["ATLEAST_ONE_CHECK"], "eval"))
                if "ATLEAST_ONE_CHECK" in body
                else None,
            )
    return ConfigFile(name, path, begin, end_pre, end_checks, keys)


@cache
def _begin_source(version: str, name: str) -> str:
    path = rulesets.get(f"{rulesets.USAGE}-{version}").compliance_dir / f"{name}.yaml"
    for record in yaml.load(path.read_text(), Loader=_YAML_LOADER) or []:
        if "BEGIN" in record:
            return str(record["BEGIN"].get("CODE", ""))
    return ""


def _alternatives(req: str) -> list[str]:
    return [part.strip() for part in req[len("AT_LEAST_ONE_OR(") : -1].split(",")]


# ----------------------------------------------------------------------------------------------
# The interpreter.
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    family: Family
    text: str
    line: int | None = None
    hint: str | None = None


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) or math.isfinite(value) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


class _Interpreter:
    def __init__(self, version: str) -> None:
        self.version = version
        self.dir = f"{rulesets.USAGE}_{version}"
        self.keyed: dict[str, list[Message]] = defaultdict(list)
        self.unkeyed: list[Message] = []
        self.warnings: list[Message] = []
        self.queue: list[str] = []

    def enqueue(self, relative: str) -> None:
        self.queue.append(str(relative))

    def run(self, loglines: list[LogLine]) -> list[Message]:
        self.queue.append(f"{self.dir}/common.yaml")
        while self.queue:
            relative = self.queue.pop(0)
            folder, _, filename = relative.rpartition("/")
            name = filename[: -len(".yaml")] if filename.endswith(".yaml") else filename
            version = rulesets.version_of(folder)  # a rule file may enqueue another round's file
            config = load_config(version, name) if version is not None else None
            if config is None:
                self.unkeyed.append(
                    Message(
                        Family("*", "*", "MISSING"),
                        f"the official rules of {self.dir} have no {filename} for this log (the official checker "
                        "crashes here)",
                        hint="The log names a benchmark or division this round has no rules for; check "
                        "submission_benchmark and submission_division.",
                    )
                )
                continue
            self.run_config(config, loglines)
        return self.warnings + [m for messages in self.keyed.values() for m in messages] + self.unkeyed

    def run_config(self, config: ConfigFile, loglines: list[LogLine]) -> None:
        s: dict[str, Any] = {}
        state: dict[str, Any] = {"enqueue_config": self.enqueue, "s": s, "is_integer": is_integer, "math": math}
        defect = KNOWN_DEFECTS.get((rulesets.version_of(config.path.parent.name) or self.version, config.name))
        if config.begin is not None:
            try:
                exec(config.begin, state, {"loglines": loglines, "s": s, "state": state})
            except Exception as error:  # the official checker crashes here
                self.unkeyed.append(
                    Message(
                        Family(config.name, "*", "BEGIN"),
                        f"the BEGIN block of {config.name}.yaml fails on this log ({_error_text(error)}); the official "
                        "checker crashes here",
                        hint="A record this block reads lacks a field it needs (for example an eval_accuracy with a "
                        "'metric' but no 'samples_count').",
                    )
                )
        for key in config.keys:
            self.keyed.pop(key, None)  # a later config's KEY record replaces earlier verdicts on that key
        reported: dict[str, list[Any]] = {key: [] for key in config.keys}
        lines_of: dict[str, list[int]] = {key: [] for key in config.keys}
        executed: set[str] = set()
        first_seen: set[str] = set()
        satisfied: dict[str, int] = {}
        best: dict[str, LogLine] = {}
        keys = config.keys
        for ll in [ll for ll in loglines if ll.key in keys]:
            record = keys[ll.key]
            reported[ll.key].append(ll.value.get("value"))
            if ll.lineno > 0:
                lines_of[ll.key].append(ll.lineno)
            local = {"ll": ll, "v": ll.value}
            if ll.key not in executed:
                if record.pre is not None:
                    self._exec(record.pre, state, local, config, ll, "PRE")
                for source, code in record.checks:
                    try:  # inline: the check passes on nearly every record, and only a failure costs a call
                        if eval(code, state, local):
                            continue
                        problem = "fails"
                    except Exception as error:
                        problem = f"cannot be evaluated ({_error_text(error)})"
                    self._failed(source, config, ll, "CHECK", defect, problem)
                if record.post is not None:
                    self._exec(record.post, state, local, config, ll, "POST")
            if record.first_checks and ll.key not in first_seen:
                first_seen.add(ll.key)
                for source, code in record.first_checks:
                    self._check(source, code, state, local, config, ll, "FIRST_CHECK", defect)
            if record.at_least_one is not None:
                satisfied.setdefault(ll.key, 0)
                best.setdefault(ll.key, ll)
                try:
                    if eval(record.at_least_one[1], state, local):
                        satisfied[ll.key] += 1
                        best[ll.key] = ll
                except Exception as error:  # the official checker crashes here
                    self._add(
                        Message(
                            Family(config.name, ll.key, "ATLEAST_ONE_CHECK"),
                            f"the check `{record.at_least_one[0].strip()}` raises {_error_text(error)} on this "
                            f"{ll.key!r} record (the official checker crashes here)",
                            ll.lineno if ll.lineno > 0 else None,
                        ),
                        None,
                    )
            if "submission_" in ll.key:
                executed.add(ll.key)
        for key, count in satisfied.items():
            if count == 0:
                source = config.keys[key].at_least_one[0].strip()  # type: ignore[index]
                values = [v for v in reported[key] if v is not None]
                shown = ", ".join(_show(v) for v in values[-3:])
                self._add(
                    Message(
                        Family(config.name, key, "ATLEAST_ONE_CHECK"),
                        f"no {key!r} record satisfies `{source}` ({len(values)} logged"
                        + (f"; the last: {shown})" if values else ")"),
                        None,
                    ),
                    None if key in DEFECT_KEEPS else defect,
                )
        self._requirements(config, reported, lines_of, defect)
        if config.end_pre is not None or config.end_checks:
            self._end(config, state)

    def _add(self, message: Message, defect: str | None, keyed: str | None = None) -> None:
        if defect is not None and message.family.key not in DEFECT_KEEPS:
            message = Message(
                Family(message.family.config, "*", "DEFECT"),
                f"the official checker fails this, but {defect}: {message.text}",
                message.line,
            )
            self.warnings.append(message)
        elif message.family.kind == "REPEATED":
            self.warnings.append(message)
        elif keyed is not None:
            self.keyed[keyed].append(message)
        else:
            self.unkeyed.append(message)

    def _exec(
        self, code: Any, state: dict[str, Any], local: dict[str, Any], config: ConfigFile, ll: LogLine, action: str
    ) -> None:
        if code is None:
            return
        try:
            exec(code, state, local)
        except Exception as error:
            self._add(
                Message(
                    Family("*", "*", "CODE"),
                    f"the {action} code of {config.name}.yaml fails on this {ll.key!r} record ({_error_text(error)})",
                    ll.lineno if ll.lineno > 0 else None,
                    hint=f"Log {ll.key!r} with the value and metadata that the reference implementation logs.",
                ),
                None,
                keyed=ll.key,
            )

    def _check(
        self,
        source: str,
        code: Any,
        state: dict[str, Any],
        local: dict[str, Any],
        config: ConfigFile,
        ll: LogLine,
        kind: str,
        defect: str | None,
    ) -> None:
        try:
            passed = eval(code, state, local)
            problem = "fails"
        except Exception as error:
            passed, problem = False, f"cannot be evaluated ({_error_text(error)})"
        if not passed:
            self._failed(source, config, ll, kind, defect, problem)

    def _failed(
        self, source: str, config: ConfigFile, ll: LogLine, kind: str, defect: str | None, problem: str
    ) -> None:
        value = ll.value.get("value")
        alias = METADATA_DEFECTS.get((config.name, ll.key))
        metadata = ll.value.get("metadata") or {}
        if alias and alias[0] in source and alias[0] not in metadata and alias[1] in metadata:
            self.warnings.append(
                Message(
                    Family(config.name, "*", "DEFECT"),
                    f"the official check `{source.strip()}` fails on this {ll.key!r} record, but {alias[2]}; the record's "
                    f"{alias[1]} is accepted as the rules intend",
                    ll.lineno if ll.lineno > 0 else None,
                )
            )
            return
        if kind == "CHECK" and omits_allowed_benchmark(self.version, config, ll.key, value):
            self.warnings.append(
                Message(
                    Family(config.name, "*", "DEFECT"),
                    f"the official checker rejects submission_benchmark {value!r} here, but {value!r} is a benchmark of "
                    f"this round and {config.name.split('_')[0]}_{value}.yaml exists: {config.name}.yaml's list of "
                    "benchmarks is stale, so the rules' intent (accept it) is applied",
                    ll.lineno if ll.lineno > 0 else None,
                )
            )
            return
        text = f"{ll.key} = {_show(value)} {problem} the official check `{source.strip()}`"
        metadata = {k: v for k, v in (ll.value.get("metadata") or {}).items() if k not in ("file", "lineno")}
        if "metadata" in source and metadata:
            text += f" (metadata: {_show(metadata)})"
        self._add(
            Message(Family(config.name, ll.key, kind), text, ll.lineno if ll.lineno > 0 else None), defect, keyed=ll.key
        )

    def _requirements(
        self, config: ConfigFile, reported: dict[str, list[Any]], lines_of: dict[str, list[int]], defect: str | None
    ) -> None:
        groups: set[tuple[str, ...]] = set()
        for key, record in config.keys.items():
            req, values, lines = record.req, reported[key], lines_of[key]
            if req is None or req == "OPTIONAL":
                continue
            where = f" (lines {', '.join(map(str, lines[:5]))}{'...' if len(lines) > 5 else ''})" if lines else ""
            if req == "EXACTLY_ONE" and len(values) != 1:
                if values and all(v == values[0] for v in values):
                    self._add(
                        Message(
                            Family(config.name, key, "REPEATED"),
                            f"{key!r} is logged {len(values)} times with the same value{where}; exactly one is "
                            "required (the official checker only warns)",
                            lines[1] if len(lines) > 1 else None,
                        ),
                        None,
                    )
                else:
                    detail = (
                        f" with different values: {', '.join(sorted({_show(v) for v in values}))}" if values else ""
                    )
                    self._add(
                        Message(
                            Family(config.name, key, "REQ"),
                            f"exactly one {key!r} record is required, found {len(values)}{detail}{where}",
                            lines[1] if len(lines) > 1 else None,
                        ),
                        defect,
                        keyed=key,
                    )
            elif req == "AT_LEAST_ONE" and not values:
                self._add(
                    Message(Family(config.name, key, "REQ"), f"at least one {key!r} record is required, found none"),
                    defect,
                    keyed=key,
                )
            elif req.startswith("AT_LEAST(") and len(values) < int(req[len("AT_LEAST(") : -1]):
                self._add(
                    Message(
                        Family(config.name, key, "REQ"),
                        f"at least {req[len('AT_LEAST(') : -1]} {key!r} "
                        f"records are required, found {len(values)}{where}",
                    ),
                    defect,
                    keyed=key,
                )
            elif req.startswith("AT_LEAST_ONE_OR("):
                groups.add(tuple(sorted({key, *_alternatives(req)})))
        for group in sorted(groups):
            if not any(reported.get(k) for k in group):
                self._add(
                    Message(
                        Family(config.name, "|".join(group), "ALTERNATIVES"),
                        f"at least one record of {' or '.join(repr(k) for k in group)} is required, found none",
                    ),
                    defect,
                )

    def _end(self, config: ConfigFile, state: dict[str, Any]) -> None:
        try:
            if config.end_pre is not None:
                exec(config.end_pre, state)
            for source, code in config.end_checks:
                if not eval(code, state):
                    self._add(Message(Family(config.name, "*", "END"), f"the END check `{source.strip()}` fails"), None)
        except Exception as error:
            self._add(Message(Family(config.name, "*", "END"), f"the END block fails ({_error_text(error)})"), None)


def omits_allowed_benchmark(version: str, config: ConfigFile, key: str, value: Any) -> bool:
    """A division's allow-list rejects a benchmark that the round allows and has rules for (stale data)."""
    if key != "submission_benchmark" or not config.name.endswith("_common") or not isinstance(value, str):
        return False
    round_ = rulesets.get(f"{rulesets.USAGE}-{version}")
    division = config.name[: -len("_common")]
    return value in round_.benchmarks and (round_.compliance_dir / f"{division}_{value}.yaml").is_file()


def _stale_allow_list(version: str, config: ConfigFile) -> bool:
    record = config.keys.get("submission_benchmark")
    if record is None or not record.checks:
        return False
    for benchmark in rulesets.get(f"{rulesets.USAGE}-{version}").benchmarks:
        line = LogLine("", 0.0, "submission_benchmark", {"value": benchmark, "metadata": {}}, 0)
        state = {"s": {}, "is_integer": is_integer, "math": math, "enqueue_config": lambda path: None}
        if not all(eval(code, state, {"ll": line, "v": line.value}) for _, code in record.checks):
            if omits_allowed_benchmark(version, config, "submission_benchmark", benchmark):
                return True
    return False


@cache
def _keys_of_round(version: str) -> frozenset[str]:
    """Every key a rule file of the round has a record for (others never affect a verdict)."""
    rulesets.get(f"{rulesets.USAGE}-{version}")  # raises ValueError for a round that is not supported
    keys: set[str] = {"eval_accuracy"}  # read by stable_diffusion's BEGIN block
    for file_version, name in rule_files_of_round(version):
        config = load_config(file_version, name)
        if config is not None:
            keys |= set(config.keys)
    return frozenset(keys)


def interpret(run: Run, version: str) -> list[Message]:
    """The surviving official messages for one run, as the official checker would leave them
    (interpreted once per run and round: the compliance rules and the score both ask)."""
    return list(run.cached(("compliance.interpret", version), lambda: tuple(_interpret(run, version))))


def _interpret(run: Run, version: str) -> list[Message]:
    keys = _keys_of_round(version)
    loglines = [
        LogLine("", e.time_ms, e.key, {"value": e.value, "metadata": e.metadata}, e.line)
        for e in run.events
        if e.key in keys
    ]
    if not loglines:
        return []  # the log-syntax rules report a file without records
    return _Interpreter(version).run(loglines)


# ----------------------------------------------------------------------------------------------
# Rule codes: one per family, kept in an append-only table.
# ----------------------------------------------------------------------------------------------


def codes_path() -> Path:
    return Path(str(resources.files("mlperf_audit_rules"))) / CODES_FILE


def families_path() -> Path:
    return Path(str(resources.files("mlperf_audit_rules"))) / FAMILIES_FILE


@cache
def code_table() -> dict[str, Family]:
    data = json.loads(codes_path().read_text())
    return {code: Family(**family) for code, family in data.items()}


@cache
def code_of() -> dict[str, str]:
    return {family.id: code for code, family in code_table().items()}


FALLBACK_CODE = "CMP999"


def official_codes(*family_ids: str) -> frozenset[str]:
    """The codes of the given families ("config:key:kind"), for rules that cover official checks."""
    table = code_of()
    return frozenset(table[family] for family in family_ids if family in table)


_ENQUEUED = re.compile(r"enqueue_config\(\s*['\"]([A-Za-z0-9_.]+)/([A-Za-z0-9_{}.-]+)\.yaml['\"]")


@cache
def rule_files_of_round(version: str) -> tuple[tuple[str, str], ...]:
    """(version, name) of every rule file a log of the round can reach: the round's own files, and
    those of other rounds that its files enqueue (4.0.0's closed_resnet enqueues
    `training_3.1.0/closed_resnet_{}.yaml`; 1.1.0's open_common enqueues 1.0.0's open files)."""
    own = rulesets.get(f"{rulesets.USAGE}-{version}").compliance_dir
    files = [(version, path.stem) for path in sorted(own.glob("*.yaml"))]
    for path in sorted(own.glob("*.yaml")):
        for folder, pattern in _ENQUEUED.findall(path.read_text()):
            other = rulesets.version_of(folder)
            if other is None or other == version:
                continue
            directory = rulesets.get(f"{rulesets.USAGE}-{other}").compliance_dir
            for target in sorted(directory.glob(pattern.replace("{}", "*") + ".yaml")):
                if (other, target.stem) not in files:
                    files.append((other, target.stem))
    return tuple(files)


def families_of_round(version: str) -> dict[Family, list[str]]:
    """Every family the round's rule files (and the other rounds' files they enqueue) can produce,
    with the expressions behind it."""
    found: dict[Family, list[str]] = {}
    for file_version, name in rule_files_of_round(version):
        config = load_config(file_version, name)
        assert config is not None
        if config.begin is not None and "loglines" in _begin_source(file_version, name):
            found[Family(name, "*", "BEGIN")] = []  # only a BEGIN block that reads the log can fail on it
        if config.end_pre is not None or config.end_checks:
            found[Family(name, "*", "END")] = [source for source, _ in config.end_checks]
        defective = (file_version, name) in KNOWN_DEFECTS
        if defective:
            found[Family(name, "*", "DEFECT")] = [KNOWN_DEFECTS[(file_version, name)]]
        elif _stale_allow_list(file_version, config):
            found[Family(name, "*", "DEFECT")] = ["the submission_benchmark list omits a benchmark of this round"]
        elif any(config_name == name for config_name, _ in METADATA_DEFECTS):
            found[Family(name, "*", "DEFECT")] = [
                reason for (c, _), (_, _, reason) in METADATA_DEFECTS.items() if c == name
            ]
        for key, record in config.keys.items():
            if defective and key not in DEFECT_KEEPS:
                continue  # its official failures are reported as the config's DEFECT
            if record.req and record.req not in ("OPTIONAL",):
                if record.req.startswith("AT_LEAST_ONE_OR("):
                    group = "|".join(sorted({key, *_alternatives(record.req)}))
                    found[Family(name, group, "ALTERNATIVES")] = [record.req]
                else:
                    found[Family(name, key, "REQ")] = [record.req]
                if record.req == "EXACTLY_ONE":
                    found[Family(name, key, "REPEATED")] = [record.req]
            if record.checks and (name, key, "CHECK") not in DEAD_CHECKS:
                found[Family(name, key, "CHECK")] = [source.strip() for source, _ in record.checks]
            if record.first_checks:
                found[Family(name, key, "FIRST_CHECK")] = [source.strip() for source, _ in record.first_checks]
            if record.at_least_one:
                found[Family(name, key, "ATLEAST_ONE_CHECK")] = [record.at_least_one[0].strip()]
    found[Family("*", "*", "MISSING")] = []  # a log naming a division or benchmark the round has no rules for
    found[Family("*", "*", "CODE")] = []  # a PRE or POST block that raises on a record
    return found


@cache
def all_families() -> dict[Family, dict[str, list[str]]]:
    """family -> {version: expressions} over every supported round: shipped as data, since reading
    every round's rule files (287 YAML files) took 0.6 s of every start; computed from them only
    for an mlperf-logging other than the one the data was made from."""
    try:
        shipped = json.loads(families_path().read_text())
    except (OSError, ValueError):
        shipped = {}
    if shipped.get("mlperf_logging") != importlib.metadata.version("mlperf-logging"):
        return computed_families()
    return {Family(config, key, kind): versions for config, key, kind, versions in shipped["families"]}


def computed_families() -> dict[Family, dict[str, list[str]]]:
    """family -> {version: expressions}, read from the installed mlperf-logging's rule files."""
    result: dict[Family, dict[str, list[str]]] = {}
    for name in rulesets.SUPPORTED:
        version = name.split("-", 1)[1]
        for family, expressions in families_of_round(version).items():
            result.setdefault(family, {})[version] = expressions
    return result
