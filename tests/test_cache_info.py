"""`mlperf-audit cache info` says what each of the cache's folders holds and how big each is (issue
26, item 13): the size of the kept whole checks was given as the parsed files' size."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


def _folder(path: Path) -> tuple[int, int]:
    files = [f for f in path.rglob("*") if f.is_file()] if path.is_dir() else []
    return len(files), sum(f.stat().st_size for f in files)


def _run(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "MLPERF_AUDIT_CACHE_DIR": str(cache)},
        timeout=300,
    )


def test_cache_info_gives_each_folder_its_own_count_and_size(tmp_path, fixtures):
    cache, tree = tmp_path / "cache", tmp_path / "tree"
    shutil.copytree(fixtures / "clean", tree)
    for _ in range(2):  # a tree checked again after a change keeps its parsed files too
        assert _run("check", str(tree), "--fail-on", "never", cache=cache).returncode == 0
        for result_file in tree.glob("*/results/*/*/result_0.txt"):
            os.utime(result_file)  # a new change time: the kept outcome no longer answers
    # a large kept outcome: what the parsed files' figure used to include
    (cache / "check-v1" / "ff").mkdir(parents=True, exist_ok=True)
    (cache / "check-v1" / "ff" / ("f" * 64)).write_bytes(b"\0" * (3 << 20))
    result = _run("cache", "info", cache=cache)
    assert result.returncode == 0, result.stderr
    parsed, checks = _folder(cache / "parse-v1"), _folder(cache / "check-v1")
    assert parsed[0] > 0 and checks[0] > 1
    first = result.stdout.splitlines()[0]
    assert f"{parsed[0]} parsed file(s), {parsed[1] / 2**20:.1f} MiB;" in first, first
    assert f"{checks[0]} whole-check entries, {checks[1] / 2**20:.1f} MiB;" in first, first
    assert f"{(parsed[1] + checks[1]) / 2**20:.1f} MiB in all" in first, first
    described = {m.group(1): m.group(2) for m in re.finditer(r"^  (\S+)/  (.+)$", result.stdout, re.M)}
    assert described.keys() == {"parse-v1", "check-v1"}, result.stdout
    assert "parsed" in described["parse-v1"] and "outcome" in described["check-v1"]
