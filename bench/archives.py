#!/usr/bin/env python3
"""Time and peak memory of `mlperf-audit check` on the archives of issue 13, before and after.

Usage: python bench/archives.py [--only NAME ...] [--skip-before] [--timeout SECONDS]

Builds, in a temporary folder: a .tar.gz of 100 result files of 8 MB stored in reverse name order
(and the same in forward order, for reference), a .zip with 24,000 folder entries, a .zip whose
system description declares (and holds) 1.9 GiB of zeros, and a .zip of 5,000 submitter folders.
Each check runs in a fresh process, once with the `archives.py` of the last commit ("before", from
`git show HEAD:...`) and once with the working tree's ("after"); the peak memory is that process's
maximum resident set size.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = "checker/mlperf_audit/archives.py"
SYSTEM = json.dumps({"submitter": "Sub", "system_name": "sys", "division": "closed"}).encode()

#: Runs the CLI in this process after swapping in the archives module at argv[1] ("-": the installed one).
CHILD = """
import importlib.util, sys
import mlperf_audit
if sys.argv[1] != "-":
    spec = importlib.util.spec_from_file_location("mlperf_audit.archives", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules["mlperf_audit.archives"] = module
    spec.loader.exec_module(module)
from mlperf_audit.cli import main
sys.exit(main(sys.argv[2:]))
"""

#: Today's discovery asks the archive for the names under a folder (`Archive.below`); the old module
#: had no such method, and its walker scanned every member per submission, which this does again.
OLD_HYGIENE = """

def _below(self, folder):
    prefix = f"{folder}/" if folder else ""
    return ([name for name in sorted(set(self.files) | self.dirs) if name and name.startswith(prefix)],
            [name for name in self.special if name.startswith(prefix)])


Archive.below = _below
"""


def _tar_member(out: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))


def reverse_tar(folder: Path, reverse: bool = True, members: int = 100, size: int = 8 << 20) -> Path:
    path = folder / f"{'reverse' if reverse else 'forward'}.tar.gz"
    zeros = bytes(size)
    with tarfile.open(path, "w:gz") as out:
        _tar_member(out, "Sub/systems/sys.json", SYSTEM)
        for index in sorted(range(members), reverse=reverse):
            _tar_member(out, f"Sub/results/sys/bench/result_{index:03d}.txt", zeros)
    return path


def folders_zip(folder: Path, count: int = 24_000) -> Path:
    path = folder / "folders.zip"
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("Sub/systems/sys.json", SYSTEM)
        for index in range(count):
            out.writestr(zipfile.ZipInfo(f"Sub/results/system_{index:05d}_{'x' * 48}/"), b"")
    return path


def big_system_zip(folder: Path, size: int = 1900 << 20) -> Path:
    path = folder / "big-system-json.zip"
    zeros = bytes(8 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        with out.open("Sub/systems/sys.json", "w", force_zip64=True) as member:
            for start in range(0, size, len(zeros)):
                member.write(zeros[: min(len(zeros), size - start)])
        out.writestr("Sub/results/sys/bench/result_0.txt", b":::MLLOG {}\n")
    return path


def submitters_zip(folder: Path, count: int = 5_000) -> Path:
    path = folder / "submitters.zip"
    with zipfile.ZipFile(path, "w") as out:
        for index in range(count):
            out.writestr(zipfile.ZipInfo(f"S{index:05d}/results/"), b"")
    return path


BUILDERS = {
    "reverse.tar.gz": lambda folder: reverse_tar(folder),
    "forward.tar.gz": lambda folder: reverse_tar(folder, reverse=False),
    "folders.zip": folders_zip,
    "big-system-json.zip": big_system_zip,
    "submitters.zip": submitters_zip,
}


def run(module: str, archive: Path, timeout: float) -> tuple[str, str, int | None]:
    """(seconds, peak MiB, exit code) of one check in a fresh process."""
    argv = [sys.executable, "-c", CHILD, module, "check", str(archive), "--format", "json", "--no-cache"]
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            process.kill()
            os.wait4(process.pid, 0)
            return f">{timeout:.0f}", "-", None
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
    if "internal error" in error:
        code = -1
    return f"{seconds:.1f}", f"{usage.ru_maxrss / 1024:.0f}", code  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(BUILDERS), default=sorted(BUILDERS))
    parser.add_argument("--skip-before", action="store_true", help="only the working tree's archives.py")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        variants = [("after", "-")]
        if not args.skip_before:
            old = folder / "archives_before.py"
            old.write_bytes(
                subprocess.run(["git", "show", f"HEAD:{MODULE}"], cwd=REPO, check=True, capture_output=True).stdout
                + OLD_HYGIENE.encode()
            )
            variants.insert(0, ("before", str(old)))
        print(f"{'archive':22} {'MB':>8} {'variant':8} {'seconds':>8} {'peak MiB':>9} {'exit':>5}")
        for name in args.only:
            archive = BUILDERS[name](folder)
            for variant, module in variants:
                seconds, peak, code = run(module, archive, args.timeout)
                print(
                    f"{name:22} {archive.stat().st_size / 1e6:8.2f} {variant:8} {seconds:>8} {peak:>9} {code!s:>5}",
                    flush=True,
                )
            archive.unlink()


if __name__ == "__main__":
    main()
