"""Ctrl-C and SIGTERM (issue 26): one line, exit 130 (143 for SIGTERM), no traceback, and no
worker process left behind, for every command that checks in parallel. Process tests: the
installed command runs in a session of its own (as a shell's job), is signalled once its worker
processes exist, and then nothing of its process group may remain."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads processes from /proc (Linux)")

#: Copies of the real sample in the tree: enough that checking it takes seconds, so the signal
#: arrives while the workers are busy.
COPIES = 4


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory, sample: Path) -> Path:
    root = tmp_path_factory.mktemp("big") / "training_results_v4.1"
    root.mkdir()
    for copy in range(COPIES):
        for submitter in sorted(p for p in sample.iterdir() if p.is_dir()):
            shutil.copytree(submitter, root / f"{submitter.name}{copy}", symlinks=True)
    return root


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    except OSError:
        return None


def _processes(where: int, field: int) -> list[int]:
    """The live processes whose stat `field` (1: parent, 2: process group) is `where`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields and int(fields[field]) == where and fields[0] != "Z":
                found.append(int(entry))
    return found


def _children(pid: int) -> list[int]:
    return _processes(pid, 1)


def _group(pgid: int) -> list[int]:
    return _processes(pgid, 2)


def _interrupt(argv: list[str], signum: int, to_group: bool, cwd: Path) -> tuple[int, str, list[int]]:
    """Runs the command, signals it once it has workers, and returns its exit code, its standard
    error and what is left of its process group half a second after it ended."""
    command = [sys.executable, "-m", "mlperf_audit", *argv, "-j", "2", "--no-cache"]
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not _children(process.pid):
            assert process.poll() is None, "the command ended before it started its workers"
            assert time.monotonic() < deadline, "no worker process appeared"
            time.sleep(0.02)
        time.sleep(0.2)  # the workers are at work
        assert process.poll() is None, "the command ended before it was signalled: give it a bigger tree"
        if to_group:  # what a terminal's Ctrl-C does
            os.killpg(process.pid, signum)
        else:
            os.kill(process.pid, signum)
        _, err = process.communicate(timeout=60)
        time.sleep(0.5)
        return process.returncode, err.decode(errors="replace"), _group(process.pid)
    finally:
        for pid in _group(process.pid):  # never leave the test's own orphans on a failure
            os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("command", "signum", "to_group", "code", "line"),
    [
        ("check", signal.SIGINT, True, 130, "mlperf-audit: interrupted"),
        ("check", signal.SIGINT, False, 130, "mlperf-audit: interrupted"),
        ("check", signal.SIGTERM, False, 143, "mlperf-audit: terminated"),
        ("score", signal.SIGINT, True, 130, "mlperf-audit: interrupted"),
        ("audit", signal.SIGINT, True, 130, "mlperf-audit: interrupted"),
        ("report", signal.SIGINT, True, 130, "mlperf-audit: interrupted"),
    ],
    ids=["check-ctrl-c", "check-sigint-main", "check-sigterm", "score-ctrl-c", "audit-ctrl-c", "report-ctrl-c"],
)
def test_a_signal_ends_the_command_in_one_line_without_orphans(
    big_tree, tmp_path, command, signum, to_group, code, line
):
    argv = [command, str(big_tree)] + (["-o", str(tmp_path / "report.html")] if command == "report" else [])
    returncode, err, left = _interrupt(argv, signum, to_group, tmp_path)
    assert returncode == code, err
    assert err.splitlines() == [line], err
    assert "Traceback" not in err
    assert left == [], f"processes left of the command's group: {left}"
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(
    ("signum", "code", "line"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_a_signal_that_lands_in_a_finalizer_still_ends_the_command(monkeypatch, capsys, signum, code, line):
    """A signal's exception raised while a finalizer runs is dropped by Python ("Exception ignored",
    with a traceback, then the command goes on: report-ctrl-c once exited 0 on 3.13). The command
    still ends as the signal asked, in one line."""
    from mlperf_audit import cli

    class SignalledWhileCollected:
        def __del__(self) -> None:
            signal.raise_signal(signum)

    def command(args, host) -> int:
        SignalledWhileCollected()  # collected at once: the signal's exception is raised inside __del__
        return 0

    from mlperf_audit.commands.formats import Formats

    monkeypatch.setattr(Formats, "run", lambda self, args, host: command(args, host))
    assert cli.main(["formats"]) == code
    assert capsys.readouterr().err == f"mlperf-audit: {line}\n"
