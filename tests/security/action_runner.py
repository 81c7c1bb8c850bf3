"""Runs `action.yml` the way a GitHub runner runs a composite action, so the tests see what its
steps really execute (issue 25: the project's own tests once ran the script in a way the Action
did not, and could not see that a pull request's files were imported).

Every `run:` step is written to a file and run as GitHub runs `shell: bash`
(`bash --noprofile --norc -eo pipefail FILE`), in its `working-directory` (the workspace
otherwise), with the runner's environment, `GITHUB_ACTION_PATH`, a fresh `GITHUB_OUTPUT` file per
step, and its `env:`. `${{ }}` expressions and `if:` conditions are evaluated by a small evaluator
of the subset of GitHub's expression language the file uses (contexts, string literals, `==`,
`!=`, `&&`, `||`, `!`, parentheses, `always()`, `success()`, `failure()`, `format()`); anything
else fails the test instead of being guessed. `actions/cache/restore` and `actions/cache/save` are
stood in for by copying a folder: what they do for the check is bring back a folder that earlier
runs, possibly of other pull requests, filled.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import venv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||[!(),])|(?P<name>[A-Za-z_][A-Za-z0-9_.-]*))"
)


class Expression:
    """A recursive-descent evaluator of GitHub's expression subset; `values` maps dotted context
    names (`inputs.path`, `runner.temp`) to strings."""

    def __init__(self, text: str, values: dict[str, str], failed: bool) -> None:
        self.tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text.rstrip()):
            match = _TOKEN.match(text, position)
            if match is None:
                raise ValueError(f"cannot read the expression {text!r} at {text[position:]!r}")
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.values, self.failed, self.index = values, failed, 0

    def evaluate(self) -> Any:
        value = self._or()
        if self.index != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.index][1]!r}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def _or(self) -> Any:
        value = self._and()
        while self._peek() == "||":
            self._take()
            other = self._and()
            value = value if _truthy(value) else other
        return value

    def _and(self) -> Any:
        value = self._equality()
        while self._peek() == "&&":
            self._take()
            other = self._equality()
            value = other if _truthy(value) else value
        return value

    def _equality(self) -> Any:
        value = self._unary()
        while self._peek() in ("==", "!="):
            operator = self._take()[1]
            other = self._unary()
            same = str(value).lower() == str(other).lower()  # GitHub compares strings ignoring case
            value = same if operator == "==" else not same
        return value

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, text = self._take()
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if text == "(":
            value = self._or()
            assert self._take()[1] == ")"
            return value
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if self._peek() == "(":
            self._take()
            arguments: list[Any] = []
            while self._peek() != ")":
                arguments.append(self._or())
                if self._peek() == ",":
                    self._take()
            self._take()
            return self._call(text, arguments)
        if text in ("true", "false"):
            return text == "true"
        if text not in self.values:
            raise ValueError(f"the test runner does not know the context value {text!r}")
        return self.values[text]

    def _call(self, name: str, arguments: list[Any]) -> Any:
        if name == "always":
            return True
        if name == "success":
            return not self.failed
        if name == "failure":
            return self.failed
        if name == "format":
            pattern, *rest = arguments
            return re.sub(r"\{(\d+)\}", lambda m: str(rest[int(m.group(1))]), pattern)
        raise ValueError(f"the test runner does not know the function {name}()")


def _truthy(value: Any) -> bool:
    return bool(value) and value != "0"


def substitute(text: str, values: dict[str, str], failed: bool = False) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(Expression(m.group(1), values, failed).evaluate()), text)


def condition(text: str | None, values: dict[str, str], failed: bool) -> bool:
    if text is None:
        return not failed
    text = text.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return _truthy(Expression(text, values, failed).evaluate())


@dataclass
class StepRun:
    id: str | None
    name: str
    skipped: bool
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]

    def step(self, id: str) -> StepRun:
        (found,) = [step for step in self.steps if step.id == id]
        return found

    @property
    def stdout(self) -> str:
        return "".join(step.stdout for step in self.steps)

    @property
    def stderr(self) -> str:
        return "".join(step.stderr for step in self.steps)


def runner_python(folder: Path) -> Path:
    """The runner's `python3`: a bare environment of the interpreter running the tests (no pip, no
    packages), so that a step which would install into it fails instead of changing this machine."""
    if not (folder / "bin" / "python3").exists():
        venv.EnvBuilder(with_pip=False, symlinks=True).create(folder)
    return folder / "bin"


@dataclass
class Runner:
    """One runner: its temporary folder, its `python3`, the action's checkout and a cache store."""

    action_file: Path
    action_path: Path
    temp: Path
    python_bin: Path
    cache_store: Path
    run_id: int = 1

    def run(
        self,
        workspace: Path,
        inputs: dict[str, str],
        env: dict[str, str],
        skip: tuple[str, ...] = (),
        timeout: float = 900,
    ) -> ActionRun:
        action = yaml.safe_load(self.action_file.read_text(encoding="utf-8"))
        assert action["runs"]["using"] == "composite"
        given = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
        unknown = set(inputs) - set(given)
        assert not unknown, f"inputs the action does not declare: {unknown}"
        given.update(inputs)
        values = {f"inputs.{name}": value for name, value in given.items()}
        values.update(
            {
                "runner.temp": str(self.temp),
                "runner.os": "Linux",
                "github.run_id": str(self.run_id),
                "github.run_attempt": "1",
                "github.workspace": str(workspace),
            }
        )
        self.run_id += 1
        base_env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "GITHUB_"))},
            **env,
            "PATH": f"{self.python_bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_ACTION_PATH": str(self.action_path),
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(self.temp),
            "GITHUB_ACTIONS": "true",
        }
        failed = False
        runs: list[StepRun] = []
        for number, step in enumerate(action["runs"]["steps"]):
            name = step.get("name") or step.get("id") or step.get("uses") or str(number)
            if step.get("id") in skip or step.get("name") in skip or not condition(step.get("if"), values, failed):
                runs.append(StepRun(step.get("id"), name, skipped=True))
                continue
            if "uses" in step:
                runs.append(self._cache_step(step, values))
                continue
            assert step.get("shell") == "bash", "the runner stands in for bash steps only"
            script = self.temp / f"step-{number}.sh"
            script.write_text(substitute(step["run"], values), encoding="utf-8")
            outputs = self.temp / f"output-{number}.txt"
            outputs.write_text("")
            step_env = {**base_env, "GITHUB_OUTPUT": str(outputs)}
            step_env.update({key: substitute(str(value), values) for key, value in step.get("env", {}).items()})
            folder = substitute(step.get("working-directory", str(workspace)), values)
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=folder,
                env=step_env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            found: dict[str, list[str]] = {}
            for line in outputs.read_text().splitlines():
                key, _, value = line.partition("=")
                found.setdefault(key, []).append(value)
            runs.append(StepRun(step.get("id"), name, False, result.returncode, result.stdout, result.stderr, found))
            failed = failed or result.returncode != 0
        return ActionRun(runs)

    def _cache_step(self, step: dict[str, Any], values: dict[str, str]) -> StepRun:
        uses = step["uses"].split("@")[0]
        path = Path(substitute(step["with"]["path"], values))
        if uses == "actions/cache/restore":
            if self.cache_store.is_dir():
                shutil.copytree(self.cache_store, path, dirs_exist_ok=True)
        elif uses == "actions/cache/save":
            if path.is_dir():
                shutil.rmtree(self.cache_store, ignore_errors=True)
                shutil.copytree(path, self.cache_store, symlinks=True)
        else:
            raise AssertionError(f"the test runner does not stand in for {uses}")
        return StepRun(step.get("id"), step.get("name", uses), skipped=False)


#: What a pull request adds to shadow the gate's code (issue 25): each file, if Python ever
#: imports or runs it, leaves a mark named after itself outside the workspace; the gate's own
#: script stand-in also reports a passing check, as the attack did.
SHADOWS = {
    "mlperf_audit/__init__.py": "",
    "mlperf_audit/github_action.py": (
        "import os, sys\n"
        "with open(os.environ['GITHUB_OUTPUT'], 'a') as out:\n"
        "    out.write('errors=0\\nwarnings=0\\ninfos=0\\nchecked=\\nexit-code=0\\n')\n"
        "sys.exit(0)\n"
    ),
    "mlperf_audit/__main__.py": "",
    "pip/__init__.py": "",
    "pip/__main__.py": "",
    "venv/__init__.py": "",
    "venv/__main__.py": "",
    "tabulate.py": "",
    "yaml.py": "",
    "numpy/__init__.py": "",
    "jsonschema/__init__.py": "",
    "sitecustomize.py": "",
    "usercustomize.py": "",
}


def plant_shadows(workspace: Path, marks: Path) -> None:
    """Adds every file of `SHADOWS` to `workspace`; each leaves `marks/<its path>` when run."""
    marks.mkdir(parents=True, exist_ok=True)
    for relative, body in SHADOWS.items():
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        mark = marks / mark_name(relative)
        target.write_text(f"open({str(mark)!r}, 'w').close()\n{body}", encoding="utf-8")


def mark_name(relative: str) -> str:
    return relative.replace("/", "|")


def marks_left(marks: Path) -> list[str]:
    """The shadowing files that ran, by their path in the workspace."""
    return sorted(path.name.replace("|", "/") for path in marks.iterdir()) if marks.is_dir() else []
