"""The pytest plugin mlperf-audit installs (entry point ``pytest11``): a rule pack's YAML cases as tests.

It collects nothing unless a project asks: the ini option ``mlperf_audit_rule_cases`` names the
folders (relative to the ini file) whose ``<CODE>.yaml`` files are rule cases, e.g. in a plugin's
``pyproject.toml``::

    [tool.pytest.ini_options]
    mlperf_audit_rule_cases = ["tests"]

Then ``pytest`` runs each case of each file as one test (`mlperf_audit.testing` documents the
format), with the plugins installed in the environment loaded once per session, and a case's
``skip`` as a skip. Any other project that has mlperf-audit installed sees no change.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from .engine.plugins import PluginHost
from .rule import CODE_PATTERN
from .testing import RuleCase, assert_case, load_cases

INI_OPTION = "mlperf_audit_rule_cases"
_HOST = pytest.StashKey[PluginHost]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI_OPTION, "folders whose <CODE>.yaml files are mlperf-audit rule cases", type="paths", default=[])


def _case_folders(config: pytest.Config) -> set[Path]:
    return {Path(folder).resolve() for folder in config.getini(INI_OPTION)}


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if (
        file_path.suffix == ".yaml"
        and CODE_PATTERN.match(file_path.stem)
        and file_path.resolve().parent in _case_folders(parent.config)
    ):
        collected: RuleCaseFile = RuleCaseFile.from_parent(parent, path=file_path)
        return collected
    return None


class RuleCaseFile(pytest.File):
    """One `<CODE>.yaml`: a test per case."""

    def collect(self) -> Iterator[pytest.Item]:
        for case in load_cases(self.path):
            if case.rule != self.path.stem:
                raise self.CollectError(f"{self.path.name} holds cases of {case.rule}: name the file after the rule")
            yield RuleCaseItem.from_parent(self, name=case.name, case=case)


class RuleCaseItem(pytest.Item):
    def __init__(self, *, case: RuleCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        if self.case.skip:
            pytest.skip(self.case.skip)
        host = self.config.stash.get(_HOST, None)
        if host is None:
            host = self.config.stash[_HOST] = PluginHost()
        with tempfile.TemporaryDirectory(prefix=f"{self.case}-") as workdir:
            assert_case(self.case, Path(workdir), host)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, AssertionError):
            return str(excinfo.value)  # the case, what was expected and the actual findings
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"rule case {self.case}"
