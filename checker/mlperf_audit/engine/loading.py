"""Loading one benchmark folder: its logs parsed once (or read from the cache of parsed files) and its
scaling.json."""

from __future__ import annotations

import functools
import json
from typing import Any

from ..config import Config
from ..model import (
    BenchmarkFolder,
    BenchmarkResult,
    Issue,
    Problem,
    open_binary,
)
from ..reading.cache import ParseCache
from ..reading.parser import parse_log

MAX_SCALING_JSON_BYTES = 1 << 16


@functools.cache
def parse_cache(directory: str | None) -> ParseCache | None:
    """The cache of parsed files in `directory` (one per process, so hits are counted once)."""
    return ParseCache(directory) if directory else None


def load_benchmark(folder: BenchmarkFolder, config: Config | None = None) -> BenchmarkResult:
    """Parses every result file of a folder (or reads it from the cache that `config` names), and its scaling.json."""
    cache = parse_cache(config.cache_dir) if config is not None else None
    runs = tuple(
        parse_log(
            entry.fs_path,
            entry.path,
            submitter=folder.submitter,
            system=folder.system,
            benchmark=folder.benchmark,
            cache=cache,
        )
        for entry in folder.result_files
    )
    scaling: dict[str, Any] | None = None
    issues: list[Issue] = []
    for entry in folder.other_files:
        if entry.path.rsplit("/", 1)[-1] != "scaling.json":
            continue
        scaling, problem = _read_scaling(entry.fs_path)
        if problem:
            issues.append(
                Issue(
                    Problem.SCALING_JSON_INVALID,
                    problem,
                    entry.path,
                    hint='scaling.json must be {"scaling_factor": <number >= 1>}; delete it to let the checkers '
                    "recompute it.",
                )
            )
    return BenchmarkResult(folder, runs, scaling, tuple(issues))


def _read_scaling(path: Any) -> tuple[dict[str, Any] | None, str | None]:
    try:
        with open_binary(path) as stream:
            raw = stream.read(MAX_SCALING_JSON_BYTES + 1)
    except OSError as error:
        return None, f"cannot read scaling.json: {error.strerror or error}"
    if len(raw) > MAX_SCALING_JSON_BYTES:
        return None, "scaling.json is too large to be a scaling factor"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return None, f"scaling.json is not valid JSON: {getattr(error, 'msg', error)}"
    if not isinstance(data, dict):
        return None, "scaling.json is not a JSON object"
    return data, None  # its fields are checked against the schema by the rule that reports the problem
